// Package normalize is the schema_normalization of a RecordSelector: the Airbyte CDK's
// TypeTransformer with DefaultSchemaNormalization (airbyte_cdk/sources/utils/transform.py),
// which casts a record's values to the types its stream's JSON schema declares ("12" → 12
// for an integer property) and leaves a value it cannot cast as it is.
//
// Like the CDK, it walks only the keywords `properties`, `items` and `$ref` of the schema;
// a value is cast by the schema of the property or array item holding it (the record itself
// is never cast), then the walk goes on inside the new value. Keys keep their order; a value
// that is not cast keeps the spelling the API gave it.
package normalize

import (
	"encoding/json"
	"strings"

	"connector/pkg/record"
)

// Normalizer casts records to one schema. It is built once per stream and is safe for
// concurrent use: Apply changes only the record it is given.
type Normalizer struct {
	root *node
}

// New prepares the normalization of records to schema (as record.Decode yields it). It
// returns nil, which normalizes nothing, when the schema is empty or not an object: the CDK
// skips normalization for a schema that is empty.
func New(schema any) *Normalizer {
	o, ok := schema.(*record.Object)
	if !ok || o.Len() == 0 {
		return nil
	}
	c := compiler{root: o, nodes: map[*record.Object]*node{}}
	return &Normalizer{root: c.node(o)}
}

// Apply normalizes rec in place and says whether any value changed. A nil Normalizer
// changes nothing.
func (n *Normalizer) Apply(rec *record.Object) bool {
	if n == nil || rec == nil {
		return false
	}
	_, changed := n.root.walk(rec)
	return changed
}

// target is what a schema's `type` asks a value to become.
type target uint8

const (
	keep target = iota // no cast: no type, several types, object, null or an unknown type
	toString
	toNumber
	toInteger
	toBoolean
	toArray
)

// node is one schema, compiled: how a value under it is cast, and what to walk inside.
type node struct {
	target target
	// nullable is "null" in `type`: a null value stays null.
	nullable bool
	// wrap is true for an array schema whose `items` types are all simple (or absent): a
	// scalar value becomes a one-element list.
	wrap bool
	// steps are the schema's `properties`, `items` and `$ref`, in the order written.
	steps []step
}

type step struct {
	props []prop // properties
	items *node  // items (a schema); nil otherwise
	ref   *node  // $ref target; nil otherwise
	// isItems tells an `items` step whose schema is not an object (kept as is).
	isItems bool
}

type prop struct {
	name   string
	schema *node
}

type compiler struct {
	root  *record.Object
	nodes map[*record.Object]*node
}

// node compiles a schema object; a schema met again (through `$ref`) is the same node, so
// recursive schemas compile to a cycle and are walked as deep as the record goes.
func (c *compiler) node(o *record.Object) *node {
	if n, ok := c.nodes[o]; ok {
		return n
	}
	n := &node{}
	c.nodes[o] = n
	n.target, n.nullable = typeTarget(o)
	if n.target == toArray {
		n.wrap = simpleItems(o)
	}
	for _, k := range o.Keys() {
		v, _ := o.Get(k)
		switch k {
		case "properties":
			ps, ok := v.(*record.Object)
			if !ok {
				continue
			}
			s := step{props: make([]prop, 0, ps.Len())}
			for _, name := range ps.Keys() {
				sub, _ := ps.Get(name)
				s.props = append(s.props, prop{name: name, schema: c.sub(sub)})
			}
			n.steps = append(n.steps, s)
		case "items":
			n.steps = append(n.steps, step{isItems: true, items: c.sub(v)})
		case "$ref":
			if t := c.resolve(v); t != nil {
				n.steps = append(n.steps, step{ref: c.node(t)})
			}
		}
	}
	return n
}

// sub compiles a subschema; one that is not an object (true, false, a list of item
// schemas) gives nil: its values are left as they are (the CDK fails on them).
func (c *compiler) sub(v any) *node {
	o, ok := v.(*record.Object)
	if !ok {
		return nil
	}
	return c.node(o)
}

// resolve finds the target of a local `$ref` ("#", "#/definitions/x") in the schema;
// nil when it is not there. A definition read through pkg/manifest has no `$ref` left
// (the CDK resolves them, as the definition's own references, before any read).
func (c *compiler) resolve(v any) *record.Object {
	ref, ok := v.(string)
	if !ok || !strings.HasPrefix(ref, "#") {
		return nil
	}
	var cur any = c.root
	for _, seg := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		o, ok := cur.(*record.Object)
		if !ok {
			return nil
		}
		if cur, ok = o.Get(seg); !ok {
			return nil
		}
	}
	o, _ := cur.(*record.Object)
	return o
}

// typeTarget reads `type` as the CDK's default_convert does: a list of types casts only
// when it holds exactly one type besides "null".
func typeTarget(o *record.Object) (target, bool) {
	tv, _ := o.Get("type")
	var name string
	nullable := false
	switch t := tv.(type) {
	case string:
		name, nullable = t, t == "null"
	case []any:
		n := 0
		for _, e := range t {
			if s, ok := e.(string); ok && s == "null" {
				nullable = true
				continue
			}
			n++
			name, _ = e.(string)
		}
		if n != 1 {
			return keep, nullable
		}
	}
	switch name {
	case "string":
		return toString, nullable
	case "number":
		return toNumber, nullable
	case "integer":
		return toInteger, nullable
	case "boolean":
		return toBoolean, nullable
	case "array":
		return toArray, nullable
	}
	return keep, nullable
}

