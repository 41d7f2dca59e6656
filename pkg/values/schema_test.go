package values

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
	"connector/pkg/diag"
)

// specOf reads a schema written in YAML, as the manifest loader hands it over (int and
// float64 numbers).
func specOf(t testing.TB, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatalf("schema %q: %v", src, err)
	}
	return m
}

// valuesOf reads testing values written in YAML, as Parse gives them (int64 and float64).
func valuesOf(t testing.TB, src string) map[string]any {
	t.Helper()
	v, err := Parse("values.yaml", []byte(src))
	if err != nil {
		t.Fatalf("values %q: %v", src, err)
	}
	return v.Map
}

// render writes a failure as the test expects it: its location, then its message.
func render(f failure) string {
	return "/" + strings.Join(f.path, "/") + " " + f.String()
}

func check(t *testing.T, spec map[string]any, value any) []string {
	t.Helper()
	s, err := compileSchema(spec)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	var got []string
	for _, f := range s.validate(value) {
		got = append(got, render(f))
	}
	return got
}

func sameList(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestSchemaKeywords(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		values string
		want   []string // nil: the values pass
	}{
		// type
		{"type integer passes", `{properties: {n: {type: integer}}}`, `n: 3`, nil},
		{"type integer takes 3.0", `{properties: {n: {type: integer}}}`, `n: 3.0`, nil},
		{"type integer refuses 3.5", `{properties: {n: {type: integer}}}`, `n: 3.5`,
			[]string{`/n testing value "n": got number, want integer`}},
		{"type integer refuses a string", `{properties: {n: {type: integer}}}`, `n: ten`,
			[]string{`/n testing value "n": got string, want integer`}},
		{"type string refuses a list", `{properties: {s: {type: string}}}`, `s: [open]`,
			[]string{`/s testing value "s": got array, want string`}},
		{"type string refuses an integer", `{properties: {s: {type: string}}}`, `s: 8080`,
			[]string{`/s testing value "s": got integer, want string`}},
		{"type number takes an integer", `{properties: {n: {type: number}}}`, `n: 3`, nil},
		{"type list", `{properties: {n: {type: [integer, "null"]}}}`, `n: ~`, nil},
		{"type list refuses", `{properties: {n: {type: [integer, "null"]}}}`, `n: "3"`,
			[]string{`/n testing value "n": got string, want integer or null`}},
		{"type boolean and object", `{properties: {b: {type: boolean}, o: {type: object}}}`, `{b: yes, o: [1]}`,
			[]string{`/b testing value "b": got string, want boolean`, `/o testing value "o": got array, want object`}},
		{"type at the root", `{type: array}`, `a: 1`, []string{`/ testing values: got object, want array`}},
		{"a type failure hides the other keywords", `{properties: {n: {type: integer, enum: [1, 2], minimum: 1}}}`, `n: x`,
			[]string{`/n testing value "n": got string, want integer`}},

		// enum and const
		{"enum passes", `{properties: {r: {enum: [eu, us]}}}`, `r: eu`, nil},
		{"enum miss", `{properties: {r: {type: string, enum: [eu, us]}}}`, `r: asia`,
			[]string{`/r testing value "r": value must be one of 'eu', 'us'`}},
		{"enum of numbers and null", `{properties: {r: {enum: [1, 2.5, null, true]}}}`, `r: 3`,
			[]string{`/r testing value "r": value must be one of 1, 2.5, null, true`}},
		{"enum takes 1.0 for 1", `{properties: {r: {enum: [1, 2]}}}`, `r: 1.0`, nil},
		{"enum is not fooled by a string", `{properties: {r: {enum: [1, 2]}}}`, `r: "1"`,
			[]string{`/r testing value "r": value must be one of 1, 2`}},
		{"enum of objects, keys in any order", `{properties: {r: {enum: [{a: 1, b: [1, 2]}]}}}`, `r: {b: [1.0, 2], a: 1}`, nil},
		{"enum of objects miss", `{properties: {r: {enum: [{a: 1}, [1, 2]]}}}`, `r: {a: 2}`,
			[]string{`/r testing value "r": value must be one of {"a":1}, [1,2]`}},
		{"enum of one", `{properties: {r: {enum: [eu]}}}`, `r: us`,
			[]string{`/r testing value "r": value must be 'eu'`}},
		{"required names the empty key", `{required: [""]}`, `a: 1`, []string{`/ missing required testing value ""`}},
		{"const passes", `{properties: {k: {const: oauth}}}`, `k: oauth`, nil},
		{"const miss", `{properties: {k: {const: oauth}}}`, `k: api_key`,
			[]string{`/k testing value "k": value must be 'oauth'`}},
		{"const 1 is 1.0", `{properties: {k: {const: 1}}}`, `k: 1.0`, nil},
		{"const is not true for 1", `{properties: {k: {const: 1}}}`, `k: true`,
			[]string{`/k testing value "k": value must be 1`}},
		{"const deep", `{properties: {k: {const: {a: [1, {b: null}]}}}}`, `k: {a: [1, {b: ~}]}`, nil},
		{"const deep miss", `{properties: {k: {const: {a: [1, {b: null}]}}}}`, `k: {a: [1, {b: 0}]}`,
			[]string{`/k testing value "k": value must be {"a":[1,{"b":null}]}`}},
		{"const list order matters", `{properties: {k: {const: [1, 2]}}}`, `k: [2, 1]`,
			[]string{`/k testing value "k": value must be [1,2]`}},

		// numbers
		{"minimum", `{properties: {p: {minimum: 1}}}`, `p: 0`, []string{`/p testing value "p": must be at least 1, got 0`}},
		{"minimum equal passes", `{properties: {p: {minimum: 1}}}`, `p: 1`, nil},
		{"maximum", `{properties: {p: {maximum: 65535}}}`, `p: 70000`, []string{`/p testing value "p": must be at most 65535, got 70000`}},
		{"maximum float", `{properties: {p: {maximum: 1.5}}}`, `p: 1.75`, []string{`/p testing value "p": must be at most 1.5, got 1.75`}},
		{"exclusiveMaximum", `{properties: {p: {exclusiveMaximum: 10}}}`, `p: 10`, []string{`/p testing value "p": must be less than 10, got 10`}},
		{"exclusiveMaximum passes", `{properties: {p: {exclusiveMaximum: 10}}}`, `p: 9.99`, nil},
		{"exclusiveMinimum", `{properties: {p: {exclusiveMinimum: 0}}}`, `p: 0`, []string{`/p testing value "p": must be greater than 0, got 0`}},
		{"exclusiveMinimum passes", `{properties: {p: {exclusiveMinimum: 0}}}`, `p: 0.001`, nil},
		{"draft-04 exclusiveMaximum", `{properties: {p: {maximum: 10, exclusiveMaximum: true}}}`, `p: 10`,
			[]string{`/p testing value "p": must be less than 10, got 10`}},
		{"draft-04 exclusiveMinimum", `{properties: {p: {minimum: 0, exclusiveMinimum: true}}}`, `p: 0`,
			[]string{`/p testing value "p": must be greater than 0, got 0`}},
		{"draft-04 exclusive false keeps the bound inclusive", `{properties: {p: {maximum: 10, exclusiveMaximum: false}}}`, `p: 10`, nil},
		{"multipleOf", `{properties: {p: {multipleOf: 5}}}`, `p: 12`, []string{`/p testing value "p": must be a multiple of 5, got 12`}},
		{"multipleOf decimal is exact", `{properties: {p: {multipleOf: 0.1}}}`, `p: 0.3`, nil},
		{"multipleOf decimal miss", `{properties: {p: {multipleOf: 0.01}}}`, `p: 0.125`,
			[]string{`/p testing value "p": must be a multiple of 0.01, got 0.125`}},
		{"numeric keywords ignore strings", `{properties: {p: {minimum: 5, multipleOf: 2}}}`, `p: "1"`, nil},
		{"every numeric failure", `{properties: {p: {minimum: 5, multipleOf: 2}}}`, `p: 3`,
			[]string{`/p testing value "p": must be a multiple of 2, got 3`, `/p testing value "p": must be at least 5, got 3`}},

		// strings
		{"maxLength", `{properties: {s: {maxLength: 3}}}`, `s: secret`,
			[]string{`/s testing value "s": must be at most 3 characters, got 6`}},
		{"maxLength counts code points", `{properties: {s: {maxLength: 3}}}`, `s: "héé"`, nil},
		{"minLength", `{properties: {s: {minLength: 1}}}`, `s: ""`,
			[]string{`/s testing value "s": must be at least 1 character, got 0`}},
		{"minLength counts code points", `{properties: {s: {minLength: 4}}}`, `s: "日本語"`,
			[]string{`/s testing value "s": must be at least 4 characters, got 3`}},
		{"pattern", `{properties: {s: {pattern: "^[a-z]+$"}}}`, `s: Abc`,
			[]string{`/s testing value "s": must match the pattern ^[a-z]+$`}},
		{"pattern is a search, not anchored", `{properties: {s: {pattern: "[0-9]"}}}`, `s: abc1def`, nil},
		{"pattern \\s is ECMA-262's, Unicode spaces included", `{properties: {s: {pattern: "^a\\sb$"}}}`, "s: \"a\u00a0b\"", nil},
		{"pattern \\S refuses a Unicode space, named as written", `{properties: {s: {pattern: "^[\\S]+$"}}}`, "s: \"a\u2003b\"",
			[]string{`/s testing value "s": must match the pattern ^[\S]+$`}},
		{"pattern \\c is a control character", `{properties: {s: {pattern: "^\\cI$"}}}`, "s: \"\\t\"", nil},
		{"pattern ignores numbers", `{properties: {s: {pattern: "^[a-z]+$"}}}`, `s: 12`, nil},
		{"a string is never echoed", `{properties: {s: {type: string, maxLength: 2, pattern: "^x", enum: [a]}}}`, `s: hunter2`,
			[]string{`/s testing value "s": value must be 'a'`, `/s testing value "s": must be at most 2 characters, got 7`,
				`/s testing value "s": must match the pattern ^x`}},

		// arrays
		{"items", `{properties: {l: {items: {type: integer}}}}`, `l: [1, x, 3, y]`,
			[]string{`/l/1 testing value "l.1": got string, want integer`, `/l/3 testing value "l.3": got string, want integer`}},
		{"items as a list", `{properties: {l: {items: [{type: string}, {type: integer}]}}}`, `l: [a, b, c]`,
			[]string{`/l/1 testing value "l.1": got string, want integer`}},
		{"additionalItems schema", `{properties: {l: {items: [{type: string}], additionalItems: {type: integer}}}}`, `l: [a, 1, b]`,
			[]string{`/l/2 testing value "l.2": got string, want integer`}},
		{"additionalItems false", `{properties: {l: {items: [{}, {}], additionalItems: false}}}`, `l: [1, 2, 3]`,
			[]string{`/l testing value "l": must have at most 2 items, got 3`}},
		{"additionalItems is ignored without a list of items", `{properties: {l: {items: {}, additionalItems: false}}}`, `l: [1, 2, 3]`, nil},
		{"maxItems", `{properties: {l: {maxItems: 3}}}`, `l: [1, 2, 3, 4, 5]`,
			[]string{`/l testing value "l": must have at most 3 items, got 5`}},
		{"minItems", `{properties: {l: {minItems: 1}}}`, `l: []`,
			[]string{`/l testing value "l": must have at least 1 item, got 0`}},
		{"uniqueItems", `{properties: {l: {uniqueItems: true}}}`, `l: [a, b, a]`,
			[]string{`/l testing value "l": must have unique items, but items 0 and 2 are equal`}},
		{"uniqueItems compares numbers as JSON", `{properties: {l: {uniqueItems: true}}}`, `l: [1, 2, 1.0]`,
			[]string{`/l testing value "l": must have unique items, but items 0 and 2 are equal`}},
		{"uniqueItems compares objects deeply", `{properties: {l: {uniqueItems: true}}}`, `l: [{a: 1, b: 2}, {b: 2, a: 1}]`,
			[]string{`/l testing value "l": must have unique items, but items 0 and 1 are equal`}},
		{"uniqueItems: 1 and true differ", `{properties: {l: {uniqueItems: true}}}`, `l: [1, true, "1", [1], {a: 1}, {a: "1"}]`, nil},
		{"uniqueItems false", `{properties: {l: {uniqueItems: false}}}`, `l: [a, a]`, nil},
		{"contains", `{properties: {l: {contains: {const: admin}}}}`, `l: [read, write]`,
			[]string{`/l testing value "l": must contain an item that matches the schema under contains`}},
		{"contains passes", `{properties: {l: {contains: {const: admin}}}}`, `l: [read, admin]`, nil},
		{"contains an empty list", `{properties: {l: {contains: {}}}}`, `l: []`,
			[]string{`/l testing value "l": must contain an item that matches the schema under contains`}},

		// objects
		{"required", `{required: [a, b, c]}`, `b: 1`,
			[]string{`/ missing required testing value "a"`, `/ missing required testing value "c"`}},
		{"required nested", `{properties: {o: {required: [k]}}}`, `o: {}`,
			[]string{`/o missing required testing value "o.k"`}},
		{"required ignores other types", `{required: [a], properties: {s: {required: [a]}}}`, `{a: 1, s: text}`, nil},
		{"maxProperties", `{properties: {o: {maxProperties: 1}}}`, `o: {a: 1, b: 2}`,
			[]string{`/o testing value "o": must have at most 1 property, got 2`}},
		{"minProperties", `{properties: {o: {minProperties: 2}}}`, `o: {a: 1}`,
			[]string{`/o testing value "o": must have at least 2 properties, got 1`}},
		{"additionalProperties false", `{properties: {color: {}}, additionalProperties: false}`, `{color: red, colour: red, size: 2}`,
			[]string{`/ testing values: unexpected property "colour"`, `/ testing values: unexpected property "size"`}},
		{"additionalProperties schema", `{properties: {a: {}}, additionalProperties: {type: integer}}`, `{a: x, b: 1, c: x}`,
			[]string{`/c testing value "c": got string, want integer`}},
		{"patternProperties", `{patternProperties: {"^x_": {type: integer}}, additionalProperties: false}`, `{x_a: 1, x_b: b, y: 1}`,
			[]string{`/x_b testing value "x_b": got string, want integer`, `/ testing values: unexpected property "y"`}},
		{"properties and patternProperties both apply", `{properties: {x_a: {minimum: 5}}, patternProperties: {"^x_": {maximum: 0}}}`, `x_a: 3`,
			[]string{`/x_a testing value "x_a": must be at least 5, got 3`, `/x_a testing value "x_a": must be at most 0, got 3`}},
		{"dependencies list", `{dependencies: {client_id: [client_secret, refresh_token]}}`, `{client_id: a, refresh_token: b}`,
			[]string{`/ missing required testing value "client_secret" (needed because "client_id" is set)`}},
		{"dependencies list not triggered", `{dependencies: {client_id: [client_secret]}}`, `{other: a}`, nil},
		{"dependencies schema", `{dependencies: {start: {properties: {end: {type: string}}, required: [end]}}}`, `{start: a}`,
			[]string{`/ missing required testing value "end"`}},
		{"propertyNames", `{propertyNames: {pattern: "^[a-z_]+$", maxLength: 5}}`, `{ok: 1, Bad: 2}`,
			[]string{`/ testing values: property name "Bad" is not allowed: must match the pattern ^[a-z_]+$`}},
		{"propertyNames false", `{properties: {o: {propertyNames: false}}}`, `o: {a: 1}`,
			[]string{`/o testing value "o": property name "a" is not allowed: no value is allowed here`}},
		{"properties skip absent keys", `{properties: {a: {type: string}}}`, `{}`, nil},

		// boolean schemas
		{"true", `{properties: {a: true}}`, `a: [1]`, nil},
		{"false", `{properties: {a: false}}`, `a: 1`, []string{`/a testing value "a": no value is allowed here`}},

		// applicators
		{"allOf reports each failure", `{properties: {p: {allOf: [{minimum: 5}, {multipleOf: 2}]}}}`, `p: 3`,
			[]string{`/p testing value "p": must be at least 5, got 3`, `/p testing value "p": must be a multiple of 2, got 3`}},
		{"anyOf passes", `{properties: {p: {anyOf: [{type: string}, {type: integer}]}}}`, `p: 3`, nil},
		{"anyOf none", `{properties: {p: {anyOf: [{type: string}, {type: integer}]}}}`, `p: true`,
			[]string{`/p testing value "p": must match at least one of the anyOf choices, matched none`}},
		{"oneOf passes", `{properties: {p: {oneOf: [{type: string}, {type: integer}]}}}`, `p: x`, nil},
		{"oneOf two", `{properties: {p: {oneOf: [{type: number}, {type: integer}, {type: string}]}}}`, `p: 3`,
			[]string{`/p testing value "p": must match exactly one of the oneOf choices, matched 2 (choices 1, 2)`}},
		{"oneOf none, the closest named", airbyteCredentials, `credentials: {auth_type: api_key}`,
			[]string{`/credentials testing value "credentials": must match exactly one of the oneOf choices, matched none; ` +
				`the closest is choice 2 ("API Key"): missing required testing value "credentials.api_key"`}},
		{"oneOf none, the closest with more", airbyteCredentials, `credentials: {auth_type: oauth, client_id: 1}`,
			[]string{`/credentials testing value "credentials": must match exactly one of the oneOf choices, matched none; ` +
				`the closest is choice 1 ("OAuth"): missing required testing value "credentials.client_secret" (and 1 more)`}},
		{"oneOf none, no clear closest", airbyteCredentials, `credentials: {auth_type: basic}`,
			[]string{`/credentials testing value "credentials": must match exactly one of the oneOf choices, matched none`}},
		{"oneOf passes with a discriminator", airbyteCredentials, `credentials: {auth_type: api_key, api_key: k}`, nil},
		{"not", `{properties: {p: {not: {type: string}}}}`, `p: x`,
			[]string{`/p testing value "p": must not match the schema under not`}},
		{"not passes", `{properties: {p: {not: {type: string}}}}`, `p: 1`, nil},
		{"if then", ifThenElse, `{kind: oauth}`, []string{`/ missing required testing value "token"`}},
		{"if else", ifThenElse, `{kind: key}`, []string{`/ missing required testing value "api_key"`}},
		{"if then passes", ifThenElse, `{kind: oauth, token: t}`, nil},
		{"if without then or else", `{if: {required: [a]}}`, `{}`, nil},

		// ignored keywords
		{"format is an annotation", `{properties: {d: {type: string, format: date-time}, e: {format: email}}}`, `{d: yesterday, e: nobody}`, nil},
		{"unknown keywords are ignored", `{properties: {k: {type: string, title: Key, description: d, order: 0, airbyte_secret: true, examples: [x], default: y, airbyte_hidden: true, always_show: true, pattern_descriptor: YYYY, x-anything: {type: integer}}}}`, `k: v`, nil},
		{"$schema and $comment are ignored", `{$schema: "http://json-schema.org/draft-07/schema#", $comment: c, type: object}`, `a: 1`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, specOf(t, tt.schema), valuesOf(t, tt.values))
			if !sameList(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

// airbyteCredentials is the shape of most Airbyte connection specifications with a choice
// of authentication: a oneOf of objects told apart by a const.
const airbyteCredentials = `
type: object
properties:
  credentials:
    type: object
    oneOf:
      - title: OAuth
        type: object
        required: [auth_type, client_id, client_secret]
        properties:
          auth_type: {const: oauth}
          client_id: {type: string}
          client_secret: {type: string}
      - title: API Key
        type: object
        required: [auth_type, api_key]
        properties:
          auth_type: {const: api_key}
          api_key: {type: string}
`

const ifThenElse = `
if: {properties: {kind: {const: oauth}}}
then: {required: [token]}
else: {required: [api_key]}
`

func TestSchemaRef(t *testing.T) {
	tests := []struct {
		name   string
		schema string
		values string
		want   []string
	}{
		{"definitions", `{properties: {p: {$ref: "#/definitions/port"}}, definitions: {port: {type: integer, maximum: 65535}}}`, `p: 70000`,
			[]string{`/p testing value "p": must be at most 65535, got 70000`}},
		{"$defs", `{properties: {p: {$ref: "#/$defs/port"}}, $defs: {port: {type: integer}}}`, `p: x`,
			[]string{`/p testing value "p": got string, want integer`}},
		{"a pointer into properties and items", `{properties: {a: {items: {type: string}}, b: {$ref: "#/properties/a/items"}}}`, `{a: [x], b: 1}`,
			[]string{`/b testing value "b": got integer, want string`}},
		{"a pointer into a list", `{properties: {a: {anyOf: [{type: string}, {minimum: 3}]}, b: {$ref: "#/properties/a/anyOf/1"}}}`, `{b: 1}`,
			[]string{`/b testing value "b": must be at least 3, got 1`}},
		{"~0 and ~1 escapes", `{properties: {"a/b": {type: string}, "c~d": {type: integer}, x: {$ref: "#/properties/a~1b"}, y: {$ref: "#/properties/c~0d"}}}`, `{x: 1, y: z}`,
			[]string{`/x testing value "x": got integer, want string`, `/y testing value "y": got string, want integer`}},
		{"%-escapes", `{properties: {x: {$ref: "#/definitions/a%20b"}}, definitions: {"a b": {type: string}}}`, `{x: 1}`,
			[]string{`/x testing value "x": got integer, want string`}},
		{"recursion through the root", `{type: object, properties: {name: {type: string}, child: {$ref: "#"}}}`, `{name: a, child: {name: b, child: {name: 3}}}`,
			[]string{`/child/child/name testing value "child.child.name": got integer, want string`}},
		{"recursion through definitions", `{$ref: "#/definitions/node", definitions: {node: {type: object, properties: {next: {$ref: "#/definitions/node"}, v: {type: integer}}}}}`,
			`{v: 1, next: {v: 2, next: {v: x}}}`,
			[]string{`/next/next/v testing value "next.next.v": got string, want integer`}},
		{"keywords next to $ref are ignored (draft-07)", `{properties: {p: {$ref: "#/definitions/i", minimum: 10}}, definitions: {i: {type: integer}}}`, `p: 1`, nil},
		{"the root $id in front of a pointer", `{$id: "http://example.com/spec.json", properties: {p: {$ref: "http://example.com/spec.json#/definitions/i"}}, definitions: {i: {type: integer}}}`, `p: x`,
			[]string{`/p testing value "p": got string, want integer`}},
		{"a pointer under a nested $id starts at that schema", `{definitions: {x: {$id: "http://example.com/x.json", properties: {a: {$ref: "#/definitions/y"}}, definitions: {y: {type: string}}}, y: {type: integer}}, $ref: "#/definitions/x"}`,
			`{a: 1}`, []string{`/a testing value "a": got integer, want string`}},
		{"a relative $ref to a nested $id", `{$id: "http://example.com/spec.json", properties: {p: {$ref: "port.json"}}, definitions: {port: {$id: "port.json", maximum: 65535}}}`,
			`p: 70000`, []string{`/p testing value "p": must be at most 65535, got 70000`}},
		{"a plain-name $id", `{properties: {p: {$ref: "#port"}}, definitions: {port: {$id: "#port", type: integer}}}`,
			`p: x`, []string{`/p testing value "p": got string, want integer`}},
		{"$id next to $ref changes nothing", `{$id: "http://example.com/a/", properties: {p: {$id: "http://example.com/", $ref: "b.json"}}, definitions: {b: {$id: "b.json", type: integer}, c: {$id: "http://example.com/b.json", type: string}}}`,
			`p: x`, []string{`/p testing value "p": got string, want integer`}},
		{"$ref to a boolean schema", `{properties: {p: {$ref: "#/definitions/no"}}, definitions: {no: false}}`, `p: 1`,
			[]string{`/p testing value "p": no value is allowed here`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, specOf(t, tt.schema), valuesOf(t, tt.values))
			if !sameList(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestSchemaBroken(t *testing.T) {
	tests := []struct {
		name, schema, want string
	}{
		{"a number that is not", `{properties: {port: {minimum: one}}}`, `properties/port/minimum: must be a number, got the string "one"`},
		{"an unknown type", `{properties: {port: {type: int}}}`, `properties/port/type: 'int' is not a JSON type; use null, boolean, object, array, number, string or integer`},
		{"a type of the wrong kind", `{type: {a: 1}}`, `type: must be a type name or a non-empty list of them, got an object`},
		{"an empty type list", `{type: []}`, `type: must be a type name or a non-empty list of them, got a list`},
		{"a count that is negative", `{maxLength: -1}`, `maxLength: must be a whole number, 0 or more, got -1`},
		{"a count that is a fraction", `{minItems: 1.5}`, `minItems: must be a whole number, 0 or more, got 1.5`},
		{"a count that is a string", `{maxProperties: "3"}`, `maxProperties: must be a whole number, 0 or more, got the string "3"`},
		{"multipleOf 0", `{multipleOf: 0}`, `multipleOf: must be greater than 0, got 0`},
		{"a lookahead before a broken class", `{properties: {k: {pattern: "^(?!a)["}}}`,
			"properties/k/pattern: cannot compile the pattern ^(?!a)[ as an ECMA-262 regular expression (unterminated [] set in `^(?!a)[`)"},
		{"a backreference to no group", `{pattern: "(?<x>a)\\k<y>"}`,
			"pattern: cannot compile the pattern (?<x>a)\\k<y> as an ECMA-262 regular expression (reference to undefined group name y in `(?<x>a)\\k<y>`)"},
		{"a lookbehind left open", `{pattern: "(?<!a"}`,
			"pattern: cannot compile the pattern (?<!a as an ECMA-262 regular expression (missing closing ) in `(?<!a`)"},
		{"a bad patternProperties key", `{patternProperties: {"[": {}}}`,
			"patternProperties/[: cannot compile the pattern [ as an ECMA-262 regular expression (missing closing ]: `[`)"},
		{"a pattern that is not a string", `{pattern: 5}`, `pattern: must be a regular expression, got the number 5`},
		{"a subschema that is not one", `{properties: {a: "string"}}`, `properties/a: must be a schema (an object, or true or false), got the string "string"`},
		{"properties that are a list", `{properties: [a]}`, `properties: must be an object of names to schemas, got a list`},
		{"items with a broken schema", `{items: [{}, 3]}`, `items/1: must be a schema (an object, or true or false), got the number 3`},
		{"an empty allOf", `{allOf: []}`, `allOf: must be a non-empty list of schemas, got a list`},
		{"oneOf that is an object", `{oneOf: {a: {}}}`, `oneOf: must be a non-empty list of schemas, got an object`},
		{"required: true", `{properties: {a: {required: true}}}`,
			"properties/a/required: must be a list of property names, got the boolean true (`required: true` on a property is draft-03; list the name in `required` of the object instead)"},
		{"required with a number", `{required: [a, 1]}`, `required: must be a list of property names, but it holds the number 1`},
		{"dependencies of the wrong kind", `{dependencies: {a: [b, 2], c: 3}}`,
			`dependencies/a: must be a list of property names, but it holds the number 2; dependencies/c: must be a schema (an object, or true or false), got the number 3`},
		{"enum that is not a list", `{enum: a}`, `enum: must be a list of the allowed values, got the string "a"`},
		{"uniqueItems that is not a boolean", `{uniqueItems: "yes"}`, `uniqueItems: must be true or false, got the string "yes"`},
		{"draft-04 exclusive without its bound", `{exclusiveMinimum: true}`,
			"exclusiveMinimum: the draft-04 form `true` needs minimum next to it; write the bound itself, e.g. `exclusiveMinimum: 0`"},
		{"a broken definition nobody uses", `{definitions: {a: {type: text}}}`,
			`definitions/a/type: 'text' is not a JSON type; use null, boolean, object, array, number, string or integer`},
		{"every problem at once", `{properties: {a: {minimum: x}, b: {type: 1}}}`,
			`properties/a/minimum: must be a number, got the string "x"; properties/b/type: must be a type name or a non-empty list of them, got the number 1`},

		// $ref
		{"a remote $ref", `{properties: {a: {$ref: "https://example.com/schemas/a.json"}}}`,
			`properties/a/$ref: "https://example.com/schemas/a.json" points outside connection_specification; remote references are not supported, copy the schema under definitions and refer to it as "#/definitions/…"`},
		{"a relative file $ref", `{properties: {a: {$ref: "common.json#/definitions/a"}}}`,
			`properties/a/$ref: "common.json#/definitions/a" points outside connection_specification; remote references are not supported, copy the schema under definitions and refer to it as "#/definitions/…"`},
		{"a $ref to nothing", `{properties: {a: {$ref: "#/definitions/nope"}}, definitions: {}}`,
			`properties/a/$ref: "#/definitions/nope" points at nothing in connection_specification`},
		{"a $ref past the end of a list", `{anyOf: [{}], properties: {a: {$ref: "#/anyOf/1"}}}`,
			`properties/a/$ref: "#/anyOf/1" points at nothing in connection_specification`},
		{"a $ref with a bad escape", `{properties: {a: {$ref: "#/definitions/a~2"}}}`,
			`properties/a/$ref: "#/definitions/a~2" is not a valid JSON pointer (~ must be followed by 0 or 1)`},
		{"a $ref with a bad %-escape", `{properties: {a: {$ref: "#/definitions/%zz"}}}`,
			`properties/a/$ref: "#/definitions/%zz" has an invalid %-escape`},
		{"a $ref to an anchor nobody declares", `{properties: {a: {$ref: "#port"}}}`,
			"properties/a/$ref: \"#port\" names no schema: no schema in connection_specification has `$id: \"#port\"`; use a JSON pointer such as \"#/definitions/name\""},
		{"a pointer out of a nested $id", `{definitions: {x: {$id: "http://example.com/x.json", properties: {a: {$ref: "#/definitions/y"}}}, y: {}}}`,
			`definitions/x/properties/a/$ref: "#/definitions/y" points at nothing in connection_specification`},
		{"the same $id twice", `{definitions: {x: {$id: "#a"}, y: {$id: "#a"}}}`,
			`definitions/y/$id: "#a" names the same schema as the $id at definitions/x; each $id must be unique`},
		{"a $ref that is not a string", `{properties: {a: {$ref: 1}}}`, `properties/a/$ref: must be a string, got the number 1`},
		{"a $ref to a value that is not a schema", `{properties: {a: {$ref: "#/properties/b/title"}, b: {title: B}}}`,
			`properties/b/title: must be a schema (an object, or true or false), got the string "B"`},
		{"a $ref to itself", `{$ref: "#"}`,
			`#: the schema applies itself to the same value again (# → #) without looking inside it, so checking would never end`},
		{"a $ref loop", `{properties: {a: {$ref: "#/definitions/x"}}, definitions: {x: {allOf: [{$ref: "#/definitions/y"}]}, y: {anyOf: [{$ref: "#/definitions/x"}]}}}`,
			`definitions/x: the schema applies itself to the same value again (#/definitions/x → #/definitions/x/allOf/0 → #/definitions/y → #/definitions/y/anyOf/0 → #/definitions/x) without looking inside it, so checking would never end`},

		// keywords of later drafts
		{"prefixItems", `{properties: {l: {prefixItems: [{}]}}}`,
			`properties/l/prefixItems: prefixItems is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07`},
		{"unevaluatedProperties", `{unevaluatedProperties: false}`,
			`unevaluatedProperties: unevaluatedProperties is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07`},
		{"dependentRequired next to $ref", `{properties: {a: {$ref: "#/definitions/a", dependentRequired: {x: [y]}}}, definitions: {a: {}}}`,
			`properties/a/dependentRequired: dependentRequired is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07`},
		{"the rest of them", `{unevaluatedItems: false, dependentSchemas: {}, $dynamicRef: "#a", $recursiveRef: "#", minContains: 1, maxContains: 2}`,
			`unevaluatedItems: unevaluatedItems is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07; ` +
				`dependentSchemas: dependentSchemas is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07; ` +
				`$dynamicRef: $dynamicRef is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07; ` +
				`$recursiveRef: $recursiveRef is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07; ` +
				`minContains: minContains is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07; ` +
				`maxContains: maxContains is a JSON Schema 2019-09/2020-12 keyword; connector checks testing values with draft-07`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := compileSchema(specOf(t, tt.schema))
			if err == nil {
				t.Fatalf("compiled, want the error %q", tt.want)
			}
			if err.Error() != tt.want {
				t.Errorf("got  %s\nwant %s", err, tt.want)
			}
		})
	}
}

// TestSchemaNumbers checks the Go types numbers arrive as: int and float64 from the
// manifest loader, int64 and float64 from the testing values, json.Number from a JSON
// decoder, and numbers beyond float64.
func TestSchemaNumbers(t *testing.T) {
	tests := []struct {
		name   string
		schema map[string]any
		value  any
		want   []string
	}{
		{"int64 against int", map[string]any{"maximum": 10}, int64(11), []string{`/ testing values: must be at most 10, got 11`}},
		{"int against json.Number", map[string]any{"minimum": json.Number("2.5")}, 2, []string{`/ testing values: must be at least 2.5, got 2`}},
		{"json.Number against float64", map[string]any{"maximum": 2.5}, json.Number("2.50"), nil},
		{"json.Number 3.0 is an integer", map[string]any{"type": "integer"}, json.Number("3.0"), nil},
		{"json.Number 3e2 is an integer", map[string]any{"type": "integer"}, json.Number("3e2"), nil},
		{"json.Number 3.5 is not", map[string]any{"type": "integer"}, json.Number("3.5"), []string{`/ testing values: got number, want integer`}},
		{"float64 3.0 is an integer", map[string]any{"type": "integer"}, 3.0, nil},
		{"a large int64 is exact", map[string]any{"maximum": json.Number("9007199254740992")}, int64(9007199254740993),
			[]string{`/ testing values: must be at most 9007199254740992, got 9007199254740993`}},
		{"1e400 is a finite number", map[string]any{"type": "integer", "maximum": json.Number("1e399")}, json.Number("1e400"),
			[]string{`/ testing values: must be at most 1e399, got 1e400`}},
		{"1e400 equals itself", map[string]any{"const": json.Number("1e400")}, json.Number("10e399"), nil},
		{"an exponent past the limit is infinite", map[string]any{"maximum": 5}, json.Number("1e5000"),
			[]string{`/ testing values: must be a finite number`}},
		{"an infinity", map[string]any{"type": "integer"}, posInf(), []string{`/ testing values: got number, want integer`}},
		{"not a JSON number", map[string]any{"minimum": 0}, json.Number("0x10"), []string{`/ testing values: must be a finite number`}},
		{"uint64", map[string]any{"maximum": json.Number("18446744073709551614")}, uint64(18446744073709551615),
			[]string{`/ testing values: must be at most 18446744073709551614, got 18446744073709551615`}},
		{"multipleOf json.Number", map[string]any{"multipleOf": json.Number("0.1")}, 0.7, nil},
		{"enum mixes types", map[string]any{"enum": []any{int(1), json.Number("2"), 3.0}}, int64(3), nil},
		{"uniqueItems mixes types", map[string]any{"uniqueItems": true}, []any{int64(1), json.Number("1.0")},
			[]string{`/ testing values: must have unique items, but items 0 and 1 are equal`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := check(t, tt.schema, tt.value)
			if !sameList(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func posInf() float64 {
	var zero float64
	return 1 / zero
}

// TestValidateDiagnostics checks the diagnostics Validate gives: each at the position of
// the value, a missing key at its object with a hint, sorted by position.
func TestValidateDiagnostics(t *testing.T) {
	spec := specOf(t, `
type: object
required: [token, region]
additionalProperties: false
properties:
  token: {type: string, minLength: 8, airbyte_secret: true}
  region: {type: string, enum: [eu, us]}
  page_size: {type: integer, minimum: 1, maximum: 100}
  window:
    type: object
    required: [start]
    properties:
      start: {type: string, pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
`)
	v, err := Parse("values.yaml", []byte("token: hunter2\npage_size: 0\nwindow:\n  end: 2024-02-01\ncolour: red\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(spec)
	var list diag.List
	if !errors.As(err, &list) {
		t.Fatalf("got %v, want a diagnostic list", err)
	}
	got := list.Error()
	if strings.Contains(got, "hunter2") {
		t.Errorf("a diagnostic shows the secret: %s", got)
	}
	want := `values.yaml:1:1: error: missing required testing value "region"
  hint: add ` + "`region: …`" + ` to the testing values, or pass --set region=…
values.yaml:1:8: error: testing value "token": must be at least 8 characters, got 7
values.yaml:2:12: error: testing value "page_size": must be at least 1, got 0
values.yaml:4:3: error: missing required testing value "window.start"
  hint: add ` + "`start: …`" + ` to the testing values, or pass --set window.start=…
values.yaml:5:9: error: testing values: unexpected property "colour"`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if list[0].Path != "" || list[3].Path != "window" || list[4].Path != "" {
		t.Errorf("paths %q, %q, %q", list[0].Path, list[3].Path, list[4].Path)
	}
}

func TestValidateHintsATypo(t *testing.T) {
	spec := specOf(t, `{properties: {page_size: {}}, additionalProperties: false}`)
	v, err := Parse("values.yaml", []byte("pagesize: 5\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(spec)
	want := "values.yaml:1:11: error: testing values: unexpected property \"pagesize\"\n  hint: did you mean \"page_size\"?"
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestValidateBrokenSchema(t *testing.T) {
	v, err := Parse("values.yaml", []byte("port: 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(specOf(t, `{properties: {port: {minimum: one}}}`))
	want := `spec.connection_specification is not a valid JSON schema: properties/port/minimum: must be a number, got the string "one"`
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	var list diag.List
	if errors.As(err, &list) {
		t.Errorf("a broken schema is a diagnostic list: %v", err)
	}
}

// TestSchemaTooComplex checks that a specification whose branches multiply is refused
// while checking, not left to run for ever.
func TestSchemaTooComplex(t *testing.T) {
	var b strings.Builder
	b.WriteString("{$ref: '#/definitions/d0', definitions: {")
	for i := 0; i < 30; i++ {
		b.WriteString("d" + strconv.Itoa(i) + ": {allOf: [{$ref: '#/definitions/d" + strconv.Itoa(i+1) + "'}, {$ref: '#/definitions/d" + strconv.Itoa(i+1) + "'}]}, ")
	}
	b.WriteString("d30: {type: string}}}")
	got := check(t, specOf(t, b.String()), valuesOf(t, "a: 1"))
	want := "/ testing values: connection_specification is too complex to check these values (more than 1000000 steps); simplify its anyOf/oneOf/$ref"
	if len(got) == 0 || got[len(got)-1] != want {
		t.Errorf("got %q, want it to end with %q", got, want)
	}
}

// TestSchemaCorpus compiles the connection specification of every definition of the
// shared corpus of real Airbyte connectors.
func TestSchemaCorpus(t *testing.T) {
	files := testcorpus.Definitions(t)
	compiled := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				ConnectionSpecification map[string]any `yaml:"connection_specification"`
			} `yaml:"spec"`
		}
		if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
			continue
		}
		spec := doc.Spec.ConnectionSpecification
		if spec == nil {
			continue
		}
		if _, err := compileSchema(spec); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
		compiled++
	}
	if compiled == 0 {
		t.Errorf("no connection_specification in the %d files of the corpus", len(files))
	}
}

// FuzzSchema compiles arbitrary schemas and checks arbitrary values against the ones that
// compile: neither may panic, a failure always says something, and where the oracle of
// oracle_test.go compiles the schema too, both give the same answer.
func FuzzSchema(f *testing.F) {
	for _, seed := range [][2]string{
		{`{"type":"object","required":["a"],"properties":{"a":{"type":"integer","minimum":1}}}`, `{"a":0}`},
		{`{"properties":{"c":{"oneOf":[{"const":1},{"type":"string","pattern":"^x"}]}}}`, `{"c":"y"}`},
		{`{"items":[{"enum":[1,[2],{"a":null}]}],"additionalItems":false,"uniqueItems":true}`, `[1,1,2]`},
		{`{"$ref":"#/definitions/n","definitions":{"n":{"properties":{"next":{"$ref":"#/definitions/n"}}}}}`, `{"next":{"next":1}}`},
		{`{"dependencies":{"a":["b"],"c":{"not":{}}},"propertyNames":{"maxLength":2}}`, `{"a":1,"c":2,"long":3}`},
		{`{"if":{"minimum":1e400},"then":false,"else":{"multipleOf":0.1}}`, `1e-400`},
		{`{"$ref":"#"}`, `1`},
		{`{"patternProperties":{"^(a+)+$":{}},"additionalProperties":{"type":["null","boolean"]}}`, `{"aaaa":1,"b":true}`},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, schemaJSON, valueJSON string) {
		var raw any
		dec := json.NewDecoder(strings.NewReader(schemaJSON))
		dec.UseNumber()
		if dec.Decode(&raw) != nil {
			return
		}
		spec, ok := raw.(map[string]any)
		if !ok {
			return
		}
		s, err := compileSchema(spec)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("an empty schema error")
			}
			return
		}
		var value any
		dec = json.NewDecoder(strings.NewReader(valueJSON))
		dec.UseNumber()
		if dec.Decode(&value) != nil {
			value = valueJSON
		}
		failures := s.validate(value)
		for _, fl := range failures {
			if fl.msg == "" && !fl.isMissing() {
				t.Fatalf("a failure without a message at %q", fl.path)
			}
		}
		// The answer must be the oracle's (oracle_test.go), where the oracle gives one and
		// no deliberate difference is in play.
		if !utf8.ValidString(schemaJSON) || !utf8.ValidString(valueJSON) || hugeNumber(raw) || hugeNumber(value) || tooComplex(failures) {
			return
		}
		schemaText, err := json.Marshal(raw)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(schemaText, []byte(`\\s`)) || bytes.Contains(schemaText, []byte(`\\S`)) || bytes.Contains(schemaText, []byte(`\\c`)) {
			return // ECMA-262's \s and \c here, Go's in the oracle
		}
		valueText, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		want, compileErr, validateErr := oracle(pruneIgnored(t, string(schemaText)), string(valueText))
		if compileErr != nil || validateErr != nil && strings.Contains(validateErr.Error(), "infinite loop") {
			return
		}
		if got := len(failures) == 0; got != want {
			t.Fatalf("schema %s\nvalue  %s\nours: valid=%v %v\noracle: valid=%v %v", schemaText, valueText, got, failures, want, validateErr)
		}
	})
}

// hugeNumber reports a number whose exponent is past maxExponent: ours reads it as a
// float64 does (an infinity or 0), the oracle exactly.
func hugeNumber(v any) bool {
	switch x := v.(type) {
	case json.Number:
		exp, _ := jsonNumberExponent(string(x))
		return exp > maxExponent || exp < -maxExponent
	case []any:
		return slices.ContainsFunc(x, hugeNumber)
	case map[string]any:
		for _, e := range x {
			if hugeNumber(e) {
				return true
			}
		}
	}
	return false
}
