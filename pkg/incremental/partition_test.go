package incremental

import (
	"testing"

	"connector/pkg/record"
)

func TestPartitionKeySortsEveryLevel(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`{"project_id":1,"parent_slice":{}}`, `{"parent_slice":{},"project_id":1}`},
		{`{"z":1,"parent_slice":{"z":{"y":2,"b":3},"a":"x"},"B":[{"d":1,"c":2}],"a":1.50}`,
			`{"B":[{"c":2,"d":1}],"a":1.50,"parent_slice":{"a":"x","z":{"b":3,"y":2}},"z":1}`},
		// By code point, as Python sorts: upper case before lower case, accents after z.
		{`{"é":1,"z":2,"Z":3,"a":4}`, `{"Z":3,"a":4,"z":2,"é":1}`},
	}
	for _, tt := range tests {
		key, sorted := partitionKey(testState(t, tt.in))
		if key != tt.want {
			t.Errorf("partitionKey(%s) = %s, want %s", tt.in, key, tt.want)
		}
		if b, _ := record.Marshal(sorted); string(b) != tt.want {
			t.Errorf("the partition written for %s is %s, want %s", tt.in, b, tt.want)
		}
	}
	a, _ := partitionKey(testState(t, `{"a":1,"b":{"c":1,"d":2}}`))
	b, _ := partitionKey(testState(t, `{"b":{"d":2,"c":1},"a":1}`))
	if a != b {
		t.Errorf("the same partition in another key order has another key: %s, %s", a, b)
	}
}

func TestParentStateOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, child, want string }{
		{"parent_state of the parent", `{"states":[],"state":{"updated_at":"x"},"parent_state":{"projects":{"updated_at":"p"}}}`, `{"updated_at":"p"}`},
		{"parent_state without the parent", `{"state":{"updated_at":"x"},"parent_state":{"other":{"a":1}}}`, ``},
		{"the child's global value", `{"states":[],"state":{"updated_at":"x"}}`, `{"updated_at":"x"}`},
		{"one value, under the parent's field", `{"updated_at":"2024-03-02T00:00:00Z"}`, `{"modified":"2024-03-02T00:00:00Z"}`},
		{"the no-cursor sentinel is not a value", `{"__ab_no_cursor_state_message":true}`, ``},
		{"the sentinel next to one value", `{"__ab_no_cursor_state_message":true,"updated_at":"v"}`, `{"modified":"v"}`},
		{"two values: none", `{"a":1,"b":2}`, ``},
		{"no state", ``, ``},
	}
	for _, tt := range tests {
		got := ParentStateOf(testState(t, tt.child), "projects", "modified")
		text := ""
		if got != nil {
			b, _ := record.Marshal(got)
			text = string(b)
		}
		if text != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, text, tt.want)
		}
	}
}

func TestPerPartitionStateIn(t *testing.T) {
	t.Parallel()
	sp := testSpec(t, isoZ, "2024-03-01T00:00:00Z", "2024-03-07T00:00:00Z", "P2D", "PT1S", "")
	// The CDK's state of substream-per-partition run 1, read and written back unchanged.
	in := `{"use_global_cursor":false,"states":[{"partition":{"parent_slice":{},"project_id":1},"cursor":{"updated_at":"2024-03-04T10:00:00Z"}},{"partition":{"project_id":2,"parent_slice":{}},"cursor":{"updated_at":"2024-03-02T09:00:00Z"}}],"state":{"updated_at":"2024-03-04T10:00:00Z"},"lookback_window":1,"parent_state":{}}`
	p, err := newPerPartition(sp, testState(t, in), false, Env{})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"use_global_cursor":false,"states":[{"partition":{"parent_slice":{},"project_id":1},"cursor":{"updated_at":"2024-03-04T10:00:00Z"}},{"partition":{"parent_slice":{},"project_id":2},"cursor":{"updated_at":"2024-03-02T09:00:00Z"}}],"state":{"updated_at":"2024-03-04T10:00:00Z"},"lookback_window":1}`
	if b, _ := record.Marshal(p.state()); string(b) != want {
		t.Errorf("state:\n%s\nwant:\n%s", b, want)
	}
	// A partition not in the state starts from the global value less lookback_window seconds.
	if got := allWindows(t, p.fromGlobal()); len(got) == 0 || got[0][:20] != "2024-03-04T09:59:59Z" {
		t.Errorf("a new partition's windows %q, want them from 2024-03-04T09:59:59Z", got)
	}
	// A state of one value: every partition starts from it, with no lookback.
	one, err := newPerPartition(sp, testState(t, `{"updated_at":"2024-03-02T00:00:00Z"}`), false, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if got := allWindows(t, one.fromGlobal()); len(got) == 0 || got[0][:20] != "2024-03-02T00:00:00Z" {
		t.Errorf("from a one-value state: windows %q, want them from 2024-03-02T00:00:00Z", got)
	}
	if b, _ := record.Marshal(one.state()); string(b) != `{"use_global_cursor":false,"states":[],"state":{"updated_at":"2024-03-02T00:00:00Z"},"lookback_window":0}` {
		t.Errorf("from a one-value state: state %s", b)
	}
}
