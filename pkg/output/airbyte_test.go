package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"connector/internal/protocoltest"
	"connector/pkg/record"
)

// In the airbyte format, a stream's RUNNING status comes before its first record, once, as
// the CDK writes it; the RECORD carries the data byte for byte (the stream's name and the
// data without HTML escaping) and emitted_at.
func TestAirbyteFormatRecords(t *testing.T) {
	var buf bytes.Buffer
	out := newAirbyte(&buf, fixedNow)
	raw := []byte(`{"id":12345678901234567890,"h":"<a&b>"}`)
	for range 2 {
		if err := out.Records("a<b>", recs(raw)); err != nil {
			t.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	record := `{"type":"RECORD","record":{"stream":"a<b>","data":{"id":12345678901234567890,"h":"<a&b>"},"emitted_at":1700000000123}}` + "\n"
	want := `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000123,"stream_status":{"stream_descriptor":{"name":"a<b>"},"status":"RUNNING"}}}` + "\n" +
		record + record
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}

// Every message kind of the airbyte format, exactly, in the order writeAll makes them: with
// LogStatuses, the CDK's LOG line before a RUNNING status; top-level nulls left out of a
// RECORD's data (nested ones kept) and of a CONTROL's config, of the API's bytes and of an
// edited record alike.
func TestAirbyteFormatEveryMessage(t *testing.T) {
	var buf bytes.Buffer
	out := newAirbyte(&buf, fixedNow)
	got := writeAll(t, out, &buf,
		recs([]byte(`{"id":1,"n":null,"o":{"n":null}}`)),
		[]record.Record{edited()})
	const status = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000123,"stream_status":{"stream_descriptor":{"name":"s"},"status":"%s"}}}` + "\n"
	want := `{"type":"LOG","log":{"level":"INFO","message":"Starting syncing"}}` + "\n" +
		fmt.Sprintf(status, "STARTED") +
		`{"type":"LOG","log":{"level":"INFO","message":"Marking stream s as RUNNING"}}` + "\n" +
		fmt.Sprintf(status, "RUNNING") +
		`{"type":"RECORD","record":{"stream":"s","data":{"id":1,"o":{"n":null}},"emitted_at":1700000000123}}` + "\n" +
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"s"},"stream_state":{"updated_at":"2024-01-02"}},"sourceStats":{"recordCount":1.0}}}` + "\n" +
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000123,"connectorConfig":{"config":{"token":"t2"}}}}` + "\n" +
		`{"type":"RECORD","record":{"stream":"s","data":{"id":12345678901234567890,"name":"<b> & é"},"emitted_at":1700000000123}}` + "\n" +
		`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000123,"error":{"message":"m","internal_message":"i","failure_type":"system_error","stream_descriptor":{"name":"s"}}}}` + "\n" +
		fmt.Sprintf(status, "INCOMPLETE")
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	protocoltest.Check(t, got)

	// Without LogStatuses, RUNNING comes alone.
	buf.Reset()
	out = newAirbyte(&buf, fixedNow)
	out.Records("b", recs([]byte(`{}`)))
	out.Close()
	want = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000123,"stream_status":{"stream_descriptor":{"name":"b"},"status":"RUNNING"}}}` + "\n" +
		`{"type":"RECORD","record":{"stream":"b","data":{},"emitted_at":1700000000123}}` + "\n"
	if buf.String() != want {
		t.Errorf("without LogStatuses: got\n%s\nwant\n%s", buf.String(), want)
	}
}

// A TRACE ERROR of the whole read names no stream: no stream_descriptor.
func TestAirbyteFormatErrorOfTheRead(t *testing.T) {
	var buf bytes.Buffer
	out := newAirbyte(&buf, fixedNow)
	out.Error(ErrorTrace{Message: "During the sync, the following streams did not sync successfully: s", InternalMessage: "Concurrent read failure", FailureType: "config_error"})
	out.Close()
	want := `{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000123,"error":{"message":"During the sync, the following streams did not sync successfully: s","internal_message":"Concurrent read failure","failure_type":"config_error"}}}` + "\n"
	if buf.String() != want {
		t.Errorf("got %s, want %s", buf.String(), want)
	}
}

