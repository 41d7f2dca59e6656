// Package transform applies a stream's transformations to its records, as the Airbyte CDK
// does for the same definition: AddFields, RemoveFields, KeysToLower, KeysToSnakeCase,
// KeysReplace, FlattenFields and DpathFlattenFields, in order, on the record decoded once
// into an ordered object (numbers keep their spelling; an existing key keeps its place, a
// new key goes last).
package transform

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// Chain is the transformations of a stream.
type Chain struct {
	steps []*step2
}

// step2 is one transformation, with what it evaluates once.
type step2 struct {
	m *manifest.Transformation
	// prefix and suffix of DpathFlattenFields' key_transformation, rendered with the config.
	prefix, suffix string
	// path is DpathFlattenFields' field_path, rendered with the config.
	path []string
}

// New prepares the transformations of a stream (nil when it has none).
func New(ms []*manifest.Transformation, config map[string]any) (*Chain, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	c := &Chain{}
	for i, m := range ms {
		s := &step2{m: m}
		vars := map[string]any{"config": config, "parameters": params(m.Parameters)}
		if m.Type == manifest.DpathFlattenFields {
			for _, t := range m.FieldPath {
				seg, err := evalString(t, vars)
				if err != nil {
					return nil, fmt.Errorf("transformations[%d] DpathFlattenFields field_path: %w", i, err)
				}
				s.path = append(s.path, seg)
			}
			var err error
			if m.KeyPrefix != nil {
				if s.prefix, err = evalString(m.KeyPrefix, vars); err != nil {
					return nil, fmt.Errorf("transformations[%d] key_transformation prefix: %w", i, err)
				}
			}
			if m.KeySuffix != nil {
				if s.suffix, err = evalString(m.KeySuffix, vars); err != nil {
					return nil, fmt.Errorf("transformations[%d] key_transformation suffix: %w", i, err)
				}
			}
		}
		c.steps = append(c.steps, s)
	}
	return c, nil
}

func params(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	return p
}

// Apply transforms rec in place. vars are the template variables of the slice (config,
// stream_slice and its aliases); record is added here.
func (c *Chain) Apply(rec *record.Object, vars map[string]any) error {
	for i, s := range c.steps {
		if err := s.apply(rec, vars); err != nil {
			return fmt.Errorf("transformations[%d] %s: %w", i, s.m.Type, err)
		}
	}
	return nil
}

func (s *step2) apply(rec *record.Object, base map[string]any) error {
	m := s.m
	switch m.Type {
	case manifest.AddFields:
		return addFields(m, rec, base)
	case manifest.RemoveFields:
		return removeFields(m, rec, base)
	case manifest.KeysToLower:
		rename(rec, false, strings.ToLower)
	case manifest.KeysToSnakeCase:
		var bad error
		rename(rec, true, func(k string) string {
			out, err := snakeCase(k)
			if err != nil && bad == nil {
				bad = err
			}
			return out
		})
		return bad
	case manifest.KeysReplace:
		vars := withVars(base, m.Parameters, map[string]any{"record": rec})
		old, err := evalString(m.Old, vars)
		if err != nil {
			return fmt.Errorf("old: %w", err)
		}
		repl, err := evalString(m.New, vars)
		if err != nil {
			return fmt.Errorf("new: %w", err)
		}
		rename(rec, true, func(k string) string { return strings.ReplaceAll(k, old, repl) })
	case manifest.FlattenFields:
		flatten(rec, m.FlattenLists)
	case manifest.DpathFlattenFields:
		return s.dpathFlatten(rec)
	}
	return nil
}

// withVars adds a component's parameters and more variables to the slice's.
func withVars(base map[string]any, p map[string]any, more map[string]any) map[string]any {
	v := make(map[string]any, len(base)+len(more)+1)
	maps.Copy(v, base)
	v["parameters"] = params(p)
	maps.Copy(v, more)
	return v
}

// evalString is str() of a template's value, as the CDK's InterpolatedString gives it.
func evalString(t *template.Template, vars map[string]any) (string, error) {
	v, err := interpolate(t, vars, "")
	if err != nil {
		return "", err
	}
	return template.ToString(v), nil
}

