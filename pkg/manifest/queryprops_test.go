package manifest

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestQueryProperties(t *testing.T) {
	const head = `version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      record_selector: {extractor: {field_path: []}}
      requester:
        url_base: https://api.example.com
        path: /items
`
	qp := func(body string) string {
		return "        request_parameters:\n          sort: asc\n          fields:\n            type: QueryProperties\n" + body
	}
	tests := []struct {
		name, fields string
		want         *QueryProperties
		diags        []string
	}{
		{"list, chunking, default merge key", qp("            property_list: [a, b]\n            always_include_properties: [id]\n            property_chunking: {type: PropertyChunking, property_limit_type: characters, property_limit: 0}\n"),
			&QueryProperties{Key: "fields", List: []string{"a", "b"}, Always: []string{"id"},
				Chunking: &PropertyChunking{LimitType: LimitCharacters, MergeKey: []string{"id"}}}, nil},
		{"merge key as a string", qp("            property_list: [a]\n            property_chunking:\n              type: PropertyChunking\n              property_limit_type: property_count\n              property_limit: 2\n              record_merge_strategy: {type: GroupByKeyMergeStrategy, key: date}\n"),
			&QueryProperties{Key: "fields", List: []string{"a"},
				Chunking: &PropertyChunking{LimitType: LimitPropertyCount, Limit: 2, MergeKey: []string{"date"}}}, nil},
		{"requester query_properties", "        query_properties: {type: QueryProperties, property_list: [a]}\n",
			&QueryProperties{List: []string{"a"}}, nil},
		{"bad limit type", qp("            property_list: [a]\n            property_chunking: {type: PropertyChunking, property_limit_type: bytes}\n"),
			nil, []string{"16:78 type `property_limit_type` must be characters or property_count, not `bytes`"}},
		{"two of them", qp("            property_list: [a]\n          more: {type: QueryProperties, property_list: [b]}\n"),
			&QueryProperties{Key: "fields", List: []string{"a"}},
			[]string{"16:11 type request_parameters may hold only one QueryProperties, as in the CDK"}},
		{"missing property_list", qp("            always_include_properties: [id]\n"),
			nil, []string{"14:13 missing-field QueryProperties is missing the required field `property_list`"}},
	}
	for _, tt := range tests {
		src := head + tt.fields
		if !strings.Contains(tt.fields, "query_properties:") {
			src += "        request_headers: {}\n"
		}
		m, diags := Parse("def.yaml", []byte(src))
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Code, d.Message))
		}
		if strings.Join(got, "\n") != strings.Join(tt.diags, "\n") {
			t.Errorf("%s: diagnostics\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.diags, "\n"))
		}
		if m == nil || len(m.Streams) == 0 {
			continue
		}
		r := m.Streams[0].Requester
		if r.QueryProperties != nil {
			r.QueryProperties.Pos = Pos{}
		}
		if !reflect.DeepEqual(r.QueryProperties, tt.want) {
			t.Errorf("%s: %+v, want %+v", tt.name, r.QueryProperties, tt.want)
		}
		if tt.want != nil && tt.want.Key != "" {
			if r.Params == nil || len(r.Params.Entries) != 1 {
				t.Errorf("%s: request_parameters kept %+v, want only `sort`", tt.name, r.Params)
			}
		}
	}
}
