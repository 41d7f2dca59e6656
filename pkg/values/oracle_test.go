package values

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The checker is compared with an established draft-07 validator,
// github.com/santhosh-tekuri/jsonschema/v6, imported by tests only: it is what the program
// used before, and what it stopped using because it prepares every draft's metaschema on
// every start. The two must agree on whether a schema compiles and whether a value is
// valid, except where our design differs on purpose:
//
//   - format (and contentEncoding, contentMediaType) are annotations here; the oracle
//     asserts draft-07 formats, so it is given formats that accept everything.
//   - The metaschema wants the items of type, enum, required and the lists of
//     dependencies unique, and enum not empty; ours reads a repeated item as if written
//     once and an empty enum as allowing nothing. The grammar writes no repeats.
//   - The draft-04 form exclusiveMaximum: true compiles here (real connectors carry it);
//     the later-draft keywords (prefixItems, unevaluatedProperties, …) are refused here
//     rather than ignored. The grammar below writes neither.
//   - Patterns are ECMA-262's: \s is Unicode whitespace here and ASCII whitespace in the
//     oracle, which hands patterns to Go's regexp as written. The grammar writes no \s.
//   - Every schema written is compiled here, used or not (a definition, then or else
//     without if, additionalItems without a list of items), so that a mistake in it is
//     reported where it is written; the oracle compiles what applies. It is asked for
//     each definition too, and the rest is compared without what draft-07 ignores.
//   - A $ref is resolved here wherever it is written, and one that leads nowhere is
//     refused; the oracle resolves a $ref when it compiles the schema around it, and
//     skips some (then under "if": false).
//   - The oracle (v6.0.3) applies the draft-06 and draft-07 keywords written next to a
//     $ref (const, contains, propertyNames, if, …), which draft-07 says to ignore, as ours
//     does; the oracle is given the schema without them.
//   - A schema that applies itself to the same value again ({"$ref": "#"}, a loop of
//     allOf) is refused when it is compiled here; the oracle refuses it while validating.
//   - A schema whose checking takes more than maxSteps is refused here while checking.

// oracleFormats are the formats the oracle would assert for draft-07.
var oracleFormats = []string{"json-pointer", "relative-json-pointer", "uuid", "duration", "period", "ipv4", "ipv6",
	"hostname", "email", "date", "time", "date-time", "uri", "iri", "uri-reference", "iri-reference", "uri-template", "semver"}

// oracleURL is where the oracle finds the schema: a scheme nothing loads, so a remote
// $ref fails there as it does here.
const oracleURL = "http://fuzz.invalid/schema.json"

// oracle compiles schemaJSON with the reference validator and says whether valueJSON is
// valid under it.
func oracle(schemaJSON, valueJSON string) (valid bool, compileErr, validateErr error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(schemaJSON))
	if err != nil {
		return false, err, nil
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft7)
	for _, name := range oracleFormats {
		c.RegisterFormat(&jsonschema.Format{Name: name, Validate: func(any) error { return nil }})
	}
	if err := c.AddResource(oracleURL, doc); err != nil {
		return false, err, nil
	}
	sch, err := c.Compile(oracleURL)
	if err != nil {
		return false, err, nil
	}
	// Ours compiles every definition, used or not, so that a broken one is reported
	// where it is written; the oracle compiles what the root reaches. It is asked for the
	// definitions too.
	if m, ok := doc.(map[string]any); ok {
		defs, _ := m["definitions"].(map[string]any)
		for _, k := range slices.Sorted(maps.Keys(defs)) {
			if _, err := c.Compile(oracleURL + "#/definitions/" + k); err != nil {
				return false, err, nil
			}
		}
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(valueJSON))
	if err != nil {
		return false, nil, err
	}
	err = sch.Validate(inst)
	return err == nil, nil, err
}

// ours compiles schemaJSON with our checker and says whether valueJSON is valid under it,
// reading the numbers exactly (json.Number) or as float64 (as YAML gives them).
func ours(t *testing.T, schemaJSON, valueJSON string, exact bool) (valid bool, failures []failure, compileErr error) {
	t.Helper()
	decode := decodeExact
	if !exact {
		decode = decodeFloat
	}
	spec, ok := decode(t, []byte(schemaJSON)).(map[string]any)
	if !ok {
		t.Fatalf("the grammar wrote a schema that is not an object: %s", schemaJSON)
	}
	s, err := compileSchema(spec)
	if err != nil {
		return false, nil, err
	}
	failures = s.validate(decode(t, []byte(valueJSON)))
	return len(failures) == 0, failures, nil
}

