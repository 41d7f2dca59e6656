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
	m    *manifest.Transformation
	kind kind
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

// kind is a transformation of the definition format, everything this package knows of it
// in one value: what it evaluates once for a stream and how it changes a record. Each kind
// is in its own file (addfields.go, removefields.go, keys.go, flatten.go, dpathflatten.go)
// and is registered in kinds by one line; its fields and their checks are the definition
// format's, in pkg/manifest (the Transformation model and the loader's transformation).
type kind struct {
	// prepare evaluates, once per stream, what s reads from the config (nil: nothing). Its
	// error is worded after the transformation's index.
	prepare func(s *step2, vars map[string]any) error
	// apply changes rec in place; base are the slice's template variables, fixed the
	// values a Batch evaluates once (nil: none).
	apply func(s *step2, rec *record.Object, base map[string]any, fixed []fixedValue) error
}

// kinds are the transformations, by their type in definitions.
var kinds = map[string]kind{
	manifest.AddFields:          addFieldsKind,
	manifest.RemoveFields:       removeFieldsKind,
	manifest.KeysToLower:        keysToLowerKind,
	manifest.KeysToSnakeCase:    keysToSnakeCaseKind,
	manifest.KeysReplace:        keysReplaceKind,
	manifest.FlattenFields:      flattenFieldsKind,
	manifest.DpathFlattenFields: dpathFlattenFieldsKind,
}

// New prepares the transformations of a stream (nil when it has none); g are the run's
// testing values and clock.
func New(ms []*manifest.Transformation, g template.Globals) (*Chain, error) {
	if len(ms) == 0 {
		return nil, nil
	}
	c := &Chain{}
	for i, m := range ms {
		k, ok := kinds[m.Type]
		if !ok {
			return nil, fmt.Errorf("transformations[%d]: %s is not supported", i, m.Type)
		}
		s := &step2{m: m, g: g, kind: k}
		for _, f := range m.Fields {
			s.params = append(s.params, f.Value.Reads("parameters"))
		}
		if k.prepare != nil {
			if err := k.prepare(s, g.Vars(m.Parameters)); err != nil {
				return nil, fmt.Errorf("transformations[%d] %w", i, err)
			}
		}
		c.steps = append(c.steps, s)
	}
	if c.deterministic() {
		// Only AddFields has fields: the values a Batch may evaluate once.
		for _, s := range c.steps {
			if len(s.m.Fields) == 0 {
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
	return s.kind.apply(s, rec, base, fixed)
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
// A template that fails with a TypeError (none compared with a number, a date parsed from
// none, a regular expression searched in a missing value) gives its own text, as the CDK's
// interpolation catches that error and keeps the text; an undefined value used as a number
// stays a failure, since the CDK's default is then the template itself, which fails again.
func interpolate(t *template.Template, vars map[string]any, valueType string) (any, error) {
	text, err := t.InterpolateText(vars)
	if err != nil {
		return nil, err
	}
	return readText(text, valueType), nil
}

// readText is rendered text as the CDK's interpolation returns it: the Python literal it
// spells, when it spells one of valueType (any type when ""), else the text itself.
func readText(text, valueType string) any {
	if text == "" {
		return ""
	}
	if !mayBeLiteral(text) {
		return text
	}
	if n, ok := plainNumber(text); ok {
		if !ofType(n, valueType) {
			return text
		}
		return jsonValue(n)
	}
	v, err := template.LiteralEval(text)
	if err != nil || !ofType(v, valueType) {
		return text
	}
	return jsonValue(v)
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

// truth is the CDK's InterpolatedBoolean: the rendered text, read as a Python literal where
// it is one, is false when it equals one of the CDK's FALSE_VALUES: false, a zero, an
// empty list, tuple, set or mapping, or the texts "False", "false", "0", "0.0", "{}", "[]",
// "()" and "". None is false too (see valueTruth), where the CDK calls it true. An undefined value
// used as a number or ordered (record['missing'] > 0) makes the condition false: the CDK
// catches Jinja's UndefinedError and evaluates its default, "False".
func truth(t *template.Template, vars map[string]any) (bool, error) {
	v, err := interpolate(t, vars, "")
	if template.Class(err) == template.ClassUndefined {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return valueTruth(v), nil
}

// valueTruth is InterpolatedBoolean's verdict on what the interpolation returned, with one
// difference kept on purpose: none is false, as Python's truthiness has it (the CDK's
// InterpolatedBoolean calls a rendered None true, since None is not among its false values).
func valueTruth(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case string:
		switch x {
		case "False", "false", "{}", "[]", "()", "", "0", "0.0":
			return false
		}
		// Python's literal_eval reads "set()" as the empty set, which is false too.
		return strings.TrimRight(strings.TrimLeft(x, " \t"), " \t\n\r\f\v") != "set()"
	}
	return template.Truthy(v)
}
