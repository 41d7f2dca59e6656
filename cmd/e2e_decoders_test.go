package cmd

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// The bodies and records of these tests are those of a comparison with the Airbyte CDK 7.28.2
// (run-cdk on the same definition against a server answering the same bytes): the records
// are what the CDK emits, except that JSON lines keep the API's own text (a
// record without transformations is written as received; the CDK re-encodes "\u00e9" as "é").

const e2eJSONLBody = "{\"id\":1,\"name\":\"Zoë\",\"tags\":[\"a\",\"b\"],\"nested\":{\"x\":null,\"y\":true}}\n" +
	"\n" +
	"  {\"id\":2,\"name\":\"line\\nbreak \\u00e9 \\\"q\\\"\",\"empty\":{}}\r\n" +
	"[{\"id\":3},{\"id\":4}]\n" +
	"{\"id\":5,\"html\":\"<a href=\\\"x\\\">&amp;</a>\",\"slash\":\"a/b\"}"

const e2eJSONLRecords = `{"id":1,"name":"Zoë","tags":["a","b"],"nested":{"x":null,"y":true}}
{"id":2,"name":"line\nbreak \u00e9 \"q\"","empty":{}}
{"id":3}
{"id":4}
{"id":5,"html":"<a href=\"x\">&amp;</a>","slash":"a/b"}
`

const e2eCSVBody = "id,name,note,amount\r\n" +
	"1,Alice,\"has, comma\",10.5\r\n" +
	"2,Bob,\"say \"\"hi\"\"\",\r\n" +
	"\r\n" +
	"3,Zoë,\"multi\r\nline\",7\r\n" +
	"4,short\r\n" +
	"5,long,x,1,extra1,extra2\r\n" +
	"6, spaced ,a\"b,\"ab\"c\r\n" +
	"7,,,\n" +
	"8,last,\"unterminated"

const e2eCSVRecords = `{"id":"1","name":"Alice","note":"has, comma","amount":"10.5"}
{"id":"2","name":"Bob","note":"say \"hi\"","amount":""}
{"id":"3","name":"Zoë","note":"multi\nline","amount":"7"}
{"id":"4","name":"short","note":null,"amount":null}
{"id":"5","name":"long","note":"x","amount":"1","null":["extra1","extra2"]}
{"id":"6","name":" spaced ","note":"a\"b","amount":"abc"}
{"id":"7","name":"","note":"","amount":""}
{"id":"8","name":"last","note":"unterminated","amount":null}
`

const e2eXMLBody = `<?xml version="1.0" encoding="UTF-8"?>
<root xmlns:ns="http://example.com/ns" version="2">
  <item id="1" category="books">
    <name>Book Title 1</name>
    <price>10.99</price>
  </item>
  <item id="2" category="electronics">
    <name>Gadget &amp; Co</name>
    <price>299.99</price>
    <description><![CDATA[A <useful> gadget]]></description>
  </item>
  <ns:tagged ns:attr="v">t</ns:tagged>
</root>`

func e2eGzip(s string) string {
	var b bytes.Buffer
	w := gzip.NewWriter(&b)
	w.Write([]byte(s))
	w.Close()
	return b.String()
}

func e2eZip(files ...string) string {
	var b bytes.Buffer
	w := zip.NewWriter(&b)
	for i := 0; i+1 < len(files); i += 2 {
		f, _ := w.Create(files[i])
		f.Write([]byte(files[i+1]))
	}
	w.Close()
	return b.String()
}

// e2eServe answers body with the headers given as "Name: value" pairs.
func e2eServe(body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for _, h := range headers {
			k, v, _ := strings.Cut(h, ": ")
			w.Header().Set(k, v)
		}
		w.Write([]byte(body))
	}
}

// e2eDecoderStream is a definition whose stream items reads /items with the given decoder
// and field path.
func e2eDecoderStream(decoder, fieldPath string) string {
	return e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n",
		"extractor: {type: DpathExtractor, field_path: "+fieldPath+"}") +
		"      decoder:\n" + e2eIndent(decoder, 8)
}