// Every airbyte message the writer makes, exactly, in the order a read writes them, and
// valid under the protocol's schema.
func TestRecordWriterAirbyteMessages(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewRecordOutput(&buf, FormatAirbyte, func() time.Time { return time.UnixMilli(1700000000000) })
	if err != nil {
		t.Fatal(err)
	}
	state := &record.Object{}
	state.Set("updated_at", "2024-01-02")
	edited := &record.Object{}
	edited.Set("id", json.Number("2"))
	for _, err := range []error{
		w.Log("INFO", "Starting syncing"),
		w.StreamStatus("books", "STARTED"),
		w.Records("books", []record.Record{{Raw: []byte(`{"id":1}`)}, {Object: edited}}),
		w.State("books", state, 2),
		w.Control(map[string]any{"credentials": map[string]any{"refresh_token": "r2"}}),
		w.Control(nil),
		w.Error(ErrorTrace{Stream: "books", Message: "stream books, page 2: 500 Internal Server Error", InternalMessage: "500 Internal Server Error", FailureType: "transient_error"}),
		w.StreamStatus("books", "INCOMPLETE"),
		w.StreamStatus("authors", "STARTED"),
		w.StreamStatus("authors", "COMPLETE"),
		w.State("authors", nil, 0),
		w.Flush(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	const status = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"%s"},"status":"%s"}}}` + "\n"
	want := `{"type":"LOG","log":{"level":"INFO","message":"Starting syncing"}}` + "\n" +
		fmt.Sprintf(status, "books", "STARTED") +
		fmt.Sprintf(status, "books", "RUNNING") +
		`{"type":"RECORD","record":{"stream":"books","data":{"id":1},"emitted_at":1700000000000}}` + "\n" +
		`{"type":"RECORD","record":{"stream":"books","data":{"id":2},"emitted_at":1700000000000}}` + "\n" +
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"books"},"stream_state":{"updated_at":"2024-01-02"}},"sourceStats":{"recordCount":2.0}}}` + "\n" +
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{"credentials":{"refresh_token":"r2"}}}}}` + "\n" +
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{}}}}` + "\n" +
		`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{"message":"stream books, page 2: 500 Internal Server Error","internal_message":"500 Internal Server Error","failure_type":"transient_error","stream_descriptor":{"name":"books"}}}}` + "\n" +
		fmt.Sprintf(status, "books", "INCOMPLETE") +
		fmt.Sprintf(status, "authors", "STARTED") +
		fmt.Sprintf(status, "authors", "COMPLETE") +
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"authors"},"stream_state":{}},"sourceStats":{"recordCount":0.0}}}` + "\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	protocoltest.Check(t, buf.String())
}

// The data of an Airbyte RECORD is an object: the writer refuses a page with any other
// record, and writes none of it (nor the stream's RUNNING status). Then it goes on.
func TestRecordWriterAirbyteRefusesRecordsThatAreNotObjects(t *testing.T) {
	for _, tt := range []struct{ raw, kind string }{
		{`1`, "a number"}, {`-1.5`, "a number"}, {`"x"`, "a string"}, {`[{"id":1}]`, "an array"},
		{`true`, "a boolean"}, {`null`, "null"},
	} {
		var buf bytes.Buffer
		w, _ := NewRecordOutput(&buf, FormatAirbyte, func() time.Time { return time.UnixMilli(1) })
		want := "a record is " + tt.kind + ", not an object: an Airbyte RECORD's data is an object"
		if err := w.Records("s", recs([]byte(tt.raw))); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", tt.raw, err, want)
		}
		if err := w.Records("s", recs([]byte(`{"id":1}`), []byte(tt.raw), []byte(`{"id":2}`))); err == nil || err.Error() != want {
			t.Errorf("%s after a record: error %v, want %s", tt.raw, err, want)
		}
		if err := w.Records("s", recs([]byte(`{"id":3}`))); err != nil {
			t.Errorf("a record after the refused page: %v", err)
		}
		w.Flush()
		got := buf.String()
		if want := `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"s"},"status":"RUNNING"}}}` + "\n" +
			`{"type":"RECORD","record":{"stream":"s","data":{"id":3},"emitted_at":1}}` + "\n"; got != want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", tt.raw, got, want)
		}
		// The other formats write any JSON value as the API sent it.
		var rb bytes.Buffer
		rw, _ := NewRecordOutput(&rb, FormatRecords, nil)
		if err := rw.Records("s", recs([]byte(tt.raw))); err != nil {
			t.Errorf("%s in the records format: %v", tt.raw, err)
		}
		rw.Flush()
		if rb.String() != tt.raw+"\n" {
			t.Errorf("%s in the records format: %q", tt.raw, rb.String())
		}
	}
}
