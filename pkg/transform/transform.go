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
	// nfixed is how many AddFields values a Batch evaluates once (see step2.fixed).
	nfixed int
}

// step2 is one transformation, with what it evaluates once.
type step2 struct {
	m *manifest.Transformation
	// g are the run's testing values and clock, for a RemoveFields condition.
	g template.Globals
	// prefix and suffix of DpathFlattenFields' key_transformation, rendered with the config.
	prefix, suffix string
	// path is DpathFlattenFields' field_path, rendered with the config.
	path []string
	// fixed[j], for AddFields, is where a Batch keeps the value of field j when it is the
	// same for every record of the batch (see Batch), or -1.
	fixed []int
	// params[j], for AddFields, says that the value of field j reads `parameters`.
	params []bool
}

// New prepares the transformations of a stream (nil when it has none); g are the run's
// testing values and clock.
func New(ms []*manifest.Transformation, g template.Globals) (*Chain, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	c := &Chain{}
	for i, m := range ms {
		s := &step2{m: m, g: g}
		for _, f := range m.Fields {
			s.params = append(s.params, f.Value.Reads("parameters"))
		}
		vars := g.Vars(m.Parameters)
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
	if c.deterministic() {
		for _, s := range c.steps {
			if s.m.Type != manifest.AddFields {
				continue
			}
			s.fixed = make([]int, len(s.m.Fields))
			for j, f := range s.m.Fields {
				s.fixed[j] = -1
				if f.Value.ReadsOnly(batchVars...) {
					s.fixed[j] = c.nfixed
					c.nfixed++
				}
			}
		}
	}
	return c, nil
}

// batchVars are the template variables that are the same for every record of a batch.
var batchVars = []string{"config", "parameters", "stream_slice", "stream_partition", "stream_interval", "stream_state"}

// deterministic reports whether every template the chain evaluates per record gives the
// same result for the same variables: then a value that does not read the record is the
// same for every record that shares the variables.
func (c *Chain) deterministic() bool {
	for _, s := range c.steps {
		m := s.m
		for _, t := range []*template.Template{m.Condition, m.Old, m.New} {
			if t != nil && !t.Deterministic() {
				return false
			}
		}
		for _, f := range m.Fields {
			if !f.Value.Deterministic() {
				return false
			}
		}
	}
	return true
}

func params(p map[string]any) map[string]any {
	if p == nil {
		return map[string]any{}
	}
	return p
}

// Apply transforms rec in place. vars are the template variables of the slice (config,
// stream_slice and its aliases); Apply sets record, parameters, value and path in it, so a
// caller passes a map of its own (one per page will do, not shared between goroutines).
func (c *Chain) Apply(rec *record.Object, vars map[string]any) error {
	return c.apply(rec, vars, nil)
}

// Batch is the chain ready for records that share their template variables, the records
// of one page: an AddFields value that does not read the record is evaluated for the first
// record only, and given to the others as it came out. That holds when every template of
// the chain is deterministic (template.Deterministic: no clock, no random, no change to a
// variable) and the value is not a list or an object, which a later step could change in
// one record and not in the others. A Batch is used by one goroutine at a time.
type Batch struct {
	c     *Chain
	vars  map[string]any
	fixed []fixedValue
}

// fixedValue is an AddFields value evaluated once for a batch.
type fixedValue struct {
	v  any
	ok bool
}

// Batch prepares the chain for records whose template variables are vars (see Apply).
func (c *Chain) Batch(vars map[string]any) *Batch {
	b := &Batch{c: c, vars: vars}
	if c.nfixed > 0 {
		b.fixed = make([]fixedValue, c.nfixed)
	}
	return b
}

// Apply transforms rec in place, as Chain.Apply does.
func (b *Batch) Apply(rec *record.Object) error { return b.c.apply(rec, b.vars, b.fixed) }

func (c *Chain) apply(rec *record.Object, vars map[string]any, fixed []fixedValue) error {
	for i, s := range c.steps {
		if err := s.apply(rec, vars, fixed); err != nil {
			return fmt.Errorf("transformations[%d] %s: %w", i, s.m.Type, err)
		}
	}
	return nil
}

func (s *step2) apply(rec *record.Object, base map[string]any, fixed []fixedValue) error {
	m := s.m
	switch m.Type {
	case manifest.AddFields:
		return s.addFields(rec, base, fixed)
	case manifest.RemoveFields:
		return s.removeFields(rec)
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
		vars := set(base, m.Parameters, "record", rec)
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

// set puts a component's parameters and one more variable in the template variables.
func set(vars map[string]any, p map[string]any, key string, v any) map[string]any {
	vars["parameters"] = params(p)
	vars[key] = v
	return vars
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
	i := 0
	for i < len(text) && isSpace(text[i]) {
		i++
	}
	t := text[i:]
	if t == "" {
		return false
	}
	switch c := t[0]; {
	case c >= '0' && c <= '9', strings.IndexByte("+-.'\"[{(", c) >= 0:
		return true
	}
	return strings.HasPrefix(t, "True") || strings.HasPrefix(t, "False") || strings.HasPrefix(t, "None")
}

// isSpace is a byte of Python's whitespace that str.strip removes in ASCII.
func isSpace(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', '\f', '\v':
		return true
	}
	return false
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
// fixed holds the values evaluated once for a Batch (nil: none).
func (s *step2) addFields(rec *record.Object, vars map[string]any, fixed []fixedValue) error {
	m := s.m
	vars["record"] = rec
	for j, f := range m.Fields {
		var v any
		at := -1
		if fixed != nil {
			at = s.fixed[j]
		}
		if at >= 0 && fixed[at].ok {
			v = fixed[at].v
		} else {
			if s.params[j] {
				// Set for the template that reads it: every template sets its own first.
				vars["parameters"] = params(f.Parameters)
			}
			var err error
			if v, err = interpolate(f.Value, vars, f.ValueType); err != nil {
				return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
			}
			if at >= 0 && !container(v) {
				fixed[at] = fixedValue{v: v, ok: true}
			}
		}
		if m.Condition != nil {
			cv := set(vars, m.Parameters, "value", v)
			cv["path"] = toList(f.Path)
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

// container reports a value a later step could change in place: an object or a list.
func container(v any) bool {
	switch v.(type) {
	case *record.Object, []any, map[string]any:
		return true
	}
	return false
}

func toList(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}

// truth is the CDK's InterpolatedBoolean: the rendered text, read as a Python literal where
// it is one, is false when it equals one of the CDK's FALSE_VALUES: false, a zero, an
// empty list, tuple, set or mapping, or the texts "False", "false", "0", "0.0", "{}", "[]",
// "()" and "". None is none of them: a template rendering None is true.
func truth(t *template.Template, vars map[string]any) (bool, error) {
	v, err := interpolate(t, vars, "")
	if err != nil {
		return false, err
	}
	switch x := v.(type) {
	case nil:
		return true, nil
	case string:
		switch x {
		case "False", "false", "{}", "[]", "()", "", "0", "0.0":
			return false, nil
		}
		// Python's literal_eval reads "set()" as the empty set, which is false too.
		return strings.TrimRight(strings.TrimLeft(x, " \t"), " \t\n\r\f\v") != "set()", nil
	}
	return template.Truthy(v), nil
}

// removeFields deletes the fields at the pointers; with a condition, dpath deletes every
// leaf of the record the condition holds for (property = the leaf's value).
func (s *step2) removeFields(rec *record.Object) error {
	m := s.m
	var filter func(any) (bool, error)
	if m.Condition != nil {
		filter = func(v any) (bool, error) {
			vars := s.g.Vars(m.Parameters)
			vars["property"] = v
			return truth(m.Condition, vars)
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
