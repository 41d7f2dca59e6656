package output

import (
	"bytes"
	"testing"
)

// The records format writes each record alone on its line, byte for byte (numbers, key
// order, nulls and HTML characters as sent), an edited record as its object, any JSON
// value, and nothing else: no status, state, log, control or error.
func TestRecordsFormat(t *testing.T) {
	var buf bytes.Buffer
	out := newRecords(&buf)
	raw := []byte(`{"id":12345678901234567890,"h":"<a&b>","n":null}`)
	got := writeAll(t, out, &buf,
		recs(raw, raw),
		append(recs([]byte(`{"x":1}`)), edited()),
		recs([]byte(`1`), []byte(`"x"`), []byte(`[{"id":1}]`), []byte(`null`)))
	want := `{"id":12345678901234567890,"h":"<a&b>","n":null}` + "\n" +
		`{"id":12345678901234567890,"h":"<a&b>","n":null}` + "\n" +
		`{"x":1}` + "\n" +
		`{"id":12345678901234567890,"name":"<b> & é","gone":null}` + "\n" +
		"1\n\"x\"\n[{\"id\":1}]\nnull\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
