package initvalues

// Reading the JSON schema of the connection specification: the keywords a form of testing
// values shows (Airbyte's connector form reads the same ones).

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"connector/pkg/record"
)

// schema is one schema object of the specification.
type schema struct{ o *record.Object }

// prop is a property of an object schema.
type prop struct {
	name   string
	schema schema
}

func (s schema) get(kw string) (any, bool) {
	if s.o == nil {
		return nil, false
	}
	return s.o.Get(kw)
}

func (s schema) has(kw string) bool {
	_, ok := s.get(kw)
	return ok
}

// str is a keyword's text ("" when absent or not text).
func (s schema) str(kw string) string {
	v, _ := s.get(kw)
	t, _ := v.(string)
	return strings.TrimSpace(t)
}

// list is a keyword's list; a single value is a list of one.
func (s schema) list(kw string) []any {
	v, ok := s.get(kw)
	if !ok || v == nil {
		return nil
	}
	if l, ok := v.([]any); ok {
		return l
	}
	return []any{v}
}

// sub is the schema under a keyword (items, …).
func (s schema) sub(kw string) (schema, bool) {
	v, _ := s.get(kw)
	o, ok := v.(*record.Object)
	return schema{o}, ok
}

// properties are the object's properties in the order a form shows them: those with an
// `order` by it, then the others as written.
func (s schema) properties() []prop {
	v, _ := s.get("properties")
	o, ok := v.(*record.Object)
	if !ok {
		return nil
	}
	var out []prop
	for _, k := range o.Keys() {
		pv, _ := o.Get(k)
		po, _ := pv.(*record.Object)
		if po == nil {
			po = &record.Object{} // `true` or a malformed entry: any value
		}
		out = append(out, prop{name: k, schema: schema{po}})
	}
	slices.SortStableFunc(out, func(a, b prop) int {
		oa, hasA := a.schema.order()
		ob, hasB := b.schema.order()
		switch {
		case hasA && hasB && oa < ob:
			return -1
		case hasA && hasB && oa > ob:
			return 1
		case hasA && !hasB:
			return -1
		case !hasA && hasB:
			return 1
		}
		return 0
	})
	return out
}

