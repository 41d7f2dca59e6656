package run

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/slice"
)

// The retriever's features that change what a page is: QueryProperties (a request per
// property chunk, records merged by key), PropertiesFromEndpoint, the decoders of non-JSON
// bodies, a DynamicSchemaLoader's schema the records are normalized to, and pagination
// resets. Each is read against a local API and checked on the exact requests and records;
// the same cases run through the CLI in cmd/ (query_properties_test.go,
// properties_from_endpoint_test.go, e2e_decoders_test.go, dynschema_e2e_test.go,
// pagination_reset_test.go), checked there against the CDK.

// seqAPI answers each request line ("GET /path?decoded query") with the next of its
// answers, the last one repeated; a line it does not know gets a 404. It writes the lines
// down in order.
type seqAPI struct {
	*partAPI
	mu      sync.Mutex
	answers map[string][]partAnswer
}

func serveSeq(t *testing.T, answers map[string][]partAnswer) *seqAPI {
	t.Helper()
	a := &seqAPI{partAPI: &partAPI{}, answers: answers}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := r.Method + " " + r.URL.Path
		if q, err := url.QueryUnescape(r.URL.RawQuery); err == nil && q != "" {
			line += "?" + q
		}
		a.partAPI.mu.Lock()
		a.got = append(a.got, line)
		a.partAPI.mu.Unlock()
		a.mu.Lock()
		list := a.answers[line]
		var ans partAnswer
		switch len(list) {
		case 0:
			ans = partAnswer{Status: http.StatusNotFound, Body: `{"error":"no route"}`}
		case 1:
			ans = list[0]
		default:
			ans, a.answers[line] = list[0], list[1:]
		}
		a.mu.Unlock()
		if ans.Status != 0 {
			w.WriteHeader(ans.Status)
		}
		io.WriteString(w, ans.Body)
	}))
	t.Cleanup(a.Close)
	return a
}

func ok(body string) []partAnswer { return []partAnswer{{Body: body}} }

// QueryProperties with property_chunking: each page is one request per chunk (the always
// included properties in each), all with the page's token; the records are merged by the
// merge key, those without one first; the paginator counts the merged records.
func TestQueryPropertiesChunks(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: chunked
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: /chunked
        request_parameters:
          fields:
            type: QueryProperties
            property_list: [name, email, created_at]
            always_include_properties: [id]
            property_chunking:
              type: PropertyChunking
              property_limit_type: property_count
              property_limit: 2
              record_merge_strategy: {type: GroupByKeyMergeStrategy, key: id}
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1, inject_on_first_request: false}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
`)
	api := serveSeq(t, map[string][]partAnswer{
		"GET /chunked?fields=id,name,email":        ok(`{"data":[{"id":"1","name":"n1","email":"e1"},{"x":1},{"id":"2","name":"n2"}]}`),
		"GET /chunked?fields=id,created_at":        ok(`{"data":[{"id":"2","created_at":"c2"},{"id":"1","created_at":"c1"}]}`),
		"GET /chunked?fields=id,name,email&page=2": ok(`{"data":[{"id":"3","name":"n3"}]}`),
		"GET /chunked?fields=id,created_at&page=2": ok(`{"data":[{"id":"3","created_at":"c3"}]}`),
	})
	recs, res, _ := readWith(t, api.partAPI, def, "chunked", nil)
	checkLines(t, "requests", api.requests(), []string{
		"GET /chunked?fields=id,name,email", "GET /chunked?fields=id,created_at",
		"GET /chunked?fields=id,name,email&page=2", "GET /chunked?fields=id,created_at&page=2",
	})
	checkLines(t, "records", recs, []string{
		`{"x":1}`,
		`{"id":"1","name":"n1","email":"e1","created_at":"c1"}`,
		`{"id":"2","name":"n2","created_at":"c2"}`,
		`{"id":"3","name":"n3","created_at":"c3"}`,
	})
	checkResult(t, res, 1, 2, 4, "")
}

// A PropertiesFromEndpoint is read once, before the stream's first request; its records'
// values at property_field_path are the properties, read by templates as
// extra_fields.query_properties.
func TestPropertiesFromEndpoint(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: deals
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: /deals
        fetch_properties_from_endpoint:
          type: PropertiesFromEndpoint
          property_field_path: [name]
          retriever:
            type: SimpleRetriever
            requester: {$ref: "#/definitions/req", path: /properties}
            record_selector: {$ref: "#/definitions/sel"}
        request_parameters:
          props: "{{ stream_partition.extra_fields['query_properties'] | join('|') }}"
      record_selector: {$ref: "#/definitions/sel"}
      partition_router: {type: ListPartitionRouter, values: [eu, us], cursor_field: region, request_option: {type: RequestOption, inject_into: request_parameter, field_name: region}}
`)
	api := serveSeq(t, map[string][]partAnswer{
		"GET /properties": ok(`{"data":[{"name":"amount"},{"name":"stage"},{"name":5}]}`),
		"GET /deals?props=amount|stage|5&region=eu": ok(`{"data":[{"id":1}]}`),
		"GET /deals?props=amount|stage|5&region=us": ok(`{"data":[{"id":2}]}`),
	})
	recs, res, _ := readWith(t, api.partAPI, def, "deals", nil)
	checkLines(t, "requests", api.requests(), []string{"GET /properties", "GET /deals?props=amount|stage|5&region=eu", "GET /deals?props=amount|stage|5&region=us"})
	checkLines(t, "records", recs, []string{`{"id":1}`, `{"id":2}`})
	checkResult(t, res, 2, 2, 2, "")

	failing := serveSeq(t, map[string][]partAnswer{"GET /properties": {{Status: 400, Body: `{"error":"no"}`}}})
	_, res, _ = readWith(t, failing.partAPI, def, "deals", nil)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "PropertiesFromEndpoint: ") {
		t.Errorf("error %v, want the PropertiesFromEndpoint's failure", res.Err)
	}
}

