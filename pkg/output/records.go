// Package output writes what the commands produce: records in the formats of `read`, and the
// reports people read.
package output

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"sync"
	"time"
)

// Record formats of `read`.
const (
	FormatRecords  = "records"
	FormatEnvelope = "envelope"
	FormatAirbyte  = "airbyte"
)

// Formats lists the record formats, for flag help and validation.
var Formats = []string{FormatRecords, FormatEnvelope, FormatAirbyte}

// RecordWriter writes one JSON line per record through one buffer. Records are written as
// the bytes received (already compact); nothing is decoded or re-encoded. It is safe for
// concurrent use; each line is written whole.
type RecordWriter struct {
	mu     sync.Mutex
	w      *bufio.Writer
	format string
	now    func() time.Time
	// prefixes caches the encoded start of a record line per stream.
	prefixes map[string][]byte
}

// NewRecordWriter writes to w in the given format. now stamps airbyte messages.
func NewRecordWriter(w io.Writer, format string, now func() time.Time) (*RecordWriter, error) {
	switch format {
	case FormatRecords, FormatEnvelope, FormatAirbyte:
	default:
		return nil, fmt.Errorf("unknown output format %q (use records, envelope or airbyte)", format)
	}
	if now == nil {
		now = time.Now
	}
	return &RecordWriter{w: bufio.NewWriterSize(w, 64<<10), format: format, now: now}, nil
}

// Record writes one record of stream.
func (r *RecordWriter) Record(stream string, raw []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	switch r.format {
	case FormatEnvelope:
		r.w.Write(r.prefix(stream))
		r.w.Write(raw)
		r.w.WriteByte('}')
	case FormatAirbyte:
		r.w.Write(r.prefix(stream))
		r.w.Write(raw)
		r.w.WriteString(`,"emitted_at":`)
		r.w.WriteString(strconv.FormatInt(r.now().UnixMilli(), 10))
		r.w.WriteString(`}}`)
	default:
		r.w.Write(raw)
	}
	return r.w.WriteByte('\n')
}

// prefix is what comes before a record of stream in the envelope and airbyte formats,
// encoded once per stream rather than once per record.
func (r *RecordWriter) prefix(stream string) []byte {
	if p, ok := r.prefixes[stream]; ok {
		return p
	}
	var b bytes.Buffer
	if r.format == FormatAirbyte {
		b.WriteString(`{"type":"RECORD","record":{"stream":`)
	} else {
		b.WriteString(`{"stream":`)
	}
	writeString(&b, stream)
	b.WriteString(`,"data":`)
	if r.prefixes == nil {
		r.prefixes = map[string][]byte{}
	}
	r.prefixes[stream] = b.Bytes()
	return b.Bytes()
}

// Airbyte protocol messages, with fields in the protocol's order.
type (
	logMessage struct {
		Type string `json:"type"`
		Log  struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"log"`
	}
	traceMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type         string `json:"type"`
			EmittedAt    int64  `json:"emitted_at"`
			StreamStatus struct {
				StreamDescriptor struct {
					Name string `json:"name"`
				} `json:"stream_descriptor"`
				Status string `json:"status"`
			} `json:"stream_status"`
		} `json:"trace"`
	}
	controlMessage struct {
		Type    string `json:"type"`
		Control struct {
			Type            string `json:"type"`
			EmittedAt       int64  `json:"emitted_at"`
			ConnectorConfig struct {
				Config map[string]any `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
)

// Log writes an airbyte LOG message (other formats carry no logs on stdout).
func (r *RecordWriter) Log(level, message string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m logMessage
	m.Type, m.Log.Level, m.Log.Message = "LOG", level, message
	return r.message(m)
}

// StreamStatus writes an airbyte TRACE stream status message: STARTED, RUNNING, COMPLETE or
// INCOMPLETE.
func (r *RecordWriter) StreamStatus(stream, status string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m traceMessage
	m.Type, m.Trace.Type, m.Trace.EmittedAt = "TRACE", "STREAM_STATUS", r.now().UnixMilli()
	m.Trace.StreamStatus.StreamDescriptor.Name = stream
	m.Trace.StreamStatus.Status = status
	return r.message(m)
}

// Control writes an airbyte CONTROL message carrying the updated testing values.
func (r *RecordWriter) Control(config map[string]any) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m controlMessage
	m.Type, m.Control.Type, m.Control.EmittedAt = "CONTROL", "CONNECTOR_CONFIG", r.now().UnixMilli()
	m.Control.ConnectorConfig.Config = config
	return r.message(m)
}

func (r *RecordWriter) message(m any) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	enc := json.NewEncoder(r.w)
	enc.SetEscapeHTML(false)
	return enc.Encode(m)
}

// Flush writes out what is buffered; the read loop calls it after every page.
func (r *RecordWriter) Flush() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.w.Flush()
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(w io.Writer, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}
