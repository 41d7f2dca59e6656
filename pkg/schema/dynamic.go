// Package schema builds the JSON schema of a stream whose schema_loader reads it from the
// API: the Airbyte CDK's DynamicSchemaLoader (airbyte_cdk/sources/declarative/schema/
// dynamic_schema_loader.py). pkg/run reads the loader's retriever and gives Build its
// first record; the schema Build returns is what the records are normalized to.
package schema

import (
	"encoding/json"
	"fmt"
	"strconv"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// airbyteTypes are the property schemas of the Airbyte data types (the CDK's
// AIRBYTE_DATA_TYPES), as JSON text: each use decodes a fresh copy.
var airbyteTypes = map[string]string{
	"string":                     `{"type":["null","string"]}`,
	"boolean":                    `{"type":["null","boolean"]}`,
	"date":                       `{"type":["null","string"],"format":"date"}`,
	"timestamp_without_timezone": `{"type":["null","string"],"format":"date-time","airbyte_type":"timestamp_without_timezone"}`,
	"timestamp_with_timezone":    `{"type":["null","string"],"format":"date-time"}`,
	"time_without_timezone":      `{"type":["null","string"],"format":"time","airbyte_type":"time_without_timezone"}`,
	"time_with_timezone":         `{"type":["null","string"],"format":"time","airbyte_type":"time_with_timezone"}`,
	"integer":                    `{"type":["null","integer"]}`,
	"number":                     `{"type":["null","number"]}`,
	"array":                      `{"type":["null","array"]}`,
	"object":                     `{"type":["null","object"]}`,
}

// Build makes the schema of d from rec, the first record of its retriever (nil when it
// yielded none: a schema without properties). As in the CDK: each entry at schema_pointer
// is a property named by key_pointer, typed by type_pointer ("string" when absent) through
// the first types_mapping entry whose current_type equals it and whose condition holds;
// the properties are then filtered by schema_filter and transformed by
// schema_transformations. An entry without a string name, or a type that is not an Airbyte
// data type, fails the build with the CDK's message.
func Build(d *manifest.DynamicSchema, g template.Globals, rec any) (*record.Object, error) {
	b := builder{d: d, g: g}
	props := &record.Object{}
	if rec != nil && !isEmptyObject(rec) {
		raw, err := b.extract(rec, d.SchemaPointer, nil, "schema_pointer")
		if err != nil {
			return nil, err
		}
		entries, err := iterate(raw)
		if err != nil {
			return nil, err
		}
		for _, entry := range entries {
			key, err := b.extract(entry, d.KeyPointer, nil, "key_pointer")
			if err != nil {
				return nil, err
			}
			name, ok := key.(string)
			if !ok {
				return nil, fmt.Errorf("expected key to be a string. Got %s", pyRepr(key))
			}
			typ, err := b.fieldType(entry)
			if err != nil {
				return nil, err
			}
			props.Set(name, typ)
		}
	}
	props, err := b.filter(props)
	if err != nil {
		return nil, err
	}
	if chain, err := transform.New(d.Transformations, g); err != nil {
		return nil, fmt.Errorf("schema_transformations: %w", err)
	} else if chain != nil {
		vars := g.Vars(nil)
		vars["stream_slice"], vars["stream_partition"] = nil, nil
		if err := chain.Apply(props, vars); err != nil {
			return nil, fmt.Errorf("schema_transformations: %w", err)
		}
	}
	out := &record.Object{}
	out.Set("$schema", "https://json-schema.org/draft-07/schema#")
	out.Set("type", "object")
	out.Set("additionalProperties", true)
	out.Set("properties", props)
	return out, nil
}

type builder struct {
	d *manifest.DynamicSchema
	g template.Globals // the run's testing values and clock
}

// isEmptyObject is Python's falsiness of a record: `if retrieved_record` skips an empty one.
func isEmptyObject(v any) bool {
	o, ok := v.(*record.Object)
	return ok && o.Len() == 0
}

// iterate is Python's `for x in value` over what schema_pointer found: a list's items, an
// object's keys, a string's characters.
func iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case *record.Object:
		out := make([]any, 0, x.Len())
		for _, k := range x.Keys() {
			out = append(out, k)
		}
		return out, nil
	case string:
		out := []any{}
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	}
	return nil, fmt.Errorf("schema_pointer: %s object is not iterable", pyTypeName(v))
}

// extract is the CDK's _extract_data: the value at path in body (dpath.get), def when there
// is none; an empty path is the body itself. A `*` segment matches every key or index; a
// path that matches more than one value fails, as dpath.get does.
func (b *builder) extract(body any, path []*template.Template, def any, field string) (any, error) {
	if len(path) == 0 {
		return body, nil
	}
	vars := b.g.Vars(b.d.Parameters)
	segs := make([]string, len(path))
	for i, t := range path {
		v, err := transform.Interpolate(t, vars, "")
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		segs[i] = template.ToString(v)
	}
	found := lookup(body, segs, nil)
	switch len(found) {
	case 0:
		return def, nil
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%s: dpath.get() globs must match only one leaf: %v", field, segs)
}

// lookup collects the values at segs under v.
func lookup(v any, segs []string, out []any) []any {
	if len(segs) == 0 {
		return append(out, v)
	}
	seg, rest := segs[0], segs[1:]
	switch x := v.(type) {
	case *record.Object:
		if seg == "*" {
			for _, k := range x.Keys() {
				c, _ := x.Get(k)
				out = lookup(c, rest, out)
			}
			return out
		}
		if c, ok := x.Get(seg); ok {
			out = lookup(c, rest, out)
		}
	case []any:
		if seg == "*" {
			for _, c := range x {
				out = lookup(c, rest, out)
			}
			return out
		}
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			out = lookup(x[i], rest, out)
		}
	}
	return out
}