// Records of a body that is not JSON: JSON lines (the field path applied to each line),
// CSV, and XML (the only one of them the CDK paginates), page after page.
func TestDecodedPages(t *testing.T) {
	const pages = `
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1, inject_on_first_request: false}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
`
	tests := []struct {
		name, decoder, path, paginator string
		answers                        map[string][]partAnswer
		want                           []string
		pages                          int
	}{{
		name:    "JSON lines",
		decoder: "{type: JsonlDecoder}",
		path:    "[data]",
		answers: map[string][]partAnswer{"GET /items": ok("{\"data\":{\"id\":1}}\n{\"data\":{\"id\":2}}\n")},
		want:    []string{`{"id":1}`, `{"id":2}`},
		pages:   1,
	}, {
		name:    "CSV",
		decoder: "{type: CsvDecoder}",
		path:    "[]",
		answers: map[string][]partAnswer{"GET /items": ok("id,name\r\n1,\"a, b\"\r\n2,c\r\n")},
		want:    []string{`{"id":"1","name":"a, b"}`, `{"id":"2","name":"c"}`},
		pages:   1,
	}, {
		name:      "XML, paginated",
		decoder:   "{type: XmlDecoder}",
		path:      "[root, item]",
		paginator: pages,
		answers: map[string][]partAnswer{
			"GET /items":        ok(`<root><item><id>1</id></item><item><id>2</id></item></root>`),
			"GET /items?page=2": ok(`<root><item><id>3</id></item></root>`),
		},
		want:  []string{`{"id":"1"}`, `{"id":"2"}`, `{"id":"3"}`},
		pages: 2,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      decoder: ` + tt.decoder + `
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: ` + tt.path + `}}
` + tt.paginator)
			api := serveSeq(t, tt.answers)
			recs, res, _ := readWith(t, api.partAPI, def, "items", nil)
			checkLines(t, "records", recs, tt.want)
			checkResult(t, res, 1, tt.pages, len(tt.want), "")
		})
	}
}

// A DynamicSchemaLoader with schema_normalization Default: its retriever is read first, up
// to its first record, and the stream's records are cast to the schema it gives.
func TestDynamicSchemaNormalization(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: rows
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /rows}
      record_selector: {type: RecordSelector, schema_normalization: Default, extractor: {type: DpathExtractor, field_path: [data]}}
    schema_loader:
      type: DynamicSchemaLoader
      retriever:
        type: SimpleRetriever
        requester: {$ref: "#/definitions/req", path: /fields}
        record_selector: {$ref: "#/definitions/sel"}
      schema_type_identifier:
        type: SchemaTypeIdentifier
        schema_pointer: [fields]
        key_pointer: [name]
        type_pointer: [type]
`)
	api := serveSeq(t, map[string][]partAnswer{
		"GET /fields": ok(`{"data":[{"fields":[{"name":"n","type":"integer"},{"name":"s","type":"string"}]},{"fields":[]}]}`),
		"GET /rows":   ok(`{"data":[{"n":"5","s":7,"other":true}]}`),
	})
	recs, res, _ := readWith(t, api.partAPI, def, "rows", nil)
	checkLines(t, "requests", api.requests(), []string{"GET /fields", "GET /rows"})
	checkLines(t, "records", recs, []string{`{"n":5,"s":"7","other":true}`})
	checkResult(t, res, 1, 1, 1, "")

	bad := serveSeq(t, map[string][]partAnswer{"GET /fields": ok(`{"data":[{"fields":[{"name":"n","type":"varchar"}]}]}`)})
	_, res, _ = readWith(t, bad.partAPI, def, "rows", nil)
	if res.Err == nil || !strings.HasSuffix(res.Err.Error(), "schema_loader: invalid Airbyte data type: varchar") {
		t.Errorf("error %v, want the schema's", res.Err)
	}
}

