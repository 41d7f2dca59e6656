package values

// The connection specification of a definition is a JSON schema (draft-07), and the
// testing values must match it before a run starts. This file compiles that schema once
// and checks plain values against it. It is written here rather than taken from a general
// library because such a library prepares the metaschemas of every draft when the program
// starts, on every run, for a check that needs one draft; here nothing is prepared before
// Validate asks for it.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"connector/pkg/typo"
)

// schema is one compiled schema of the connection specification: a boolean schema, a
// $ref, or an object of keywords. An absent keyword leaves its field nil, false, or -1 for
// the counts.
type schema struct {
	// ptr is where the schema is written, as a JSON pointer without the leading "#/".
	ptr   string
	title string

	// secret is airbyte_secret: true; def is the default keyword's value, when hasDefault.
	secret     bool
	hasDefault bool
	def        any

	// boolean is set for the schemas true and false; allow is which one.
	boolean, allow bool

	// ref is the schema $ref points at. Draft-07 ignores every keyword next to $ref.
	ref *schema

	types            []string
	enum             []any
	enumKeys         []string // the canonical form of each enum value
	hasConst         bool
	constant         any
	constKey         string
	multipleOf       *limit
	maximum, minimum *limit
	exclusiveMaximum *limit
	exclusiveMinimum *limit

	maxLength, minLength int64
	pattern              *pattern

	items           *schema   // the schema of every item
	tuple           []*schema // the schema of each position, when items is a list
	additionalItems *schema   // the schema of the items past tuple
	maxItems        int64
	minItems        int64
	uniqueItems     bool
	contains        *schema

	maxProperties        int64
	minProperties        int64
	required             []string
	properties           map[string]*schema
	patternProperties    []patternSchema
	additionalProperties *schema
	dependentKeys        map[string][]string
	dependentSchemas     map[string]*schema
	propertyNames        *schema

	ifSchema, thenSchema, elseSchema *schema
	allOf, anyOf, oneOf              []*schema
	not                              *schema
}

type patternSchema struct {
	re *pattern
	s  *schema
}

// limit is a number written in the schema: exact for comparing, and as written for
// messages.
type limit struct {
	r    *big.Rat
	text string
}

// schemaError lists what makes a connection specification an invalid JSON schema, each
// problem prefixed with the JSON pointer of the keyword.
type schemaError []string

func (e schemaError) Error() string { return strings.Join(e, "; ") }

// compiler turns the plain value of a schema into schema nodes.
type compiler struct {
	root map[string]any
	// resources maps the absolute URI of each schema that has an $id (and the root's base
	// URI, "" when it has no $id) to where that schema is written; anchors does the same for
	// the plain-name fragments of $id ("#foo"), keyed "uri#foo". bases holds the base URI
	// in effect at each schema, by pointer. A $ref is resolved against them, so that a
	// reference under a nested $id means what draft-07 says it means.
	resources, anchors map[string][]string
	bases              map[string]string
	// nodes holds every schema compiled, by pointer, so that a schema reached both where
	// it is written and through $ref is compiled once, and recursive references close.
	nodes map[string]*schema
	errs  schemaError
}