// simpleItems is the CDK's test before wrapping a scalar in a list: the set of `items`
// types is a subset of the simple types. A `type` string is a set of characters there,
// so only a list of types (or none) passes.
func simpleItems(o *record.Object) bool {
	iv, ok := o.Get("items")
	if !ok {
		return true
	}
	items, ok := iv.(*record.Object)
	if !ok {
		return false
	}
	tv, ok := items.Get("type")
	if !ok {
		return true
	}
	switch t := tv.(type) {
	case string:
		return t == ""
	case []any:
		for _, e := range t {
			switch e {
			case "string", "number", "integer", "boolean", "null":
			default:
				return false
			}
		}
		return true
	}
	return false
}

// walk normalizes what is inside v (properties of an object, items of a list) by the
// schema's steps and returns v, possibly a new value, and whether anything changed.
func (n *node) walk(v any) (any, bool) {
	changed := false
	for i := range n.steps {
		s := &n.steps[i]
		switch {
		case s.props != nil:
			changed = walkProps(s.props, v) || changed
		case s.isItems:
			l, ok := v.([]any)
			if !ok || s.items == nil {
				continue
			}
			for j, e := range l {
				if e2, c := s.items.apply(e); c {
					l[j] = e2
					changed = true
				}
			}
		case s.ref != nil:
			_, c := s.ref.walk(v)
			changed = c || changed
		}
	}
	return v, changed
}

func walkProps(props []prop, v any) bool {
	changed := false
	switch o := v.(type) {
	case *record.Object:
		for _, p := range props {
			if p.schema == nil {
				continue
			}
			e, ok := o.Get(p.name)
			if !ok {
				continue
			}
			if e2, c := p.schema.apply(e); c {
				o.Set(p.name, e2)
				changed = true
			}
		}
	case map[string]any:
		for _, p := range props {
			if p.schema == nil {
				continue
			}
			e, ok := o[p.name]
			if !ok {
				continue
			}
			if e2, c := p.schema.apply(e); c {
				o[p.name] = e2
				changed = true
			}
		}
	}
	return changed
}

// apply casts v to the schema, then walks inside the result.
func (n *node) apply(v any) (any, bool) {
	v2, changed := n.cast(v)
	v3, c := n.walk(v2)
	return v3, changed || c
}

// cast is the CDK's default_convert.
func (n *node) cast(v any) (any, bool) {
	if v == nil && n.nullable {
		return nil, false
	}
	switch n.target {
	case toString:
		if s, ok := v.(string); ok {
			return s, false
		}
		return pyStr(v), true
	case toNumber:
		return castNumber(v)
	case toInteger:
		return castInteger(v)
	case toBoolean:
		return castBoolean(v)
	case toArray:
		if n.wrap && isScalar(v) {
			return []any{v}, true
		}
	}
	return v, false
}

func isScalar(v any) bool {
	switch v.(type) {
	case *record.Object, []any, map[string]any:
		return false
	}
	return true
}

// castNumber is Python's float(v): a number already a float keeps its spelling; an
// integer, a bool or a string that spells a number becomes a float spelled as the CDK
// writes it (12 → 12.0); NaN and infinities become null, as the CDK writes them.
func castNumber(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		f, ok := pyFloat(x)
		if !ok {
			return v, false
		}
		return floatValue(f), true
	case bool:
		if x {
			return json.Number("1.0"), true
		}
		return json.Number("0.0"), true
	default:
		n, ok := number(v)
		if !ok || n.isFloat {
			return v, false
		}
		return floatValue(n.float()), true
	}
}

// castInteger is Python's int(v): an integer keeps its spelling; a float is truncated
// towards zero; a bool is 1 or 0; a string that spells an integer becomes it.
func castInteger(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		digits, ok := pyInt(x)
		if !ok {
			return v, false
		}
		return json.Number(digits), true
	case bool:
		if x {
			return json.Number("1"), true
		}
		return json.Number("0"), true
	default:
		n, ok := number(v)
		if !ok || !n.isFloat {
			return v, false
		}
		digits, ok := truncate(n.float())
		if !ok {
			return v, false
		}
		return json.Number(digits), true
	}
}

// castBoolean is Python's bool(v), except that a string must spell a truth value
// (distutils' strtobool: y, yes, t, true, on, 1 / n, no, f, false, off, 0).
func castBoolean(v any) (any, bool) {
	switch x := v.(type) {
	case bool:
		return v, false
	case nil:
		return false, true
	case string:
		switch strings.ToLower(pyStrip(x)) {
		case "y", "yes", "t", "true", "on", "1":
			return true, true
		case "n", "no", "f", "false", "off", "0":
			return false, true
		}
		return v, false
	case *record.Object:
		return x.Len() > 0, true
	case map[string]any:
		return len(x) > 0, true
	case []any:
		return len(x) > 0, true
	}
	n, ok := number(v)
	if !ok {
		return v, false
	}
	return !n.isZero(), true
}