// FuzzSchemaOracle builds a draft-07 schema and a value from the fuzzer's bytes with a
// small grammar, and requires our checker and the oracle to agree on both.
func FuzzSchemaOracle(f *testing.F) {
	for _, seed := range []string{
		"", "\x00", "\x01\x02\x03\x04", "\x05\x05\x05\x05\x05\x05\x05\x05\x05",
		"\x10\x20\x30\x40\x50\x60\x70\x80\x90\xa0\xb0\xc0\xd0\xe0\xf0",
		"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2\xf1\xf0",
		"\x03\x11\x07\x19\x02\x04\x05\x06\x09\x0a\x0b\x0c\x0d\x0e\x0f\x21\x33\x45",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		g := &grammar{data: data}
		schemaJSON := g.root()
		valueJSON := g.value(0)
		pruned := pruneIgnored(t, schemaJSON)
		want, theirErr, validateErr := oracle(pruned, valueJSON)
		got, failures, ourErr := ours(t, schemaJSON, valueJSON, true)
		if ourErr != nil && theirErr == nil {
			// Ours compiles what draft-07 ignores, to report a mistake there; without
			// it, the schema must compile and mean the same.
			schemaJSON = pruned
			got, failures, ourErr = ours(t, schemaJSON, valueJSON, true)
		}
		switch {
		case ourErr != nil && theirErr != nil:
			return
		case ourErr != nil:
			if isLoop(ourErr) || refOnly(ourErr) {
				return // documented above
			}
			t.Fatalf("schema %s\nours refuses it: %v\nthe oracle compiles it", schemaJSON, ourErr)
		case theirErr != nil:
			t.Fatalf("schema %s\nours compiles it\nthe oracle refuses it: %v", schemaJSON, theirErr)
		}
		if validateErr != nil && strings.Contains(validateErr.Error(), "infinite loop") {
			return
		}
		if tooComplex(failures) {
			return
		}
		if got != want {
			t.Fatalf("schema %s\nvalue  %s\nours: valid=%v %v\noracle: valid=%v %v", schemaJSON, valueJSON, got, failures, want, validateErr)
		}
		if gotFloat, _, _ := ours(t, schemaJSON, valueJSON, false); gotFloat != got {
			t.Fatalf("schema %s\nvalue  %s\nvalid=%v with exact numbers, %v with float64", schemaJSON, valueJSON, got, gotFloat)
		}
	})
}

