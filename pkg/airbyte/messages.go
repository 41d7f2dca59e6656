package airbyte

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"connector/pkg/record"
)

// Encoder makes the protocol's messages: each one line of JSON, ended by a newline, with
// its fields in the protocol's order and without HTML escaping, as the CDK prints them.
// Every message of the connector goes through it: those of spec, check and discover (see
// Writer) and those of a read (the airbyte format of package output). Each method appends
// the message to b and returns the extended slice, as strconv.AppendInt does; on an error
// the result is not to be used, and b up to its length is as it was.
type Encoder struct {
	// Now stamps the messages that carry emitted_at.
	Now func() time.Time
}

// Protocol messages, with fields in the protocol's order.
type (
	specMessage struct {
		Type string `json:"type"`
		Spec Spec   `json:"spec"`
	}
	statusMessage struct {
		Type             string `json:"type"`
		ConnectionStatus struct {
			Status  string `json:"status"`
			Message string `json:"message,omitempty"`
		} `json:"connectionStatus"`
	}
	catalogMessage struct {
		Type    string `json:"type"`
		Catalog struct {
			Streams []Stream `json:"streams"`
		} `json:"catalog"`
	}
	logMessage struct {
		Type string `json:"type"`
		Log  struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"log"`
	}
	statusTraceMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type         string `json:"type"`
			EmittedAt    int64  `json:"emitted_at"`
			StreamStatus struct {
				StreamDescriptor descriptor     `json:"stream_descriptor"`
				Status           string         `json:"status"`
				Reasons          []statusReason `json:"reasons,omitempty"`
			} `json:"stream_status"`
		} `json:"trace"`
	}
	statusReason struct {
		Type string `json:"type"`
	}
	errorTraceMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type      string `json:"type"`
			EmittedAt int64  `json:"emitted_at"`
			Error     struct {
				Message          string      `json:"message"`
				InternalMessage  string      `json:"internal_message,omitempty"`
				FailureType      string      `json:"failure_type"`
				StreamDescriptor *descriptor `json:"stream_descriptor,omitempty"`
			} `json:"error"`
		} `json:"trace"`
	}
	controlMessage struct {
		Type    string `json:"type"`
		Control struct {
			Type            string `json:"type"`
			EmittedAt       int64  `json:"emitted_at"`
			ConnectorConfig struct {
				Config json.RawMessage `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
	// descriptor is a StreamDescriptor.
	descriptor struct {
		Name string `json:"name"`
	}
)

// ErrorTrace is a failure, for a TRACE ERROR message. Both messages must already be
// redacted: the encoder writes them as given.
type ErrorTrace struct {
	// Stream is the stream that failed; "" for the whole command (no stream_descriptor).
	Stream string
	// Message is for the user; InternalMessage is the cause beneath it.
	Message, InternalMessage string
	// FailureType is config_error, transient_error or system_error (see run.FailureType).
	FailureType string
}

// AppendSpec appends a SPEC message.
func (e Encoder) AppendSpec(b []byte, s Spec) ([]byte, error) {
	return appendMessage(b, specMessage{Type: "SPEC", Spec: s})
}

// AppendConnectionStatus appends a CONNECTION_STATUS message: SUCCEEDED, or FAILED with
// the (already redacted) reason.
func (e Encoder) AppendConnectionStatus(b []byte, ok bool, reason string) ([]byte, error) {
	var m statusMessage
	m.Type, m.ConnectionStatus.Status = "CONNECTION_STATUS", "SUCCEEDED"
	if !ok {
		m.ConnectionStatus.Status, m.ConnectionStatus.Message = "FAILED", reason
	}
	return appendMessage(b, m)
}

// AppendCatalog appends a CATALOG message; no streams is an empty list.
func (e Encoder) AppendCatalog(b []byte, streams []Stream) ([]byte, error) {
	var m catalogMessage
	m.Type, m.Catalog.Streams = "CATALOG", streams
	if m.Catalog.Streams == nil {
		m.Catalog.Streams = []Stream{}
	}
	return appendMessage(b, m)
}

// AppendLog appends a LOG message at level (DEBUG, INFO, WARN, ERROR, FATAL); the message
// must already be redacted.
func (e Encoder) AppendLog(b []byte, level, message string) ([]byte, error) {
	var m logMessage
	m.Type, m.Log.Level, m.Log.Message = "LOG", level, message
	return appendMessage(b, m)
}

// AppendStreamStatus appends a TRACE STREAM_STATUS message: STARTED, RUNNING, COMPLETE or
// INCOMPLETE, with the reasons given (RATE_LIMITED).
func (e Encoder) AppendStreamStatus(b []byte, stream, status string, reasons ...string) ([]byte, error) {
	var m statusTraceMessage
	m.Type, m.Trace.Type, m.Trace.EmittedAt = "TRACE", "STREAM_STATUS", e.Now().UnixMilli()
	m.Trace.StreamStatus.StreamDescriptor.Name = stream
	m.Trace.StreamStatus.Status = status
	for _, r := range reasons {
		m.Trace.StreamStatus.Reasons = append(m.Trace.StreamStatus.Reasons, statusReason{Type: r})
	}
	return appendMessage(b, m)
}

// AppendError appends a TRACE ERROR message, with a stream_descriptor when t names a
// stream.
func (e Encoder) AppendError(b []byte, t ErrorTrace) ([]byte, error) {
	var m errorTraceMessage
	m.Type, m.Trace.Type, m.Trace.EmittedAt = "TRACE", "ERROR", e.Now().UnixMilli()
	m.Trace.Error.Message, m.Trace.Error.InternalMessage = t.Message, t.InternalMessage
	m.Trace.Error.FailureType = t.FailureType
	if t.Stream != "" {
		m.Trace.Error.StreamDescriptor = &descriptor{Name: t.Stream}
	}
	return appendMessage(b, m)
}

// AppendControl appends a CONTROL message carrying the updated config: a map[string]any
// (keys in sorted order) or a *record.Object (keys in its order). Its top-level null values
// are left out, as the CDK's serializer leaves them out; anything else is an empty object.
func (e Encoder) AppendControl(b []byte, config any) ([]byte, error) {
	var m controlMessage
	m.Type, m.Control.Type, m.Control.EmittedAt = "CONTROL", "CONNECTOR_CONFIG", e.Now().UnixMilli()
	kept := &record.Object{} // an object, never null
	switch c := config.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if c[k] != nil {
				kept.Set(k, c[k])
			}
		}
	case *record.Object:
		for _, k := range c.Keys() {
			if v, _ := c.Get(k); v != nil {
				kept.Set(k, v)
			}
		}
	}
	cfg, err := record.Marshal(kept)
	if err != nil {
		return b, err
	}
	m.Control.ConnectorConfig.Config = json.RawMessage(cfg)
	return appendMessage(b, m)
}

