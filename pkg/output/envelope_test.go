package output

import (
	"bytes"
	"testing"
)

// The envelope format writes each record as {"stream":…,"data":…}, the stream's name
// without HTML escaping and the data byte for byte, an edited record as its object, any
// JSON value, and nothing else: no status, state, log, control or error.
func TestEnvelopeFormat(t *testing.T) {
	var buf bytes.Buffer
	out := newEnvelope(&buf)
	raw := []byte(`{"id":12345678901234567890,"h":"<a&b>","n":null}`)
	got := writeAll(t, out, &buf,
		recs(raw, raw),
		append(recs([]byte(`{"x":1}`)), edited()),
		recs([]byte(`1`), []byte(`null`)))
	want := `{"stream":"s","data":{"id":12345678901234567890,"h":"<a&b>","n":null}}` + "\n" +
		`{"stream":"s","data":{"id":12345678901234567890,"h":"<a&b>","n":null}}` + "\n" +
		`{"stream":"s","data":{"x":1}}` + "\n" +
		`{"stream":"s","data":{"id":12345678901234567890,"name":"<b> & é","gone":null}}` + "\n" +
		`{"stream":"s","data":1}` + "\n" +
		`{"stream":"s","data":null}` + "\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// A stream's name is encoded once, as a JSON string without HTML escaping.
func TestEnvelopeFormatStreamName(t *testing.T) {
	var buf bytes.Buffer
	out := newEnvelope(&buf)
	for range 2 {
		if err := out.Records("a<b> \"q\"", recs([]byte(`{"id":1}`))); err != nil {
			t.Fatal(err)
		}
	}
	out.Close()
	want := `{"stream":"a<b> \"q\"","data":{"id":1}}` + "\n" + `{"stream":"a<b> \"q\"","data":{"id":1}}` + "\n"
	if buf.String() != want {
		t.Errorf("got %q, want %q", buf.String(), want)
	}
}
