package dynamic

import (
	"context"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

const configDef = `
version: 6.5.0
streams: []
dynamic_streams:
  - type: DynamicDeclarativeStream
    stream_template:
      type: DeclarativeStream
      name: ""
      retriever:
        type: SimpleRetriever
        requester:
          type: HttpRequester
          url_base: https://api.example.com
          path: ""
          $parameters:
            region: none
        record_selector:
          type: RecordSelector
          extractor:
            type: DpathExtractor
            field_path: []
    components_resolver:
      type: ConfigComponentsResolver
      stream_config:
        - type: StreamConfig
          configs_pointer: [reports]
        - type: StreamConfig
          configs_pointer: [regions]
          default_values: [global]
      components_mapping:
        - type: ComponentMappingDefinition
          field_path: [name]
          value: "{{ components_values['name'] }}_{{ components_values['source_config_1'][1] }}"
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, path]
          value: "/reports/{{ components_values['name'] }}"
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, request_parameters]
          value: "{'fields': '{{ components_values['fields'] | join(',') }}'}"
          create_or_update: true
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, $parameters, region]
          value: "{{ components_values['source_config_1'][1] }}"
          condition: "{{ components_values['name'] != 'skip_region' }}"
`

// A ConfigComponentsResolver makes one stream per combination of the items of its
// stream_configs (default_values last), in the CDK's order; create_or_update adds a field
// the template lacks; a mapping's text value is read as YAML.
func TestConfigComponents(t *testing.T) {
	def, diags := manifest.Parse("def.yaml", []byte(configDef))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	config := map[string]any{
		"reports": []any{
			map[string]any{"name": "sales", "fields": []any{"a", "b"}},
			map[string]any{"name": "skip_region", "fields": []any{"c"}},
		},
		"regions": "eu",
	}
	streams, err := Resolve(context.Background(), def, template.Globals{Config: config}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range streams {
		names = append(names, s.Name+" "+render(s.Requester.Path)+" "+s.Requester.Parameters["region"].(string)+" "+treeText(s.Requester.Params))
	}
	want := []string{
		"sales_eu /reports/sales eu fields=a,b",
		"sales_global /reports/sales global fields=a,b",
		"skip_region_eu /reports/skip_region none fields=c",
		"skip_region_global /reports/skip_region none fields=c",
	}
	if strings.Join(names, "\n") != strings.Join(want, "\n") {
		t.Errorf("streams:\n%s\nwant:\n%s", strings.Join(names, "\n"), strings.Join(want, "\n"))
	}
}

func treeText(t *manifest.Tree) string {
	if t == nil {
		return "-"
	}
	var parts []string
	for _, e := range t.Entries {
		parts = append(parts, render(e.Key)+"="+render(e.Value.Template))
	}
	return strings.Join(parts, "&")
}

// Two components that make the same stream name are refused, as the CDK refuses them.
func TestConfigComponentsDuplicateName(t *testing.T) {
	def, diags := manifest.Parse("def.yaml", []byte(configDef))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	config := map[string]any{"reports": []any{map[string]any{"name": "a", "fields": []any{}}, map[string]any{"name": "a", "fields": []any{}}}, "regions": []any{}}
	_, err := Resolve(context.Background(), def, template.Globals{Config: config}, nil)
	if err == nil || err.Error() != `dynamic stream dynamic_stream_0: the stream name "a_global" is used twice; please check your configuration` {
		t.Errorf("err = %v", err)
	}
}

func render(t *template.Template) string {
	s, err := t.Render(map[string]any{})
	if err != nil {
		return err.Error()
	}
	return s
}

// A mapping's condition is the CDK's InterpolatedBoolean, but for None: the schema's own
// example, `components_values.get('cursor_field', None)`, renders "None" when the key is
// absent, which the CDK applies (None is not one of its false values) and this tool skips
// (Python's truthiness). A false value skips it, a true one applies it.
func TestConfigComponentsConditionNoneIsFalse(t *testing.T) {
	src := strings.Replace(configDef, `"{{ components_values['name'] != 'skip_region' }}"`, `"{{ components_values.get('skip', None) }}"`, 1)
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	config := map[string]any{
		"reports": []any{map[string]any{"name": "a", "fields": []any{}}, map[string]any{"name": "b", "fields": []any{}, "skip": false},
			map[string]any{"name": "c", "fields": []any{}, "skip": true}},
		"regions": "eu",
	}
	streams, err := Resolve(context.Background(), def, template.Globals{Config: config}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range streams {
		got = append(got, s.Name+" "+s.Requester.Parameters["region"].(string))
	}
	if want := "a_eu none,a_global none,b_eu none,b_global none,c_eu eu,c_global global"; strings.Join(got, ",") != want {
		t.Errorf("streams %s, want %s", strings.Join(got, ","), want)
	}
}
