// Package queryprops holds the pure decisions of the CDK's QueryProperties: how the property
// list is cut into the chunks sent one request each, and how the records the chunks return
// for one page are merged by key (GroupByKeyMergeStrategy). No I/O: pkg/run sends the
// chunks' requests and merges a page's records with these.
package queryprops

import (
	"fmt"
	"strings"

	"connector/pkg/record"
)

// LimitType is property_chunking.property_limit_type.
type LimitType string

// The limit types of PropertyChunking.
const (
	Characters    LimitType = "characters"
	PropertyCount LimitType = "property_count"
)

// Chunking is property_chunking.
type Chunking struct {
	Type LimitType
	// Limit is property_limit; 0 means none: one chunk.
	Limit int
}

// Chunks cuts fields into the property lists of the requests of one page, as the CDK does:
//   - without chunking: always_include_properties, then the fields;
//   - chunking without a limit: the fields, then always_include_properties;
//   - with a limit: each chunk starts with always_include_properties (which do not count
//     against the limit) and takes fields while they fit; a property counts 1, or with
//     characters its length plus 3 (the encoded delimiter). A field larger than the limit
//     gets a chunk of its own, after a chunk that may hold only the always-included ones.
func Chunks(fields, always []string, c *Chunking) [][]string {
	if c == nil {
		return [][]string{append(append([]string{}, always...), fields...)}
	}
	if c.Limit <= 0 {
		return [][]string{append(append([]string{}, fields...), always...)}
	}
	var out [][]string
	chunk, size := append([]string{}, always...), 0
	for _, f := range fields {
		n := 1
		if c.Type == Characters {
			n = len(f) + 3
		}
		if size+n > c.Limit {
			out = append(out, chunk)
			chunk, size = append([]string{}, always...), 0
		}
		chunk = append(chunk, f)
		size += n
	}
	return append(out, chunk)
}

// Value is the request parameter value of a chunk: the properties joined by commas.
func Value(chunk []string) string { return strings.Join(chunk, ",") }

// Merger merges the records of one page's chunk requests (GroupByKeyMergeStrategy; the CDK's
// default key is "id"). Records with a key are merged in the order their key first appeared;
// records without one are passed through at once.
type Merger struct {
	keys   []string
	order  []string
	merged map[string]*record.Object
}

// NewMerger merges by the values of keys.
func NewMerger(keys []string) *Merger {
	return &Merger{keys: keys, merged: map[string]*record.Object{}}
}

// Add takes one record. It returns false when the record has no merge key (a key missing,
// or its value false, empty, zero or null, as Python's truth): the caller emits it as it
// is. A key value that is not a string is an error, as the CDK's ",".join fails on it.
func (m *Merger) Add(rec *record.Object) (bool, error) {
	parts := make([]string, 0, len(m.keys))
	for _, k := range m.keys {
		v, ok := rec.Get(k)
		if !ok || !truthy(v) {
			return false, nil
		}
		s, isStr := v.(string)
		if !isStr {
			return false, fmt.Errorf("GroupByKeyMergeStrategy: the value of key %q is %s, not a string; the CDK cannot join it into a merge key", k, kind(v))
		}
		parts = append(parts, s)
	}
	key := strings.Join(parts, ",")
	target, seen := m.merged[key]
	if !seen {
		target = &record.Object{}
		m.merged[key] = target
		m.order = append(m.order, key)
	}
	deepMerge(target, rec)
	return true, nil
}

// Records returns the merged records, in the order their keys first appeared.
func (m *Merger) Records() []*record.Object {
	out := make([]*record.Object, len(m.order))
	for i, k := range m.order {
		out[i] = m.merged[k]
	}
	return out
}

// deepMerge is the CDK's _deep_merge: objects on both sides merge, anything else replaces
// (an existing key keeps its place).
func deepMerge(target, source *record.Object) {
	for _, k := range source.Keys() {
		v, _ := source.Get(k)
		if old, ok := target.Get(k); ok {
			if to, isObj := old.(*record.Object); isObj {
				if so, isObj := v.(*record.Object); isObj {
					deepMerge(to, so)
					continue
				}
			}
		}
		if so, isObj := v.(*record.Object); isObj {
			v = copyObject(so)
		}
		target.Set(k, v)
	}
}

func copyObject(o *record.Object) *record.Object {
	c := &record.Object{}
	for _, k := range o.Keys() {
		v, _ := o.Get(k)
		if so, isObj := v.(*record.Object); isObj {
			v = copyObject(so)
		}
		c.Set(k, v)
	}
	return c
}

func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case []any:
		return len(x) > 0
	case *record.Object:
		return x.Len() > 0
	}
	return fmt.Sprint(v) != "0" && fmt.Sprint(v) != "0.0"
}

func kind(v any) string {
	switch v.(type) {
	case bool:
		return "a boolean"
	case []any:
		return "a list"
	case *record.Object:
		return "an object"
	}
	return "a number"
}
