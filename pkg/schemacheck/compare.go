package schemacheck

import (
	"maps"
	"slices"
	"strings"

	"connector/pkg/record"
)

// Diff is how a field's place in the inferred schema differs from the declared one.
type Diff string

const (
	// Same: both schemas have the field, with types that agree.
	Same Diff = ""
	// Undeclared: the records have the field; the declared schema does not name it.
	Undeclared Diff = "undeclared"
	// Unseen: the declared schema names the field; no record read had it.
	Unseen Diff = "unseen"
	// Type: the records have types at the field that the declared schema does not allow.
	Type Diff = "type"
)

// Field is one field of the records as the two schemas describe it.
type Field struct {
	// Path names the field: "author.name"; an array's items add "[]" ("tags[]").
	Path string `json:"path"`
	// Depth is how deep the field is (0 for a top-level field).
	Depth int `json:"depth"`
	// Inferred and Declared are the field's types in each schema ("null | string"); "" when
	// the schema lacks the field, "any" when it names the field without a type.
	Inferred string `json:"inferred"`
	Declared string `json:"declared"`
	Diff     Diff   `json:"diff"`
}

// Compare lays the inferred schema beside the declared one, field by field: the fields of
// the inferred schema in its order, each followed by its own fields, and after the fields of
// an object those only the declared schema names. Schemas are decoded JSON (record.Decode's
// *record.Object keeps their order; map[string]any is taken sorted). A declared schema that
// is nil or has no properties makes every field Undeclared.
func Compare(declared, inferred any) []Field {
	var out []Field
	compareProps(&out, "", 0, declared, inferred)
	return out
}

func compareProps(out *[]Field, prefix string, depth int, declared, inferred any) {
	dp, ip := properties(declared), properties(inferred)
	seen := map[string]bool{}
	for _, name := range keys(ip) {
		seen[name] = true
		i := get(ip, name)
		d, declaredHas := has(dp, name)
		f := Field{Path: prefix + name, Depth: depth, Inferred: typeText(i)}
		// A field the declared schema does not name is reported even where
		// additionalProperties lets it through: the author will want it declared.
		if !declaredHas {
			f.Diff = Undeclared
		} else if f.Declared = typeText(d); !fits(types(i), types(d)) {
			f.Diff = Type
		}
		*out = append(*out, f)
		compareChildren(out, f.Path, depth+1, d, i)
	}
	for _, name := range keys(dp) {
		if seen[name] {
			continue
		}
		d := get(dp, name)
		*out = append(*out, Field{Path: prefix + name, Depth: depth, Declared: typeText(d), Diff: Unseen})
		compareChildren(out, prefix+name, depth+1, d, nil)
	}
}

// compareChildren compares the fields inside an object field, or inside the items of an
// array field.
func compareChildren(out *[]Field, path string, depth int, declared, inferred any) {
	if properties(inferred) != nil || properties(declared) != nil {
		compareProps(out, path+".", depth, declared, inferred)
	}
	di, ii := items(declared), items(inferred)
	if di == nil && ii == nil {
		return
	}
	if properties(ii) != nil || properties(di) != nil {
		compareProps(out, path+"[].", depth, di, ii)
	}
}

// fits says whether every type the records had is one the declared schema allows. The CDK's
// inferrer makes every field but the primary key and cursor nullable whatever the records
// held, so an inferred "null" says nothing and is left out; and it infers every number as
// "number", so "number" fits a declared "integer". A record with a null or a fraction where
// the declared schema refuses one is a schema mismatch of its own. A declared field without
// a type allows any.
func fits(inferred, declared []string) bool {
	if declared == nil {
		return true
	}
	for _, t := range inferred {
		if t == "null" {
			continue
		}
		ok := slices.Contains(declared, t) ||
			t == "number" && slices.Contains(declared, "integer") ||
			t == "integer" && slices.Contains(declared, "number")
		if !ok {
			return false
		}
	}
	return true
}

// types are the types a schema allows, sorted, without repeats; nil when it does not say
// (no type, no anyOf/oneOf with types).
func types(schema any) []string {
	var out []string
	switch t := get(schema, "type").(type) {
	case string:
		out = append(out, t)
	case []any:
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, s)
			}
		}
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, _ := get(schema, kw).([]any)
		for _, a := range alts {
			out = append(out, types(a)...)
		}
	}
	if out == nil {
		return nil
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// typeText writes a schema's types as a person reads them: "null | string", "any".
func typeText(schema any) string {
	t := types(schema)
	if t == nil {
		return "any"
	}
	return strings.Join(t, " | ")
}

// properties is a schema's properties, looked for in the schema and in the alternatives of
// its anyOf/oneOf (the inferred schema of a field that holds objects and other values).
func properties(schema any) any {
	if p := get(schema, "properties"); p != nil {
		return p
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, _ := get(schema, kw).([]any)
		for _, a := range alts {
			if p := properties(a); p != nil {
				return p
			}
		}
	}
	return nil
}

// items is the schema of an array's items, looked for as properties is.
func items(schema any) any {
	if it := get(schema, "items"); it != nil {
		return it
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		alts, _ := get(schema, kw).([]any)
		for _, a := range alts {
			if it := items(a); it != nil {
				return it
			}
		}
	}
	return nil
}

// get is a member of a decoded JSON object (nil when v is not an object or lacks it).
func get(v any, key string) any {
	x, _ := has(v, key)
	return x
}

func has(v any, key string) (any, bool) {
	switch o := v.(type) {
	case *record.Object:
		return o.Get(key)
	case map[string]any:
		x, ok := o[key]
		return x, ok
	}
	return nil, false
}

// keys are an object's keys: in order for a *record.Object, sorted for a map.
func keys(v any) []string {
	switch o := v.(type) {
	case *record.Object:
		return o.Keys()
	case map[string]any:
		return slices.Sorted(maps.Keys(o))
	}
	return nil
}
