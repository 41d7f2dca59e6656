package transform

import (
	"encoding/json"
	"errors"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/template"
	"connector/pkg/values"
)

// normalizationOf loads the spec.config_normalization_rules written in rules (YAML at the
// rules' level of indentation).
func normalizationOf(t *testing.T, rules string) *manifest.ConfigNormalization {
	t.Helper()
	def := `version: 6.0.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification: {type: object}
  config_normalization_rules:
    type: ConfigNormalizationRules
` + rules
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return d.ConfigNormalization
}

// The rules of cmd's TestConfigNormalization (checked there against the CDK 7.28.2), applied
// to the testing values as a map: migrations, then transformations, then validations.
const normRules = `    config_migrations:
      - type: ConfigMigration
        transformations:
          - type: ConfigAddFields
            fields:
              - {type: AddedFieldDefinition, path: ["credentials", "api_key"], value: "{{ config['api_key'] }}"}
            condition: "{{ config.get('api_key', False) }}"
          - type: ConfigRemoveFields
            field_pointers: [["api_key"], ["legacy"], ["opts", "*", "old"]]
            condition: "{{ config.get('credentials') }}"
      - type: ConfigMigration
        transformations:
          - type: ConfigAddFields
            fields:
              - {type: AddedFieldDefinition, path: ["num_workers"], value: "2"}
            condition: "{{ config.get('num_workers', 25) == 1 }}"
          - type: ConfigAddFields
            fields:
              - {type: AddedFieldDefinition, path: ["reports_array"], value: "{{ config['reports'] }}"}
            condition: "{{ config.get('reports', False) }}"
    transformations:
      - type: ConfigRemapField
        field_path: ["region"]
        map: {eu: europe, us: america}
      - type: ConfigRemapField
        field_path: ["opts", "level"]
        map: {"1": one, 2: two}
      - type: ConfigRemapField
        field_path: ["opts", "absent", "deeper"]
        map: {a: b}
      - type: ConfigAddFields
        fields:
          - {type: AddedFieldDefinition, path: ["mode"], value: "{{ 'fast' if config['num_workers'] > 1 else 'slow' }}"}
          - {type: AddedFieldDefinition, path: ["limits", "max"], value: "{{ config['num_workers'] * 1.5 }}", value_type: number}
    validations:
      - type: DpathValidator
        field_path: ["reports_array"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: array, items: {type: object, required: [name], properties: {name: {type: string, minLength: 1}}}}
      - type: DpathValidator
        field_path: ["reports_array", "*"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: object, properties: {name: {type: string, maxLength: 5}}}
      - type: DpathValidator
        field_path: ["missing_key"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: integer}
      - type: PredicateValidator
        value: {name: abc}
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: object, required: [name]}
`

// testValues are testing values as pkg/values reads them from YAML.
func testValues() map[string]any {
	return map[string]any{
		"api_key": "sekret-key", "region": "eu", "num_workers": int64(1), "legacy": "x",
		"reports": "[{'name': 'abc'}, {'name': 'de'}]",
		"opts":    map[string]any{"level": int64(2), "a": map[string]any{"old": true, "new": false}},
	}
}

func TestConfigNormalizationRules(t *testing.T) {
	t.Parallel()
	n := normalizationOf(t, normRules)
	config := testValues()
	g := template.Globals{Config: config}
	if err := MigrateConfig(n, g); err != nil {
		t.Fatal(err)
	}
	if err := TransformConfig(n, g); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(config)
	if err != nil {
		t.Fatal(err)
	}
	// api_key moved under credentials and legacy gone; num_workers raised to the number 2
	// and the reports text read as a list; region remapped, opts.level left alone (a number
	// never matches the map's keys, which the CDK renders as strings); mode derived.
	const want = `{"credentials":{"api_key":"sekret-key"},"limits":{"max":3},"mode":"fast","num_workers":2,` +
		`"opts":{"a":{"new":false},"level":2},"region":"europe","reports":"[{'name': 'abc'}, {'name': 'de'}]",` +
		`"reports_array":[{"name":"abc"},{"name":"de"}]}`
	if string(got) != want {
		t.Errorf("config:\n%s\nwant:\n%s", got, want)
	}
	if err := ValidateConfig(n, config, values.CheckSchema); err != nil {
		t.Errorf("validations: %v", err)
	}
}

func TestConfigValidationFailures(t *testing.T) {
	t.Parallel()
	n := normalizationOf(t, normRules)
	tests := []struct {
		name   string
		change func(map[string]any)
		want   string
	}{
		{"a value too long: its key and rule, never the value", func(c map[string]any) {
			c["reports_array"] = []any{map[string]any{"name": "sekret-key"}}
		}, `testing value "reports_array.0" fails spec.config_normalization_rules.validations[1] (ValidateAdheresToSchema): "name" breaks ` + "`maxLength`"},
		{"a string is read as JSON first", func(c map[string]any) { c["missing_key"] = "not-json" },
			`testing value "missing_key" fails spec.config_normalization_rules.validations[2] (ValidateAdheresToSchema): the value is a string that is not JSON`},
		{"a string of JSON of another type", func(c map[string]any) { c["missing_key"] = `"7"` },
			`testing value "missing_key" fails spec.config_normalization_rules.validations[2] (ValidateAdheresToSchema): the value breaks ` + "`type`"},
	}
	for _, tt := range tests {
		config := map[string]any{"reports_array": []any{}}
		tt.change(config)
		err := ValidateConfig(n, config, values.CheckSchema)
		var ve *ValidationError
		if !errors.As(err, &ve) || err.Error() != tt.want {
			t.Errorf("%s: %v\nwant %s", tt.name, err, tt.want)
		}
	}
	// A string of JSON of the right type passes.
	if err := ValidateConfig(n, map[string]any{"missing_key": "7"}, values.CheckSchema); err != nil {
		t.Errorf("missing_key \"7\": %v", err)
	}
	// The PredicateValidator checks its value, whatever the config; a string is read as JSON
	// there too.
	p := normalizationOf(t, `    validations:
      - type: PredicateValidator
        value: '"a value longer than ten"'
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: string, maxLength: 10}
`)
	err := ValidateConfig(p, map[string]any{}, values.CheckSchema)
	if want := "spec.config_normalization_rules.validations[0]: the value fails its ValidateAdheresToSchema: the value breaks `maxLength`"; err == nil || err.Error() != want {
		t.Errorf("predicate: %v\nwant %s", err, want)
	}
	if ValidateConfig(nil, nil, values.CheckSchema) != nil || MigrateConfig(nil, template.Globals{}) != nil || TransformConfig(nil, template.Globals{}) != nil {
		t.Error("no rules: an error")
	}
}

// A step that fails names its place in the rules and its type.
func TestConfigStepErrors(t *testing.T) {
	t.Parallel()
	n := normalizationOf(t, `    transformations:
      - type: ConfigAddFields
        fields:
          - {type: AddedFieldDefinition, path: ["region", "code"], value: "x"}
`)
	err := TransformConfig(n, template.Globals{Config: map[string]any{"region": "eu"}})
	if want := "spec.config_normalization_rules.transformations[0] (ConfigAddFields): field region.code: region is a string, not an object"; err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}
