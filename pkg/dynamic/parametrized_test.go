package dynamic

import (
	"context"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// parametrizedDef makes a stream per entry of list_of_parameters_for_stream. The template
// has no requester $parameters and no request_parameters: create_or_update makes them.
const parametrizedDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [books]}
streams: []
dynamic_streams:
  - type: DynamicDeclarativeStream
    name: catalog
    stream_template:
      type: DeclarativeStream
      name: ""
      $parameters: {collection: template}
      retriever:
        type: SimpleRetriever
        requester:
          type: HttpRequester
          url_base: "{{ config['base_url'] }}"
          path: "/{{ parameters.collection }}"
        record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
        paginator:
          type: DefaultPaginator
          page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
          pagination_strategy: {type: OffsetIncrement, page_size: 10}
    components_resolver:
      type: ParametrizedComponentsResolver
      $parameters: {region: eu}
      stream_parameters:
        type: StreamParametersDefinition
        list_of_parameters_for_stream:
          - {name: books, collection: books, size: 100}
          - {name: authors, collection: authors, fields: [id, name]}
      components_mapping:
        - type: ComponentMappingDefinition
          field_path: [name]
          value: "{{ components_values['name'] }}"
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, $parameters, collection]
          value: "{{ components_values['collection'] }}"
          create_or_update: true
        - type: ComponentMappingDefinition
          field_path: [retriever, paginator, pagination_strategy, page_size]
          value: "{{ components_values.get('size', 25) }}"
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, request_parameters]
          value: "{'fields': '{{ components_values.get('fields', []) | join(',') }}', 'region': '{{ parameters.region }}', 'of': '{{ stream_template_config['retriever']['paginator']['pagination_strategy']['page_size'] }}'}"
          create_or_update: true
        - type: ComponentMappingDefinition
          field_path: [retriever, requester, request_headers]
          value: "{{ components_values.get('header', '') }}"
          create_or_update: true
`

// resolveParametrized makes the streams of src with the testing values config.
func resolveParametrized(t *testing.T, src string, config map[string]any) ([]*manifest.Stream, error) {
	t.Helper()
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	return Resolve(context.Background(), def, template.Globals{Config: config}, nil)
}

// describeStream is "name path page_size params headers" of a made stream.
func describeStream(t *testing.T, s *manifest.Stream, config map[string]any) string {
	t.Helper()
	vars := map[string]any{"config": config, "parameters": s.Requester.Parameters}
	path, err := s.Requester.Path.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	size, err := s.Paginator.Strategy.PageSize.Render(vars)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join([]string{s.Name, path, size, treeText(s.Requester.Params), treeText(s.Requester.Headers)}, " ")
}

// Each entry makes one stream, in the list's order, as the CDK's resolve_components yields
// them: the mappings see the entry as components_values, the resolver's $parameters as
// parameters, the template as stream_template_config and the testing values as config.
// A value is read as YAML ("100" is the number 100, the dict text a mapping); create_or_update
// makes a path the template lacks, unless the value is empty (the CDK's `if parsed_value and
// not updated`: "" reads as None, so no request_headers). The stream's own $parameters
// (collection: template) win over the requester's made by the mapping: use_parent_parameters
// is true by default, so the CDK's transformer lays the outer value over the inner.
func TestParametrizedComponents(t *testing.T) {
	config := map[string]any{"base_url": "https://api.example.com"}
	streams, err := resolveParametrized(t, parametrizedDef, config)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range streams {
		got = append(got, describeStream(t, s, config))
	}
	want := "books /template 100 fields=&region=eu&of=10 -\n" +
		"authors /template 25 fields=id,name&region=eu&of=10 -"
	if strings.Join(got, "\n") != want {
		t.Errorf("streams:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
	// use_parent_parameters: false lets the requester's own $parameters win.
	src := strings.Replace(parametrizedDef, "    name: catalog\n", "    name: catalog\n    use_parent_parameters: false\n", 1)
	if streams, err = resolveParametrized(t, src, config); err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, s := range streams {
		got = append(got, describeStream(t, s, config))
	}
	want = "books /books 100 fields=&region=eu&of=10 -\n" +
		"authors /authors 25 fields=id,name&region=eu&of=10 -"
	if strings.Join(got, "\n") != want {
		t.Errorf("use_parent_parameters false:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

// The CDK's ParametrizedComponentsResolver reads every text value as YAML, value_type or
// not (unlike the ConfigComponentsResolver, which keeps a string value_type's text): a name
// of digits becomes a number, and the CDK then fails with "Expected stream name 42 to be a
// string". A name made twice is refused, as the CDK refuses it ("Dynamic streams list
// contains a duplicate name").
func TestParametrizedComponentsErrors(t *testing.T) {
	src := strings.Replace(parametrizedDef, "          value: \"{{ components_values['name'] }}\"\n",
		"          value: \"{{ components_values['name'] }}\"\n          value_type: string\n", 1)
	src = strings.Replace(src, "{name: authors,", "{name: 42,", 1)
	_, err := resolveParametrized(t, src, map[string]any{"base_url": "https://x"})
	want := "dynamic stream catalog: component 2 (list_of_parameters_for_stream[1], line 30:13) makes an invalid stream:\n" +
		"def.yaml:34:18: error: the stream name must be a string, not a number (`42`)\n" +
		"  hint: the CDK reads the values of a ParametrizedComponentsResolver as YAML even with value_type: string; make the name text YAML keeps as text, such as `report_{{ components_values['id'] }}`"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	src = strings.Replace(parametrizedDef, "{name: authors,", "{name: books,", 1)
	_, err = resolveParametrized(t, src, map[string]any{"base_url": "https://x"})
	want = `dynamic stream catalog: the stream name "books" is used twice; two entries of list_of_parameters_for_stream make it, or a stream of the definition has it`
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}
