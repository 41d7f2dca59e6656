package airbyte

import (
	"encoding/json"
	"testing"
	"time"

	"connector/internal/protocoltest"
	"connector/pkg/record"
)

// The messages of a read, each exactly: a read's encoder and the entry point's Writer are
// the same code, so these bytes are those of `read --format airbyte` and `airbyte read`.
func TestEncoderReadMessages(t *testing.T) {
	e := Encoder{Now: func() time.Time { return time.UnixMilli(1700000000000) }}
	state := &record.Object{}
	state.Set("updated_at", "2024-01-02")
	config := &record.Object{}
	config.Set("z", "<last>")
	config.Set("gone", nil)
	config.Set("a", json.Number("1"))
	edited := &record.Object{}
	edited.Set("id", json.Number("2"))
	edited.Set("n", nil)
	books := RecordPrefix("books")
	steps := []func(b []byte) ([]byte, error){
		func(b []byte) ([]byte, error) { return e.AppendLog(b, "INFO", "Starting syncing <&>") },
		func(b []byte) ([]byte, error) { return e.AppendStreamStatus(b, "books", "STARTED") },
		func(b []byte) ([]byte, error) { return e.AppendStreamStatus(b, "books", "RUNNING") },
		func(b []byte) ([]byte, error) {
			return e.AppendRecord(b, books, record.Record{Raw: []byte(`{"id":1,"n":null,"o":{"n":null},"h":"<a&b>"}`)})
		},
		func(b []byte) ([]byte, error) { return e.AppendRecord(b, books, record.Record{Object: edited}) },
		func(b []byte) ([]byte, error) { return e.AppendState(b, "books", state, 2) },
		func(b []byte) ([]byte, error) { return e.AppendControl(b, map[string]any{"b": "2", "a": nil}) },
		func(b []byte) ([]byte, error) { return e.AppendControl(b, config) },
		func(b []byte) ([]byte, error) { return e.AppendControl(b, nil) },
		func(b []byte) ([]byte, error) {
			return e.AppendError(b, ErrorTrace{Stream: "books", Message: "stream books: 500", InternalMessage: "500", FailureType: "transient_error"})
		},
		func(b []byte) ([]byte, error) { return e.AppendStreamStatus(b, "books", "INCOMPLETE") },
		func(b []byte) ([]byte, error) { return e.AppendState(b, "books", nil, 0) },
		func(b []byte) ([]byte, error) {
			return e.AppendError(b, ErrorTrace{Message: "During the sync, …", InternalMessage: "Concurrent read failure", FailureType: "config_error"})
		},
	}
	var b []byte
	for _, step := range steps {
		var err error
		if b, err = step(b); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"type":"LOG","log":{"level":"INFO","message":"Starting syncing <&>"}}
{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"STARTED"}}}
{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"RUNNING"}}}
{"type":"RECORD","record":{"stream":"books","data":{"id":1,"o":{"n":null},"h":"<a&b>"},"emitted_at":1700000000000}}
{"type":"RECORD","record":{"stream":"books","data":{"id":2},"emitted_at":1700000000000}}
{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"books"},"stream_state":{"updated_at":"2024-01-02"}},"sourceStats":{"recordCount":2.0}}}
{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{"b":"2"}}}}
{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{"z":"<last>","a":1}}}}
{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{}}}}
{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{"message":"stream books: 500","internal_message":"500","failure_type":"transient_error","stream_descriptor":{"name":"books"}}}}
{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"INCOMPLETE"}}}
{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"books"},"stream_state":{}},"sourceStats":{"recordCount":0.0}}}
{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{"message":"During the sync, …","internal_message":"Concurrent read failure","failure_type":"config_error"}}}
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
	protocoltest.Check(t, string(b))
}

// A stream's name in a RECORD prefix is a JSON string without HTML escaping.
func TestRecordPrefix(t *testing.T) {
	if got, want := string(RecordPrefix(`a<b> "q"`)), `{"type":"RECORD","record":{"stream":"a<b> \"q\"","data":`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}