// fieldType is the CDK's _get_type: the property schema of one entry.
func (b *builder) fieldType(entry any) (any, error) {
	var raw any = "string"
	if b.d.TypePointer != nil {
		var err error
		if raw, err = b.extract(entry, b.d.TypePointer, "string", "type_pointer"); err != nil {
			return nil, err
		}
	}
	mapped, err := b.mapType(raw, entry)
	if err != nil {
		return nil, err
	}
	switch t := mapped.(type) {
	case *manifest.ComplexFieldType:
		return complexType(t)
	case string:
		return airbyteType(t)
	case []any:
		if len(t) == 2 {
			first, ok1 := t[0].(string)
			second, ok2 := t[1].(string)
			if ok1 && ok2 {
				a, err := airbyteType(first)
				if err != nil {
					return nil, err
				}
				c, err := airbyteType(second)
				if err != nil {
					return nil, err
				}
				o := &record.Object{}
				o.Set("oneOf", []any{a, c})
				return o, nil
			}
		}
	}
	return nil, fmt.Errorf("invalid data type. Available string or two items list of string. Got %s", pyRepr(mapped))
}

// mapType is the CDK's _replace_type_if_not_valid: the target of the first types_mapping
// entry whose current_type equals raw and whose condition holds (every condition is
// evaluated, in order, until one matches), else raw itself.
func (b *builder) mapType(raw, entry any) (any, error) {
	for i, m := range b.d.TypesMapping {
		ok := true
		if m.Condition != nil {
			vars := b.g.Vars(nil)
			vars["raw_schema"] = entry
			v, err := transform.Interpolate(m.Condition, vars, "")
			if err != nil {
				return nil, fmt.Errorf("types_mapping[%d] condition: %w", i, err)
			}
			ok = truth(v)
		}
		if ok && equalType(raw, m.Current) {
			t := m.Target
			switch {
			case t.Complex != nil:
				return t.Complex, nil
			case t.List:
				out := make([]any, len(t.Names))
				for j, n := range t.Names {
					out[j] = n
				}
				return out, nil
			}
			return t.Names[0], nil
		}
	}
	return raw, nil
}

// equalType is Python's `field_type == types_map.current_type`.
func equalType(raw, current any) bool {
	switch c := current.(type) {
	case string:
		s, ok := raw.(string)
		return ok && s == c
	case []string:
		l, ok := raw.([]any)
		if !ok || len(l) != len(c) {
			return false
		}
		for i, v := range l {
			if s, ok := v.(string); !ok || s != c[i] {
				return false
			}
		}
		return true
	}
	return false
}

// truth is the CDK's InterpolatedBoolean: false only for the values of its FALSE_VALUES
// ("False", "false", "{}", "[]", "()", "", "0", "0.0", false, 0, empty containers); None
// is true there.
func truth(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		switch x {
		case "False", "false", "{}", "[]", "()", "", "0", "0.0":
			return false
		}
		return true
	case bool:
		return x
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case *record.Object:
		return x.Len() > 0
	}
	return template.Truthy(v)
}

// complexType is the CDK's _resolve_complex_type.
func complexType(c *manifest.ComplexFieldType) (any, error) {
	t, err := airbyteType(c.FieldType)
	if err != nil || c.Items == nil {
		return t, err
	}
	items, err := complexType(c.Items)
	if err != nil {
		return nil, err
	}
	t.Set("items", items)
	return t, nil
}

// airbyteType is the property schema of an Airbyte data type, a fresh copy.
func airbyteType(name string) (*record.Object, error) {
	text, ok := airbyteTypes[name]
	if !ok {
		return nil, fmt.Errorf("invalid Airbyte data type: %s", name)
	}
	v, err := record.Decode([]byte(text))
	if err != nil {
		return nil, err
	}
	return v.(*record.Object), nil
}

// filter is the CDK's _filter: each property, as a record {name: schema}, kept when the
// schema_filter's condition holds for it.
func (b *builder) filter(props *record.Object) (*record.Object, error) {
	if b.d.Filter == nil {
		return props, nil
	}
	out := &record.Object{}
	vars := b.g.Vars(b.d.FilterParameters)
	vars["stream_state"] = &record.Object{}
	vars["stream_slice"], vars["stream_partition"], vars["stream_interval"] = nil, nil, nil
	vars["next_page_token"] = nil
	for _, k := range props.Keys() {
		v, _ := props.Get(k)
		one := &record.Object{}
		one.Set(k, v)
		vars["record"] = one
		// A record filter: the default false, as in the CDK (see template.InterpolateOr).
		res, err := b.d.Filter.InterpolateOr(vars, false)
		if err != nil {
			return nil, fmt.Errorf("schema_filter: %w", err)
		}
		if template.Truthy(res) {
			out.Set(k, v)
		}
	}
	return out, nil
}

// pyRepr spells a value in an error message roughly as Python's str() would.
func pyRepr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case string:
		return x
	case bool:
		if x {
			return "True"
		}
		return "False"
	case json.Number:
		return string(x)
	case *manifest.ComplexFieldType:
		return fmt.Sprintf("ComplexFieldType(field_type=%q)", x.FieldType)
	}
	b, err := record.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// pyTypeName is Python's type name of a JSON value, for a "not iterable" error.
func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "'NoneType'"
	case bool:
		return "'bool'"
	case json.Number:
		return "'int' or 'float'"
	}
	return fmt.Sprintf("'%T'", v)
}
