package state

import (
	"connector/pkg/record"
)

// Entry is one part of a stream's state as a person reads it: a key of the state, or one
// partition of a per-partition state (the CDK's {"states": [{"partition": …, "cursor": …}]}).
type Entry struct {
	// Key is the key of the state; "" for a partition.
	Key string
	// Partition is the partition of a per-partition state's entry; nil for a key.
	Partition *record.Object
	// Value is the key's value, or the partition's cursor.
	Value any
}

// id is what names the entry in both states of a diff: the key, or the partition with its
// keys in order.
func (e Entry) id() string {
	if e.Partition != nil {
		return "partition " + Canonical(e.Partition)
	}
	return "key " + e.Key
}

// Partitions are the partitions of a per-partition state, in order, and whether st is one:
// a "states" list whose every element is an object with a "partition" object and a
// "cursor".
func Partitions(st *record.Object) ([]Entry, bool) {
	if st == nil {
		return nil, false
	}
	v, ok := st.Get("states")
	list, isList := v.([]any)
	if !ok || !isList {
		return nil, false
	}
	parts := make([]Entry, 0, len(list))
	for _, e := range list {
		o, ok := e.(*record.Object)
		if !ok {
			return nil, false
		}
		p, ok := get[*record.Object](o, "partition")
		cursor, hasCursor := o.Get("cursor")
		if !ok || !hasCursor {
			return nil, false
		}
		parts = append(parts, Entry{Partition: p, Value: cursor})
	}
	return parts, true
}

// Entries are the parts of a stream's state: each key in order, except that the list of a
// per-partition state gives an entry per partition, after the other keys.
func Entries(st *record.Object) []Entry {
	if st == nil {
		return nil
	}
	parts, perPartition := Partitions(st)
	var entries []Entry
	for _, k := range st.Keys() {
		if perPartition && k == "states" {
			continue
		}
		v, _ := st.Get(k)
		entries = append(entries, Entry{Key: k, Value: v})
	}
	return append(entries, parts...)
}

// Canonical is v as compact JSON with the keys of every object in order, so that two states
// written with their keys in another order compare equal. Numbers keep their spelling.
func Canonical(v any) string {
	b, err := record.Marshal(sorted(v))
	if err != nil {
		return ""
	}
	return string(b)
}

// sorted turns the objects in v into maps, which record.Marshal writes with sorted keys.
func sorted(v any) any {
	switch x := v.(type) {
	case *record.Object:
		m := make(map[string]any, x.Len())
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			m[k] = sorted(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sorted(e)
		}
		return out
	}
	return v
}

// Change is one difference between two state files.
type Change struct {
	// Kind is Added, Removed or Changed.
	Kind      string
	Stream    string
	Namespace string
	// Entry names the part of the stream's state that differs: a key, or a partition; its
	// zero value is the whole stream (added or removed).
	Entry Entry
	// Old and New are the values before and after: the stream's state for a whole stream,
	// else the entry's value; nil for what is absent.
	Old, New any
}

// The kinds of a Change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
)

// Diff lists how the state file b differs from a: streams added (in b's order), removed and
// changed (in a's order, the removed ones where they were); within a stream in both, the keys
// and partitions added, removed and changed. Keys are compared whatever their order in the
// objects. No change means the two files hold the same states.
func Diff(a, b *File) []Change {
	var changes []Change
	for _, sa := range a.streams {
		sb := b.find(sa.Name, sa.Namespace)
		if sb == nil {
			changes = append(changes, Change{Kind: Removed, Stream: sa.Name, Namespace: sa.Namespace, Old: sa.State})
			continue
		}
		if Canonical(sa.State) == Canonical(sb.State) {
			continue
		}
		changes = append(changes, diffEntries(sa, Entries(sa.State), Entries(sb.State))...)
	}
	for _, sb := range b.streams {
		if a.find(sb.Name, sb.Namespace) == nil {
			changes = append(changes, Change{Kind: Added, Stream: sb.Name, Namespace: sb.Namespace, New: sb.State})
		}
	}
	return changes
}

// diffEntries compares the entries of one stream's two states: removed and changed ones in
// the old order, then the added ones in the new order.
func diffEntries(s *Stream, old, new []Entry) []Change {
	byID := func(entries []Entry) map[string]Entry {
		m := make(map[string]Entry, len(entries))
		for _, e := range entries {
			m[e.id()] = e
		}
		return m
	}
	oldIDs, newIDs := byID(old), byID(new)
	var changes []Change
	change := func(kind string, e Entry, o, n any) {
		e.Value = nil
		changes = append(changes, Change{Kind: kind, Stream: s.Name, Namespace: s.Namespace, Entry: e, Old: o, New: n})
	}
	for _, e := range old {
		n, ok := newIDs[e.id()]
		switch {
		case !ok:
			change(Removed, e, e.Value, nil)
		case Canonical(e.Value) != Canonical(n.Value):
			change(Changed, e, e.Value, n.Value)
		}
	}
	for _, e := range new {
		if _, ok := oldIDs[e.id()]; !ok {
			change(Added, e, nil, e.Value)
		}
	}
	return changes
}

// find is the stream of that name and namespace, nil when it has no state.
func (f *File) find(name, ns string) *Stream {
	for _, s := range f.streams {
		if s.Name == name && s.Namespace == ns {
			return s
		}
	}
	return nil
}
