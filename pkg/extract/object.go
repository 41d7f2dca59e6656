package extract

import (
	"bytes"
	"slices"
)

// Object is a JSON object of a response body that is decoded on demand: a template reading
// `response.next` decodes the value of "next" and nothing else. It keeps the object's text,
// which Parse has already validated, its nesting included (no deeper than MaxDepth, so
// decoding a value is bounded too). Its values are what Want.Body would build
// (map[string]any, []any, string, json.Number, bool or nil); each is decoded once, on first
// access, and then kept, so a value changed by a template stays changed.
//
// Object satisfies the template package's Mapping interface. Keys come in sorted order, the
// order in which templates walk a decoded map, so a template sees no difference.
type Object struct {
	raw   []byte
	keys  []string        // sorted; nil until indexed
	spans map[string]span // where each key's value is in raw (the last one, for a repeated key)
	vals  map[string]any  // values decoded so far
}

type span struct{ start, end int }

// Get returns the decoded value of key.
func (o *Object) Get(key string) (any, bool) {
	o.index()
	if v, ok := o.vals[key]; ok {
		return v, true
	}
	s, ok := o.spans[key]
	if !ok {
		return nil, false
	}
	// The value sits inside the body's object: one level of nesting already.
	p := parser{data: o.raw[:s.end], pos: s.start, nest: 1}
	v, err := p.value(-1, false, true)
	if err != nil {
		// Unreachable: Parse validated the whole body.
		return nil, false
	}
	if o.vals == nil {
		o.vals = map[string]any{}
	}
	o.vals[key] = v
	return v, true
}

// Keys returns the object's keys, sorted.
func (o *Object) Keys() []string {
	o.index()
	return o.keys
}

// index finds the span of every top-level value, skipping over them without decoding.
func (o *Object) index() {
	if o.keys != nil {
		return
	}
	d := o.raw
	o.keys = []string{}
	o.spans = map[string]span{}
	i := spaces(d, 1) // after {
	if d[i] == '}' {
		return
	}
	for {
		end, _, _ := skip(d, i) // the key, a string Parse has validated
		body := d[i+1 : end-1]
		key := keyString(body, bytes.IndexByte(body, '\\') >= 0)
		i = spaces(d, spaces(d, end)+1) // past the colon
		start := i
		i = valueEnd(d, i)
		o.note(key, start, i)
		i = spaces(d, i)
		if d[i] != ',' {
			break
		}
		i = spaces(d, i+1)
	}
	slices.Sort(o.keys)
}

// note records that the value of key is raw[start:end]; a repeated key keeps its first
// place in the order of keys and its last value, as a decoded map would.
func (o *Object) note(key string, start, end int) {
	if _, seen := o.spans[key]; !seen {
		o.keys = append(o.keys, key)
	}
	o.spans[key] = span{start, end}
}

// spaces returns the index of the first byte at or after i that is not whitespace.
func spaces(d []byte, i int) int {
	for i < len(d) && isSpace[d[i]] {
		i++
	}
	return i
}

// valueEnd returns the end of the valid JSON value at d[i].
func valueEnd(d []byte, i int) int {
	if end, _, ok := skip(d, i); ok {
		return end
	}
	p := parser{data: d, pos: i, slow: true, nest: 1} // nested deeper than skip follows
	p.value(-1, false, false)
	return p.pos
}
