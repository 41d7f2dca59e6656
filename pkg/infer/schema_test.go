package infer

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"connector/pkg/record"
)

// decode reads a record's JSON text as the read decodes it.
func decode(t testing.TB, text string) any {
	t.Helper()
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatalf("decode %s: %v", text, err)
	}
	return v
}

func marshal(t testing.TB, v any) string {
	t.Helper()
	b, err := record.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type streamRecord struct{ stream, data string }

// The cases of the CDK's test_schema_derivation (unit_tests/utils/test_schema_inferrer.py),
// each record set with the whole schema expected, in the order of the CDK's keys.
func TestSchemaDerivation(t *testing.T) {
	const head = `{"$schema":"http://json-schema.org/schema#","type":"object","properties":`
	cases := []struct {
		name    string
		records []streamRecord
		want    map[string]string // stream → its properties
	}{
		{"basic",
			[]streamRecord{{"my_stream", `{"field_A": "abc"}`}, {"my_stream", `{"field_A": "def"}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]}}`}},
		{"deriving schema refine",
			[]streamRecord{{"my_stream", `{"field_A": 1.0}`}, {"my_stream", `{"field_A": "abc"}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["number","string","null"]}}`}},
		{"derive schema for nested structures",
			[]streamRecord{{"my_stream", `{"obj": {"data": [1.0, 2.0, 3.0]}}`}, {"my_stream", `{"obj": {"other_key": "xyz"}}`}},
			map[string]string{"my_stream": `{"obj":{"type":["object","null"],"properties":{"data":{"type":["array","null"],"items":{"type":["number","null"]}},"other_key":{"type":["string","null"]}}}}`}},
		{"integer number",
			[]streamRecord{{"my_stream", `{"field_A": 1}`}, {"my_stream", `{"field_A": 2}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["number","null"]}}`}},
		{"null",
			[]streamRecord{{"my_stream", `{"field_A": null}`}},
			map[string]string{"my_stream": `{}`}},
		{"null optional",
			[]streamRecord{{"my_stream", `{"field_A": null}`}, {"my_stream", `{"field_A": "abc"}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]}}`}},
		{"any of",
			[]streamRecord{{"my_stream", `{"field_A": null}`}, {"my_stream", `{"field_A": {"nested": "abc"}}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["object","null"],"properties":{"nested":{"type":["string","null"]}}}}`}},
		{"any of with null",
			[]streamRecord{{"my_stream", `{"field_A": null}`}, {"my_stream", `{"field_A": {"nested": "abc", "nully": null}}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["object","null"],"properties":{"nested":{"type":["string","null"]}}}}`}},
		{"any of with null union",
			[]streamRecord{
				{"my_stream", `{"field_A": null}`},
				{"my_stream", `{"field_A": {"nested": "abc", "nully": null}}`},
				{"my_stream", `{"field_A": {"nested": "abc", "nully": "a string"}}`},
			},
			map[string]string{"my_stream": `{"field_A":{"type":["object","null"],"properties":{"nested":{"type":["string","null"]},"nully":{"type":["string","null"]}}}}`}},
		{"any of with null union changed order",
			[]streamRecord{
				{"my_stream", `{"field_A": {"nested": "abc", "nully": "a string"}}`},
				{"my_stream", `{"field_A": null}`},
				{"my_stream", `{"field_A": {"nested": "abc", "nully": null}}`},
			},
			map[string]string{"my_stream": `{"field_A":{"type":["object","null"],"properties":{"nested":{"type":["string","null"]},"nully":{"type":["string","null"]}}}}`}},
		{"nested null",
			[]streamRecord{{"my_stream", `{"field_A": "abc", "nested": {"field_B": null}}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]},"nested":{"type":["object","null"],"properties":{}}}`}},
		{"array nested null",
			[]streamRecord{{"my_stream", `{"field_A": "abc", "nested": [{"field_B": null, "field_C": "abc"}]}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]},"nested":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"field_C":{"type":["string","null"]}}}}}`}},
		{"array top level null",
			[]streamRecord{
				{"my_stream", `{"field_A": "abc", "nested": null}`},
				{"my_stream", `{"field_A": "abc", "nested": [{"field_B": null, "field_C": "abc"}]}`},
			},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]},"nested":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"field_C":{"type":["string","null"]}}}}}`}},
		{"null string",
			[]streamRecord{{"my_stream", `{"field_A": null}`}, {"my_stream", `{"field_A": "abc"}`}},
			map[string]string{"my_stream": `{"field_A":{"type":["string","null"]}}`}},
		{"data with nested arrays",
			[]streamRecord{{"data_with_nested_arrays", `{"root_property_object": {"property_array": [
				{"title": "Nested_1", "type": "multi-value", "value": ["XL"]},
				{"title": "Nested_2", "type": "location", "value": {"nested_key_1": "GB", "nested_key_2": "United Kingdom"}},
				{"title": "Nested_3", "type": "string", "value": "XL"}]}}`}},
			map[string]string{"data_with_nested_arrays": `{"root_property_object":{"type":["object","null"],"properties":{"property_array":{"type":["array","null"],"items":{"type":["object","null"],"properties":{"title":{"type":["string","null"]},"type":{"type":["string","null"]},"value":{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}},{"type":"object","properties":{"nested_key_1":{"type":"string"},"nested_key_2":{"type":"string"}}}]}}}}}}}`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := NewSchemaInferrer(nil, nil)
			for _, r := range c.records {
				if err := inf.Accumulate(r.stream, decode(t, r.data)); err != nil {
					t.Fatal(err)
				}
			}
			for stream, props := range c.want {
				schema, problems, err := inf.Schema(stream)
				if err != nil || problems != nil {
					t.Fatalf("Schema(%q): problems %q, error %v", stream, problems, err)
				}
				if got, want := marshal(t, schema), head+props+"}"; got != want {
					t.Errorf("Schema(%q)\n got %s\nwant %s", stream, got, want)
				}
			}
		})
	}
}

// The CDK's tests of required fields run each case with the path given as the primary key
// and as the cursor field (with the primary key [[]]).
func inferrerWith(isPK bool, paths [][]string) *SchemaInferrer {
	if isPK {
		return NewSchemaInferrer(paths, nil)
	}
	return NewSchemaInferrer([][]string{{}}, paths)
}

func TestRequiredFields(t *testing.T) {
	const stream = "a stream name"
	cases := []struct {
		name   string
		paths  [][]string
		record string
		want   string
	}{
		{"field is on root", [][]string{{"property"}}, `{"property": "any value"}`,
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"property":{"type":"string"}},"required":["property"]}`},
		{"field is nested", [][]string{{"property", "nested_property"}}, `{"property": {"nested_property": "any value"}}`,
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"property":{"type":"object","properties":{"nested_property":{"type":"string"}},"required":["nested_property"]}},"required":["property"]}`},
		{"field is composite", [][]string{{"property 1"}, {"property 2"}}, `{"property 1": "any value", "property 2": "any value"}`,
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"property 1":{"type":"string"},"property 2":{"type":"string"}},"required":["property 1","property 2"]}`},
		{"field is composite and nested", [][]string{{"property 1", "nested"}, {"property 2"}}, `{"property 1": {"nested": "any value"}, "property 2": "any value"}`,
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"property 1":{"type":"object","properties":{"nested":{"type":"string"}},"required":["nested"]},"property 2":{"type":"string"}},"required":["property 1","property 2"]}`},
	}
	for _, c := range cases {
		for _, isPK := range []bool{true, false} {
			name := c.name + " (cursor field)"
			if isPK {
				name = c.name + " (primary key)"
			}
			t.Run(name, func(t *testing.T) {
				inf := inferrerWith(isPK, c.paths)
				if err := inf.Accumulate(stream, decode(t, c.record)); err != nil {
					t.Fatal(err)
				}
				schema, problems, err := inf.Schema(stream)
				if err != nil || problems != nil {
					t.Fatalf("problems %q, error %v", problems, err)
				}
				if got := marshal(t, schema); got != c.want {
					t.Errorf("\n got %s\nwant %s", got, c.want)
				}
			})
		}
	}
}

// The CDK's tests of key paths that cannot be marked: the problems are its messages, and the
// schema is still given, marked as far as it went.
func TestRequiredFieldProblems(t *testing.T) {
	const stream = "a stream name"
	cases := []struct {
		name     string
		pk       [][]string
		record   string
		problems []string
		schema   string
	}{
		{"pk does not exist", [][]string{{"pk does not exist"}}, `{"id": "any value"}`,
			[]string{"Path [] does not have field `pk does not exist` in the schema and hence can't be marked as required."},
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":["string","null"]}}}`},
		{"pk path is partially valid", [][]string{{"id", "nested pk that does not exist"}}, `{"id": "any value"}`,
			[]string{"Path ['id'] does not refer to an object but is `{'type': 'string'}` and hence ['nested pk that does not exist'] can't be marked as required."},
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`},
		{"composite pk with one valid path", [][]string{{"id 1"}, {"id 2"}}, `{"id 1": "any value"}`,
			[]string{"Path [] does not have field `id 2` in the schema and hence can't be marked as required."},
			`{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id 1":{"type":"string"}},"required":["id 1"]}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := NewSchemaInferrer(c.pk, nil)
			if err := inf.Accumulate(stream, decode(t, c.record)); err != nil {
				t.Fatal(err)
			}
			schema, problems, err := inf.Schema(stream)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(problems, c.problems) {
				t.Errorf("problems\n got %q\nwant %q", problems, c.problems)
			}
			if got := marshal(t, schema); got != c.schema {
				t.Errorf("schema\n got %s\nwant %s", got, c.schema)
			}
		})
	}
}

