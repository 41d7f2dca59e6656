package manifest

import (
	"strings"
	"testing"
)

// JsonItemsDecoder: items_path is required and not empty (the CDK's JsonItemsParser raises
// on an empty one), its encoding one this tool reads, and, as for every streamed decoder, no
// paginator reads its responses (the CDK refuses it when it builds the stream).
func TestJsonItemsDecoder(t *testing.T) {
	stream := func(decoder, paginator string) string {
		return `version: 6.5.0
streams:
  - name: s
    retriever:
      requester: {url_base: "https://x.test", path: /items}
      record_selector: {extractor: {field_path: []}}
      decoder: ` + decoder + paginator + "\n"
	}
	for _, tt := range []struct{ src, want string }{
		{stream("{type: JsonItemsDecoder, items_path: data.users}", ""), ""},
		{stream("{type: JsonItemsDecoder, items_path: data, encoding: latin-1}", ""), ""},
		{stream("{type: GzipDecoder, decoder: {type: JsonItemsDecoder, items_path: d}}", ""), ""},
		{stream("{type: JsonItemsDecoder}", ""), "error missing-field: JsonItemsDecoder is missing the required field `items_path`"},
		{stream(`{type: JsonItemsDecoder, items_path: ""}`, ""), "error missing-field: JsonItemsDecoder is missing the required field `items_path`"},
		{stream(`{type: JsonItemsDecoder, items_path: "  "}`, ""), "error type: `items_path` must name the array whose elements are the records, e.g. data.users (the Airbyte CDK refuses an empty one)"},
		{stream("{type: JsonItemsDecoder, items_path: d, encoding: ebcdic}", ""), `error unsupported-component: the encoding "ebcdic" is not supported yet`},
		{stream("{type: JsonItemsDecoder, items_path: d}", "\n      paginator: {type: DefaultPaginator, pagination_strategy: {type: PageIncrement, page_size: 2}, page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: p}}"),
			"error type: a paginator cannot read the responses of JsonItemsDecoder: the Airbyte CDK paginates only JsonDecoder, XmlDecoder and a GzipDecoder of JsonDecoder responses"},
	} {
		_, diags := Parse("d.yaml", []byte(tt.src))
		var got []string
		for _, d := range diags {
			got = append(got, string(d.Severity)+" "+d.Code+": "+d.Message)
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("%s\ngot  %q\nwant %q", tt.src, got, tt.want)
		}
	}
}
