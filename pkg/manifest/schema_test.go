package manifest

import (
	"strings"
	"testing"

	"connector/pkg/diag"
	"connector/pkg/record"
)

func schemaDef(loader, normalization string) string {
	return `version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [users]}
definitions:
  id: {type: integer}
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /users}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
` + normalization + loader + `
schemas:
  users:
    type: object
    properties:
      id: {$ref: "#/definitions/id"}
      n: {type: ["null", number]}
  more:
    type: object
    properties:
      n: {type: string}
      x: {type: boolean}
`
}

func schemaText(t *testing.T, s any) string {
	t.Helper()
	if s == nil {
		return "<nil>"
	}
	b, err := record.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSchemaLoaders(t *testing.T) {
	users := `{"type":"object","properties":{"id":{"type":"integer"},"n":{"type":["null","number"]}}}`
	for _, tt := range []struct{ name, loader, want string }{
		{"none", "", "<nil>"},
		{"inline $ref to schemas", "    schema_loader:\n      type: InlineSchemaLoader\n      schema:\n        $ref: \"#/schemas/users\"\n", users},
		{"inline written", "    schema_loader:\n      type: InlineSchemaLoader\n      schema: {type: object, properties: {a: {type: number}, b: 1.50}}\n", `{"type":"object","properties":{"a":{"type":"number"},"b":1.50}}`},
		{"inline empty", "    schema_loader:\n      type: InlineSchemaLoader\n", "<nil>"},
		{"json file from schemas", "    schema_loader:\n      type: JsonFileSchemaLoader\n      file_path: ./schemas/users.json\n", users},
		{"json file default path", "    schema_loader:\n      type: JsonFileSchemaLoader\n", users},
		{"json file not in schemas", "    schema_loader:\n      type: JsonFileSchemaLoader\n      file_path: ./schemas/nope.json\n", "<nil>"},
		// CompositeSchemaLoader: {**later, **earlier}: the later loader's keys first, the
		// earlier loader's values winning.
		{"list", "    schema_loader:\n      - {type: InlineSchemaLoader, schema: {$ref: \"#/schemas/users\"}}\n      - {type: InlineSchemaLoader, schema: {$ref: \"#/schemas/more\"}}\n",
			`{"$schema":"http://json-schema.org/draft-07/schema#","type":["null","object"],"properties":{"n":{"type":["null","number"]},"x":{"type":"boolean"},"id":{"type":"integer"}}}`},
		{"dynamic without normalization", "    schema_loader:\n      type: DynamicSchemaLoader\n      retriever: {type: SimpleRetriever, requester: {type: HttpRequester, url_base: \"https://x\", path: /f}, record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}}\n      schema_type_identifier: {key_pointer: [name]}\n", "<nil>"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := mustLoad(t, "def.yaml", schemaDef(tt.loader, ""))
			if got := schemaText(t, def.Streams[0].Schema); got != tt.want {
				t.Errorf("schema\n got %s\nwant %s", got, tt.want)
			}
			if got := def.Streams[0].Selector.Normalization; got != NormalizationNone {
				t.Errorf("normalization %q", got)
			}
		})
	}
}

func TestSchemaNormalization(t *testing.T) {
	def := mustLoad(t, "def.yaml", schemaDef("", "        schema_normalization: Default\n"))
	if got := def.Streams[0].Selector.Normalization; got != NormalizationDefault {
		t.Errorf("normalization %q", got)
	}
	for _, tt := range []struct{ name, normalization, loader, want string }{
		{"unknown value", "        schema_normalization: Strict\n", "", "def.yaml:15:31: error: `schema_normalization` must be None or Default, not \"Strict\""},
		{"custom", "        schema_normalization: {type: CustomSchemaNormalization, class_name: a.B}\n", "", "CustomSchemaNormalization"},
		{"dynamic with Default", "        schema_normalization: Default\n", "    schema_loader:\n      type: DynamicSchemaLoader\n      retriever: {}\n", ""},
		{"custom loader", "", "    schema_loader:\n      type: CustomSchemaLoader\n      class_name: a.B\n", "CustomSchemaLoader"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, diags := Parse("def.yaml", []byte(schemaDef(tt.loader, tt.normalization)))
			if !diags.HasErrors() || !strings.Contains(diagText(diags), tt.want) {
				t.Errorf("diagnostics:\n%s\nwant %s", diagText(diags), tt.want)
			}
		})
	}
}

func diagText(l diag.List) string {
	var b strings.Builder
	for _, d := range l {
		b.WriteString(d.String())
		b.WriteByte('\n')
	}
	return b.String()
}