// Beyond the CDK's own tests: the corners of its cleaning and marking, as its code does them.
func TestSchemaCorners(t *testing.T) {
	cases := []struct {
		name     string
		pk       [][]string
		cursor   [][]string
		records  []string
		schema   string
		problems []string
		err      string
	}{
		{name: "only empty objects", records: []string{`{}`, `{}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object"}`},
		{name: "array of nulls keeps a doubled null", records: []string{`{"a": [null, null]}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["array","null"],"items":{"type":["null","null"]}}}}`},
		{name: "empty array and empty object are types", records: []string{`{"a": [], "b": {}}`, `{"a": 1, "b": "x"}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["array","number","null"]},"b":{"type":["object","string","null"]}}}`},
		{name: "types are sorted, null last", records: []string{`{"a": "x"}`, `{"a": null}`, `{"a": true}`, `{"a": 2}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["boolean","number","string","null"]}}}`},
		{name: "anyOf of null, a scalar and an object has no type and an untouched member",
			records: []string{`{"a": {"b": null}}`, `{"a": "x"}`, `{"a": null}`},
			schema:  `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"anyOf":[{"type":["null","string"]},{"type":"object","properties":{"b":{"type":"null"}}}]}}}`},
		{name: "null and an array fold into one schema", records: []string{`{"a": null}`, `{"a": [1, "x"]}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["array","null"],"items":{"type":["number","string","null"]}}}}`},
		{name: "a duplicate key counts once, with its last value", records: []string{`{"a": 1, "b": 2, "a": "x"}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["string","null"]},"b":{"type":["number","null"]}}}`},
		{name: "a nullable key path is made not nullable", pk: [][]string{{"a", "b"}}, records: []string{`{"a": null}`, `{"a": {"b": 1}}`, `{"a": {"b": null}}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"number"}},"required":["b"]}},"required":["a"]}`},
		{name: "a key path in the key and the cursor is required once", pk: [][]string{{"id"}}, cursor: [][]string{{"updated"}, {"id"}},
			records: []string{`{"updated": "x", "id": 1}`},
			schema:  `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"updated":{"type":"string"},"id":{"type":"number"}},"required":["id","updated"]}`},
		{name: "a key field with several types keeps them", pk: [][]string{{"id"}}, records: []string{`{"id": 1}`, `{"id": "x"}`, `{"id": null}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":["number","string"]}},"required":["id"]}`},
		{name: "problems of the key and of the cursor, in that order", pk: [][]string{{"x"}}, cursor: [][]string{{"a", "b"}},
			records: []string{`{"a": {}}`},
			schema:  `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":"object"}},"required":["a"]}`,
			problems: []string{
				"Path [] does not have field `x` in the schema and hence can't be marked as required.",
				"Path ['a'] does not refer to an object but is `{'type': 'object'}` and hence ['b'] can't be marked as required.",
			}},
		{name: "a path past an array names the array schema", pk: [][]string{{"a", "b", "c"}}, records: []string{`{"a": {"b": [{"it's": "\n"}]}}`},
			schema: `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":"object","properties":{"b":{"type":"array","items":{"type":["object","null"],"properties":{"it's":{"type":["string","null"]}}}}},"required":["b"]}},"required":["a"]}`,
			problems: []string{
				"Path ['a', 'b'] does not refer to an object but is `{'type': 'array', 'items': {'type': ['object', 'null'], 'properties': {\"it's\": {'type': ['string', 'null']}}}}` and hence ['c'] can't be marked as required.",
			}},
		{name: "a key path through an anyOf is the CDK's KeyError", pk: [][]string{{"a"}}, records: []string{`{"a": [1]}`, `{"a": {"b": 1}}`},
			err: "'type'"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inf := NewSchemaInferrer(c.pk, c.cursor)
			for _, r := range c.records {
				if err := inf.Accumulate("s", decode(t, r)); err != nil {
					t.Fatal(err)
				}
			}
			schema, problems, err := inf.Schema("s")
			if c.err != "" {
				var ke *KeyError
				if !errors.As(err, &ke) || err.Error() != c.err {
					t.Fatalf("error %v, want KeyError %s", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(problems, c.problems) {
				t.Errorf("problems\n got %q\nwant %q", problems, c.problems)
			}
			if got := marshal(t, schema); got != c.schema {
				t.Errorf("schema\n got %s\nwant %s", got, c.schema)
			}
		})
	}
}

func TestSchemaStreams(t *testing.T) {
	inf := NewSchemaInferrer(nil, nil)
	for _, r := range []streamRecord{{"b", `{"x": 1}`}, {"a", `{"y": "z"}`}, {"b", `{"x": null}`}} {
		if err := inf.Accumulate(r.stream, decode(t, r.data)); err != nil {
			t.Fatal(err)
		}
	}
	if got := inf.Streams(); !slices.Equal(got, []string{"b", "a"}) {
		t.Errorf("Streams() = %q", got)
	}
	if schema, problems, err := inf.Schema("c"); schema != nil || problems != nil || err != nil {
		t.Errorf("Schema of a stream without records: %v %q %v", schema, problems, err)
	}
	// Each call infers afresh: marking one schema does not change the next.
	s1, _, _ := inf.Schema("b")
	s2, _, _ := inf.Schema("b")
	if a, b := marshal(t, s1), marshal(t, s2); a != b || !strings.Contains(a, `"x":{"type":["number","null"]}`) {
		t.Errorf("two calls differ or are wrong:\n%s\n%s", a, b)
	}
}

func TestAccumulateRefusesWhatIsNotARecord(t *testing.T) {
	inf := NewSchemaInferrer(nil, nil)
	if err := inf.Accumulate("s", []any{}); err == nil || err.Error() != `a record of stream "s" is an array, not an object` {
		t.Errorf("array record: %v", err)
	}
	if err := inf.Accumulate("s", map[string]any{"a": struct{}{}}); err == nil || err.Error() != "cannot infer the schema of a struct {}" {
		t.Errorf("struct value: %v", err)
	}
	// Go values a transformation may set count like their JSON.
	inf = NewSchemaInferrer(nil, nil)
	if err := inf.Accumulate("s", map[string]any{"b": int64(1), "a": 2.5, "c": json.Number("3")}); err != nil {
		t.Fatal(err)
	}
	schema, _, _ := inf.Schema("s")
	want := `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"a":{"type":["number","null"]},"b":{"type":["number","null"]},"c":{"type":["number","null"]}}}`
	if got := marshal(t, schema); got != want {
		t.Errorf("\n got %s\nwant %s", got, want)
	}
}

// Past the size where fields are found through an index, they keep the order first seen.
func TestManyProperties(t *testing.T) {
	var first, second []string
	for i := range 40 {
		first = append(first, fmt.Sprintf(`"k%d":%d`, i, i))
		second = append(second, fmt.Sprintf(`"k%d":"x"`, 39-i))
	}
	second = append(second, `"new":null`, `"k3":null`)
	inf := NewSchemaInferrer(nil, nil)
	for _, r := range []string{"{" + strings.Join(first, ",") + "}", "{" + strings.Join(second, ",") + "}"} {
		if err := inf.Accumulate("s", decode(t, r)); err != nil {
			t.Fatal(err)
		}
	}
	schema, _, _ := inf.Schema("s")
	p, _ := schema.Get("properties")
	props := p.(*record.Object)
	var want []string
	for i := range 40 {
		want = append(want, fmt.Sprintf("k%d", i))
	}
	if !slices.Equal(props.Keys(), want) {
		t.Errorf("keys %q", props.Keys())
	}
	if got := marshal(t, mustGet(props, "k3")); got != `{"type":["number","null"]}` {
		t.Errorf("k3 (its last value in the second record is null): %s", got)
	}
}

func mustGet(o *record.Object, k string) any {
	v, _ := o.Get(k)
	return v
}

// A record read lazily (record.Shallow, as a transformation reads it) gives the schema its
// decoded form gives.
func TestShallowRecords(t *testing.T) {
	texts := []string{`{"a": {"b": [1, {"c": null}]}, "d": "2022-02-03", "a": null}`, `{"d": "2022-02-04", "e": [[]]}`}
	shallow, decoded := NewSchemaInferrer(nil, nil), NewSchemaInferrer(nil, nil)
	var df1, df2 DatetimeFormats
	for _, text := range texts {
		o, ok := record.Shallow([]byte(text))
		if !ok {
			t.Fatal("not an object")
		}
		if err := shallow.Accumulate("s", o); err != nil {
			t.Fatal(err)
		}
		if err := df1.Accumulate(o); err != nil {
			t.Fatal(err)
		}
		v := decode(t, text)
		if err := decoded.Accumulate("s", v); err != nil {
			t.Fatal(err)
		}
		if err := df2.Accumulate(v); err != nil {
			t.Fatal(err)
		}
	}
	s1, _, _ := shallow.Schema("s")
	s2, _, _ := decoded.Schema("s")
	// "a" is written twice in the first record: only its last value, null, counts.
	want := `{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"d":{"type":["string","null"]},"e":{"type":["array","null"],"items":{"type":["array","null"]}}}}`
	if a, b := marshal(t, s1), marshal(t, s2); a != want || b != want {
		t.Errorf("\nshallow %s\ndecoded %s\n   want %s", a, b, want)
	}
	if a, b := marshal(t, df1.Formats()), marshal(t, df2.Formats()); a != `{"d":"%Y-%m-%d"}` || b != a {
		t.Errorf("formats %s and %s", a, b)
	}
}
