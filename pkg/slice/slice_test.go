package slice

import (
	"strings"
	"testing"

	"connector/pkg/record"
)

func object(kv ...any) *record.Object {
	o := &record.Object{}
	for i := 0; i < len(kv); i += 2 {
		o.Set(kv[i].(string), kv[i+1])
	}
	return o
}

// A slice as templates and traces see it: keys of the partition then the interval, the
// StreamSlice attributes, its truth, and its description.
func TestSliceViews(t *testing.T) {
	long := strings.Repeat("x", 100)
	tests := []struct {
		name         string
		sl           *Slice
		keys         string
		str, label   string
		truthy, void bool
	}{{
		name: "empty", sl: New(nil),
		keys: "", str: "{}", label: "{}", truthy: false, void: true,
	}, {
		name: "lazy page only", sl: &Slice{Partition: &record.Object{}, Cursor: &record.Object{}, Extra: &record.Object{}, Lazy: []byte(`[]`)},
		keys: "", str: "{}", label: "{}", truthy: false, void: false,
	}, {
		name: "extra fields only", sl: &Slice{Partition: &record.Object{}, Cursor: &record.Object{}, Extra: object("name", "n")},
		keys: "", str: "{}", label: "{}", truthy: true, void: false,
	}, {
		name: "partition", sl: New(object("project_id", int64(42), "parent_slice", &record.Object{})),
		keys: "project_id,parent_slice", str: "{project_id: 42, parent_slice: {}}", label: "{project_id: 42, parent_slice: {}}", truthy: true,
	}, {
		name: "interval", sl: &Slice{Partition: &record.Object{}, Cursor: object("start_time", "2024-01-01", "end_time", "2024-01-31"), Extra: &record.Object{}},
		keys: "start_time,end_time", str: `{start_time: "2024-01-01", end_time: "2024-01-31"}`, label: "2024-01-01 → 2024-01-31", truthy: true,
	}, {
		name: "partition and interval", sl: &Slice{Partition: object("id", "a"), Cursor: object("s", int64(1), "e", int64(2)), Extra: &record.Object{}},
		keys: "id,s,e", str: `{id: "a", s: 1, e: 2}`, label: `{id: "a"} 1 → 2`, truthy: true,
	}, {
		name: "a long value is cut", sl: New(object("v", long)),
		keys: "v", str: `{v: "` + strings.Repeat("x", 76) + `…}`, label: `{v: "` + strings.Repeat("x", 76) + `…}`, truthy: true,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := strings.Join(tt.sl.Keys(), ","); got != tt.keys {
				t.Errorf("Keys = %s, want %s", got, tt.keys)
			}
			if got := tt.sl.String(); got != tt.str {
				t.Errorf("String = %s, want %s", got, tt.str)
			}
			if got := tt.sl.Label(); got != tt.label {
				t.Errorf("Label = %s, want %s", got, tt.label)
			}
			if got := tt.sl.Truthy(); got != tt.truthy {
				t.Errorf("Truthy = %v, want %v", got, tt.truthy)
			}
			if got := tt.sl.Empty(); got != tt.void {
				t.Errorf("Empty = %v, want %v", got, tt.void)
			}
		})
	}
}

// Get looks in the partition first, then the interval; Attr gives the CDK's attributes.
func TestSliceGetAndAttr(t *testing.T) {
	sl := &Slice{Partition: object("id", "p", "k", "partition"), Cursor: object("k", "cursor", "start", "s"), Extra: object("name", "n")}
	for key, want := range map[string]any{"id": "p", "k": "partition", "start": "s"} {
		if v, ok := sl.Get(key); !ok || v != want {
			t.Errorf("Get(%s) = %v, %v; want %v", key, v, ok, want)
		}
	}
	if v, ok := sl.Get("nope"); ok {
		t.Errorf("Get(nope) = %v, want nothing", v)
	}
	for name, want := range map[string]*record.Object{"partition": sl.Partition, "_partition": sl.Partition, "cursor_slice": sl.Cursor, "extra_fields": sl.Extra} {
		if v, ok := sl.Attr(name); !ok || v != want {
			t.Errorf("Attr(%s) = %v, %v", name, v, ok)
		}
	}
	if v, ok := sl.Attr("partition_id"); ok {
		t.Errorf("Attr(partition_id) = %v, want nothing", v)
	}
	if _, _, ok := New(object("a", 1)).Window(); ok {
		t.Error("a slice without an interval has no window")
	}
}
