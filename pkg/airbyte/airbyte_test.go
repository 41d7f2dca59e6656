package airbyte

import (
	"bytes"
	"testing"
	"time"

	"connector/internal/protocoltest"
	"connector/pkg/manifest"
)

// Every message the writer makes, exactly, and valid under the protocol's schema.
func TestWriterMessages(t *testing.T) {
	var buf bytes.Buffer
	w := &Writer{W: &buf, Now: func() time.Time { return time.UnixMilli(1700000000000) }}
	spec := Spec{ConnectionSpecification: map[string]any{"type": "object"}, DocumentationURL: "https://example.com/docs"}
	books := &manifest.Stream{Name: "books", PrimaryKey: "id"}
	// A primary key of field paths, one of them empty: a path is a list, never null.
	paths := &manifest.Stream{Name: "paths", PrimaryKey: []any{[]any{"a", "b"}, []any{}}}
	for _, err := range []error{
		w.Spec(spec),
		w.ConnectionStatus(true, ""),
		w.ConnectionStatus(false, "Stream books is not available: 401 Unauthorized"),
		w.Catalog(nil),
		w.Catalog([]Stream{StreamOf(books, "updated_at", false), StreamOf(paths, "", false)}),
		w.Error("Config validation error: <x> & y", "", "config_error"),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"SPEC","spec":{"connectionSpecification":{"type":"object"},"documentationUrl":"https://example.com/docs","supportsNormalization":false,"supportsDBT":false}}
{"type":"CONNECTION_STATUS","connectionStatus":{"status":"SUCCEEDED"}}
{"type":"CONNECTION_STATUS","connectionStatus":{"status":"FAILED","message":"Stream books is not available: 401 Unauthorized"}}
{"type":"CATALOG","catalog":{"streams":[]}}
{"type":"CATALOG","catalog":{"streams":[{"name":"books","json_schema":{},"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":true,"default_cursor_field":["updated_at"],"source_defined_primary_key":[["id"]],"is_resumable":true,"is_file_based":false},{"name":"paths","json_schema":{},"supported_sync_modes":["full_refresh"],"source_defined_primary_key":[["a","b"],[]],"is_resumable":false,"is_file_based":false}]}}
{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{"message":"Config validation error: <x> & y","failure_type":"config_error"}}}
`
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	protocoltest.Check(t, buf.String())
}

// The protocol's documentationUrl is a URI: a definition's documentation_url without a
// scheme is left out of the spec (its validation warns), an absolute one is kept.
func TestSpecOfDocumentationURL(t *testing.T) {
	for url, want := range map[string]string{
		"https://docs.example.com/s": "https://docs.example.com/s",
		"docs.example.com/s":         "",
		"":                           "",
	} {
		def := &manifest.Definition{}
		def.SpecJSON.DocumentationURL = url
		if got := SpecOf(def).DocumentationURL; got != want {
			t.Errorf("%q: documentationUrl %q, want %q", url, got, want)
		}
	}
}
