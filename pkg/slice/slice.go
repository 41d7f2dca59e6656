// Package slice divides a stream into the slices it is read in: the partitions of its
// partition router (a list of values, the records of a parent stream, their groups, unions
// and cartesian products), as the Airbyte CDK makes them, in the CDK's order. A stream with
// no router has one empty slice. An incremental cursor (pkg/incremental) wraps a router and
// divides each of its partitions into intervals.
//
// A router makes its slices lazily (a substream's partitions come as its parent is read) and
// says where a slice's values go in a request (its request_option). It does no I/O itself:
// a parent stream is read through the Env's ReadParent.
package slice

import (
	"strings"

	"connector/pkg/record"
	"connector/pkg/template"
)

// Slice is one part of a stream read on its own: the CDK's StreamSlice. Templates see it as
// stream_slice (and as stream_partition and stream_interval, the CDK's aliases): a mapping of
// the partition's keys and the interval's, with the attributes partition, cursor_slice and
// extra_fields.
type Slice struct {
	Partition *record.Object
	Cursor    *record.Object
	// Extra are the extra fields: values carried along that are not part of the partition
	// (a substream's extra_fields, the keys a union moved out of the partition).
	Extra *record.Object
	// Lazy, when set, is the first page of the slice taken from its parent record
	// (lazy_read_pointer), as JSON text: the slice's first page is read from it, not
	// requested.
	Lazy []byte
	// Number is the slice's place in its stream (1 for the first).
	Number int
	// Mark is what the incremental cursor that made the slice keeps about it.
	Mark any
}

// New returns a slice of the given partition (nil: empty).
func New(partition *record.Object) *Slice {
	if partition == nil {
		partition = &record.Object{}
	}
	return &Slice{Partition: partition, Cursor: &record.Object{}, Extra: &record.Object{}}
}

// Get returns the value of a key of the partition or the interval.
func (s *Slice) Get(key string) (any, bool) {
	if v, ok := s.Partition.Get(key); ok {
		return v, true
	}
	return s.Cursor.Get(key)
}

// Keys are the partition's keys, then the interval's.
func (s *Slice) Keys() []string {
	if s.Cursor.Len() == 0 {
		return s.Partition.Keys()
	}
	return append(append([]string{}, s.Partition.Keys()...), s.Cursor.Keys()...)
}

// Attr gives the attributes of the CDK's StreamSlice (`_partition` is one a real definition
// reads).
func (s *Slice) Attr(name string) (any, bool) {
	switch name {
	case "partition", "_partition":
		return s.Partition, true
	case "cursor_slice":
		return s.Cursor, true
	case "extra_fields":
		return s.Extra, true
	}
	return nil, false
}

// Truthy is the StreamSlice's truth: it has keys, or extra fields.
func (s *Slice) Truthy() bool {
	return s.Partition.Len() > 0 || s.Cursor.Len() > 0 || s.Extra.Len() > 0
}

// Empty reports the one empty slice of a stream without partitions.
func (s *Slice) Empty() bool { return !s.Truthy() && s.Lazy == nil }

// Window is the slice's interval when an incremental cursor made one: its start and end
// as requests carry them.
func (s *Slice) Window() (start, end string, ok bool) {
	keys := s.Cursor.Keys()
	if len(keys) != 2 {
		return "", "", false
	}
	a, _ := s.Cursor.Get(keys[0])
	b, _ := s.Cursor.Get(keys[1])
	return template.ToString(a), template.ToString(b), true
}

// Label shows a slice in a trace: its interval as "start → end", after its partition's
// keys when it has a partition.
func (s *Slice) Label() string {
	start, end, ok := s.Window()
	if !ok {
		return s.String()
	}
	w := start + " → " + end
	if s.Partition.Len() == 0 {
		return w
	}
	p := &Slice{Partition: s.Partition, Cursor: &record.Object{}, Extra: s.Extra}
	return p.String() + " " + w
}

// String shows the slice's keys for messages and traces: {project_id: 42, parent_slice: {}}.
func (s *Slice) String() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, k := range s.Keys() {
		if i > 0 {
			b.WriteString(", ")
		}
		v, _ := s.Get(k)
		b.WriteString(k)
		b.WriteString(": ")
		b.WriteString(show(v))
	}
	b.WriteByte('}')
	return b.String()
}

// show is a value as it appears in a slice's description: JSON, cut when long.
func show(v any) string {
	text, err := record.Marshal(v)
	s := string(text)
	if err != nil {
		s = template.ToString(v)
	}
	if len(s) > 80 {
		s = s[:77] + "…"
	}
	return s
}