// interpolate is the CDK's InterpolatedString.eval: the template rendered to text, then read
// as a Python literal when it is one (and of valueType, when given); an empty text stays "".
func interpolate(t *template.Template, vars map[string]any, valueType string) (any, error) {
	text, err := t.Render(vars)
	if err != nil {
		return nil, err
	}
	if text == "" {
		return "", nil
	}
	if !mayBeLiteral(text) {
		return text, nil
	}
	if n, ok := plainNumber(text); ok {
		if !ofType(n, valueType) {
			return text, nil
		}
		return jsonValue(n), nil
	}
	v, err := template.LiteralEval(text)
	if err != nil {
		return text, nil
	}
	if !ofType(v, valueType) {
		return text, nil
	}
	return jsonValue(v), nil
}

// mayBeLiteral says whether text could be a Python literal at all: one starts with a digit,
// a sign, a dot, a quote or a bracket, or is True, False or None. Most rendered text is
// not, and needs no parsing.
func mayBeLiteral(text string) bool {
	t := strings.TrimLeft(text, " \t\n\r\f\v")
	if t == "" {
		return false
	}
	switch c := t[0]; {
	case c >= '0' && c <= '9', strings.IndexByte("+-.'\"[{(", c) >= 0:
		return true
	}
	return strings.HasPrefix(t, "True") || strings.HasPrefix(t, "False") || strings.HasPrefix(t, "None")
}

// plainNumber reads text that is only a decimal integer (as int64, or json.Number when
// larger) or a simple decimal fraction, as literal_eval would; other forms go the long way.
func plainNumber(text string) (any, bool) {
	t := text
	if t == "" || len(t) > 40 {
		return nil, false
	}
	neg := t[0] == '-'
	body := t
	if neg || t[0] == '+' {
		body = t[1:]
	}
	if body == "" {
		return nil, false
	}
	dot := -1
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && dot < 0:
			dot = i
		default:
			return nil, false
		}
	}
	if dot < 0 {
		if len(body) > 1 && body[0] == '0' {
			return nil, false // 007 is a syntax error in Python 3: LiteralEval says so
		}
		if i, err := strconv.ParseInt(t, 10, 64); err == nil {
			return i, true
		}
		return json.Number(strings.TrimPrefix(t, "+")), true
	}
	if body == "." {
		return nil, false
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return nil, false
	}
	return f, true
}

// ofType is isinstance(v, type) for value_type: integer takes booleans too (Python's bool
// is an int), number only floats.
func ofType(v any, valueType string) bool {
	switch valueType {
	case "":
		return true
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		switch x := v.(type) {
		case bool, int, int64:
			return true
		case json.Number:
			return !strings.ContainsAny(string(x), ".eE")
		}
		return isBigInt(v)
	case "number":
		switch x := v.(type) {
		case float64:
			return true
		case json.Number:
			return strings.ContainsAny(string(x), ".eE")
		}
	}
	return false
}

func isBigInt(v any) bool {
	_, ok := v.(interface{ IsInt() bool })
	return ok
}

// jsonValue is a template value as the record holds it: floats as Python writes them.
func jsonValue(v any) any {
	switch x := v.(type) {
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return template.ToString(x)
		}
		return json.Number(template.ToString(x))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		o := &record.Object{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			o.Set(k, jsonValue(x[k]))
		}
		return o
	}
	return v
}

// addFields sets each field's value at its path (when the condition, if any, holds).
func addFields(m *manifest.Transformation, rec *record.Object, base map[string]any) error {
	vars := withVars(base, nil, map[string]any{"record": rec})
	for _, f := range m.Fields {
		vars["parameters"] = params(f.Parameters)
		v, err := interpolate(f.Value, vars, f.ValueType)
		if err != nil {
			return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
		}
		if m.Condition != nil {
			cv := withVars(base, m.Parameters, map[string]any{"record": rec, "value": v, "path": toList(f.Path)})
			ok, err := truth(m.Condition, cv)
			if err != nil {
				return fmt.Errorf("condition: %w", err)
			}
			if !ok {
				continue
			}
		}
		if err := newPath(rec, f.Path, v); err != nil {
			return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
		}
	}
	return nil
}

