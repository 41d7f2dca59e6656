package state

import (
	"fmt"
	"strings"
	"testing"
)

func parse(t *testing.T, text string) *File {
	t.Helper()
	f, err := Parse("state.json", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// changes writes the differences one a line: kind, stream, entry, old, new.
func changes(cs []Change) string {
	var b strings.Builder
	for _, c := range cs {
		entry := c.Entry.Key
		if c.Entry.Partition != nil {
			entry = "partition " + Canonical(c.Entry.Partition)
		}
		fmt.Fprintf(&b, "%s %s/%s [%s] %s → %s\n", c.Kind, c.Namespace, c.Stream, entry, Canonical(c.Old), Canonical(c.New))
	}
	return b.String()
}

func TestPartitions(t *testing.T) {
	f := parse(t, `{"comments":{"use_global_cursor":false,"states":[{"partition":{"id":1},"cursor":{"at":"a"}},{"partition":{"id":2},"cursor":{"at":"b"}}],"state":{"at":"b"}},
	"orders":{"states":[{"partition":{"id":1}}]}, "users":{"at":"c"}}`)
	parts, ok := Partitions(f.Get("comments"))
	if !ok || len(parts) != 2 || Canonical(parts[1].Partition) != `{"id":2}` || Canonical(parts[1].Value) != `{"at":"b"}` {
		t.Errorf("comments: %v %+v", ok, parts)
	}
	if _, ok := Partitions(f.Get("orders")); ok {
		t.Error(`a "states" list without cursors is not a per-partition state`)
	}
	if _, ok := Partitions(f.Get("users")); ok {
		t.Error("users has no partitions")
	}
	var keys []string
	for _, e := range Entries(f.Get("comments")) {
		if e.Partition != nil {
			keys = append(keys, "partition "+Canonical(e.Partition))
		} else {
			keys = append(keys, e.Key)
		}
	}
	if got := strings.Join(keys, ", "); got != `use_global_cursor, state, partition {"id":1}, partition {"id":2}` {
		t.Errorf("entries: %s", got)
	}
}

func TestDiff(t *testing.T) {
	a := parse(t, `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05"}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"gone"},"stream_state":{"id":7}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"comments"},"stream_state":{"states":[
  {"partition":{"parent_slice":{},"project_id":1},"cursor":{"at":"a"}},
  {"partition":{"parent_slice":{},"project_id":2},"cursor":{"at":"b"}},
  {"partition":{"parent_slice":{},"project_id":4},"cursor":{"at":"b"}}],"state":{"at":"b"},"lookback_window":1}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"same","namespace":"public"},"stream_state":{"a":1,"b":{"c":2,"d":3}}}}
]`)
	// The same states in other forms and key orders, and the changes.
	b := parse(t, `[{"type":"GLOBAL","global":{"stream_states":[
{"stream_descriptor":{"namespace":"public","name":"same"},"stream_state":{"b":{"d":3,"c":2},"a":1}},
{"stream_descriptor":{"name":"comments"},"stream_state":{"state":{"at":"c"},"states":[
  {"partition":{"project_id":2,"parent_slice":{}},"cursor":{"at":"b"}},
  {"partition":{"parent_slice":{},"project_id":1},"cursor":{"at":"c"}},
  {"partition":{"parent_slice":{},"project_id":3},"cursor":{"at":"c"}}]}},
{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-07"}},
{"stream_descriptor":{"name":"new"},"stream_state":{"id":1}}]}}]`)
	want := `changed /orders [updated_at] "2024-01-05" → "2024-01-07"
removed /gone [] {"id":7} → null
changed /comments [state] {"at":"b"} → {"at":"c"}
removed /comments [lookback_window] 1 → null
changed /comments [partition {"parent_slice":{},"project_id":1}] {"at":"a"} → {"at":"c"}
removed /comments [partition {"parent_slice":{},"project_id":4}] {"at":"b"} → null
added /comments [partition {"parent_slice":{},"project_id":3}] null → {"at":"c"}
added /new [] null → {"id":1}
`
	if got := changes(Diff(a, b)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if got := changes(Diff(a, a)); got != "" {
		t.Errorf("a file differs from itself:\n%s", got)
	}
	// A namespace makes another stream.
	c := parse(t, `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"same"},"stream_state":{"a":1,"b":{"c":2,"d":3}}}}]`)
	if got := changes(Diff(a, c)); !strings.Contains(got, "removed public/same") || !strings.Contains(got, "added /same") {
		t.Errorf("namespace:\n%s", got)
	}
}

func TestGlobalIsMarked(t *testing.T) {
	f := parse(t, `[{"type":"GLOBAL","global":{"stream_states":[{"stream_descriptor":{"name":"a"},"stream_state":{"x":1}}]}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"b"},"stream_state":{"x":2}}}]`)
	if s := f.Streams(); len(s) != 2 || !s[0].Global || s[1].Global {
		t.Errorf("streams: %+v %+v", s[0], s[1])
	}
}
