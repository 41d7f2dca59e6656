package state

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/record"
)

func TestReadEveryForm(t *testing.T) {
	list := `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05","n":1.50}}},
	{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"id":7}}}]`
	tests := map[string]string{
		"list":    list,
		"mapping": `{"orders":{"updated_at":"2024-01-05","n":1.50},"users":{"id":7}}`,
		"legacy":  `{"type":"LEGACY","data":{"orders":{"updated_at":"2024-01-05","n":1.50},"users":{"id":7}}}`,
		"global": `[{"type":"GLOBAL","global":{"shared_state":{},"stream_states":[{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05","n":1.50}},
		{"stream_descriptor":{"name":"users","namespace":null},"stream_state":{"id":7}}]}}]`,
		"read output lines": `{"type":"RECORD","record":{"stream":"orders","data":{}}}
{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-01"}},"sourceStats":{"recordCount":1.0}}}
{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05","n":1.50}}}}
{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"id":7}}}}`,
	}
	want := `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05","n":1.50}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"id":7}}}
]
`
	for name, text := range tests {
		f, err := Parse("state.json", []byte(text))
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		got, _ := f.Marshal()
		if string(got) != want {
			t.Errorf("%s:\n%s\nwant\n%s", name, got, want)
		}
	}
}

func TestReadErrors(t *testing.T) {
	for text, want := range map[string]string{
		`5`: `state.json: a state file is a list of STATE messages (or a mapping of stream names to states), not a number`,
		`[{"type":"STREAM","stream":{"stream_state":{}}}]`:                                 `state.json: [0].stream: missing ` + "`stream_descriptor`",
		`[{"type":"STREAM","stream":{"stream_descriptor":{},"stream_state":{}}}]`:          `state.json: [0].stream.stream_descriptor: missing the stream ` + "`name`",
		`[{"type":"STREAM","stream":{"stream_descriptor":{"name":"a"},"stream_state":3}}]`: `state.json: [0].stream: ` + "`stream_state`" + ` must be an object, not a number`,
		`{"orders":[1]}`:      `state.json: the state of stream "orders" must be an object, not a list`,
		`[{"type":"GLOBAL"}]`: `state.json: [0]: a GLOBAL state message needs a ` + "`global`" + ` object`,
		`[{"type":"GLOBAL","global":{"shared_state":{"lsn":1},"stream_states":[]}}]`: `state.json: [0].global: a GLOBAL state with a ` + "`shared_state`" + ` (as database sources write) is not one a declarative connector reads; give each stream its own STREAM state`,
		`[{"type":"GLOBAL","global":{"stream_states":[{"stream_state":{}}]}}]`:       `state.json: [0].global.stream_states[0]: missing ` + "`stream_descriptor`",
		`[{"type":"BOGUS"}]`:       `state.json: [0]: unknown state message type BOGUS (STREAM, LEGACY)`,
		"{\"type\":\"RECORD\"}\n{": `state.json: line 2: invalid JSON at byte 1: expected a key`,
	} {
		_, err := Parse("state.json", []byte(text))
		var se *Error
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("Parse(%s) = %v\nwant %s", text, err, want)
		}
	}
}

func TestMissingFileIsEmptyAndWriteKeepsOthers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "state.json")
	f, err := Read(path)
	if err != nil || len(f.Streams()) != 0 {
		t.Fatalf("missing file: %v %v", f, err)
	}
	os.WriteFile(path, []byte(`{"kept":{"a":1},"orders":{"x":1}}`), 0o600)
	f, err = Read(path)
	if err != nil {
		t.Fatal(err)
	}
	st := &record.Object{}
	st.Set("updated_at", "2024-02-01")
	f.Set("orders", st)
	f.Set("new", &record.Object{})
	if err := f.Write(path); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(path)
	want := `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"kept"},"stream_state":{"a":1}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-02-01"}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"new"},"stream_state":{}}}
]
`
	if string(got) != want {
		t.Errorf("got\n%s", got)
	}
	if st := f.Get("kept"); st == nil || st.Len() != 1 || f.Get("none") != nil {
		t.Error("Get")
	}
	os.WriteFile(path, []byte(strings.Repeat(" ", maxFile+1)), 0o600)
	if _, err := Read(path); err == nil || !strings.Contains(err.Error(), "larger than 64 MiB") {
		t.Errorf("a huge file: %v", err)
	}
}

// TestGlobalStateMessage: a GLOBAL message without a shared state gives the per-stream
// states inside, as the CDK reads it.
func TestGlobalStateMessage(t *testing.T) {
	f, err := Parse("state.json", []byte(`[{"type":"GLOBAL","global":{"shared_state":{},"stream_states":[{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-02T00:00:00Z"}}]}}]`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := record.Marshal(f.Get("events"))
	if err != nil || string(got) != `{"updated_at":"2024-03-02T00:00:00Z"}` {
		t.Errorf("events: %s, %v", got, err)
	}
}