// TestE2EDecoders reads a body of each decoder and checks the exact request and records.
func TestE2EDecoders(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		decoder   string
		fieldPath string
		handler   http.HandlerFunc
		want      string
	}{
		{"JsonlDecoder", "type: JsonlDecoder", "[]", e2eServe(e2eJSONLBody, "Content-Type: application/jsonl"), e2eJSONLRecords},
		{"JsonlDecoder applies the field path to each line", "type: JsonlDecoder", "[data]",
			e2eServe("{\"data\":[{\"id\":1},{\"id\":2}],\"meta\":1}\n{\"data\":[{\"id\":3}]}\n{\"other\":1}\n{\"data\":{\"id\":4}}\n"),
			"{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n"},
		{"CsvDecoder", "type: CsvDecoder", "[]", e2eServe(e2eCSVBody, "Content-Type: text/csv"), e2eCSVRecords},
		{"CsvDecoder with delimiter, encoding and set_values_to_none",
			"{type: CsvDecoder, delimiter: \"\\\\t\", encoding: latin-1, set_values_to_none: [\"NA\"]}", "[]",
			e2eServe("col\tval\xe9\n\xff\tNA\n"), "{\"col\":\"ÿ\",\"valé\":null}\n"},
		{"XmlDecoder", "type: XmlDecoder", "[root, item]", e2eServe(e2eXMLBody, "Content-Type: application/xml"),
			`{"@id":"1","@category":"books","name":"Book Title 1","price":"10.99"}
{"@id":"2","@category":"electronics","name":"Gadget & Co","price":"299.99","description":"A <useful> gadget"}
`},
		{"XmlDecoder, the whole document", "type: XmlDecoder", "[]", e2eServe("<a x=\"1\"><b>2</b><b/><c>  </c></a>"),
			"{\"a\":{\"@x\":\"1\",\"b\":[\"2\",null],\"c\":null}}\n"},
		{"IterableDecoder", "type: IterableDecoder", "[]", e2eServe("first line\n\nthird \xc3\xa9\r\nfourth\rfifth\n", "Content-Type: text/plain"),
			"{\"record\":\"first line\"}\n{\"record\":\"\"}\n{\"record\":\"third é\"}\n{\"record\":\"fourth\"}\n{\"record\":\"fifth\"}\n"},
		{"GzipDecoder of CSV", "{type: GzipDecoder, decoder: {type: CsvDecoder}}", "[]",
			e2eServe(e2eGzip(e2eCSVBody), "Content-Type: application/gzip"), e2eCSVRecords},
		{"GzipDecoder of JSON lines sent with Content-Encoding: gzip", "{type: GzipDecoder, decoder: {type: JsonlDecoder}}", "[]",
			e2eServe(e2eGzip(e2eJSONLBody), "Content-Encoding: gzip", "Content-Type: application/jsonl"), e2eJSONLRecords},
		{"GzipDecoder of JSON lines not compressed", "{type: GzipDecoder, decoder: {type: JsonlDecoder}}", "[]",
			e2eServe(e2eJSONLBody), e2eJSONLRecords},
		{"GzipDecoder of JSON", "{type: GzipDecoder, decoder: {type: JsonDecoder}}", "[]",
			e2eServe(e2eGzip(`[{"id":1},{"id":2,"v":[1,2]}]`)), "{\"id\":1}\n{\"id\":2,\"v\":[1,2]}\n"},
		{"ZipfileDecoder of JSON lines", "{type: ZipfileDecoder, decoder: {type: JsonlDecoder}}", "[]",
			e2eServe(e2eZip("b.jsonl", "{\"f\":\"b\",\"n\":1}\n{\"f\":\"b\",\"n\":2}\n", "a.jsonl", "{\"f\":\"a\",\"n\":3}\n"), "Content-Type: application/zip"),
			"{\"f\":\"b\",\"n\":1}\n{\"f\":\"b\",\"n\":2}\n{\"f\":\"a\",\"n\":3}\n"},
		{"JsonItemsDecoder: each element of the array at items_path, the field path applied to each",
			"{type: JsonItemsDecoder, items_path: data.users}", "[profile]",
			e2eServe(`{"meta":{"count":2},"data":{"users":[{"profile":{"id":1,"n":1.50}},{"profile":[{"id":2},{"id":3}]},{"other":1}]}}`),
			"{\"id\":1,\"n\":1.50}\n{\"id\":2}\n{\"id\":3}\n"},
		{"ZipfileDecoder of gzip CSV", "{type: ZipfileDecoder, decoder: {type: GzipDecoder, decoder: {type: CsvDecoder}}}", "[]",
			e2eServe(e2eZip("g.csv.gz", e2eGzip("x,y\n7,8\n"))), "{\"x\":\"7\",\"y\":\"8\"}\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, tt.handler)
			res := e2eRead(t, api, e2eDecoderStream(tt.decoder, tt.fieldPath), "")
			e2eCheckResult(t, api, res, 0, tt.want, "")
			e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/items"})
		})
	}
}