// AppendState appends a per-stream STATE message, as the CDK writes it: the stream's state
// (nil is an empty object) and the number of records written since its previous STATE
// message.
func (e Encoder) AppendState(b []byte, stream string, state *record.Object, records int) ([]byte, error) {
	if state == nil {
		state = &record.Object{}
	}
	st, err := record.Marshal(state)
	if err != nil {
		return b, fmt.Errorf("stream %s: state: %w", stream, err)
	}
	b = append(b, `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":`...)
	b = appendString(b, stream)
	b = append(b, `},"stream_state":`...)
	b = append(b, st...)
	b = append(b, `},"sourceStats":{"recordCount":`...)
	b = strconv.AppendInt(b, int64(records), 10)
	return append(b, ".0}}}\n"...), nil
}

// RecordPrefix is what comes before the data in every RECORD message of stream: encode it
// once per stream, and hand it to AppendRecord.
func RecordPrefix(stream string) []byte {
	b := []byte(`{"type":"RECORD","record":{"stream":`)
	b = appendString(b, stream)
	return append(b, `,"data":`...)
}

// AppendRecord appends a RECORD message of rec: prefix (the RecordPrefix of its stream),
// the record as the bytes received or, when a transformation edited it, its object
// encoded, without its top-level null members (as the CDK's serializer writes a record's
// data), and emitted_at. The record must be a JSON object.
func (e Encoder) AppendRecord(b, prefix []byte, rec record.Record) ([]byte, error) {
	b = append(b, prefix...)
	n := len(b)
	b, err := rec.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	b = b[:n+len(dropTopNulls(b[n:]))]
	b = append(b, `,"emitted_at":`...)
	b = strconv.AppendInt(b, e.Now().UnixMilli(), 10)
	if f := rec.File; f != nil {
		b = AppendFileReference(append(b, `,"file_reference":`...), f)
	}
	return append(b, "}}\n"...), nil
}

// AppendFileReference appends a record's file_reference object, its fields in the
// protocol's order.
func AppendFileReference(b []byte, f *record.FileRef) []byte {
	b = append(b, `{"staging_file_url":`...)
	b = appendString(b, f.StagingFileURL)
	b = append(b, `,"source_file_relative_path":`...)
	b = appendString(b, f.SourceFileRelativePath)
	b = append(b, `,"file_size_bytes":`...)
	b = strconv.AppendInt(b, f.FileSizeBytes, 10)
	return append(b, '}')
}

// appendMessage appends m encoded as one line, without HTML escaping; on an error b keeps
// its content.
func appendMessage(b []byte, m any) ([]byte, error) {
	buf := bytes.NewBuffer(b)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return b, err
	}
	return buf.Bytes(), nil
}

// appendString appends s as a JSON string without HTML escaping.
func appendString(b []byte, s string) []byte {
	b, _ = appendMessage(b, s) // a string always encodes
	return b[:len(b)-1]        // without the newline
}
