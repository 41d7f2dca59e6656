// Package output writes what the commands produce: records in the formats of `read`, and the
// reports people read.
package output

import (
	"bufio"
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
		r.w.WriteString(`{"stream":`)
		writeString(r.w, stream)
		r.w.WriteString(`,"data":`)
		r.w.Write(raw)
		r.w.WriteByte('}')
	case FormatAirbyte:
		r.w.WriteString(`{"type":"RECORD","record":{"stream":`)
		writeString(r.w, stream)
		r.w.WriteString(`,"data":`)
		r.w.Write(raw)
		r.w.WriteString(`,"emitted_at":`)
		r.w.WriteString(strconv.FormatInt(r.now().UnixMilli(), 10))
		r.w.WriteString(`}}`)
	default:
		r.w.Write(raw)
	}
	return r.w.WriteByte('\n')
}

// Log writes an airbyte LOG message (other formats carry no logs on stdout).
func (r *RecordWriter) Log(level, message string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	return r.message(map[string]any{"type": "LOG", "log": map[string]any{"level": level, "message": message}})
}

// StreamStatus writes an airbyte TRACE stream status message: STARTED, RUNNING, COMPLETE or
// INCOMPLETE.
func (r *RecordWriter) StreamStatus(stream, status string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	return r.message(map[string]any{"type": "TRACE", "trace": map[string]any{
		"type": "STREAM_STATUS", "emitted_at": r.now().UnixMilli(),
		"stream_status": map[string]any{
			"stream_descriptor": map[string]any{"name": stream},
			"status":            status,
		},
	}})
}

// Control writes an airbyte CONTROL message carrying the updated testing values.
func (r *RecordWriter) Control(config map[string]any) error {
	if r.format != FormatAirbyte {
		return nil
	}
	return r.message(map[string]any{"type": "CONTROL", "control": map[string]any{
		"type": "CONNECTOR_CONFIG", "emitted_at": r.now().UnixMilli(),
		"connectorConfig": map[string]any{"config": config},
	}})
}

func (r *RecordWriter) message(m map[string]any) error {
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

func writeString(w *bufio.Writer, s string) {
	b, _ := json.Marshal(s)
	w.Write(b)
}