// TestE2EDecoderFailures checks that a body a decoder cannot read, or one that expands
// beyond --max-body, fails naming the stream, the page and what is wrong.
func TestE2EDecoderFailures(t *testing.T) {
	t.Parallel()
	line := "{\"a\":\"" + strings.Repeat("0", 4<<20) + "\"}\n" // a 4 MiB line
	bomb := e2eGzip(line)                                      // in some 4 KiB
	tests := []struct {
		name    string
		decoder string
		handler http.HandlerFunc
		args    []string
		stdout  string
		stderr  string
	}{
		{"a line that is not JSON", "type: JsonlDecoder", e2eServe("{\"id\":1}\n{\"id\":2\n{\"id\":3}\n"), nil, "",
			"error: stream items, page 1: GET http://API/items answered 200 with a body that JsonlDecoder cannot read: line 2: invalid JSON at byte 7: unexpected end of body inside an object (0 records written before the failure)\n"},
		{"a line that is not a record", "type: JsonlDecoder", e2eServe("{\"id\":1}\n\"text\"\n"), nil, "",
			"error: stream items, page 1: GET http://API/items answered 200 with a body that JsonlDecoder cannot read: line 2: the field path ends at a string (byte 0), not at an object or a list of objects (0 records written before the failure)\n"},
		{"XML that is not XML", "type: XmlDecoder", e2eServe("<html><body>Please log in<br></body></html>"), nil, "",
			"error: stream items, page 1: GET http://API/items answered 200 with a body that XmlDecoder cannot read: the body is not XML: unexpected </body> at byte 29 (0 records written before the failure)\n"},
		{"a gzip bomb", "{type: GzipDecoder, decoder: {type: JsonlDecoder}}", e2eServe(bomb), []string{"--max-body", "1MiB"}, "",
			"error: stream items, page 1: GET http://API/items answered 200, but the gzip content expands to more than 1 MiB, the body limit (--max-body raises it) (0 records written before the failure)\n"},
		{"a zip bomb", "{type: ZipfileDecoder, decoder: {type: JsonlDecoder}}", e2eServe(e2eZip("a.jsonl", line)), []string{"--max-body", "1MiB"}, "",
			"error: stream items, page 1: GET http://API/items answered 200, but the content of the zip expands to more than 1 MiB, the body limit (--max-body raises it) (0 records written before the failure)\n"},
		{"not a zip", "{type: ZipfileDecoder, decoder: {type: JsonlDecoder}}", e2eServe("{\"id\":1}"), nil, "",
			"error: stream items, page 1: GET http://API/items answered 200 with a body that ZipfileDecoder cannot read: the body is not a zip file (zip: not a valid zip file) (0 records written before the failure)\n"},
		{"CSV that is not the encoding", "type: CsvDecoder", e2eServe("a\n\xff\n"), nil, "",
			"error: stream items, page 1: GET http://API/items answered 200 with a body that CsvDecoder cannot read: line 2: the text is not utf-8 (byte 2 cannot be decoded) (0 records written before the failure)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, tt.handler)
			res := e2eRead(t, api, e2eDecoderStream(tt.decoder, "[]"), "", tt.args...)
			e2eCheckResult(t, api, res, 1, tt.stdout, tt.stderr)
		})
	}
}

// TestE2EDecoderLimits checks --max-records across the batches of a large decoded page, and
// the records-per-page limit.
func TestE2EDecoderLimits(t *testing.T) {
	t.Parallel()
	var body strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&body, "{\"id\":%d}\n", i)
	}
	api := newRecorder(t, e2eServe(body.String()))
	def := e2eDecoderStream("type: JsonlDecoder", "[]")
	res := e2eRead(t, api, def, "", "--max-records", "1500")
	if n := strings.Count(res.Stdout, "\n"); n != 1500 || !strings.HasSuffix(res.Stdout, "{\"id\":1500}\n") || res.Code != 0 {
		t.Errorf("exit %d, %d records ending %q", res.Code, n, res.Stdout[max(0, len(res.Stdout)-30):])
	}
	if res.Stderr != "items: stopped early by --max-records 1500 after 1500 records and 1 page\n" {
		t.Errorf("stderr %q", res.Stderr)
	}
	res = e2eRead(t, api, def, "", "--max-records", "2500")
	if n := strings.Count(res.Stdout, "\n"); n != 2500 || res.Stderr != "" || res.Code != 0 {
		t.Errorf("--max-records 2500: exit %d, %d records, stderr %q", res.Code, n, res.Stderr)
	}
	// --max-body 64KiB allows 512 records a page.
	res = e2eRead(t, api, def, "", "--max-body", "64KiB")
	if want := "error: stream items, page 1: GET " + api.URL + "/items answered 200 with more than 512 records on one page, a limit of one record per 128 bytes of --max-body (--max-body raises the limit) (0 records written before the failure)\n"; res.Stderr != want || res.Code != 1 {
		t.Errorf("exit %d, stderr %q\nwant %q", res.Code, res.Stderr, want)
	}
}

