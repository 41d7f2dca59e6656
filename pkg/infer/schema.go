// Package infer works out what the Connector Builder's test read reports about the records it
// read: the JSON schema they fit (SchemaInferrer, the CDK's utils/schema_inferrer.py, which is
// built on the genson 1.3.0 library) and the datetime format of their top-level fields
// (DatetimeFormats, the CDK's utils/datetime_format_inferrer.py). Both give what the CDK
// gives, down to the order of keys in the schema, so that a StreamRead written from them has
// the CDK's bytes.
//
// Records are given decoded as record.Decode decodes them: objects as *record.Object (or
// map[string]any, whose keys are taken in sorted order), arrays as []any, numbers as
// json.Number (or int, int64, float64), strings, bools and nil. A number is an integer, as
// Python's json module reads it, when its text has no '.', 'e' or 'E'.
package infer

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	"connector/pkg/record"
)

// SchemaURI is the $schema of an inferred schema: genson's default.
const SchemaURI = "http://json-schema.org/schema#"

// SchemaInferrer accumulates the records of streams and infers, per stream, a JSON schema
// that every one of them fits. The zero value is not ready; use NewSchemaInferrer. It is not
// safe for concurrent use.
type SchemaInferrer struct {
	pk, cursor [][]string
	streams    map[string]*node
	order      []string // the streams in the order their first record came
}

// NewSchemaInferrer returns an inferrer that marks the fields of the primary key and of the
// cursor as required and not nullable in the schemas it infers. Each is a list of field
// paths, as the CDK's SchemaInferrer takes them: the test read gives the primary key as
// manifest.Stream.PrimaryKeyPaths does (one path per key field) and the cursor field as a
// single path ([][]string{{field}}). nil or empty: nothing is marked.
func NewSchemaInferrer(pk, cursor [][]string) *SchemaInferrer {
	return &SchemaInferrer{pk: pk, cursor: cursor, streams: map[string]*node{}}
}

// Accumulate adds a record of stream. The record must be an object; a value of a Go type
// that JSON does not decode to is an error (the record may then be partly added, as in
// genson).
func (s *SchemaInferrer) Accumulate(stream string, data any) error {
	if !isObject(data) {
		return fmt.Errorf("a record of stream %q is %s, not an object", stream, describe(data))
	}
	n := s.streams[stream]
	if n == nil {
		n = &node{}
		s.streams[stream] = n
		s.order = append(s.order, stream)
	}
	return n.add(data)
}

// Streams returns the streams that have records, in the order their first record came.
func (s *SchemaInferrer) Streams() []string { return slices.Clone(s.order) }

// Schema returns the schema inferred for stream, nil when it has no record. Its keys are in
// the order of the CDK's dict, so record.Marshal writes what json.dumps of that dict writes
// with separators=(",", ":") and ensure_ascii=False, but for U+2028 and U+2029 in a field
// name, which Go's encoder escapes.
//
// problems are the key paths that could not be marked required, in the CDK's words (its
// SchemaValidationException.validation_errors: the test read logs each as an ERROR and still
// reports the schema, marked as far as it went). err is set where the CDK's inferrer raises
// an exception that fails the whole test read (a key path through a field whose values are
// of several complex kinds, whose schema has no "type"); its text is Python's str() of it.
func (s *SchemaInferrer) Schema(stream string) (schema *record.Object, problems []string, err error) {
	n := s.streams[stream]
	if n == nil {
		return nil, nil, nil
	}
	schema = &record.Object{}
	schema.Set("$schema", SchemaURI)
	root := n.schema()
	for _, k := range root.Keys() {
		v, _ := root.Get(k)
		schema.Set(k, v)
	}
	clean(schema)
	problems, err = markRequired(schema, s.pk, s.cursor)
	return schema, problems, err
}

// kind is a genson strategy: what a value of the schema node was. Objects, numbers (integers
// too: the CDK's inferrer never says "integer"), null, booleans, strings and arrays each have
// one.
type kind uint8

const (
	kindObject kind = iota
	kindNumber
	kindNull
	kindBoolean
	kindString
	kindArray
	kinds
)

var kindNames = [kinds]string{"object", "number", "null", "boolean", "string", "array"}