// compileSchema compiles a connection specification. Numbers in it may be int, int64,
// float64 or json.Number (the manifest loader gives int and float64). Every problem of the
// schema itself is reported at once.
func compileSchema(spec map[string]any) (*schema, error) {
	c := &compiler{root: spec, nodes: map[string]*schema{},
		resources: map[string][]string{"": nil}, anchors: map[string][]string{}, bases: map[string]string{}}
	c.index(nil, spec, "")
	root := c.compile(nil, spec)
	if len(c.errs) == 0 {
		c.findLoops()
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return root, nil
}

// failf records a problem of the keyword kw of the schema at at.
func (c *compiler) failf(at []string, kw, format string, args ...any) {
	c.errs = append(c.errs, where(pointer(child(at, kw)))+": "+fmt.Sprintf(format, args...))
}

func (c *compiler) compile(at []string, raw any) *schema {
	ptr := pointer(at)
	if s, ok := c.nodes[ptr]; ok {
		return s
	}
	s := &schema{ptr: ptr, maxLength: -1, minLength: -1, maxItems: -1, minItems: -1, maxProperties: -1, minProperties: -1}
	c.nodes[ptr] = s
	switch x := raw.(type) {
	case bool:
		s.boolean, s.allow = true, x
	case map[string]any:
		c.keywords(s, at, x)
	default:
		c.errs = append(c.errs, fmt.Sprintf("%s: must be a schema (an object, or true or false), got %s", where(ptr), describe(raw)))
	}
	return s
}

// laterDraftKeywords are the keywords of JSON Schema 2019-09 and 2020-12 that would change
// the result of a check. Skipping them would accept values their author meant to refuse.
func laterDraftKeywords() []string {
	return []string{"prefixItems", "unevaluatedProperties", "unevaluatedItems", "dependentRequired",
		"dependentSchemas", "$dynamicRef", "$recursiveRef", "minContains", "maxContains"}
}

func (c *compiler) keywords(s *schema, at []string, m map[string]any) {
	for _, kw := range laterDraftKeywords() {
		if _, ok := m[kw]; ok {
			c.failf(at, kw, "%s is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07", kw)
		}
	}
	// Definitions are compiled even when nothing refers to them, so that a broken one is
	// reported where it is written.
	c.schemaMap(at, m, "definitions")
	c.schemaMap(at, m, "$defs")
	s.title, _ = m["title"].(string)
	s.secret, _ = m["airbyte_secret"].(bool)
	s.def, s.hasDefault = m["default"]
	if raw, ok := m["$ref"]; ok {
		s.ref = c.ref(at, raw)
		return
	}

	if raw, ok := m["type"]; ok {
		s.types = c.types(at, raw)
	}
	if raw, ok := m["enum"]; ok {
		if list, ok := raw.([]any); ok {
			s.enum = append([]any{}, list...)
			for _, e := range list {
				s.enumKeys = append(s.enumKeys, canonical(e))
			}
		} else {
			c.failf(at, "enum", "must be a list of the allowed values, got %s", describe(raw))
		}
	}
	if raw, ok := m["const"]; ok {
		s.hasConst, s.constant, s.constKey = true, raw, canonical(raw)
	}

	s.multipleOf = c.number(at, m, "multipleOf")
	if s.multipleOf != nil && s.multipleOf.r.Sign() <= 0 {
		c.failf(at, "multipleOf", "must be greater than 0, got %s", s.multipleOf.text)
		s.multipleOf = nil
	}
	s.maximum = c.number(at, m, "maximum")
	s.minimum = c.number(at, m, "minimum")
	s.exclusiveMaximum, s.maximum = c.exclusive(at, m, "exclusiveMaximum", "maximum", s.maximum)
	s.exclusiveMinimum, s.minimum = c.exclusive(at, m, "exclusiveMinimum", "minimum", s.minimum)

	s.maxLength = c.count(at, m, "maxLength")
	s.minLength = c.count(at, m, "minLength")
	if raw, ok := m["pattern"]; ok {
		s.pattern = c.pattern(child(at, "pattern"), raw)
	}

	if raw, ok := m["items"]; ok {
		if list, ok := raw.([]any); ok {
			s.tuple = make([]*schema, len(list))
			for i, e := range list {
				s.tuple[i] = c.compile(child(at, "items", strconv.Itoa(i)), e)
			}
			s.additionalItems = c.sub(at, m, "additionalItems")
		} else {
			s.items = c.compile(child(at, "items"), raw)
		}
	}
	if s.tuple == nil {
		// Draft-07 ignores additionalItems without a list of items; it is still compiled,
		// so that a mistake in it is reported.
		c.sub(at, m, "additionalItems")
	}
	s.maxItems = c.count(at, m, "maxItems")
	s.minItems = c.count(at, m, "minItems")
	if raw, ok := m["uniqueItems"]; ok {
		b, ok := raw.(bool)
		if !ok {
			c.failf(at, "uniqueItems", "must be true or false, got %s", describe(raw))
		}
		s.uniqueItems = b
	}
	s.contains = c.sub(at, m, "contains")

	s.maxProperties = c.count(at, m, "maxProperties")
	s.minProperties = c.count(at, m, "minProperties")
	if raw, ok := m["required"]; ok {
		s.required = c.names(at, "required", raw)
	}
	s.properties = c.schemaMap(at, m, "properties")
	if raw, ok := m["patternProperties"]; ok {
		pm, ok := raw.(map[string]any)
		if !ok {
			c.failf(at, "patternProperties", "must be an object of regular expressions to schemas, got %s", describe(raw))
		}
		for _, k := range slices.Sorted(maps.Keys(pm)) {
			p := child(at, "patternProperties", k)
			if re := c.pattern(p, k); re != nil {
				s.patternProperties = append(s.patternProperties, patternSchema{re, c.compile(p, pm[k])})
			}
		}
	}
	s.additionalProperties = c.sub(at, m, "additionalProperties")
	if raw, ok := m["dependencies"]; ok {
		dm, ok := raw.(map[string]any)
		if !ok {
			c.failf(at, "dependencies", "must be an object of property names to lists of names or schemas, got %s", describe(raw))
		}
		for _, k := range slices.Sorted(maps.Keys(dm)) {
			if list, ok := dm[k].([]any); ok {
				if s.dependentKeys == nil {
					s.dependentKeys = map[string][]string{}
				}
				s.dependentKeys[k] = c.names(child(at, "dependencies"), k, list)
				continue
			}
			if s.dependentSchemas == nil {
				s.dependentSchemas = map[string]*schema{}
			}
			s.dependentSchemas[k] = c.compile(child(at, "dependencies", k), dm[k])
		}
	}
	s.propertyNames = c.sub(at, m, "propertyNames")

	s.ifSchema = c.sub(at, m, "if")
	s.thenSchema = c.sub(at, m, "then")
	s.elseSchema = c.sub(at, m, "else")
	s.allOf = c.schemaList(at, m, "allOf")
	s.anyOf = c.schemaList(at, m, "anyOf")
	s.oneOf = c.schemaList(at, m, "oneOf")
	s.not = c.sub(at, m, "not")
}

// sub compiles the schema under keyword kw, if there is one.
func (c *compiler) sub(at []string, m map[string]any, kw string) *schema {
	raw, ok := m[kw]
	if !ok {
		return nil
	}
	return c.compile(child(at, kw), raw)
}

func (c *compiler) schemaList(at []string, m map[string]any, kw string) []*schema {
	raw, ok := m[kw]
	if !ok {
		return nil
	}
	list, ok := raw.([]any)
	if !ok || len(list) == 0 {
		c.failf(at, kw, "must be a non-empty list of schemas, got %s", describe(raw))
		return nil
	}
	out := make([]*schema, len(list))
	for i, e := range list {
		out[i] = c.compile(child(at, kw, strconv.Itoa(i)), e)
	}
	return out
}

func (c *compiler) schemaMap(at []string, m map[string]any, kw string) map[string]*schema {
	raw, ok := m[kw]
	if !ok {
		return nil
	}
	sm, ok := raw.(map[string]any)
	if !ok {
		c.failf(at, kw, "must be an object of names to schemas, got %s", describe(raw))
		return nil
	}
	out := make(map[string]*schema, len(sm))
	for _, k := range slices.Sorted(maps.Keys(sm)) {
		out[k] = c.compile(child(at, kw, k), sm[k])
	}
	return out
}

func (c *compiler) types(at []string, raw any) []string {
	var list []any
	switch x := raw.(type) {
	case string:
		list = []any{x}
	case []any:
		list = x
	}
	if len(list) == 0 {
		c.failf(at, "type", "must be a type name or a non-empty list of them, got %s", describe(raw))
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		name, _ := e.(string)
		switch name {
		case "null", "boolean", "object", "array", "number", "string", "integer":
			out = append(out, name)
		default:
			c.failf(at, "type", "%s is not a JSON type; use null, boolean, object, array, number, string or integer", display(e))
		}
	}
	return out
}

// names reads a list of property names (required, or a list under dependencies).
func (c *compiler) names(at []string, kw string, raw any) []string {
	list, ok := raw.([]any)
	if !ok {
		hint := ""
		if _, ok := raw.(bool); ok && kw == "required" {
			hint = " (`required: true` on a property is draft-03; list the name in `required` of the object instead)"
		}
		c.failf(at, kw, "must be a list of property names, got %s%s", describe(raw), hint)
		return nil
	}
	out := make([]string, 0, len(list))
	for _, e := range list {
		name, ok := e.(string)
		if !ok {
			c.failf(at, kw, "must be a list of property names, but it holds %s", describe(e))
			continue
		}
		out = append(out, name)
	}
	return out
}

func (c *compiler) number(at []string, m map[string]any, kw string) *limit {
	raw, ok := m[kw]
	if !ok {
		return nil
	}
	r, isNum := toRat(raw)
	if r == nil {
		if isNum {
			c.failf(at, kw, "must be a finite number")
		} else {
			c.failf(at, kw, "must be a number, got %s", describe(raw))
		}
		return nil
	}
	return &limit{r, numText(raw)}
}

// exclusive reads exclusiveMaximum or exclusiveMinimum: a number (draft-06 and later), or
// the boolean of draft-04, which makes the inclusive bound next to it exclusive. It returns
// the exclusive bound and what is left of the inclusive one.
func (c *compiler) exclusive(at []string, m map[string]any, kw, inclusiveKw string, inclusive *limit) (*limit, *limit) {
	raw, ok := m[kw]
	if !ok {
		return nil, inclusive
	}
	b, ok := raw.(bool)
	if !ok {
		return c.number(at, m, kw), inclusive
	}
	if !b {
		return nil, inclusive
	}
	if inclusive == nil {
		if _, written := m[inclusiveKw]; !written {
			c.failf(at, kw, "the draft-04 form `true` needs %s next to it; write the bound itself, e.g. `%s: 0`", inclusiveKw, kw)
		}
		return nil, nil
	}
	return inclusive, nil
}

// count reads a keyword whose value is a whole number, 0 or more (maxLength, minItems, …).
func (c *compiler) count(at []string, m map[string]any, kw string) int64 {
	raw, ok := m[kw]
	if !ok {
		return -1
	}
	r, _ := toRat(raw)
	if r == nil || !r.IsInt() || r.Sign() < 0 {
		got := describe(raw)
		if r != nil {
			got = numText(raw)
		}
		c.failf(at, kw, "must be a whole number, 0 or more, got %s", got)
		return -1
	}
	if !r.Num().IsInt64() {
		return math.MaxInt64
	}
	return r.Num().Int64()
}

// pattern compiles a pattern (of pattern, or a key of patternProperties) written at at.
func (c *compiler) pattern(at []string, raw any) *pattern {
	p, ok := raw.(string)
	if !ok {
		c.errs = append(c.errs, fmt.Sprintf("%s: must be a regular expression, got %s", where(pointer(at)), describe(raw)))
		return nil
	}
	re, err := compilePattern(p)
	if err != nil {
		c.errs = append(c.errs, fmt.Sprintf("%s: cannot compile the pattern %s as an ECMA-262 regular expression (%v)", where(pointer(at)), p, err))
		return nil
	}
	return re
}

// schemaKeywords says which keywords hold schemas, and how: "one" schema, a "list" of
// them, or an object of names to schemas ("map"). items holds one schema or a list, and
// dependencies mixes schemas with lists of names.
var schemaKeywords = map[string]string{
	"additionalItems": "one", "additionalProperties": "one", "contains": "one", "propertyNames": "one",
	"if": "one", "then": "one", "else": "one", "not": "one", "items": "one or list",
	"allOf": "list", "anyOf": "list", "oneOf": "list",
	"properties": "map", "patternProperties": "map", "definitions": "map", "$defs": "map", "dependencies": "map",
}

// index walks the schemas of the document, keyword by keyword (an $id inside an enum, a
// const or an unknown keyword names nothing), and records the base URI in effect at each
// and the schemas that $id names. base is the base URI of the schema around raw. Next to
// $ref, draft-07 ignores every keyword, $id included; only definitions are still walked,
// as they are compiled.
func (c *compiler) index(at []string, raw any, base string) {
	m, ok := raw.(map[string]any)
	if !ok {
		return
	}
	_, hasRef := m["$ref"]
	if id, ok := m["$id"].(string); ok && !hasRef {
		doc, frag, _ := strings.Cut(id, "#")
		if doc != "" {
			base = resolveURI(base, doc)
			c.declare(at, c.resources, base, id)
		}
		if frag != "" && !strings.HasPrefix(frag, "/") {
			c.declare(at, c.anchors, base+"#"+frag, id)
		}
	}
	c.bases[pointer(at)] = base
	for _, kw := range slices.Sorted(maps.Keys(m)) {
		if hasRef && kw != "definitions" && kw != "$defs" {
			continue
		}
		how := schemaKeywords[kw]
		switch x := m[kw].(type) {
		case map[string]any:
			if how == "map" {
				for _, k := range slices.Sorted(maps.Keys(x)) {
					c.index(child(at, kw, k), x[k], base)
				}
			} else if strings.HasPrefix(how, "one") {
				c.index(child(at, kw), x, base)
			}
		case []any:
			if strings.HasSuffix(how, "list") {
				for i, e := range x {
					c.index(child(at, kw, strconv.Itoa(i)), e, base)
				}
			}
		}
	}
}

// declare records that the schema at at is named uri (by the $id id), once.
func (c *compiler) declare(at []string, names map[string][]string, uri, id string) {
	if prev, ok := names[uri]; ok {
		c.failf(at, "$id", "%q names the same schema as the $id at %s; each $id must be unique", id, where(pointer(prev)))
		return
	}
	names[uri] = at
}

// resolveURI resolves a URI reference (without its fragment) against a base URI; a
// reference that is not a URI stays as written.
func resolveURI(base, ref string) string {
	u, err := url.Parse(ref)
	if err != nil {
		return ref
	}
	if b, err := url.Parse(base); err == nil && base != "" {
		u = b.ResolveReference(u)
	}
	u.Fragment, u.RawFragment = "", ""
	return u.String()
}

// baseOf is the base URI a $ref written at at is resolved against: that of the nearest
// schema around it that the index walked.
func (c *compiler) baseOf(at []string) string {
	for i := len(at); i >= 0; i-- {
		if b, ok := c.bases[pointer(at[:i])]; ok {
			return b
		}
	}
	return ""
}

// ref resolves a $ref written in the schema at at, against the base URI there. Only
// schemas inside the document are found: the root, a schema with an $id, a JSON pointer
// from one of them ("#/definitions/x", with ~0, ~1 and %-escapes), or a plain-name
// fragment that an $id declares ("#foo").
func (c *compiler) ref(at []string, raw any) *schema {
	r, ok := raw.(string)
	if !ok {
		c.failf(at, "$ref", "must be a string, got %s", describe(raw))
		return nil
	}
	docRef, frag, _ := strings.Cut(r, "#")
	doc := c.baseOf(at)
	if docRef != "" {
		doc = resolveURI(doc, docRef)
	}
	start, ok := c.resources[doc]
	if !ok {
		c.failf(at, "$ref", "%q points outside connection_specification; remote references are not supported, copy the schema under definitions and refer to it as \"#/definitions/…\"", r)
		return nil
	}
	if frag != "" && !strings.HasPrefix(frag, "/") {
		tokens, ok := c.anchors[doc+"#"+frag]
		if !ok {
			c.failf(at, "$ref", "%q names no schema: no schema in connection_specification has `$id: \"#%s\"`; use a JSON pointer such as \"#/definitions/name\"", r, frag)
			return nil
		}
		target, _ := c.valueAt(tokens)
		return c.compile(tokens, target)
	}
	frag, err := url.PathUnescape(frag)
	if err != nil {
		c.failf(at, "$ref", "%q has an invalid %%-escape", r)
		return nil
	}
	tokens := slices.Clone(start)
	if frag != "" {
		for _, t := range strings.Split(frag[1:], "/") {
			t, ok := unescapeToken(t)
			if !ok {
				c.failf(at, "$ref", "%q is not a valid JSON pointer (~ must be followed by 0 or 1)", r)
				return nil
			}
			tokens = append(tokens, t)
		}
	}
	target, ok := c.valueAt(tokens)
	if !ok {
		c.failf(at, "$ref", "%q points at nothing in connection_specification", r)
		return nil
	}
	return c.compile(tokens, target)
}

// valueAt is the value of the document at tokens, if there is one.
func (c *compiler) valueAt(tokens []string) (any, bool) {
	var target any = c.root
	for _, t := range tokens {
		ok := false
		switch x := target.(type) {
		case map[string]any:
			target, ok = x[t]
		case []any:
			var i int
			if i, ok = listIndex(t, len(x)); ok {
				target = x[i]
			}
		}
		if !ok {
			return nil, false
		}
	}
	return target, true
}

// findLoops reports a schema that applies itself to the same value again ($ref, allOf,
// anyOf, oneOf, not, if/then/else and the schemas of dependencies do) before looking
// inside it: checking any value would never end.
func (c *compiler) findLoops() {
	const open, done = 1, 2
	state := map[*schema]int{}
	reported := map[*schema]bool{}
	var stack []*schema
	var visit func(s *schema)
	visit = func(s *schema) {
		state[s] = open
		stack = append(stack, s)
		for _, n := range s.inPlace() {
			switch state[n] {
			case 0:
				visit(n)
			case open:
				if reported[n] {
					continue
				}
				reported[n] = true
				var chain []string
				for i := len(stack) - 1; i >= 0; i-- {
					chain = append([]string{refTo(stack[i].ptr)}, chain...)
					if stack[i] == n {
						break
					}
				}
				chain = append(chain, refTo(n.ptr))
				c.errs = append(c.errs, fmt.Sprintf("%s: the schema applies itself to the same value again (%s) without looking inside it, so checking would never end",
					where(n.ptr), strings.Join(chain, " → ")))
			}
		}
		stack = stack[:len(stack)-1]
		state[s] = done
	}
	ptrs := make([]string, 0, len(c.nodes))
	for p := range c.nodes {
		ptrs = append(ptrs, p)
	}
	sort.Strings(ptrs)
	for _, p := range ptrs {
		if s := c.nodes[p]; state[s] == 0 {
			visit(s)
		}
	}
}

// inPlace lists the schemas that s applies to the value it checks itself.
func (s *schema) inPlace() []*schema {
	var out []*schema
	add := func(l ...*schema) {
		for _, e := range l {
			if e != nil {
				out = append(out, e)
			}
		}
	}
	add(s.ref, s.not, s.ifSchema, s.thenSchema, s.elseSchema)
	add(s.allOf...)
	add(s.anyOf...)
	add(s.oneOf...)
	for _, k := range slices.Sorted(maps.Keys(s.dependentSchemas)) {
		add(s.dependentSchemas[k])
	}
	return out
}

// failure is one way the testing values break the specification.
type failure struct {
	// path locates the value in the testing values: keys and list indexes.
	path []string
	// keyword is the schema keyword that failed.
	keyword string
	// missing is a key the object at path lacks (for required and dependencies).
	missing string
	// key is the property of the object at path the failure is about, for its position.
	key string
	// msg says what is wrong; for a missing key it is empty or says why the key is needed.
	msg string
	// hint suggests a fix, when there is a likely one.
	hint string
	// gaveUp marks a pattern that could not be matched in time: the value is neither
	// accepted nor refused.
	gaveUp bool
	// empty marks a null value where the schema wants another type: a key left empty.
	empty bool
}

// isMissing reports a failure about a key the object lacks (whose name may be "").
func (f failure) isMissing() bool { return f.keyword == "required" || f.keyword == "dependencies" }

// String is the message of the failure as the user reads it.
func (f failure) String() string { return f.text("") }

// text is the message of the failure, the values called noun ("": testing value).
func (f failure) text(noun string) string {
	if noun == "" {
		noun = "testing value"
	}
	if f.isMissing() {
		s := fmt.Sprintf("missing required %s %q", noun, strings.Join(child(f.path, f.missing), "."))
		if f.msg != "" {
			s += " (" + f.msg + ")"
		}
		return s
	}
	if len(f.path) == 0 {
		return noun + "s: " + f.msg
	}
	if f.empty {
		return fmt.Sprintf("%s %q is empty (null): fill it in", noun, strings.Join(f.path, "."))
	}
	return fmt.Sprintf("%s %q: %s", noun, strings.Join(f.path, "."), f.msg)
}

// maxSteps bounds the schemas applied while checking one set of testing values. Real
// specifications take hundreds; a specification whose branches refer to each other can
// take exponentially many, and is refused rather than left to run.
const maxSteps = 1_000_000

// checker holds what one check of the testing values shares across branches.
type checker struct {
	steps int
	// backtracking is the time the patterns that only regexp2 reads have taken.
	backtracking time.Duration
	// gaveUp is set when a pattern took too long on a value: the check stops there, since
	// the branches it cut short would report what is not so. kept is how many failures the
	// check had found by then, in out.
	gaveUp *failure
	kept   int
	out    *[]failure
}

// validate checks v against the schema and returns every failure, in a stable order.
func (s *schema) validate(v any) []failure {
	var out []failure
	c := &checker{out: &out}
	c.check(s, v, nil, &out)
	if c.gaveUp != nil {
		return append(out[:c.kept], *c.gaveUp)
	}
	if c.steps > maxSteps {
		out = append(out, failure{msg: fmt.Sprintf("connection_specification is too complex to check these values (more than %d steps); simplify its anyOf/oneOf/$ref", maxSteps)})
	}
	return out
}

// match reports whether the string s at path matches p. When p gives up (see
// pattern.matches), the check stops and reports that; match then says yes, so that no
// other failure is made of it.
func (c *checker) match(p *pattern, s string, path []string) bool {
	ok, err := p.matches(s, &c.backtracking)
	if err == nil {
		return ok
	}
	if c.gaveUp == nil {
		c.gaveUp = &failure{path: path, keyword: "pattern", gaveUp: true, msg: p.gaveUpMessage(err)}
		c.kept = len(*c.out)
	}
	return true
}

// matches reports whether v passes s, without keeping why not.
func (c *checker) matches(s *schema, v any, path []string) bool {
	var out []failure
	c.check(s, v, path, &out)
	return len(out) == 0
}

func (c *checker) check(s *schema, v any, path []string, out *[]failure) {
	c.steps++
	if c.steps > maxSteps || c.gaveUp != nil {
		return
	}
	fail := func(kw, msg string) {
		*out = append(*out, failure{path: path, keyword: kw, msg: msg})
	}
	if s.boolean {
		if !s.allow {
			fail("false", "no value is allowed here")
		}
		return
	}
	if s.ref != nil {
		c.check(s.ref, v, path, out)
		return
	}
	kind, r := jsonType(v)
	if s.types != nil && !s.hasType(kind, r) {
		// The other keywords would only repeat that the value is of another kind.
		fail("type", fmt.Sprintf("got %s, want %s", typeName(kind, r), strings.Join(s.types, " or ")))
		// A key written with no value (`client_id:`, as init-values leaves it) is null.
		(*out)[len(*out)-1].empty = v == nil && len(path) > 0
		return
	}
	if s.enum != nil && !slices.Contains(s.enumKeys, canonical(v)) {
		fail("enum", enumMessage(s.enum))
	}
	if s.hasConst && canonical(v) != s.constKey {
		fail("const", "value must be "+display(s.constant))
	}
	switch x := v.(type) {
	case string:
		c.checkString(s, x, path, fail)
	case []any:
		c.checkArray(s, x, path, out, fail)
	case map[string]any:
		c.checkObject(s, x, path, out, fail)
	default:
		if kind == "number" {
			s.checkNumber(v, r, fail)
		}
	}

	for _, a := range s.allOf {
		c.check(a, v, path, out)
	}
	if s.anyOf != nil {
		c.choose(s.anyOf, "anyOf", v, path, fail)
	}
	if s.oneOf != nil {
		c.choose(s.oneOf, "oneOf", v, path, fail)
	}
	if s.not != nil && c.matches(s.not, v, path) {
		fail("not", "must not match the schema under not")
	}
	if s.ifSchema != nil {
		// The branch that applies is reported like any other schema: its failures say
		// exactly what is wrong (a key required when another has some value).
		if c.matches(s.ifSchema, v, path) {
			if s.thenSchema != nil {
				c.check(s.thenSchema, v, path, out)
			}
		} else if s.elseSchema != nil {
			c.check(s.elseSchema, v, path, out)
		}
	}
}

func (s *schema) hasType(kind string, r *big.Rat) bool {
	for _, t := range s.types {
		if t == kind || t == "integer" && kind == "number" && r != nil && r.IsInt() {
			return true
		}
	}
	return false
}

func (s *schema) checkNumber(v any, r *big.Rat, fail func(kw, msg string)) {
	if r == nil {
		if s.multipleOf != nil || s.maximum != nil || s.minimum != nil || s.exclusiveMaximum != nil || s.exclusiveMinimum != nil {
			fail("type", "must be a finite number")
		}
		return
	}
	got := numText(v)
	if m := s.multipleOf; m != nil && !new(big.Rat).Quo(r, m.r).IsInt() {
		fail("multipleOf", fmt.Sprintf("must be a multiple of %s, got %s", m.text, got))
	}
	if m := s.maximum; m != nil && r.Cmp(m.r) > 0 {
		fail("maximum", fmt.Sprintf("must be at most %s, got %s", m.text, got))
	}
	if m := s.exclusiveMaximum; m != nil && r.Cmp(m.r) >= 0 {
		fail("exclusiveMaximum", fmt.Sprintf("must be less than %s, got %s", m.text, got))
	}
	if m := s.minimum; m != nil && r.Cmp(m.r) < 0 {
		fail("minimum", fmt.Sprintf("must be at least %s, got %s", m.text, got))
	}
	if m := s.exclusiveMinimum; m != nil && r.Cmp(m.r) <= 0 {
		fail("exclusiveMinimum", fmt.Sprintf("must be greater than %s, got %s", m.text, got))
	}
}

// checkString never puts the string in a message: testing values hold credentials.
func (c *checker) checkString(s *schema, x string, path []string, fail func(kw, msg string)) {
	if s.maxLength >= 0 || s.minLength >= 0 {
		n := int64(utf8.RuneCountInString(x))
		if s.maxLength >= 0 && n > s.maxLength {
			fail("maxLength", fmt.Sprintf("must be at most %s, got %d", plural(s.maxLength, "character"), n))
		}
		if s.minLength >= 0 && n < s.minLength {
			fail("minLength", fmt.Sprintf("must be at least %s, got %d", plural(s.minLength, "character"), n))
		}
	}
	if s.pattern != nil && !c.match(s.pattern, x, path) {
		fail("pattern", "must match the pattern "+s.pattern.text)
	}
}

func (c *checker) checkArray(s *schema, x []any, path []string, out *[]failure, fail func(kw, msg string)) {
	n := int64(len(x))
	if s.maxItems >= 0 && n > s.maxItems {
		fail("maxItems", fmt.Sprintf("must have at most %s, got %d", plural(s.maxItems, "item"), n))
	}
	if s.minItems >= 0 && n < s.minItems {
		fail("minItems", fmt.Sprintf("must have at least %s, got %d", plural(s.minItems, "item"), n))
	}
	if s.uniqueItems {
		seen := make(map[string]int, len(x))
		for i, e := range x {
			k := canonical(e)
			if j, ok := seen[k]; ok {
				fail("uniqueItems", fmt.Sprintf("must have unique items, but items %d and %d are equal", j, i))
				break
			}
			seen[k] = i
		}
	}
	switch {
	case s.items != nil:
		for i, e := range x {
			c.check(s.items, e, child(path, strconv.Itoa(i)), out)
		}
	case s.tuple != nil:
		extra := s.additionalItems
		if extra != nil && extra.boolean && !extra.allow && len(x) > len(s.tuple) {
			fail("additionalItems", fmt.Sprintf("must have at most %s, got %d", plural(int64(len(s.tuple)), "item"), n))
			extra = nil
		}
		for i, e := range x {
			switch {
			case i < len(s.tuple):
				c.check(s.tuple[i], e, child(path, strconv.Itoa(i)), out)
			case extra != nil:
				c.check(extra, e, child(path, strconv.Itoa(i)), out)
			}
		}
	}
	if s.contains != nil {
		found := false
		for i, e := range x {
			if c.matches(s.contains, e, child(path, strconv.Itoa(i))) {
				found = true
				break
			}
		}
		if !found {
			fail("contains", "must contain an item that matches the schema under contains")
		}
	}
}

func (c *checker) checkObject(s *schema, x map[string]any, path []string, out *[]failure, fail func(kw, msg string)) {
	n := int64(len(x))
	if s.maxProperties >= 0 && n > s.maxProperties {
		fail("maxProperties", fmt.Sprintf("must have at most %s, got %d", pluralProperties(s.maxProperties), n))
	}
	if s.minProperties >= 0 && n < s.minProperties {
		fail("minProperties", fmt.Sprintf("must have at least %s, got %d", pluralProperties(s.minProperties), n))
	}
	for _, k := range s.required {
		if _, ok := x[k]; !ok {
			*out = append(*out, failure{path: path, keyword: "required", missing: k})
		}
	}
	for _, k := range slices.Sorted(maps.Keys(x)) {
		e := x[k]
		at := child(path, k)
		matched := false
		if p, ok := s.properties[k]; ok {
			c.check(p, e, at, out)
			matched = true
		}
		for _, pp := range s.patternProperties {
			if c.match(pp.re, k, at) {
				c.check(pp.s, e, at, out)
				matched = true
			}
		}
		if a := s.additionalProperties; a != nil && !matched {
			if a.boolean && !a.allow {
				f := failure{path: path, keyword: "additionalProperties", key: k, msg: fmt.Sprintf("unexpected property %q", k)}
				if near := nearest(k, slices.Sorted(maps.Keys(s.properties))); near != "" {
					f.hint = fmt.Sprintf("did you mean %q?", near)
				}
				*out = append(*out, f)
			} else {
				c.check(a, e, at, out)
			}
		}
		if s.propertyNames != nil {
			var why []failure
			c.check(s.propertyNames, k, at, &why)
			if len(why) > 0 {
				msgs := make([]string, len(why))
				for i, f := range why {
					msgs[i] = f.msg
				}
				*out = append(*out, failure{path: path, keyword: "propertyNames", key: k,
					msg: fmt.Sprintf("property name %q is not allowed: %s", k, strings.Join(msgs, "; "))})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.dependentKeys)) {
		if _, ok := x[k]; !ok {
			continue
		}
		for _, need := range s.dependentKeys[k] {
			if _, ok := x[need]; !ok {
				*out = append(*out, failure{path: path, keyword: "dependencies", missing: need,
					msg: fmt.Sprintf("needed because %q is set", strings.Join(child(path, k), "."))})
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(s.dependentSchemas)) {
		if _, ok := x[k]; ok {
			c.check(s.dependentSchemas[k], x, path, out)
		}
	}
}

// choose checks anyOf or oneOf. The failures of the branches are not reported one by one
// (most are expected: the value was meant for one branch only); the one message names the
// branch that came closest when one clearly did.
func (c *checker) choose(branches []*schema, kw string, v any, path []string, fail func(kw, msg string)) {
	results := make([][]failure, len(branches))
	var matched []string
	for i, b := range branches {
		c.check(b, v, path, &results[i])
		if len(results[i]) == 0 {
			matched = append(matched, strconv.Itoa(i+1))
			if kw == "anyOf" {
				return
			}
		}
	}
	switch {
	case len(matched) == 1:
		return
	case len(matched) > 1:
		fail(kw, fmt.Sprintf("must match exactly one of the oneOf choices, matched %d (choices %s)", len(matched), strings.Join(matched, ", ")))
		return
	}
	want := "exactly one"
	if kw == "anyOf" {
		want = "at least one"
	}
	fail(kw, fmt.Sprintf("must match %s of the %s choices, matched none%s", want, kw, closest(branches, results, len(path))))
}

// closest describes the branch of anyOf/oneOf with the fewest failures, when there is
// exactly one such branch among those meant for this kind of value: a branch that fails
// on the type of the value, or on a const/enum of the value or of one of its properties (the
// discriminator of Airbyte's choices, e.g. auth_type), was meant for another value.
func closest(branches []*schema, results [][]failure, depth int) string {
	best, tie := -1, false
	for i, r := range results {
		if !meantFor(r, depth) {
			continue
		}
		switch {
		case best < 0 || len(r) < len(results[best]):
			best, tie = i, false
		case len(r) == len(results[best]):
			tie = true
		}
	}
	if best < 0 || tie {
		return ""
	}
	name := fmt.Sprintf("choice %d", best+1)
	if t := branches[best].name(); t != "" {
		name += fmt.Sprintf(" (%q)", t)
	}
	more := ""
	if n := len(results[best]) - 1; n > 0 {
		more = fmt.Sprintf(" (and %d more)", n)
	}
	return fmt.Sprintf("; the closest is %s: %s%s", name, results[best][0], more)
}

func meantFor(r []failure, depth int) bool {
	for _, f := range r {
		switch {
		case len(f.path) == depth && (f.keyword == "type" || f.keyword == "const" || f.keyword == "enum" || f.keyword == "false"):
			return false
		case len(f.path) == depth+1 && (f.keyword == "const" || f.keyword == "enum"):
			return false
		}
	}
	return true
}

// name is the title of a schema, or of the schema its $ref points at.
func (s *schema) name() string {
	for i := 0; s != nil && i < 10; i++ {
		if s.title != "" {
			return s.title
		}
		s = s.ref
	}
	return ""
}

func enumMessage(enum []any) string {
	if len(enum) == 0 {
		return "no value is allowed (enum is empty)"
	}
	if len(enum) == 1 {
		return "value must be " + display(enum[0])
	}
	want := make([]string, len(enum))
	for i, e := range enum {
		want[i] = display(e)
	}
	return "value must be one of " + strings.Join(want, ", ")
}

// jsonType names the JSON type of a plain value and, for a number, gives it exactly (nil
// when it is not finite).
func jsonType(v any) (string, *big.Rat) {
	switch v.(type) {
	case nil:
		return "null", nil
	case bool:
		return "boolean", nil
	case string:
		return "string", nil
	case []any:
		return "array", nil
	case map[string]any:
		return "object", nil
	}
	if r, ok := toRat(v); ok {
		return "number", r
	}
	return fmt.Sprintf("%T", v), nil
}

// typeName is the type a message says a value has: a number that is a whole number is an
// integer.
func typeName(kind string, r *big.Rat) string {
	if kind == "number" && r != nil && r.IsInt() {
		return "integer"
	}
	return kind
}

// describe names what a value of the schema is, for messages about the schema.
func describe(v any) string {
	kind, _ := jsonType(v)
	switch kind {
	case "null":
		return "null"
	case "boolean":
		return fmt.Sprintf("the boolean %v", v)
	case "number":
		return "the number " + numText(v)
	case "string":
		return fmt.Sprintf("the string %q", v)
	case "array":
		return "a list"
	case "object":
		return "an object"
	}
	return "a value of Go type " + kind
}

// display writes a value of the schema (an enum choice, a const) for a message: strings in
// single quotes, anything else as JSON.
func display(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + x + "'"
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(x)
	case []any, map[string]any:
		b, err := json.Marshal(jsonable(v))
		if err == nil {
			return string(b)
		}
	}
	if _, ok := toRat(v); ok {
		return numText(v)
	}
	return fmt.Sprint(v)
}

// jsonable makes numbers that encoding/json cannot write (NaN, infinities) strings.
func jsonable(v any) any {
	switch x := v.(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonable(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonable(e)
		}
		return out
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return numText(x)
		}
	}
	return v
}

// toRat reads a number of any of the Go types a decoder gives. isNum reports whether v is
// a number at all; r is nil when it is not a finite one.
func toRat(v any) (r *big.Rat, isNum bool) {
	switch x := v.(type) {
	case int:
		return new(big.Rat).SetInt64(int64(x)), true
	case int8:
		return new(big.Rat).SetInt64(int64(x)), true
	case int16:
		return new(big.Rat).SetInt64(int64(x)), true
	case int32:
		return new(big.Rat).SetInt64(int64(x)), true
	case int64:
		return new(big.Rat).SetInt64(x), true
	case uint:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint8:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint16:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint32:
		return new(big.Rat).SetUint64(uint64(x)), true
	case uint64:
		return new(big.Rat).SetUint64(x), true
	case float32:
		return floatRat(float64(x), 32), true
	case float64:
		return floatRat(x, 64), true
	case json.Number:
		return decimalRat(string(x)), true
	}
	return nil, false
}

// floatRat takes a float at the shortest decimal that reads back as it, which is what was
// written in the file: 0.1 is 1/10, so that 0.3 is a multiple of 0.1.
func floatRat(f float64, bits int) *big.Rat {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, bits))
	return r
}

