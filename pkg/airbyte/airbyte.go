// Package airbyte holds the Airbyte protocol messages of the `connector airbyte` entry point
// (SPEC, CONNECTION_STATUS, CATALOG, TRACE ERROR) and the catalog entry of a stream as the
// CDK's discover describes it. Fields are in the protocol's order, as the CDK prints them.
package airbyte

import (
	"bytes"
	"encoding/json"
	"io"
	"net/url"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
)

// Spec is a SPEC message's spec: the definition's spec section in the protocol's names.
type Spec struct {
	ConnectionSpecification any    `json:"connectionSpecification"`
	DocumentationURL        string `json:"documentationUrl,omitempty"`
	SupportsNormalization   bool   `json:"supportsNormalization"`
	SupportsDBT             bool   `json:"supportsDBT"`
	AdvancedAuth            any    `json:"advanced_auth,omitempty"`
}

// SpecOf is the spec of a definition; a definition without spec has an empty object schema.
// A documentation_url that is not an absolute URL is left out (the definition's validation
// warns about it): the protocol's documentationUrl is a URI.
func SpecOf(def *manifest.Definition) Spec {
	s := Spec{
		ConnectionSpecification: ordered(def.SpecJSON.ConnectionSpec),
		AdvancedAuth:            ordered(def.SpecJSON.AdvancedAuth),
	}
	if u, err := url.Parse(def.SpecJSON.DocumentationURL); err == nil && u.IsAbs() {
		s.DocumentationURL = def.SpecJSON.DocumentationURL
	}
	if s.ConnectionSpecification == nil {
		s.ConnectionSpecification = map[string]any{}
	}
	return s
}

// Stream is a catalog entry (AirbyteStream).
type Stream struct {
	Name                    string     `json:"name"`
	JSONSchema              any        `json:"json_schema"`
	SupportedSyncModes      []string   `json:"supported_sync_modes"`
	SourceDefinedCursor     *bool      `json:"source_defined_cursor,omitempty"`
	DefaultCursorField      []string   `json:"default_cursor_field,omitempty"`
	SourceDefinedPrimaryKey [][]string `json:"source_defined_primary_key,omitempty"`
	IsResumable             bool       `json:"is_resumable"`
	IsFileBased             bool       `json:"is_file_based"`
}

// StreamOf describes a stream as the CDK's DefaultStream.as_airbyte_stream does: full
// refresh always; incremental, resumable and a default cursor field when the stream has a
// cursor (cursorField, rendered by the caller; "" for none); the primary key as a list of
// one-field paths; the schema loader's schema, or {} without one.
func StreamOf(s *manifest.Stream, cursorField string, allowCatalogCursor bool) Stream {
	st := Stream{Name: s.Name, JSONSchema: ordered(s.Schema), SupportedSyncModes: []string{"full_refresh"}}
	if st.JSONSchema == nil {
		st.JSONSchema = map[string]any{}
	}
	if cursorField != "" {
		defined := !allowCatalogCursor
		st.SourceDefinedCursor = &defined
		st.IsResumable = true
		st.SupportedSyncModes = append(st.SupportedSyncModes, "incremental")
		st.DefaultCursorField = []string{cursorField}
	}
	st.SourceDefinedPrimaryKey = s.PrimaryKeyPaths()
	return st
}

// ordered is v (a plain value, or *record.Object keeping the definition's key order) as
// JSON text; nil stays nil.
func ordered(v any) any {
	if v == nil {
		return nil
	}
	b, err := record.Marshal(v)
	if err != nil {
		return nil
	}
	return json.RawMessage(b)
}

// Writer writes protocol messages, one JSON object per line.
type Writer struct {
	W   io.Writer
	Now func() time.Time
}

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
	errorMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type      string `json:"type"`
			EmittedAt int64  `json:"emitted_at"`
			Error     struct {
				Message         string `json:"message"`
				InternalMessage string `json:"internal_message,omitempty"`
				FailureType     string `json:"failure_type"`
			} `json:"error"`
		} `json:"trace"`
	}
)

// Spec writes a SPEC message.
func (w *Writer) Spec(s Spec) error {
	return w.write(specMessage{Type: "SPEC", Spec: s})
}

// ConnectionStatus writes a CONNECTION_STATUS message: SUCCEEDED, or FAILED with the
// (already redacted) reason.
func (w *Writer) ConnectionStatus(ok bool, reason string) error {
	var m statusMessage
	m.Type, m.ConnectionStatus.Status = "CONNECTION_STATUS", "SUCCEEDED"
	if !ok {
		m.ConnectionStatus.Status, m.ConnectionStatus.Message = "FAILED", reason
	}
	return w.write(m)
}

// Catalog writes a CATALOG message.
func (w *Writer) Catalog(streams []Stream) error {
	var m catalogMessage
	m.Type, m.Catalog.Streams = "CATALOG", streams
	if m.Catalog.Streams == nil {
		m.Catalog.Streams = []Stream{}
	}
	return w.write(m)
}

// Log writes a LOG message at level (DEBUG, INFO, WARN, ERROR, FATAL); the message must
// already be redacted.
func (w *Writer) Log(level, message string) error {
	var m struct {
		Type string `json:"type"`
		Log  struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"log"`
	}
	m.Type, m.Log.Level, m.Log.Message = "LOG", level, message
	return w.write(m)
}

// Error writes a TRACE ERROR message; both messages must already be redacted.
func (w *Writer) Error(message, internal, failureType string) error {
	var m errorMessage
	m.Type, m.Trace.Type = "TRACE", "ERROR"
	m.Trace.EmittedAt = w.Now().UnixMilli()
	m.Trace.Error.Message, m.Trace.Error.InternalMessage = message, internal
	m.Trace.Error.FailureType = failureType
	return w.write(m)
}

func (w *Writer) write(m any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return err
	}
	_, err := w.W.Write(buf.Bytes())
	return err
}
