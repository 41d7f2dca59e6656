package incremental

import (
	"errors"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

func compile(t *testing.T, src string) *template.Template {
	t.Helper()
	tm, err := template.Compile(src, []string{"config", "parameters"})
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// countSpec is an IncrementingCountCursor on seq from start_value start ("" : none).
func countSpec(t *testing.T, start string) *manifest.Incremental {
	m := &manifest.Incremental{Type: manifest.CountCursor, CursorField: compile(t, "seq")}
	if start != "" {
		m.StartValue = compile(t, start)
	}
	return m
}

func TestCountCursorStart(t *testing.T) {
	t.Parallel()
	env := Env{Globals: template.Globals{Config: map[string]any{"start_seq": 4}}}
	tests := []struct{ name, start, state, want string }{
		{"no start_value: 0", "", "", "0"},
		{"start_value as a string", "4", "", "4"},
		{"start_value from the config", "{{ config['start_seq'] }}", "", "4"},
		{"the state's count", "4", `{"seq":13}`, "13"},
		{"a count below start_value", "4", `{"seq":2}`, "4"},
		{"a zero count is no count", "", `{"seq":0}`, "0"},
		{"another key only", "4", `{"other":99}`, "4"},
		{"a count spelled as written", "", `{"seq":13.0}`, "13.0"},
	}
	for _, tt := range tests {
		c, err := newCountCursor(countSpec(t, tt.start), env, testState(t, tt.state))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		sl := c.slice()
		start, _ := sl.Cursor.Get("start")
		end, _ := sl.Cursor.Get("end")
		if template.ToString(start) != tt.want || end != inf || sl.Cursor.Len() != 2 {
			t.Errorf("%s: slice %v..%v (%d keys), want {start: %s, end: +Inf}", tt.name, start, end, sl.Cursor.Len(), tt.want)
		}
		st, _ := record.Marshal(c.state())
		if want := `{"seq":` + tt.want + `}`; string(st) != want {
			t.Errorf("%s: state %s, want %s", tt.name, st, want)
		}
	}
}

func TestCountCursorObserve(t *testing.T) {
	t.Parallel()
	c, err := newCountCursor(countSpec(t, "4"), Env{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var m countMax
	for _, raw := range []string{`{"seq":5}`, `{"id":"x"}`, `{"seq":null}`, `{"seq":13}`, `{"seq":8}`} {
		if err := observeRaw(&m, raw); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
	}
	c.close(nil, &Tracker{count: m})
	if st, _ := record.Marshal(c.state()); string(st) != `{"seq":13}` {
		t.Errorf("state %s, want {\"seq\":13}", st)
	}
	// A later slice with smaller counts does not lower it.
	var low countMax
	observeRaw(&low, `{"seq":6}`)
	c.close(nil, &Tracker{count: low})
	if st, _ := record.Marshal(c.state()); string(st) != `{"seq":13}` {
		t.Errorf("state %s after smaller counts, want {\"seq\":13}", st)
	}
	var bad countMax
	if err := observeRaw(&bad, `{"seq":"13"}`); err == nil || err.Error() != `the IncrementingCountCursor's field "seq" holds 13, not a number` {
		t.Errorf("a string count: %v", err)
	}
}

func TestCountCursorErrors(t *testing.T) {
	t.Parallel()
	_, err := newCountCursor(countSpec(t, "4"), Env{}, testState(t, `{"seq":"x"}`))
	var se *StateError
	if !errors.As(err, &se) || err.Error() != `key "seq": an IncrementingCountCursor's state is a number, not x` {
		t.Errorf("a string state: %v", err)
	}
	if _, err := newCountCursor(countSpec(t, "four"), Env{}, nil); err == nil || err.Error() != `start_value "four" is not an integer` {
		t.Errorf("start_value four: %v", err)
	}
}

// observeRaw takes in the seq of a record given as JSON text.
func observeRaw(m *countMax, raw string) error {
	v, found := record.Field([]byte(raw), "seq")
	return m.observe(v, found, "seq")
}