// maxExponent bounds the decimal exponent of a number read exactly: 1e400 is, 1e99999 is
// read as float64 reads it (an infinity, so not a finite number), because exact arithmetic
// on it would take longer than any check is worth.
const maxExponent = 1000

// decimalRat reads a JSON number (a json.Number), or returns nil when it is not one or not
// finite.
func decimalRat(s string) *big.Rat {
	exp, ok := jsonNumberExponent(s)
	if !ok {
		return nil
	}
	if exp > maxExponent || exp < -maxExponent {
		f, _ := strconv.ParseFloat(s, 64) // ±Inf or 0 when out of range, as wanted
		return floatRat(f, 64)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil
	}
	return r
}

// jsonNumberExponent checks s against JSON's number grammar and returns its exponent
// (saturated when it does not fit an int).
func jsonNumberExponent(s string) (int, bool) {
	i := 0
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	if i < len(s) && s[i] == '-' {
		i++
	}
	if digits() == 0 {
		return 0, false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return 0, false
		}
	}
	exp := 0
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		start := i
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return 0, false
		}
		n, err := strconv.Atoi(s[start:i])
		switch {
		case err == nil:
			exp = n
		case s[start] == '-':
			exp = math.MinInt
		default:
			exp = math.MaxInt
		}
	}
	return exp, i == len(s)
}