func toList(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

// truth is the CDK's InterpolatedBoolean: false for a false, empty or zero value (also as
// text: "False", "false", "0", "0.0", "{}", "[]", "()").
func truth(t *template.Template, vars map[string]any) (bool, error) {
	v, err := interpolate(t, vars, "")
	if err != nil {
		return false, err
	}
	if s, ok := v.(string); ok {
		switch s {
		case "False", "false", "{}", "[]", "()", "", "0", "0.0":
			return false, nil
		}
		return true, nil
	}
	return template.Truthy(v), nil
}

// removeFields deletes the fields at the pointers; with a condition, dpath deletes every
// leaf of the record the condition holds for (property = the leaf's value).
func removeFields(m *manifest.Transformation, rec *record.Object, base map[string]any) error {
	var filter func(any) (bool, error)
	if m.Condition != nil {
		config := base["config"]
		filter = func(v any) (bool, error) {
			return truth(m.Condition, map[string]any{"config": config, "parameters": params(m.Parameters), "property": v})
		}
	}
	for _, p := range m.FieldPointers {
		if _, err := deleteMatching(rec, p, filter); err != nil {
			return fmt.Errorf("condition: %w", err)
		}
	}
	return nil
}

// rename renames keys in place, keeping their order; deep also renames the keys of nested
// objects (not of objects inside lists, as in the CDK). When two keys get the same name,
// the later value wins at the first one's place.
func rename(o *record.Object, deep bool, f func(string) string) {
	keys := append([]string{}, o.Keys()...)
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i], _ = o.Get(k)
	}
	for _, k := range keys {
		o.Delete(k)
	}
	for i, k := range keys {
		v := vals[i]
		if sub, ok := v.(*record.Object); ok && deep {
			rename(sub, true, f)
		}
		o.Set(f(k), v)
	}
}

// flatten is FlattenFields: nested objects (and lists, with flatten_lists) become top-level
// keys, in the order the CDK's stack makes them.
func flatten(rec *record.Object, lists bool) {
	type item struct {
		v   any
		key string
	}
	out := &record.Object{}
	stack := []item{{rec, "_"}}
	withParent := false
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := it.v.(type) {
		case *record.Object:
			for _, k := range x.Keys() {
				v, _ := x.Get(k)
				key := k
				if _, taken := out.Get(k); taken || withParent {
					key = it.key + "." + k
				}
				stack = append(stack, item{v, key})
			}
		case []any:
			if !lists {
				out.Set(it.key, x)
				continue
			}
			for i, v := range x {
				withParent = true
				stack = append(stack, item{v, fmt.Sprintf("%s.%d", it.key, i)})
			}
		default:
			out.Set(it.key, it.v)
		}
	}
	replace(rec, out)
}

// replace makes rec hold what from holds, in from's order.
func replace(rec, from *record.Object) {
	for _, k := range append([]string{}, rec.Keys()...) {
		rec.Delete(k)
	}
	for _, k := range from.Keys() {
		v, _ := from.Get(k)
		rec.Set(k, v)
	}
}

// dpathFlatten is DpathFlattenFields: the object at field_path is merged into the record
// (when none of its keys is taken), or replaces it.
func (s *step2) dpathFlatten(rec *record.Object) error {
	m := s.m
	var extracted any
	if containsStar(s.path) {
		for _, pv := range walk(rec, nil, nil) {
			if match(pv.path, s.path) {
				extracted = pv.value
				break
			}
		}
	} else if isGlob(s.path) {
		// dpath.get: the path is a glob that must match one value at most.
		n := 0
		for _, pv := range walk(rec, nil, nil) {
			if match(pv.path, s.path) {
				extracted = pv.value
				n++
			}
		}
		if n > 1 {
			return fmt.Errorf("field_path %q matches %d values, not one", s.path, n)
		}
	} else {
		steps := make([]step, len(s.path))
		for i, seg := range s.path {
			steps[i] = step{key: seg}
		}
		v, ok := get(rec, steps)
		if !ok {
			return nil
		}
		extracted = v
	}
	obj, ok := extracted.(*record.Object)
	if !ok {
		return nil
	}
	if s.prefix != "" || s.suffix != "" {
		renamed := &record.Object{}
		for _, k := range obj.Keys() {
			v, _ := obj.Get(k)
			renamed.Set(s.prefix+k+s.suffix, v)
		}
		obj = renamed
	}
	if m.ReplaceRecord && obj.Len() > 0 {
		replace(rec, obj)
		return nil
	}
	for _, k := range obj.Keys() {
		if _, taken := rec.Get(k); taken {
			return nil
		}
	}
	if m.DeleteOrigin {
		if _, err := deleteMatching(rec, s.path, nil); err != nil {
			return err
		}
	}
	for _, k := range obj.Keys() {
		v, _ := obj.Get(k)
		rec.Set(k, v)
	}
	return nil
}

// isGlob reports whether a path has fnmatch's special characters.
func isGlob(p []string) bool {
	for _, s := range p {
		if strings.ContainsAny(s, "*?[") {
			return true
		}
	}
	return false
}

func containsStar(p []string) bool {
	for _, s := range p {
		if s == "*" {
			return true
		}
	}
	return false
}