// order is the `order` keyword as a number.
func (s schema) order() (float64, bool) {
	v, ok := s.get("order")
	if !ok {
		return 0, false
	}
	return number(v)
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// requiredList is the `required` keyword's names, in order.
func (s schema) requiredList() []string {
	var out []string
	for _, v := range s.list("required") {
		if name, ok := v.(string); ok {
			out = append(out, name)
		}
	}
	return out
}

func (s schema) required() map[string]bool {
	m := map[string]bool{}
	for _, name := range s.requiredList() {
		m[name] = true
	}
	return m
}

// alternatives are the schemas of oneOf, or else anyOf.
func (s schema) alternatives() []schema {
	for _, kw := range []string{"oneOf", "anyOf"} {
		var out []schema
		for _, v := range s.list(kw) {
			if o, ok := v.(*record.Object); ok {
				out = append(out, schema{o})
			}
		}
		if len(out) > 0 {
			return out
		}
	}
	return nil
}

// objectAlternatives reports whether the alternatives are objects to lay out, rather than
// kinds of a single value.
func (s schema) objectAlternatives() bool {
	for _, a := range s.alternatives() {
		if len(a.properties()) > 0 {
			return true
		}
	}
	return false
}

// without is s without the properties already written by the object around it (an
// alternative repeating them would write a key twice).
func (s schema) without(written map[string]bool) schema {
	v, _ := s.get("properties")
	props, ok := v.(*record.Object)
	if !ok || len(written) == 0 {
		return s
	}
	kept := &record.Object{}
	for _, k := range props.Keys() {
		if !written[k] {
			pv, _ := props.Get(k)
			kept.Set(k, pv)
		}
	}
	c := &record.Object{}
	for _, k := range s.o.Keys() {
		kv, _ := s.o.Get(k)
		if k == "properties" {
			kv = kept
		}
		c.Set(k, kv)
	}
	return schema{c}
}

// constant is the one value a property can take: its `const`, or an enum of one value.
func (s schema) constant() (any, bool) {
	if v, ok := s.get("const"); ok {
		return v, true
	}
	if enum := s.list("enum"); len(enum) == 1 {
		return enum[0], true
	}
	return nil, false
}

// fixed is the value an alternative gives its property key.
func (s schema) fixed(key string) (any, bool) {
	for _, p := range s.properties() {
		if p.name == key {
			return p.schema.constant()
		}
	}
	return nil, false
}

// discriminator is the property whose fixed value tells the alternatives apart ("" when
// none does), the first such in the first alternative's order.
func discriminator(alts []schema) string {
	if len(alts) == 0 {
		return ""
	}
	for _, p := range alts[0].properties() {
		seen := map[string]bool{}
		ok := true
		for _, a := range alts {
			v, has := a.fixed(p.name)
			if !has || seen[inline(v)] {
				ok = false
				break
			}
			seen[inline(v)] = true
		}
		if ok {
			return p.name
		}
	}
	return ""
}

// defaultKind reads the default of a property whose alternatives are objects: asValue is
// whether to write the default as the value, because it holds the discriminator value of
// one kind, or because no discriminator tells the kinds apart (there is nothing to check
// it by). Otherwise kind is the alternative the default is a copy of, when it is one:
// survey-sparrow's region has the schema of its "Global account" kind as its default,
// where a value belongs, and written as it is that default would match both kinds (it
// leaves url_base out), or none when a kind requires its discriminator. kind is -1 when
// the default stands for no kind.
func (s schema) defaultKind(alts []schema) (kind int, asValue bool) {
	def, ok := s.get("default")
	if !ok {
		return -1, false
	}
	for i, a := range alts {
		if same(def, a.o) {
			return i, false
		}
	}
	key := discriminator(alts)
	if key == "" {
		return -1, true
	}
	if o, ok := def.(*record.Object); ok {
		if v, has := o.Get(key); has {
			for i, a := range alts {
				if f, _ := a.fixed(key); same(f, v) {
					return i, true
				}
			}
		}
	}
	return -1, false
}

// same reports whether two values of the specification are equal, whatever the order of
// their keys.
func same(a, b any) bool {
	switch x := a.(type) {
	case *record.Object:
		y, ok := b.(*record.Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.Keys() {
			xv, _ := x.Get(k)
			yv, has := y.Get(k)
			if !has || !same(xv, yv) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, same)
	}
	if _, ok := b.(*record.Object); ok {
		return false
	}
	if _, ok := b.([]any); ok {
		return false
	}
	return inline(a) == inline(b)
}

func (s schema) isSecret() bool {
	v, _ := s.get("airbyte_secret")
	return v == true
}

// itemsAreObjects reports a list whose items are objects to lay out.
func (s schema) itemsAreObjects() bool {
	items, ok := s.sub("items")
	return ok && (len(items.properties()) > 0 || items.objectAlternatives())
}

// examples are the `examples` (and the non-standard `example`) values.
func (s schema) examples() []any {
	return append(s.list("examples"), s.list("example")...)
}

// sample is the value an optional line shows commented out: the first example, else the
// first allowed value.
func (s schema) sample() (any, bool) {
	if ex := s.examples(); len(ex) > 0 {
		return ex[0], true
	}
	if enum := s.list("enum"); len(enum) > 0 {
		return enum[0], true
	}
	return nil, false
}

// typeText names the type of a property: "string", "integer or null", "array of string".
func (s schema) typeText() string {
	var types []string
	for _, t := range s.list("type") {
		if name, ok := t.(string); ok {
			types = append(types, name)
		}
	}
	if len(types) == 0 {
		switch {
		case len(s.properties()) > 0 || s.objectAlternatives():
			types = []string{"object"}
		case s.has("items"):
			types = []string{"array"}
		default:
			if v, ok := s.constant(); ok {
				types = []string{valueType(v)}
			} else if enum := s.list("enum"); len(enum) > 0 {
				types = []string{valueType(enum[0])}
			}
		}
	}
	if len(types) == 0 {
		if alts := s.alternatives(); len(alts) > 0 {
			var kinds []string
			for _, a := range alts {
				if t := a.typeText(); t != "" && !slices.Contains(kinds, t) {
					kinds = append(kinds, t)
				}
			}
			return strings.Join(kinds, " or ")
		}
		return ""
	}
	for i, t := range types {
		if t != "array" {
			continue
		}
		if items, ok := s.sub("items"); ok {
			it := items.typeText()
			if it == "" {
				it = "any"
			}
			types[i] = "array of " + it
		}
	}
	return strings.Join(types, " or ")
}

func valueType(v any) string {
	switch x := v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case json.Number:
		if strings.ContainsAny(string(x), ".eE") {
			return "number"
		}
		return "integer"
	case []any:
		return "array"
	case *record.Object:
		return "object"
	}
	return ""
}

// Date and time layouts, written as a user types them, for the formats and patterns the
// real specifications use.
var (
	formatLayouts = map[string]string{
		"date":      "YYYY-MM-DD",
		"date-time": "YYYY-MM-DDTHH:MM:SSZ",
		"time":      "HH:MM:SS",
	}
	patternLayouts = map[string]string{
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`:                                        "YYYY-MM-DD",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$`:            "YYYY-MM-DDTHH:MM:SSZ",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}.[0-9]{3}Z$`:   "YYYY-MM-DDTHH:MM:SS.000Z",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$`:  "YYYY-MM-DDTHH:MM:SS.000Z",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2})?$`:          "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9]{2}:[0-9]{2}:[0-9]{2}Z)?$`:         "YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ",
		`^$|^[0-9]{4}-[0-9]{2}-[0-9]{2}$`:                                     "YYYY-MM-DD, or empty",
		`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?Z$`: "YYYY-MM-DDTHH:MM:SSZ",
		`^[0-9]{4}-[0-9]{2}$`: "YYYY-MM",
	}
)

// formatHint describes `format` and `pattern`: "format date (YYYY-MM-DD)", "pattern
// ^[0-9]{4}-[0-9]{2}$ (YYYY-MM)"; the layout of a pattern is its pattern_descriptor, or the
// one a well-known date pattern spells.
func formatHint(s schema) string {
	var parts []string
	shown := ""
	if f := s.str("format"); f != "" {
		h := "format " + f
		if layout := formatLayouts[f]; layout != "" {
			h += " (" + layout + ")"
			shown = layout
		}
		parts = append(parts, h)
	}
	if p := s.str("pattern"); p != "" {
		h := "pattern " + p
		layout := s.str("pattern_descriptor")
		if layout == "" {
			layout = patternLayouts[strings.ReplaceAll(p, `\d`, "[0-9]")]
		}
		if layout != "" && layout != shown {
			h += " (" + layout + ")"
		}
		parts = append(parts, h)
	}
	return strings.Join(parts, "; ")
}