// numText writes a number of the values or of the schema as JSON would.
func numText(v any) string {
	switch x := v.(type) {
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case json.Number:
		if decimalRat(string(x)) == nil {
			return "an invalid number"
		}
		return string(x)
	}
	return fmt.Sprint(v)
}

// canonical writes a value so that values JSON Schema calls equal (1 and 1.0; objects with
// the same pairs in any order) are written the same, and other values differently.
func canonical(v any) string {
	var b strings.Builder
	writeCanonical(&b, v)
	return b.String()
}

func writeCanonical(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		b.WriteString(strconv.Quote(x))
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			writeCanonical(b, e)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Quote(k))
			b.WriteByte(':')
			writeCanonical(b, x[k])
		}
		b.WriteByte('}')
	default:
		r, ok := toRat(v)
		switch {
		case r != nil:
			b.WriteString(r.RatString())
		case ok:
			b.WriteString("~" + numText(v))
		default:
			fmt.Fprintf(b, "%T(%v)", v, v)
		}
	}
}

// child returns path with more tokens, always in a new array, so that paths kept in
// failures are never overwritten by a sibling's.
func child(path []string, tokens ...string) []string {
	return append(path[:len(path):len(path)], tokens...)
}

// pointer writes tokens as a JSON pointer without the leading "#/".
func pointer(tokens []string) string {
	esc := make([]string, len(tokens))
	for i, t := range tokens {
		esc[i] = strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
	}
	return strings.Join(esc, "/")
}