// node is a genson schema node: the kinds of value seen at one place of the records, in the
// order they were first seen, with the properties of the objects and the node of the array
// items seen there.
type node struct {
	seen  [kinds]kind
	nseen uint8
	props properties
	items *node // set once an array was seen, empty until one had an item
}

// properties are the fields of the objects seen at a node, in the order first seen.
type properties struct {
	names []string
	nodes []*node
	index map[string]int // once there are more than indexFrom names
}

const indexFrom = 16

// get returns the node of a field, added when new. hint is where the field is likely to be
// (records of a stream mostly list their fields in the same order), -1 for no guess.
func (p *properties) get(name string, hint int) *node {
	if hint >= 0 && hint < len(p.names) && p.names[hint] == name {
		return p.nodes[hint]
	}
	if p.index != nil {
		if i, ok := p.index[name]; ok {
			return p.nodes[i]
		}
	} else {
		for i, x := range p.names {
			if x == name {
				return p.nodes[i]
			}
		}
	}
	n := &node{}
	p.names = append(p.names, name)
	p.nodes = append(p.nodes, n)
	switch {
	case p.index != nil:
		p.index[name] = len(p.names) - 1
	case len(p.names) > indexFrom:
		p.index = make(map[string]int, 2*len(p.names))
		for i, x := range p.names {
			p.index[x] = i
		}
	}
	return n
}

// mark records that a value of kind k was seen.
func (n *node) mark(k kind) {
	for _, x := range n.seen[:n.nseen] {
		if x == k {
			return
		}
	}
	n.seen[n.nseen] = k
	n.nseen++
}

// add takes one value into the node.
func (n *node) add(v any) error {
	switch x := v.(type) {
	case nil:
		n.mark(kindNull)
	case bool:
		n.mark(kindBoolean)
	case string:
		n.mark(kindString)
	case json.Number, int, int64, float64, int32, float32, uint, uint32, uint64:
		n.mark(kindNumber)
	case *record.Object:
		n.mark(kindObject)
		for i, k := range x.Keys() {
			e, _ := x.Get(k)
			if err := n.props.get(k, i).add(e); err != nil {
				return err
			}
		}
	case map[string]any:
		n.mark(kindObject)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if err := n.props.get(k, -1).add(x[k]); err != nil {
				return err
			}
		}
	case []any:
		n.mark(kindArray)
		if n.items == nil {
			n.items = &node{}
		}
		for _, e := range x {
			if err := n.items.add(e); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("cannot infer the schema of a %T", v)
	}
	return nil
}

// schema is the schema genson writes for the node: the kinds whose schema is only a type
// together first (one type, or the sorted list of them), then the schemas of the objects
// with properties and the arrays with items, in the order first seen; more than one schema
// is an anyOf. As in the CDK, objects say no "required".
func (n *node) schema() *record.Object {
	var types []string
	var complex []any
	for _, k := range n.seen[:n.nseen] {
		switch {
		case k == kindObject && len(n.props.names) > 0:
			props := &record.Object{}
			for i, name := range n.props.names {
				props.Set(name, n.props.nodes[i].schema())
			}
			complex = append(complex, typed("object", "properties", props))
		case k == kindArray && n.items.nseen > 0:
			complex = append(complex, typed("array", "items", n.items.schema()))
		default:
			types = append(types, kindNames[k])
		}
	}
	var all []any
	switch len(types) {
	case 0:
	case 1:
		all = append(all, typed(types[0], "", nil))
	default:
		slices.Sort(types)
		all = append(all, typed(toAny(types), "", nil))
	}
	all = append(all, complex...)
	switch len(all) {
	case 0:
		return &record.Object{}
	case 1:
		return all[0].(*record.Object)
	}
	o := &record.Object{}
	o.Set("anyOf", all)
	return o
}

// typed is {"type": t} with one more key when key is not "".
func typed(t any, key string, v any) *record.Object {
	o := &record.Object{}
	o.Set("type", t)
	if key != "" {
		o.Set(key, v)
	}
	return o
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

func isObject(v any) bool {
	switch v.(type) {
	case *record.Object, map[string]any:
		return true
	}
	return false
}

// describe names the JSON kind of a value, for messages.
func describe(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case string:
		return "a string"
	case []any:
		return "an array"
	case json.Number, int, int64, float64:
		return "a number"
	}
	return fmt.Sprintf("a %T", v)
}
