package queryprops

import (
	"reflect"
	"testing"

	"connector/pkg/record"
)

// The expected chunks are what the CDK 7.28.2's QueryProperties.get_request_property_chunks
// returned for the same input (run with its own classes).
func TestChunks(t *testing.T) {
	fields := []string{"name", "email", "created_at", "a", "updated"}
	tests := []struct {
		name   string
		always []string
		c      *Chunking
		want   [][]string
	}{
		{"two properties a chunk", []string{"id"}, &Chunking{PropertyCount, 2},
			[][]string{{"id", "name", "email"}, {"id", "created_at", "a"}, {"id", "updated"}}},
		{"12 characters a chunk", []string{"id"}, &Chunking{Characters, 12},
			[][]string{{"id", "name"}, {"id", "email"}, {"id", "created_at"}, {"id", "a"}, {"id", "updated"}}},
		{"chunking without a limit puts the always-included last", []string{"id"}, &Chunking{Characters, 0},
			[][]string{{"name", "email", "created_at", "a", "updated", "id"}}},
		{"no chunking puts them first", []string{"id"}, nil,
			[][]string{{"id", "name", "email", "created_at", "a", "updated"}}},
		{"a field over the limit after an empty chunk", nil, &Chunking{Characters, 5},
			[][]string{{}, {"name"}, {"email"}, {"created_at"}, {"a"}, {"updated"}}},
		{"one a chunk", []string{}, &Chunking{PropertyCount, 1},
			[][]string{{"name"}, {"email"}, {"created_at"}, {"a"}, {"updated"}}},
	}
	for _, tc := range tests {
		if got := Chunks(fields, tc.always, tc.c); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
}

func obj(t *testing.T, s string) *record.Object {
	t.Helper()
	v, err := record.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*record.Object)
}

// The merged record is what the CDK's _deep_merge made of the same two records.
func TestMerger(t *testing.T) {
	m := NewMerger([]string{"id"})
	for _, s := range []string{`{"id":"1","a":{"x":1,"y":2},"b":1}`, `{"id":"2","n":1}`, `{"id":"1","a":{"y":3,"z":4},"c":2,"b":{"q":1}}`} {
		if ok, err := m.Add(obj(t, s)); !ok || err != nil {
			t.Fatalf("Add(%s) = %v, %v", s, ok, err)
		}
	}
	var got []string
	for _, r := range m.Records() {
		b, _ := record.Record{Object: r}.AppendJSON(nil)
		got = append(got, string(b))
	}
	want := []string{`{"id":"1","a":{"x":1,"y":3,"z":4},"b":{"q":1},"c":2}`, `{"id":"2","n":1}`}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("merged %q, want %q", got, want)
	}
	if ok, _ := m.Add(obj(t, `{"id":"","x":1}`)); ok {
		t.Error("a record with an empty key was merged; the CDK passes it through")
	}
	if _, err := m.Add(obj(t, `{"id":5}`)); err == nil || err.Error() != `GroupByKeyMergeStrategy: the value of key "id" is a number, not a string; the CDK cannot join it into a merge key` {
		t.Errorf("a number key: %v", err)
	}
}
