package schema

import (
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// loaderOf loads a definition of one stream whose schema_loader is a DynamicSchemaLoader
// with the given fields (YAML at the loader's level, besides its retriever).
func loaderOf(t *testing.T, fields string) *manifest.DynamicSchema {
	t.Helper()
	var b strings.Builder
	for _, line := range strings.Split(strings.Trim(fields, "\n"), "\n") {
		b.WriteString("        " + line + "\n")
	}
	def := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    schema_loader:
        type: DynamicSchemaLoader
        retriever:
          type: SimpleRetriever
          requester: {type: HttpRequester, url_base: "https://api.test", path: /fields}
          record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
` + b.String()
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	if d.Streams[0].DynamicSchema == nil {
		t.Fatal("the stream has no DynamicSchemaLoader")
	}
	return d.Streams[0].DynamicSchema
}

func decode(t *testing.T, text string) any {
	t.Helper()
	if text == "" {
		return nil
	}
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

const head = `{"$schema":"https://json-schema.org/draft-07/schema#","type":"object","additionalProperties":true,"properties":`

// Build as the CDK's DynamicSchemaLoader: the properties named by key_pointer under
// schema_pointer, typed through types_mapping, filtered and transformed; the exact schema.
func TestBuild(t *testing.T) {
	tests := []struct {
		name   string
		loader string
		config map[string]any
		record string
		want   string // the properties
	}{{
		name:   "no record: no properties",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, key_pointer: [name]}",
		want:   `{}`,
	}, {
		name:   "an empty record: no properties",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, key_pointer: [name]}",
		record: `{}`,
		want:   `{}`,
	}, {
		name:   "no type pointer: every property a string",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name]}",
		record: `{"fields":[{"name":"id","type":"integer"},{"name":"title"}]}`,
		want:   `{"id":{"type":["null","string"]},"title":{"type":["null","string"]}}`,
	}, {
		name: "types read and mapped, the first matching mapping wins",
		loader: `
schema_type_identifier:
  type: SchemaTypeIdentifier
  schema_pointer: [fields]
  key_pointer: [name]
  type_pointer: [type]
  types_mapping:
    - {type: TypesMap, current_type: int, target_type: integer}
    - {type: TypesMap, current_type: int, target_type: string}
    - {type: TypesMap, current_type: money, target_type: [number, string]}
    - {type: TypesMap, current_type: [a, b], target_type: boolean}
    - {type: TypesMap, current_type: tags, target_type: {type: ComplexFieldType, field_type: array, items: {type: ComplexFieldType, field_type: array, items: string}}}
    - {type: TypesMap, current_type: stamp, target_type: timestamp_with_timezone, condition: "{{ raw_schema.tz }}"}
    - {type: TypesMap, current_type: stamp, target_type: timestamp_without_timezone}`,
		record: `{"fields":[
			{"name":"id","type":"int"},
			{"name":"price","type":"money"},
			{"name":"flag","type":["a","b"]},
			{"name":"tags","type":"tags"},
			{"name":"at","type":"stamp","tz":true},
			{"name":"local","type":"stamp","tz":false},
			{"name":"day","type":"date"},
			{"name":"untyped"}]}`,
		want: `{"id":{"type":["null","integer"]},` +
			`"price":{"oneOf":[{"type":["null","number"]},{"type":["null","string"]}]},` +
			`"flag":{"type":["null","boolean"]},` +
			`"tags":{"type":["null","array"],"items":{"type":["null","array"],"items":{"type":["null","string"]}}},` +
			`"at":{"type":["null","string"],"format":"date-time"},` +
			`"local":{"type":["null","string"],"format":"date-time","airbyte_type":"timestamp_without_timezone"},` +
			`"day":{"type":["null","string"],"format":"date"},` +
			`"untyped":{"type":["null","string"]}}`,
	}, {
		name:   "the whole record as the list of entries",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, key_pointer: [name]}",
		record: `[{"name":"b"},{"name":"a"}]`,
		want:   `{"b":{"type":["null","string"]},"a":{"type":["null","string"]}}`,
	}, {
		name:   "pointers from config and parameters, a * segment",
		loader: "$parameters: {list: fields}\nschema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [\"{{ parameters.list }}\"], key_pointer: [\"*\", \"{{ config.key }}\"]}",
		config: map[string]any{"key": "label"},
		record: `{"fields":[{"f":{"label":"x"}},{"g":{"label":"y"}}]}`,
		want:   `{"x":{"type":["null","string"]},"y":{"type":["null","string"]}}`,
	}, {
		name:   "a list index in a pointer, a * over an object",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [data, \"1\"], key_pointer: [\"*\"]}",
		record: `{"data":[[{"name":"no"}],[{"only":"z"}]]}`,
		want:   `{"z":{"type":["null","string"]}}`,
	}, {
		name: "schema_filter keeps the properties whose condition holds",
		loader: `
schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name]}
schema_filter: {type: RecordFilter, condition: "{{ parameters.keep in record }}", $parameters: {keep: b}}`,
		record: `{"fields":[{"name":"a"},{"name":"b"},{"name":"c"}]}`,
		want:   `{"b":{"type":["null","string"]}}`,
	}, {
		name: "schema_transformations change the properties",
		loader: `
schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name]}
schema_transformations:
  - {type: RemoveFields, field_pointers: [[secret]]}
  - {type: AddFields, fields: [{type: AddedFieldDefinition, path: [extra], value: "{{ {'type': 'integer'} }}"}]}`,
		record: `{"fields":[{"name":"a"},{"name":"secret"}]}`,
		want:   `{"a":{"type":["null","string"]},"extra":{"type":"integer"}}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Build(loaderOf(t, tt.loader), template.Globals{Config: tt.config}, decode(t, tt.record))
			if err != nil {
				t.Fatal(err)
			}
			text, err := record.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if want := head + tt.want + "}"; string(text) != want {
				t.Errorf("schema:\n got %s\nwant %s", text, want)
			}
		})
	}
}

