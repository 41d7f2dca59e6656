package run

import (
	"bytes"
	"compress/gzip"
	"strings"
	"testing"
)

// gzipped is text compressed with gzip.
func gzipped(text string) string {
	var b bytes.Buffer
	z := gzip.NewWriter(&b)
	z.Write([]byte(text))
	z.Close()
	return b.String()
}

// What a paginator of a decoded stream reads as `response`: an XmlDecoder's document, its
// first value (so a cursor can come from it); a streamed decoder's, an empty mapping, as
// the CDK's decoders yield it, so a cursor read from it ends the stream after one page.
func TestDecodedResponseForPagination(t *testing.T) {
	const cursor = `
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: after}
        pagination_strategy:
          type: CursorPagination
          cursor_value: "{{ response.get('root', {}).get('next', '') }}"
          stop_condition: "{{ not response.get('root', {}).get('next') }}"
`
	tests := []struct {
		name, decoder, path string
		routes              map[string]any
		want, requests      []string
		err                 string
	}{{
		name:    "XML: the cursor from the document",
		decoder: "{type: XmlDecoder}",
		path:    "[root, item]",
		routes: map[string]any{
			"GET /items":          `<root><next>p2</next><item><id>1</id></item><item><id>2</id></item></root>`,
			"GET /items?after=p2": `<root><item><id>3</id></item></root>`,
		},
		want:     []string{`{"id":"1"}`, `{"id":"2"}`, `{"id":"3"}`},
		requests: []string{"GET /items", "GET /items?after=p2"},
	}, {
		name:     "a GzipDecoder of JSON: an empty mapping, one page",
		decoder:  "{type: GzipDecoder, decoder: {type: JsonDecoder}}",
		path:     "[data]",
		routes:   map[string]any{"GET /items": gzipped(`{"root":{"next":"p2"},"data":[{"id":1},{"id":2}]}`)},
		want:     []string{`{"id":1}`, `{"id":2}`},
		requests: []string{"GET /items"},
	}, {
		name:     "a ResponseToFileExtractor: an empty mapping, one page",
		decoder:  "{type: JsonDecoder}",
		path:     "",
		routes:   map[string]any{"GET /items": "id,root\n1,x\n"},
		want:     []string{`{"id":"1","root":"x"}`},
		requests: []string{"GET /items"},
	}, {
		name:     "XML that is not well formed fails the page",
		decoder:  "{type: XmlDecoder}",
		path:     "[root, item]",
		routes:   map[string]any{"GET /items": `<root><item><id>1</id></item>`},
		requests: []string{"GET /items"},
		err:      "stream items, page 1: GET {base}/items answered 200 with a body that XmlDecoder cannot read: the body is not XML: <root> is not closed",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			extractor := "{type: DpathExtractor, field_path: " + tt.path + "}"
			if tt.path == "" {
				extractor = "{type: ResponseToFileExtractor}"
			}
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      decoder: ` + tt.decoder + `
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {type: RecordSelector, extractor: ` + extractor + `}
` + cursor)
			api := servePartitions(t, tt.routes)
			recs, res, _ := readWith(t, api, def, "items", nil)
			checkLines(t, "records", recs, tt.want)
			checkLines(t, "requests", api.requests(), tt.requests)
			pages := len(tt.requests)
			if tt.err != "" {
				pages = 0
			}
			checkResult(t, res, 1, pages, len(tt.want), strings.ReplaceAll(tt.err, "{base}", api.URL))
		})
	}
}