// TestE2EDecoderPagination checks what pagination templates read as `response` for a
// decoder, as the CDK gives it: the XML document for XmlDecoder, an empty mapping for a
// streamed GzipDecoder of JSON; and that the decoders the CDK cannot paginate are refused.
func TestE2EDecoderPagination(t *testing.T) {
	t.Parallel()
	t.Run("XmlDecoder: response is the document", func(t *testing.T) {
		t.Parallel()
		api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("cursor") == "" {
				w.Write([]byte(`<page><item><id>1</id></item><item><id>2</id></item><next>c2</next></page>`))
				return
			}
			w.Write([]byte(`<page><item><id>3</id></item><next/></page>`))
		})
		def := e2eDecoderStream("type: XmlDecoder", "[page, item]") + e2eIndent(`
paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ response.page.next }}"
    stop_condition: "{{ not response.page.next }}"
`, 6)
		res := e2eRead(t, api, def, "")
		e2eCheckResult(t, api, res, 0, "{\"id\":\"1\"}\n{\"id\":\"2\"}\n{\"id\":\"3\"}\n", "")
		e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/items"}, e2eRequest{Method: "GET", URL: "/items?cursor=c2"})
	})
	t.Run("GzipDecoder of JSON: response is {}", func(t *testing.T) {
		t.Parallel()
		api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-Next", map[string]string{"": "p2", "p2": ""}[r.URL.Query().Get("cursor")])
			w.Write([]byte(e2eGzip(`{"data":[{"id":1}],"next":"never-read"}`)))
		})
		def := e2eDecoderStream("{type: GzipDecoder, decoder: {type: JsonDecoder}}", "[data]") + e2eIndent(`
paginator:
  type: DefaultPaginator
  page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
  pagination_strategy:
    type: CursorPagination
    cursor_value: "{{ headers['X-Next'] if response == {} else response.next }}"
`, 6)
		res := e2eRead(t, api, def, "")
		e2eCheckResult(t, api, res, 0, "{\"id\":1}\n{\"id\":1}\n", "")
		e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/items"}, e2eRequest{Method: "GET", URL: "/items?cursor=p2"})
	})
	t.Run("JsonlDecoder with a paginator is refused", func(t *testing.T) {
		t.Parallel()
		def := e2eDecoderStream("type: JsonlDecoder", "[]") + e2eIndent(`
paginator:
  type: DefaultPaginator
  pagination_strategy: {type: OffsetIncrement, page_size: 10}
`, 6)
		res := runCLI(t, "", "validate", writeFile(t, "def.yaml", def))
		want := "def.yaml:14:9: error: a paginator cannot read the responses of JsonlDecoder: the Airbyte CDK paginates only JsonDecoder, XmlDecoder and a GzipDecoder of JsonDecoder responses\n  hint: remove the paginator (NoPagination) or use one of those decoders\n"
		if res.Code != 3 || !strings.Contains(res.Stderr+res.Stdout, want) {
			t.Errorf("exit %d\nstdout %s\nstderr %s\nwant %s", res.Code, res.Stdout, res.Stderr, want)
		}
	})
}

// TestE2EDecoderTransformations checks that decoded records go through the stream's
// transformations like JSON ones (alpaca-broker-api: IterableDecoder with AddFields).
func TestE2EDecoderTransformations(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eServe("a,b\n1,2\n3,4\n"))
	def := e2eDecoderStream("type: CsvDecoder", "[]") + e2eIndent(`
transformations:
  - type: AddFields
    fields: [{path: [sum], value: "{{ record['a'] ~ '+' ~ record['b'] }}"}]
  - type: RemoveFields
    field_pointers: [[a]]
`, 4)
	res := e2eRead(t, api, def, "")
	e2eCheckResult(t, api, res, 0, "{\"b\":\"2\",\"sum\":\"1+2\"}\n{\"b\":\"4\",\"sum\":\"3+4\"}\n", "")
}