const resetBase = `
  - type: DeclarativeStream
    name: %s
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: /items
        error_handler:
          type: DefaultErrorHandler
          response_filters: [{type: HttpResponseFilter, action: RESET_PAGINATION, http_codes: [400]}]
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, field_name: page, inject_into: request_parameter}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1, inject_on_first_request: false}
`

// RESET_PAGINATION starts the slice again from its first page once; a second reset with
// the slice unchanged fails. SPLIT_USING_CURSOR starts it at the newest cursor value.
func TestPaginationReset(t *testing.T) {
	t.Run("reset once", func(t *testing.T) {
		api := serveSeq(t, map[string][]partAnswer{
			"GET /items":        ok(`{"data":[{"id":"a"},{"id":"b"}]}`),
			"GET /items?page=2": {{Status: 400, Body: `{"message":"too deep"}`}, {Body: `{"data":[{"id":"c"}]}`}},
		})
		recs, res, _ := readWith(t, api.partAPI, partitionsDef(strings.Replace(resetBase, "%s", "items", 1)), "items", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /items", "GET /items?page=2", "GET /items", "GET /items?page=2"})
		checkLines(t, "records", recs, []string{`{"id":"a"}`, `{"id":"b"}`, `{"id":"a"}`, `{"id":"b"}`, `{"id":"c"}`})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	})
	t.Run("reset twice fails", func(t *testing.T) {
		api := serveSeq(t, map[string][]partAnswer{
			"GET /items":        ok(`{"data":[{"id":"a"},{"id":"b"}]}`),
			"GET /items?page=2": {{Status: 400, Body: `{"message":"too deep"}`}},
		})
		_, res, _ := readWith(t, api.partAPI, partitionsDef(strings.Replace(resetBase, "%s", "items", 1)), "items", nil)
		want := "stream items, page 3: pagination reset (GET " + api.URL + "/items?page=2 answered 400 Bad Request, which the error handler answers with RESET_PAGINATION): the slice was started again unchanged once already, and may be only once"
		if res.Err == nil || res.Err.Error() != want {
			t.Errorf("error:\n  %v\nwant:\n  %s", res.Err, want)
		}
	})
	t.Run("split using the cursor", func(t *testing.T) {
		def := partitionsDef(strings.Replace(resetBase, "%s", "items", 1) + `      pagination_reset: {type: PaginationReset, action: SPLIT_USING_CURSOR}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-12-31"
      start_time_option: {type: RequestOption, field_name: since, inject_into: request_parameter}
`)
		api := serveSeq(t, map[string][]partAnswer{
			"GET /items?since=2024-01-01":        ok(`{"data":[{"id":1,"updated":"2024-02-01"},{"id":2,"updated":"2024-03-01"}]}`),
			"GET /items?page=2&since=2024-01-01": {{Status: 400, Body: `{}`}},
			"GET /items?since=2024-03-01":        ok(`{"data":[{"id":3,"updated":"2024-04-01"}]}`),
		})
		recs, res, cps := readWith(t, api.partAPI, def, "items", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /items?since=2024-01-01", "GET /items?page=2&since=2024-01-01", "GET /items?since=2024-03-01"})
		checkLines(t, "records", recs, []string{`{"id":1,"updated":"2024-02-01"}`, `{"id":2,"updated":"2024-03-01"}`, `{"id":3,"updated":"2024-04-01"}`})
		checkLines(t, "checkpoints", cps, []string{`slice {"updated":"2024-04-01"} (3 records)`, `final {"updated":"2024-04-01"}`})
		if res.Err != nil {
			t.Fatal(res.Err)
		}
	})
}

// A body the decoder cannot read fails the page with the request, the status, the decoder
// and the place in the body.
func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name, decoder, body, want string
	}{
		{"a JSON line that is not JSON", "{type: JsonlDecoder}", "{\"id\":1}\n{\"id\":\n", "with a body that JsonlDecoder cannot read: line 2: "},
		{"an XML document cut short", "{type: XmlDecoder}", "<root><item>", "with a body that XmlDecoder cannot read: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      decoder: ` + tt.decoder + `
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`)
			api := serveSeq(t, map[string][]partAnswer{"GET /items": ok(tt.body)})
			_, res, _ := readWith(t, api.partAPI, def, "items", nil)
			prefix := "stream items, page 1: GET " + api.URL + "/items answered 200 " + tt.want
			if res.Err == nil || !strings.HasPrefix(res.Err.Error(), prefix) {
				t.Errorf("error:\n  %v\nwant it to start with:\n  %s", res.Err, prefix)
			}
		})
	}
}

// Components reads an HttpComponentsResolver's retriever to its end, every record with the
// slice it came from, its pages reported as those of a parent of the dynamic streams.
func TestComponents(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: tables
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/bases/{{ stream_partition.base }}/tables"}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router: {type: ListPartitionRouter, values: [b1, b2], cursor_field: base}
`)
	api := servePartitions(t, map[string]any{
		"GET /bases/b1/tables": `{"data":[{"name":"t1"},{"name":"t2"}]}`,
		"GET /bases/b2/tables": `{"data":[{"name":"t3"}]}`,
	})
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	o, _ := offsetStream(t, api.URL)
	o.Config = map[string]any{"base_url": api.URL}
	log := &streamLog{}
	o.Observer = log
	var got []string
	res := Components(context.Background(), o, d.Streams[0], func(rec any, sl *slice.Slice) bool {
		text, _ := record.Marshal(rec)
		got = append(got, string(text)+" from "+sl.String())
		return true
	})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	checkLines(t, "records", got, []string{`{"name":"t1"} from {base: "b1"}`, `{"name":"t2"} from {base: "b1"}`, `{"name":"t3"} from {base: "b2"}`})
	checkLines(t, "log", log.lines, []string{"start tables (for dynamic_streams)", "page tables 1/1", "page tables 2/1", "end tables: 2 slices, 2 pages, 3 records"})
}

// With FailFast the first failing slice ends the stream: the slices after it are not read,
// whatever the number of workers.
func TestFailFast(t *testing.T) {
	api := partitionedAPI(t)
	streams := partitionedDefs(t, api.URL, []string{"1", "fail", "2", "3", "4", "6", "7", "8"})
	for _, workers := range []int{1, 4} {
		o, _ := offsetStream(t, api.URL)
		o.FailFast = true
		out, results := readOut(t, o, streams[:1], workers)
		if len(results) != 1 || results[0].Err == nil || results[0].FailedSlices != 1 {
			t.Fatalf("%d workers: results %+v, want one failed slice", workers, results)
		}
		var recs []string
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, "{") {
				recs = append(recs, line)
			}
		}
		// The failed slice's first page was written before its second failed.
		checkLines(t, fmt.Sprintf("%d workers: records", workers), recs, []string{
			`{"stream":"a","data":{"part":"1","i":0}}`, `{"stream":"a","data":{"part":"1","i":1}}`,
			`{"stream":"a","data":{"part":"fail","i":0}}`, `{"stream":"a","data":{"part":"fail","i":1}}`,
		})
		if results[0].Slices != 2 {
			t.Errorf("%d workers: %d slices, want 2", workers, results[0].Slices)
		}
	}
}