// where names a schema location in an error: its pointer, or "#" for the root.
func where(ptr string) string {
	if ptr == "" {
		return "#"
	}
	return ptr
}

// refTo writes a pointer as a $ref would.
func refTo(ptr string) string {
	if ptr == "" {
		return "#"
	}
	return "#/" + ptr
}

func unescapeToken(t string) (string, bool) {
	if !strings.Contains(t, "~") {
		return t, true
	}
	var b strings.Builder
	for i := 0; i < len(t); i++ {
		if t[i] != '~' {
			b.WriteByte(t[i])
			continue
		}
		if i+1 == len(t) || t[i+1] != '0' && t[i+1] != '1' {
			return "", false
		}
		if t[i+1] == '0' {
			b.WriteByte('~')
		} else {
			b.WriteByte('/')
		}
		i++
	}
	return b.String(), true
}

// listIndex reads a JSON pointer token that indexes a list of n items.
func listIndex(t string, n int) (int, bool) {
	if t == "" || len(t) > 1 && t[0] == '0' {
		return 0, false
	}
	i, err := strconv.Atoi(t)
	if err != nil || i < 0 || i >= n {
		return 0, false
	}
	return i, true
}

func plural(n int64, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func pluralProperties(n int64) string {
	if n == 1 {
		return "1 property"
	}
	return fmt.Sprintf("%d properties", n)
}

// nearest returns the name closest to s by edit distance when it is close enough to be a
// likely typo, else "".
func nearest(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := typo.Distance(s, n); d < bestD && d < len([]rune(n)) {
			best, bestD = n, d
		}
	}
	return best
}
