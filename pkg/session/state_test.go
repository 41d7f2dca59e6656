package session

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/record"
)

func object(t *testing.T, text string) *record.Object {
	t.Helper()
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*record.Object)
}

func writeText(t *testing.T, dir, name, text string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// The state is read from its file and written back to it after every Set, in the
// background; the states of streams the read does not touch are kept; Close waits for the
// last write.
func TestStateWrittenBack(t *testing.T) {
	dir := t.TempDir()
	in := writeText(t, dir, "state.json", `{"other": {"updated": "2024-01-01"}, "items": {"updated": "2024-02-01"}}`)
	s, err := OpenState(StateFiles{In: in})
	if err != nil {
		t.Fatal(err)
	}
	if s.Out() != in {
		t.Errorf("Out = %s, want the input file", s.Out())
	}
	if got, _ := record.Marshal(s.Of("items")); string(got) != `{"updated":"2024-02-01"}` {
		t.Errorf("Of(items) = %s", got)
	}
	if s.Of("nope") != nil {
		t.Error("a stream without state has one")
	}
	for _, day := range []string{"02", "03", "04"} {
		s.Set("items", object(t, `{"updated":"2024-03-`+day+`"}`))
	}
	s.Set("full", object(t, `{"__ab_no_cursor_state_message":true}`))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"other"},"stream_state":{"updated":"2024-01-01"}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"updated":"2024-03-04"}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"full"},"stream_state":{"__ab_no_cursor_state_message":true}}}` + "\n]\n"
	if string(got) != want {
		t.Errorf("state file:\n%s\nwant:\n%s", got, want)
	}
	if d, ok := s.Describe("items"); !ok || d != `{"updated":"2024-03-04"}` {
		t.Errorf("Describe(items) = %q, %v", d, ok)
	}
	if d, ok := s.Describe("full"); ok {
		t.Errorf("a full refresh stream's state is described: %s", d)
	}
	long := `{"v":"` + strings.Repeat("x", 200) + `"}`
	s.Set("long", object(t, long))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if d, _ := s.Describe("long"); d != long[:157]+"…" {
		t.Errorf("a long state is described as %s", d)
	}
}

// A state file that does not exist yet is an empty state, written at the first Set; Out
// writes elsewhere than In; ReadOnly writes nothing; without a file, a recorded state
// is read.
func TestStateFiles(t *testing.T) {
	dir := t.TempDir()
	in := writeText(t, dir, "in.json", `{"items": {"n": 1}}`)
	out := filepath.Join(dir, "out.json")
	s, err := OpenState(StateFiles{In: in, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	s.Set("items", object(t, `{"n":2}`))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(in); string(data) != `{"items": {"n": 1}}` {
		t.Errorf("the input file changed: %s", data)
	}
	if data, _ := os.ReadFile(out); !strings.Contains(string(data), `"stream_state":{"n":2}`) {
		t.Errorf("the output file: %s", data)
	}

	ro, err := OpenState(StateFiles{In: in, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ro.Set("items", object(t, `{"n":3}`))
	if err := ro.Close(); err != nil || ro.Out() != "" {
		t.Errorf("Close = %v, Out = %q", err, ro.Out())
	}
	if data, _ := os.ReadFile(in); string(data) != `{"items": {"n": 1}}` {
		t.Errorf("a read-only state was written: %s", data)
	}
	if d, ok := ro.Describe("items"); !ok || d != `{"n":3}` {
		t.Errorf("Describe = %q, %v", d, ok)
	}

	fresh := filepath.Join(dir, "fresh.json")
	fs, err := OpenState(StateFiles{In: fresh})
	if err != nil || fs.Of("items") != nil || fs.Out() != fresh {
		t.Fatalf("a new state file: %v, %v, %q", err, fs.Of("items"), fs.Out())
	}
	fs.Set("items", object(t, `{"n":9}`))
	if err := fs.Close(); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(fresh); !strings.Contains(string(data), `"stream_state":{"n":9}`) {
		t.Errorf("the new state file: %s", data)
	}

	rec, err := OpenState(StateFiles{Recorded: []byte(`{"items": {"n": 5}}`), RecordedFrom: "run.har"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := record.Marshal(rec.Of("items")); string(got) != `{"n":5}` {
		t.Errorf("recorded state %s", got)
	}
}

// What cannot be read is an InvalidError, what cannot be written an ArgumentError, both
// found before the read.
func TestOpenStateErrors(t *testing.T) {
	dir := t.TempDir()
	bad := writeText(t, dir, "bad.json", `42`)
	tests := []struct {
		name    string
		files   StateFiles
		invalid bool
		want    string
	}{
		{"a folder to read", StateFiles{In: dir}, true,
			"cannot read the state file: " + dir + ": is a directory"},
		{"not a state", StateFiles{In: bad}, true,
			"state file " + bad + ": a state file is a list of STATE messages (or a mapping of stream names to states), not a number"},
		{"a recorded state that is not one", StateFiles{Recorded: []byte(`[1`), RecordedFrom: "run.har"}, true,
			"the state recorded in run.har: "},
		{"a folder that does not exist", StateFiles{Out: filepath.Join(dir, "no", "state.json")}, false,
			"cannot write the state file " + filepath.Join(dir, "no", "state.json") + ": the folder " + filepath.Join(dir, "no") + " does not exist"},
		{"a folder", StateFiles{Out: dir}, false,
			"cannot write the state file " + dir + ": it is a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := OpenState(tt.files)
			var ie *InvalidError
			var ae *ArgumentError
			if tt.invalid && !errors.As(err, &ie) || !tt.invalid && !errors.As(err, &ae) {
				t.Fatalf("error %v (%T)", err, err)
			}
			if strings.HasSuffix(tt.want, ": ") && !strings.HasPrefix(err.Error(), tt.want) || !strings.HasSuffix(tt.want, ": ") && err.Error() != tt.want {
				t.Errorf("error:\n  %s\nwant:\n  %s", err, tt.want)
			}
		})
	}
}

// A state written where it cannot go is reported by Close.
func TestStateWriteFailure(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "state.json")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := OpenState(StateFiles{Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	s.Set("items", object(t, `{"n":1}`))
	err = s.Close()
	if err == nil || !strings.HasPrefix(err.Error(), "cannot write the state file: ") {
		t.Errorf("Close = %v, want the write's failure", err)
	}
}

// Check refuses a state that does not fit a stream, naming the state.
func TestStateCheck(t *testing.T) {
	def := definition(bearer, bearerSpec)
	def = strings.Replace(def, "  - {type: DeclarativeStream, name: items, retriever: {$ref: \"#/definitions/retriever\"}}",
		`  - type: DeclarativeStream
    name: items
    retriever: {$ref: "#/definitions/retriever"}
    incremental_sync: {type: DatetimeBasedCursor, cursor_field: updated, datetime_format: "%Y-%m-%d", start_datetime: "2024-01-01", end_datetime: "2024-01-02"}`, 1)
	s, err := open(t, def, "base_url: https://api.test\napi_key: k\n", Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, err := OpenState(StateFiles{In: writeText(t, dir, "state.json", `{"items": {"updated": "soon"}}`)})
	if err != nil {
		t.Fatal(err)
	}
	o := s.Options()
	o.StateOf = st.Of
	err = st.Check(o, "", s.Streams)
	want := `the state: the state of stream items does not fit its incremental_sync: key "updated": no format in ['%Y-%m-%d'] matching soon (fix the state, or start over without it)`
	var ie *InvalidError
	if !errors.As(err, &ie) || err.Error() != want {
		t.Errorf("error:\n  %v\nwant:\n  %s", err, want)
	}
	if err := st.Check(o, "state.json", s.Streams[1:]); err != nil {
		t.Errorf("a stream without a cursor: %v", err)
	}
}
