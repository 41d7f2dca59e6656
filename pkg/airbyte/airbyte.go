// Package airbyte is the Airbyte protocol as the connector speaks it: the encoder of every
// message (SPEC, CONNECTION_STATUS, CATALOG, LOG, TRACE, STATE, CONTROL, RECORD), used by
// the `connector airbyte` entry point and by the airbyte format of `read`, and the spec and
// catalog entries of a definition as the CDK describes them. Fields are in the protocol's
// order, as the CDK prints them.
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

// generalSpec is the spec of the CDK's source-declarative-manifest when it is given no
// definition (airbyte_cdk/cli/source_declarative_manifest/spec.json): a config that
// carries one.
const generalSpec = `{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Low-code source spec",
  "type": "object",
  "required": ["__injected_declarative_manifest"],
  "additionalProperties": true,
  "properties": {
    "__injected_declarative_manifest": {
      "title": "Low-code manifest",
      "type": "object",
      "description": "The low-code manifest that defines the components of the source."
    }
  }
}`

// GeneralSpec is the spec of any definition, as the CDK's source-declarative-manifest
// answers spec without one: a connection specification that requires the definition under
// __injected_declarative_manifest.
func GeneralSpec() Spec {
	var schema bytes.Buffer
	if err := json.Compact(&schema, []byte(generalSpec)); err != nil {
		panic(err) // a constant
	}
	return Spec{ConnectionSpecification: json.RawMessage(schema.Bytes()), DocumentationURL: "https://docs.airbyte.com/integrations/sources/low-code"}
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
	st.IsFileBased = s.Files != nil // a stream with a file_uploader, as the CDK says it
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

// Writer writes protocol messages to W as the Encoder makes them, one write per message:
// the output of spec, check and discover, and of a failure before a read starts.
type Writer struct {
	W   io.Writer
	Now func() time.Time
}

// Spec writes a SPEC message.
func (w *Writer) Spec(s Spec) error {
	return w.write(w.enc().AppendSpec(nil, s))
}

// ConnectionStatus writes a CONNECTION_STATUS message: SUCCEEDED, or FAILED with the
// (already redacted) reason.
func (w *Writer) ConnectionStatus(ok bool, reason string) error {
	return w.write(w.enc().AppendConnectionStatus(nil, ok, reason))
}

// Catalog writes a CATALOG message.
func (w *Writer) Catalog(streams []Stream) error {
	return w.write(w.enc().AppendCatalog(nil, streams))
}

// Log writes a LOG message at level (DEBUG, INFO, WARN, ERROR, FATAL); the message must
// already be redacted.
func (w *Writer) Log(level, message string) error {
	return w.write(w.enc().AppendLog(nil, level, message))
}

// Error writes a TRACE ERROR message of the whole command (no stream); both messages must
// already be redacted.
func (w *Writer) Error(message, internal, failureType string) error {
	return w.write(w.enc().AppendError(nil, ErrorTrace{Message: message, InternalMessage: internal, FailureType: failureType}))
}

func (w *Writer) enc() Encoder { return Encoder{Now: w.Now} }

func (w *Writer) write(line []byte, err error) error {
	if err != nil {
		return err
	}
	_, err = w.W.Write(line)
	return err
}