// What the CDK refuses fails the build with the CDK's message.
func TestBuildErrors(t *testing.T) {
	tests := []struct {
		name   string
		loader string
		record string
		want   string
	}{{
		name:   "a key that is not a string",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [id]}",
		record: `{"fields":[{"id":7}]}`,
		want:   "expected key to be a string. Got 7",
	}, {
		name:   "a missing key",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [id]}",
		record: `{"fields":[{"name":"x"}]}`,
		want:   "expected key to be a string. Got None",
	}, {
		name:   "a type that is not an Airbyte data type",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name], type_pointer: [type]}",
		record: `{"fields":[{"name":"x","type":"varchar"}]}`,
		want:   "invalid Airbyte data type: varchar",
	}, {
		name:   "a list of types that is not two names",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name], type_pointer: [type]}",
		record: `{"fields":[{"name":"x","type":["string","integer","number"]}]}`,
		want:   `invalid data type. Available string or two items list of string. Got ["string","integer","number"]`,
	}, {
		name:   "a boolean type",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name], type_pointer: [type]}",
		record: `{"fields":[{"name":"x","type":true}]}`,
		want:   `invalid data type. Available string or two items list of string. Got True`,
	}, {
		name:   "one of two types not an Airbyte data type",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name], type_pointer: [type]}",
		record: `{"fields":[{"name":"x","type":["string","text"]}]}`,
		want:   `invalid Airbyte data type: text`,
	}, {
		name:   "a schema_pointer at a number",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [count], key_pointer: [name]}",
		record: `{"count":3}`,
		want:   `schema_pointer: 'int' or 'float' object is not iterable`,
	}, {
		name:   "a schema_pointer at an object: its keys are the entries, and a key has no name",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [props], key_pointer: [name]}",
		record: `{"props":{"b":1}}`,
		want:   `expected key to be a string. Got None`,
	}, {
		name:   "a complex type whose items are not an Airbyte data type",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [fields], key_pointer: [name], type_pointer: [type], types_mapping: [{type: TypesMap, current_type: l, target_type: {type: ComplexFieldType, field_type: array, items: text}}]}",
		record: `{"fields":[{"name":"x","type":"l"}]}`,
		want:   `invalid Airbyte data type: text`,
	}, {
		name:   "a schema_pointer at nothing",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [nope], key_pointer: [name]}",
		record: `{"fields":[]}`,
		want:   `schema_pointer: 'NoneType' object is not iterable`,
	}, {
		name:   "a glob matching several values",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [\"*\"], key_pointer: [name]}",
		record: `{"a":[],"b":[]}`,
		want:   `schema_pointer: dpath.get() globs must match only one leaf: [*]`,
	}, {
		name:   "a pointer template that fails",
		loader: "schema_type_identifier: {type: SchemaTypeIdentifier, schema_pointer: [\"{{ config.a.b.c }}\"], key_pointer: [name]}",
		record: `{"a":[]}`,
		want:   "schema_pointer: ",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Build(loaderOf(t, tt.loader), template.Globals{}, decode(t, tt.record))
			if err == nil {
				t.Fatalf("no error, want %q", tt.want)
			}
			if strings.HasSuffix(tt.want, ": ") {
				if !strings.HasPrefix(err.Error(), tt.want) {
					t.Errorf("error = %q, want it to start with %q", err, tt.want)
				}
				return
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant      %q", err, tt.want)
			}
		})
	}
}

// A types_mapping condition is the CDK's InterpolatedBoolean: false only for its false
// values; none is true.
func TestTruth(t *testing.T) {
	tests := []struct {
		v    any
		want bool
	}{
		{nil, true}, {"False", false}, {"false", false}, {"{}", false}, {"[]", false}, {"()", false},
		{"", false}, {"0", false}, {"0.0", false}, {"no", true}, {true, true}, {false, false},
		{[]any{}, false}, {[]any{1}, true}, {map[string]any{}, false}, {map[string]any{"a": 1}, true},
		{&record.Object{}, false}, {int64(0), false}, {int64(2), true},
	}
	for _, tt := range tests {
		if got := truth(tt.v); got != tt.want {
			t.Errorf("truth(%#v) = %v, want %v", tt.v, got, tt.want)
		}
	}
}

// The names in error messages are Python's.
func TestPythonSpelling(t *testing.T) {
	for v, want := range map[any]string{nil: "None", "x": "x", true: "True", false: "False", int64(3): "3"} {
		if got := pyRepr(v); got != want {
			t.Errorf("pyRepr(%#v) = %s, want %s", v, got, want)
		}
	}
	if got := pyRepr(&manifest.ComplexFieldType{FieldType: "array"}); got != `ComplexFieldType(field_type="array")` {
		t.Errorf("pyRepr(complex) = %s", got)
	}
	for v, want := range map[any]string{nil: "'NoneType'", true: "'bool'"} {
		if got := pyTypeName(v); got != want {
			t.Errorf("pyTypeName(%#v) = %s, want %s", v, got, want)
		}
	}
	s, err := iterate("ab")
	if err != nil || len(s) != 2 || s[0] != "a" || s[1] != "b" {
		t.Errorf("iterate(ab) = %v, %v", s, err)
	}
}
