package manifest

import (
	"reflect"
	"strings"
	"testing"
)

// paramDef has a ParametrizedComponentsResolver of two entries.
const paramDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [a]}
streams: []
dynamic_streams:
  - type: DynamicDeclarativeStream
    stream_template:
      type: DeclarativeStream
      name: ""
      retriever:
        type: SimpleRetriever
        requester: {type: HttpRequester, url_base: "https://api.example.com", path: ""}
        record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    components_resolver:
      type: ParametrizedComponentsResolver
      stream_parameters:
        type: StreamParametersDefinition
        list_of_parameters_for_stream:
          - {name: a, path: /a}
          - name: b
            path: /b
            $parameters: {entity: x}
      components_mapping:
        - type: ComponentMappingDefinition
          field_path: [name]
          value: "{{ components_values['name'] }}"
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, path]
          value: "{{ components_values.path }}"
`

// The entries are the components_values of the streams, in order. An entry's `$parameters`
// is not among them: the CDK's manifest transformer pops `$parameters` from every mapping
// it walks, and returns a mapping with no type (an entry) without it, so the resolver never
// sees it; validate says so.
func TestParametrizedComponentsLoad(t *testing.T) {
	def, diags := Parse("def.yaml", []byte(paramDef))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	want := "def.yaml:22:13: warning: `$parameters` in an entry of `list_of_parameters_for_stream` is dropped: the Airbyte CDK takes it out before the resolver sees the entry, so components_values has no `$parameters`\n" +
		"  hint: write the values as keys of the entry, and set them into the stream's $parameters with a components_mapping"
	if diags.Error() != want {
		t.Errorf("diagnostics:\n%s\nwant:\n%s", diags.Error(), want)
	}
	d := def.Dynamic[0]
	if d.Type != ParametrizedComponentsResolver || d.Name != "dynamic_stream_0" {
		t.Errorf("type %s name %s", d.Type, d.Name)
	}
	comps := []map[string]any{{"name": "a", "path": "/a"}, {"name": "b", "path": "/b"}}
	if !reflect.DeepEqual(d.Components, comps) {
		t.Errorf("components %v, want %v", d.Components, comps)
	}
	if !reflect.DeepEqual(d.ComponentPos, []Pos{{19, 13}, {20, 13}}) {
		t.Errorf("positions %v", d.ComponentPos)
	}
	if len(d.Mappings) != 2 {
		t.Errorf("%d mappings", len(d.Mappings))
	}
}

// What the CDK 7.28.2 refuses in a ParametrizedComponentsResolver is a validate error at its
// place. Each case changes paramDef and gives the errors validate prints.
func TestParametrizedComponentsProblems(t *testing.T) {
	tests := []struct {
		name, old, new, want string
	}{
		// create_parametrized_components_resolver raises "`condition` is only supported for
		// `ConfigComponentsResolver`".
		{"a mapping condition", "          value: \"{{ components_values.path }}\"\n",
			"          value: \"{{ components_values.path }}\"\n          condition: \"{{ true }}\"\n",
			"def.yaml:30:22: error: `condition` is only supported for ConfigComponentsResolver\n" +
				"  hint: the CDK's ParametrizedComponentsResolver refuses it"},
		// The CDK gives the mapping's templates config, parameters, components_values and
		// stream_template_config; stream_slice fails there ("undeclared variables").
		{"stream_slice in a value", "{{ components_values.path }}", "{{ stream_slice.path }}",
			"def.yaml:29:22: error: in `value`: unknown variable `stream_slice`"},
		// The schema requires the type of stream_parameters, and the CDK's transformer gives
		// it none.
		{"stream_parameters without type", "        type: StreamParametersDefinition\n", "",
			"def.yaml:17:9: error: `stream_parameters` is missing the required field `type`"},
		{"no stream_parameters", "      stream_parameters:\n        type: StreamParametersDefinition\n        list_of_parameters_for_stream:\n          - {name: a, path: /a}\n          - name: b\n            path: /b\n            $parameters: {entity: x}\n", "",
			"def.yaml:15:7: error: ParametrizedComponentsResolver is missing the required field `stream_parameters`"},
		// The schema's entries are objects.
		{"an entry that is not a mapping", "          - {name: a, path: /a}\n", "          - a\n",
			"def.yaml:19:13: error: an entry of `list_of_parameters_for_stream` must be a mapping (the components_values of one stream), not a string"},
		{"a list that is a mapping", "        list_of_parameters_for_stream:\n          - {name: a, path: /a}\n          - name: b\n            path: /b\n            $parameters: {entity: x}\n",
			"        list_of_parameters_for_stream: {name: a}\n",
			"def.yaml:18:40: error: `list_of_parameters_for_stream` must be a list of mappings, not a mapping"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(paramDef, tt.old) {
				t.Fatalf("paramDef has no %q", tt.old)
			}
			def, diags := Parse("def.yaml", []byte(strings.Replace(paramDef, tt.old, tt.new, 1)))
			var errs []string
			for _, d := range diags {
				if d.Severity == "error" {
					line := d.String()
					if d.Hint != "" {
						line += "\n  hint: " + d.Hint
					}
					errs = append(errs, line)
				}
			}
			if got := strings.Join(errs, "\n"); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			if def != nil {
				t.Error("a definition despite errors")
			}
		})
	}
}