// pruneIgnored removes from a schema the keywords draft-07 ignores: then and else
// without if, additionalItems without a list of items, and everything next to $ref but
// definitions.
func pruneIgnored(t *testing.T, schemaJSON string) string {
	var prune func(v any) any
	prune = func(v any) any {
		m, ok := v.(map[string]any)
		if !ok {
			return v
		}
		out := map[string]any{}
		_, hasRef := m["$ref"]
		_, hasIf := m["if"]
		_, tuple := m["items"].([]any)
		for k, e := range m {
			switch {
			case hasRef && k != "$ref" && k != "definitions",
				!hasIf && (k == "then" || k == "else"),
				!tuple && k == "additionalItems":
				continue
			}
			switch how := schemaKeywords[k]; {
			case how == "map":
				if sm, ok := e.(map[string]any); ok {
					pm := map[string]any{}
					for name, sub := range sm {
						pm[name] = prune(sub)
					}
					e = pm
				}
			case how != "":
				if list, ok := e.([]any); ok {
					pl := make([]any, len(list))
					for i, sub := range list {
						pl[i] = prune(sub)
					}
					e = pl
				} else {
					e = prune(e)
				}
			}
			out[k] = e
		}
		return out
	}
	b, err := json.Marshal(prune(decodeExact(t, []byte(schemaJSON))))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// refOnly reports whether every problem ours finds in a schema is a $ref that leads
// nowhere in the document.
func refOnly(err error) bool {
	var se schemaError
	if !errors.As(err, &se) {
		return false
	}
	for _, p := range se {
		if !strings.Contains(p, "points at nothing") && !strings.Contains(p, "points outside") && !strings.Contains(p, "names no schema") {
			return false
		}
	}
	return true
}

func isLoop(err error) bool {
	return strings.Contains(err.Error(), "applies itself to the same value again")
}

func tooComplex(fs []failure) bool {
	for _, f := range fs {
		if strings.Contains(f.msg, "too complex") {
			return true
		}
	}
	return false
}

// grammar writes JSON schemas and values from bytes: each byte picks the next choice, and
// the bytes running out picks the first (the smallest) choice everywhere.
type grammar struct {
	data []byte
	i    int
}

func (g *grammar) pick(n int) int {
	if g.i >= len(g.data) {
		return 0
	}
	b := g.data[g.i]
	g.i++
	return int(b) % n
}

func (g *grammar) oneOf(choices ...string) string { return choices[g.pick(len(choices))] }

// The small sets the schemas and values draw from, so that they meet often.
var (
	grammarNumbers = []string{"0", "1", "-1", "2", "2.5", "0.1", "0.3", "3", "10", "1.0", "-0.5", "1e2", "0.0075", "7",
		"-0", "1e308", "1.5e-7", "0.30000000000000004", "9007199254740992"}
	grammarStrings = []string{`""`, `"a"`, `"ab"`, `"abc"`, `"b"`, `"aé"`, `"1"`, `"ba"`, `"日本"`, `"a\nb"`}
	grammarKeys    = []string{"a", "b", "c", "aa", "a/b", "~"}
	grammarRegexps = []string{"^a", "b$", "^[a-c]+$", "\\\\d", "^$", "a|b", "^.{2}$", "é", "^\\\\w+$", "[^a]", "^a*$"}
	grammarTypes   = []string{"null", "boolean", "object", "array", "number", "string", "integer"}
)

// root writes the top schema, with definitions that $ref may point at.
func (g *grammar) root() string {
	var kws []string
	switch g.pick(3) {
	case 1:
		kws = append(kws, `"definitions":{"d":`+g.schema(1)+`,"e":{"$id":"#e","allOf":[`+g.schema(2)+`]}}`)
	case 2:
		// A nested $id: "f.json" and the pointers under it resolve against it.
		kws = append(kws, `"$id":"`+oracleURL+`"`,
			`"definitions":{"d":`+g.schema(1)+`,"f":{"$id":"f.json","definitions":{"g":`+g.schema(2)+`},"allOf":[{"$ref":"#/definitions/g"}]}}`)
	}
	kws = append(kws, g.keywords(0)...)
	return "{" + strings.Join(kws, ",") + "}"
}

func (g *grammar) schema(depth int) string {
	if depth >= 4 {
		return g.oneOf("true", "false", `{}`, `{"type":"string"}`)
	}
	switch g.pick(8) {
	case 0:
		return "true"
	case 1:
		return "false"
	}
	return "{" + strings.Join(g.keywords(depth), ",") + "}"
}

func (g *grammar) schemas(depth, max int) string {
	n := 1 + g.pick(max)
	parts := make([]string, n)
	for i := range parts {
		parts[i] = g.schema(depth)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func (g *grammar) keywords(depth int) []string {
	n := g.pick(4)
	var out []string
	seen := map[string]bool{}
	for range n {
		kw := g.keyword(depth + 1)
		name, _, _ := strings.Cut(kw, ":")
		if !seen[name] {
			seen[name] = true
			out = append(out, kw)
		}
	}
	return out
}

func (g *grammar) key() string { return strconv.Quote(grammarKeys[g.pick(len(grammarKeys))]) }

func (g *grammar) number() string { return grammarNumbers[g.pick(len(grammarNumbers))] }

func (g *grammar) count() string { return strconv.Itoa(g.pick(4)) }

func (g *grammar) keyword(depth int) string {
	kw := func(name, value string) string { return strconv.Quote(name) + ":" + value }
	switch g.pick(33) {
	case 0:
		if g.pick(2) == 0 {
			return kw("type", strconv.Quote(g.oneOf(grammarTypes...)))
		}
		return kw("type", g.distinct(2, func() string { return strconv.Quote(g.oneOf(grammarTypes...)) }))
	case 1:
		return kw("enum", g.distinct(3, func() string { return g.value(depth) }))
	case 2:
		return kw("const", g.value(depth))
	case 3:
		return kw("multipleOf", g.oneOf("0.5", "2", "3", "0.1", "1.5", "0.0001", "1e-2"))
	case 4:
		return kw("maximum", g.number())
	case 5:
		return kw("minimum", g.number())
	case 6:
		return kw("exclusiveMaximum", g.number())
	case 7:
		return kw("exclusiveMinimum", g.number())
	case 8:
		return kw("maxLength", g.count())
	case 9:
		return kw("minLength", g.count())
	case 10:
		return kw("pattern", `"`+g.oneOf(grammarRegexps...)+`"`)
	case 11:
		if g.pick(2) == 0 {
			return kw("items", g.schema(depth))
		}
		return kw("items", g.schemas(depth, 3))
	case 12:
		return kw("additionalItems", g.schema(depth))
	case 13:
		return kw("maxItems", g.count())
	case 14:
		return kw("minItems", g.count())
	case 15:
		return kw("uniqueItems", g.oneOf("true", "false"))
	case 16:
		return kw("contains", g.schema(depth))
	case 17:
		return kw("maxProperties", g.count())
	case 18:
		return kw("minProperties", g.count())
	case 19:
		return kw("required", g.distinct(3, g.key))
	case 20:
		return kw("properties", g.object(depth, g.key))
	case 21:
		return kw("patternProperties", g.object(depth, func() string { return `"` + g.oneOf(grammarRegexps...) + `"` }))
	case 22:
		return kw("additionalProperties", g.schema(depth))
	case 23:
		var deps []string
		for range 1 + g.pick(2) {
			if g.pick(2) == 0 {
				deps = append(deps, g.key()+":["+g.key()+"]")
			} else {
				deps = append(deps, g.key()+":"+g.schema(depth))
			}
		}
		return kw("dependencies", "{"+strings.Join(deps, ",")+"}")
	case 24:
		return kw("propertyNames", g.schema(depth))
	case 25:
		return kw("if", g.schema(depth))
	case 26:
		return kw("then", g.schema(depth))
	case 27:
		return kw("else", g.schema(depth))
	case 28:
		return kw("allOf", g.schemas(depth, 3))
	case 29:
		return kw("anyOf", g.schemas(depth, 3))
	case 30:
		return kw("oneOf", g.schemas(depth, 3))
	case 31:
		return kw("not", g.schema(depth))
	default:
		switch g.pick(3) {
		case 0:
			return kw("format", strconv.Quote(g.oneOf("date", "email", "ipv4", "uri", "color")))
		case 1:
			return kw("$ref", g.oneOf(`"#/definitions/d"`, `"#e"`, `"#/definitions/e/allOf/0"`, `"#/definitions/nope"`,
				`"f.json"`, `"f.json#/definitions/g"`, `"http://fuzz.invalid/f.json#/allOf/0"`, `"#/definitions/f/definitions/g"`))
		}
		return kw("title", `"t"`)
	}
}

// distinct writes a list of 1 to max different items. (The metaschema wants the items of
// type, enum, required and dependencies unique, and enum not empty; ours takes a
// repeated item as written once and an empty enum as allowing nothing, whose meaning is
// plain, so the grammar leaves that difference alone.)
func (g *grammar) distinct(max int, item func() string) string {
	var parts []string
	seen := map[string]bool{}
	for range 1 + g.pick(max) {
		e := item()
		var v any
		if err := json.Unmarshal([]byte(e), &v); err == nil {
			if k := canonical(v); seen[k] {
				continue
			} else {
				seen[k] = true
			}
		}
		parts = append(parts, e)
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// object writes an object of keys to schemas.
func (g *grammar) object(depth int, key func() string) string {
	var parts []string
	for range 1 + g.pick(2) {
		parts = append(parts, key()+":"+g.schema(depth))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

func (g *grammar) value(depth int) string {
	max := 7
	if depth >= 3 {
		max = 5
	}
	switch g.pick(max) {
	case 0:
		return g.oneOf("null", "true", "false")
	case 1, 2:
		return g.number()
	case 3, 4:
		return grammarStrings[g.pick(len(grammarStrings))]
	case 5:
		n := g.pick(4)
		parts := make([]string, n)
		for i := range parts {
			parts[i] = g.value(depth + 1)
		}
		return "[" + strings.Join(parts, ",") + "]"
	default:
		n := g.pick(4)
		var b bytes.Buffer
		b.WriteByte('{')
		seen := map[string]bool{}
		for range n {
			k := g.key()
			if seen[k] {
				continue
			}
			seen[k] = true
			if b.Len() > 1 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%s:%s", k, g.value(depth+1))
		}
		b.WriteByte('}')
		return b.String()
	}
}

// TestSchemaOracleAgreesOnTheSuite checks the oracle harness itself: on a few suite-like
// cases, the oracle and ours both give the answer the JSON-Schema-Test-Suite gives.
func TestSchemaOracleAgreesOnTheSuite(t *testing.T) {
	tests := []struct {
		schema, value string
		valid         bool
	}{
		{`{"type":"integer"}`, `1.0`, true},
		{`{"multipleOf":0.0001}`, `0.0075`, true},
		{`{"format":"email"}`, `"not an email"`, true}, // an annotation in both, as set up
		{`{"definitions":{"e":{"$id":"#e","type":"string"}},"$ref":"#e"}`, `1`, false},
		{`{"properties":{"a/b":{"type":"string"}}}`, `{"a/b":1}`, false},
		{`{"uniqueItems":true}`, `[1,1.0]`, false},
	}
	for _, tt := range tests {
		want, cerr, _ := oracle(tt.schema, tt.value)
		if cerr != nil {
			t.Fatalf("oracle cannot compile %s: %v", tt.schema, cerr)
		}
		got, _, err := ours(t, tt.schema, tt.value, true)
		if err != nil {
			t.Fatalf("ours cannot compile %s: %v", tt.schema, err)
		}
		if want != tt.valid || got != tt.valid {
			t.Errorf("%s on %s: oracle valid=%v, ours valid=%v, want %v", tt.schema, tt.value, want, got, tt.valid)
		}
	}
}
