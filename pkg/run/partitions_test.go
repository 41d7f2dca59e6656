package run

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// The partition routers end to end: a definition read against a local API, the exact
// requests it sent and the exact records it emitted. Tests that say "checked against the
// CDK" were run on the same definition and answers with the Airbyte Python CDK 7.28.2
// (source-declarative-manifest, concurrency 1, the child stream alone in the catalog): the
// CDK sent the same requests and emitted the same records, except where the comment says
// otherwise. The CDK reads a parent in a thread of its own, ahead of the child's requests,
// so only the order of each stream's own requests is comparable; connector reads a parent
// page only when the child needs its partitions.

// partAPI is a local API that writes down every request as one line: "METHOD /path?query",
// then the headers it watches (" X-Kind: a"), then the body (" body {…}"); and answers from a
// table keyed by that line. A request the table does not know gets a 404.
type partAPI struct {
	*httptest.Server
	mu    sync.Mutex
	got   []string
	watch []string
	// decode writes the query decoded (url.QueryUnescape), for queries holding Python
	// reprs of slices.
	decode bool
}

// partAnswer is the answer to one request: a JSON body with status 200, or Status.
type partAnswer struct {
	Status int
	Body   string
}

// servePartitions starts an API answering routes: a request's line (the query exactly as
// sent) → its body, or → a partAnswer. "{base}" in a body is the API's URL.
func servePartitions(t *testing.T, routes map[string]any, watch ...string) *partAPI {
	t.Helper()
	return servePartitionsAPI(t, &partAPI{watch: watch}, routes)
}

func servePartitionsAPI(t *testing.T, a *partAPI, routes map[string]any) *partAPI {
	t.Helper()
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		line := r.Method + " " + r.URL.RequestURI()
		if q, err := url.QueryUnescape(r.URL.RawQuery); a.decode && err == nil && q != "" {
			line = r.Method + " " + r.URL.Path + "?" + q
		}
		for _, h := range a.watch {
			if v, ok := r.Header[http.CanonicalHeaderKey(h)]; ok {
				line += " " + h + ": " + strings.Join(v, ",")
			}
		}
		if len(body) > 0 {
			line += " body " + string(body)
		}
		a.mu.Lock()
		a.got = append(a.got, line)
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		base := "http://" + r.Host
		switch ans := routes[line].(type) {
		case string:
			io.WriteString(w, strings.ReplaceAll(ans, "{base}", base))
		case partAnswer:
			w.WriteHeader(ans.Status)
			io.WriteString(w, strings.ReplaceAll(ans.Body, "{base}", base))
		default:
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"no route"}`)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *partAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// partitionsDef is a definition with the shared components (a requester at the testing
// value base_url, a selector of the list under "data", a cursor paginator reading
// response.next into the query parameter cursor, and the plain streams parents and others,
// at /parents and /others) and the streams given, written at column 2.
func partitionsDef(streams string) string {
	return `version: 6.44.0
type: DeclarativeSource
definitions:
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  req: {type: HttpRequester, url_base: "{{ config['base_url'] }}", http_method: GET}
  cursor:
    type: DefaultPaginator
    page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
    pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  parents:
    type: DeclarativeStream
    name: parents
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /parents}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
  others:
    type: DeclarativeStream
    name: others
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /others}
      record_selector: {$ref: "#/definitions/sel"}
streams:
` + streams + `
spec:
  type: Spec
  connection_specification: {type: object, properties: {}}
`
}

// partitionsRead loads def, reads its stream named stream against api with the testing
// values config (base_url added), and returns the records emitted, one JSON text each, and
// the outcome.
func partitionsRead(t *testing.T, api *partAPI, def, stream string, config map[string]any) ([]string, Result, *streamLog) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "def.yaml")
	if err := os.WriteFile(path, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	d, diags := manifest.Load(path)
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	s := d.Stream(stream)
	if s == nil {
		t.Fatalf("no stream %s", stream)
	}
	cfg := map[string]any{"base_url": api.URL}
	for k, v := range config {
		cfg[k] = v
	}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{}}
	a, err := auth.New(d.Authenticator, auth.Env{Globals: template.Globals{Config: cfg}, Client: client, Redactor: client.Redactor, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	out, log := &emitter{}, &streamLog{}
	o := &Options{Config: cfg, Auth: a, Client: client, Overlap: true, Out: out, Observer: log}
	res := Stream(context.Background(), o, s)
	return out.lines, res, log
}

// streamLog writes down the streams read and their pages: "start parents (for tasks)",
// "page parents 1/2" (slice 1, page 2; slice 0 without partitions), "end parents: 1 slice, 2
// pages, 3 records".
type streamLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *streamLog) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, s)
}

func (l *streamLog) StreamStart(s StreamStart) {
	if s.ParentOf != "" {
		l.add(fmt.Sprintf("start %s (for %s)", s.Stream, s.ParentOf))
		return
	}
	l.add("start " + s.Stream)
}

func (l *streamLog) Page(ev PageEvent) {
	n := 0
	if ev.Slice != nil && !ev.Slice.Empty() {
		n = ev.Slice.Number
	}
	lazy := ""
	if ev.Lazy {
		lazy = " (from the parent record)"
	}
	l.add(fmt.Sprintf("page %s %d/%d%s", ev.Stream, n, ev.Number, lazy))
}

func (l *streamLog) StreamEnd(res Result) {
	skipped := ""
	for _, s := range res.Skipped {
		skipped += fmt.Sprintf(", %d records of %s without %s", s.Records, s.Parent, s.ParentKey)
	}
	l.add(fmt.Sprintf("end %s: %d slices, %d pages, %d records%s", res.Stream, res.Slices, res.Pages, res.Records, skipped))
}

// checkLines compares two lists of lines, showing both whole when they differ.
func checkLines(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func checkResult(t *testing.T, res Result, slices, pages, records int, err string) {
	t.Helper()
	gotErr := ""
	if res.Err != nil {
		gotErr = res.Err.Error()
	}
	if gotErr != err {
		t.Errorf("error:\n  %s\nwant:\n  %s", gotErr, err)
	}
	if res.Slices != slices || res.Pages != pages || res.Records != records {
		t.Errorf("%d slices, %d pages, %d records; want %d, %d, %d", res.Slices, res.Pages, res.Records, slices, pages, records)
	}
}

// A ListPartitionRouter puts each value where its request_option says, on every page of the
// slice; a value that is empty is not sent (the CDK sends only truthy values: "0" is sent).
// Pagination starts again in each slice. Checked against the CDK.
func TestListRouterRequestOption(t *testing.T) {
	tests := []struct {
		name, method, option string
		want                 []string
	}{
		{"query", "GET", `{type: RequestOption, inject_into: request_parameter, field_name: kind}`, []string{
			"GET /items?kind=a", "GET /items?cursor=c2&kind=a", "GET /items", "GET /items?kind=0",
		}},
		{"header", "GET", `{type: RequestOption, inject_into: header, field_name: X-Kind}`, []string{
			"GET /items X-Kind: a", "GET /items?cursor=c2 X-Kind: a", "GET /items", "GET /items X-Kind: 0",
		}},
		{"json body", "POST", `{type: RequestOption, inject_into: body_json, field_path: [filter, kind]}`, []string{
			`POST /items body {"static":1,"filter":{"kind":"a"}}`, `POST /items?cursor=c2 body {"static":1,"filter":{"kind":"a"}}`,
			`POST /items body {"static":1}`, `POST /items body {"static":1,"filter":{"kind":"0"}}`,
		}},
		{"form body", "POST", `{type: RequestOption, inject_into: body_data, field_name: kind}`, []string{
			"POST /items body kind=a", "POST /items?cursor=c2 body kind=a", "POST /items", "POST /items body kind=0",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := ""
			if tt.option[strings.Index(tt.option, "inject_into: ")+13:][:9] == "body_json" {
				body = "\n        request_body_json: {static: 1}"
			}
			def := partitionsDef(fmt.Sprintf(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: /items
        http_method: %s%s
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
        type: ListPartitionRouter
        values: ["a", "", "0"]
        cursor_field: kind
        request_option: %s
`, tt.method, body, tt.option))
			answers := []string{`{"data":[{"id":1},{"id":2}],"next":"c2"}`, `{"data":[{"id":3}]}`, `{"data":[{"id":4}]}`, `{"data":[{"id":5}]}`}
			routes := map[string]any{}
			for i, line := range tt.want {
				routes[line] = answers[i]
			}
			api := servePartitions(t, routes, "X-Kind")
			recs, res, _ := partitionsRead(t, api, def, "items", nil)
			checkLines(t, "requests", api.requests(), tt.want)
			checkLines(t, "records", recs, []string{`{"id":1}`, `{"id":2}`, `{"id":3}`, `{"id":4}`, `{"id":5}`})
			checkResult(t, res, 3, 4, 5, "")
		})
	}
}

// Without a request_option the partition reaches the request through templates:
// stream_partition and stream_slice in the path and the parameters, the values a template
// over the testing values (a list, or a text that spells one), the cursor_field from
// $parameters. Checked against the CDK.
func TestListRouterValuesAndTemplates(t *testing.T) {
	for _, tt := range []struct{ name, values string }{
		{"a list in the testing values", `"{{ config['kinds'] }}"`},
		{"a text split by the template", `"{{ config['kinds_text'].split(',') }}"`},
		{"a list written in the definition", `["x", "y"]`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: "/items/{{ stream_partition.kind }}"
        request_parameters:
          k: "{{ stream_slice['kind'] }}"
          p: "{{ stream_slice.partition }}"
          s: "{{ stream_slice }}"
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: ListPartitionRouter
        values: ` + tt.values + `
        cursor_field: "{{ parameters['field'] }}"
        $parameters: {field: kind}
`)
			api := servePartitions(t, map[string]any{
				"GET /items/x?k=x&p=%7B%27kind%27%3A+%27x%27%7D&s=%7B%27kind%27%3A+%27x%27%7D": `{"data":[{"id":1}]}`,
				"GET /items/y?k=y&p=%7B%27kind%27%3A+%27y%27%7D&s=%7B%27kind%27%3A+%27y%27%7D": `{"data":[{"id":2}]}`,
			})
			recs, res, _ := partitionsRead(t, api, def, "items", map[string]any{"kinds": []any{"x", "y"}, "kinds_text": "x,y"})
			checkLines(t, "requests", api.requests(), []string{
				"GET /items/x?k=x&p=%7B%27kind%27%3A+%27x%27%7D&s=%7B%27kind%27%3A+%27x%27%7D",
				"GET /items/y?k=y&p=%7B%27kind%27%3A+%27y%27%7D&s=%7B%27kind%27%3A+%27y%27%7D",
			})
			checkLines(t, "records", recs, []string{`{"id":1}`, `{"id":2}`})
			checkResult(t, res, 2, 2, 2, "")
		})
	}
}

// A stream with no partition: no request, no record, no error.
// (values: [] is valid for the CDK, checked: no request.)
func TestZeroPartitions(t *testing.T) {
	for _, values := range []string{`"{{ config['kinds'] }}"`, `[]`} {
		t.Run("an empty list: "+values, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router: {type: ListPartitionRouter, values: ` + values + `, cursor_field: kind}
`)
			api := servePartitions(t, nil)
			recs, res, _ := partitionsRead(t, api, def, "items", map[string]any{"kinds": []any{}})
			checkLines(t, "requests", api.requests(), nil)
			checkLines(t, "records", recs, nil)
			checkResult(t, res, 0, 0, 0, "")
		})
	}
	t.Run("a parent without records", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/items/{{ stream_partition.pid }}"}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid}
`)
		api := servePartitions(t, map[string]any{"GET /parents": `{"data":[]}`})
		recs, res, log := partitionsRead(t, api, def, "items", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /parents"})
		checkLines(t, "records", recs, nil)
		checkResult(t, res, 0, 0, 0, "")
		checkLines(t, "streams", log.lines, []string{
			"start items", "start parents (for items)", "page parents 0/1", "end parents: 1 slices, 1 pages, 0 records", "end items: 0 slices, 0 pages, 0 records",
		})
	})
}

// A two-level chain, orgs → projects → tasks, each paginated: a parent page is read when the
// child needs its partitions, so the requests interleave. The child's templates see its
// partition, parent_slice (the parent record's own partition, itself with a parent_slice)
// and extra_fields keyed by the joined path, none for a path the record lacks; a template
// rendering none drops its parameter (the CDK sends the text None). A record
// without the parent key (nested: meta/pid) gives no partition and is counted. Checked
// against the CDK (same requests per stream, same records; the CDK sends missing=None and
// deep=None where connector leaves them out).
func TestSubstreamChain(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: tasks
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: "/orgs/{{ stream_slice.parent_slice.org_id }}/projects/{{ stream_partition['project_id'] }}/tasks"
        request_parameters:
          name: "{{ stream_slice.extra_fields['name'] }}"
          deep: "{{ stream_slice.extra_fields['info.deep'] }}"
          missing: "{{ stream_slice.extra_fields['nope'] }}"
          slice: "{{ stream_slice }}"
          extra: "{{ stream_slice.extra_fields }}"
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: meta/pid
            partition_field: project_id
            extra_fields: [[name], [info, deep], [nope]]
            request_option: {type: RequestOption, inject_into: header, field_name: X-Project}
            stream:
              type: DeclarativeStream
              name: projects
              retriever:
                type: SimpleRetriever
                requester:
                  $ref: "#/definitions/req"
                  path: "/orgs/{{ stream_partition.org_id }}/projects"
                  request_parameters: {parent: "{{ stream_slice.parent_slice }}"}
                record_selector: {$ref: "#/definitions/sel"}
                paginator: {$ref: "#/definitions/cursor"}
                partition_router:
                  type: SubstreamPartitionRouter
                  parent_stream_configs:
                    - type: ParentStreamConfig
                      stream:
                        type: DeclarativeStream
                        name: orgs
                        retriever:
                          type: SimpleRetriever
                          requester: {$ref: "#/definitions/req", path: /orgs}
                          record_selector: {$ref: "#/definitions/sel"}
                          paginator: {$ref: "#/definitions/cursor"}
                      parent_key: id
                      partition_field: org_id
`)
	task := func(org, pid, name, deep, extra, cursor string) string {
		line := fmt.Sprintf("GET /orgs/%s/projects/%s/tasks?name=%s%s&slice={'project_id': %s, 'parent_slice': {'org_id': '%s', 'parent_slice': {}}}&extra=%s",
			org, pid, name, deep, pid, org, extra)
		if cursor != "" {
			line += "&cursor=" + cursor
		}
		return line + " X-Project: " + pid
	}
	want := []string{
		"GET /orgs",
		"GET /orgs/o1/projects?parent={}",
		task("o1", "11", "p11", "&deep=1", "{'name': 'p11', 'info.deep': 1, 'nope': None}", ""),
		task("o1", "11", "p11", "&deep=1", "{'name': 'p11', 'info.deep': 1, 'nope': None}", "tc"),
		"GET /orgs/o1/projects?parent={}&cursor=pc",
		task("o1", "12", "p12", "", "{'name': 'p12', 'info.deep': None, 'nope': None}", ""),
		"GET /orgs?cursor=c2",
		"GET /orgs/o2/projects?parent={}",
		task("o2", "21", "p21", "&deep={'x': [1, 2]}", "{'name': 'p21', 'info.deep': {'x': [1, 2]}, 'nope': None}", ""),
	}
	answers := []string{
		`{"data":[{"id":"o1"}],"next":"c2"}`,
		`{"data":[{"meta":{"pid":11},"name":"p11","info":{"deep":1}},{"meta":{},"name":"no key"}],"next":"pc"}`,
		`{"data":[{"t":1}],"next":"tc"}`,
		`{"data":[{"t":2}]}`,
		`{"data":[{"meta":{"pid":12},"name":"p12"}]}`,
		`{"data":[]}`,
		`{"data":[{"id":"o2"},{"name":"no id"}]}`,
		`{"data":[{"meta":{"pid":21},"name":"p21","info":{"deep":{"x":[1,2]}}}]}`,
		`{"data":[{"t":3}]}`,
	}
	routes := map[string]any{}
	for i, line := range want {
		routes[line] = answers[i]
	}
	api := servePartitionsAPI(t, &partAPI{watch: []string{"X-Project"}, decode: true}, routes)
	recs, res, log := partitionsRead(t, api, def, "tasks", nil)
	checkLines(t, "requests", api.requests(), want)
	checkLines(t, "records", recs, []string{`{"t":1}`, `{"t":2}`, `{"t":3}`})
	checkResult(t, res, 3, 4, 3, "")
	if len(res.Skipped) != 1 || res.Skipped[0] != (Skipped{Parent: "projects", ParentKey: "meta/pid", Records: 1}) {
		t.Errorf("skipped %+v, want the one record of projects without meta/pid", res.Skipped)
	}
	checkLines(t, "streams", log.lines, []string{
		"start tasks",
		"start projects (for tasks)",
		"start orgs (for projects)",
		"page tasks 1/1", "page tasks 1/2",
		"page projects 1/1",
		"page tasks 2/1",
		"page projects 1/2",
		"page orgs 0/1",
		"page tasks 3/1",
		"page projects 2/1",
		"page orgs 0/2",
		"end orgs: 1 slices, 2 pages, 3 records",
		"end projects: 2 slices, 3 pages, 4 records, 1 records of orgs without id",
		"end tasks: 3 slices, 4 pages, 3 records, 1 records of projects without meta/pid",
	})
}

// Two parent configs: the partitions of the first parent, then those of the second, each
// parent read when its turn comes. Both put the partition in the same query parameter (the
// CDK merges them into one). A value that is not truthy (0, "", null) gives a partition but
// is not sent; repeated values are not de-duplicated. Checked against the CDK.
func TestSubstreamTwoParents(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items, request_parameters: {s: "{{ stream_slice }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            stream: {$ref: "#/definitions/parents"}
            parent_key: id
            partition_field: pid
            request_option: {type: RequestOption, inject_into: request_parameter, field_name: pid}
          - type: ParentStreamConfig
            stream: {$ref: "#/definitions/others"}
            parent_key: id
            partition_field: pid
            request_option: {type: RequestOption, inject_into: request_parameter, field_name: pid}
`)
	want := []string{
		"GET /parents",
		"GET /items?s={'pid': 1, 'parent_slice': {}}&pid=1",
		"GET /items?s={'pid': 0, 'parent_slice': {}}",
		"GET /items?s={'pid': '', 'parent_slice': {}}",
		"GET /items?s={'pid': None, 'parent_slice': {}}",
		"GET /items?s={'pid': 1, 'parent_slice': {}}&pid=1",
		"GET /others",
		"GET /items?s={'pid': 9, 'parent_slice': {}}&pid=9",
		"GET /items?s={'pid': 1, 'parent_slice': {}}&pid=1",
	}
	routes := map[string]any{
		"GET /parents": `{"data":[{"id":1},{"id":0},{"id":""},{"id":null},{"id":1}]}`,
		"GET /others":  `{"data":[{"id":9},{"id":1}]}`,
	}
	for i, line := range want {
		if _, ok := routes[line]; !ok {
			routes[line] = fmt.Sprintf(`{"data":[{"n":%d}]}`, i)
		}
	}
	api := servePartitionsAPI(t, &partAPI{decode: true}, routes)
	recs, res, _ := partitionsRead(t, api, def, "items", nil)
	checkLines(t, "requests", api.requests(), want)
	// The same request gets the same answer.
	checkLines(t, "records", recs, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`, `{"n":1}`, `{"n":7}`, `{"n":1}`})
	checkResult(t, res, 7, 7, 7, "")
}

// lazy_read_pointer: the first page of a slice is the part of the parent record it points
// to, read with the child's record selector and paginator, and only the pages after it are
// requested. A record without it gives an empty first page: no records, no request. Under
// a UnionPartitionRouter the pointer is not followed (the CDK reads lazily only under a
// SubstreamPartitionRouter): every slice is requested. Checked against the CDK.
func TestLazyReadPointer(t *testing.T) {
	parents := `{"data":[{"id":1,"kids":{"data":[{"k":"1a"}],"next":"n1"}},{"id":2},{"id":3,"kids":{"data":[{"k":"3a"}]}}]}`
	t.Run("substream", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: kids
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/parents/{{ stream_partition.pid }}/kids"}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid, lazy_read_pointer: [kids]}
`)
		api := servePartitions(t, map[string]any{
			"GET /parents":                  parents,
			"GET /parents/1/kids?cursor=n1": `{"data":[{"k":"1b"}]}`,
		})
		recs, res, log := partitionsRead(t, api, def, "kids", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /parents", "GET /parents/1/kids?cursor=n1"})
		checkLines(t, "records", recs, []string{`{"k":"1a"}`, `{"k":"1b"}`, `{"k":"3a"}`})
		checkResult(t, res, 3, 4, 3, "")
		checkLines(t, "streams", log.lines, []string{
			"start kids", "start parents (for kids)",
			"page kids 1/1 (from the parent record)", "page kids 1/2",
			"page kids 2/1 (from the parent record)",
			"page kids 3/1 (from the parent record)",
			"page parents 0/1",
			"end parents: 1 slices, 1 pages, 3 records",
			"end kids: 3 slices, 4 pages, 3 records",
		})
	})
	t.Run("union", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: kids
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/parents/{{ stream_partition.pid }}/kids"}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: UnionPartitionRouter
        partition_field: pid
        partition_routers:
          - {type: ListPartitionRouter, values: ["7"], cursor_field: pid}
          - type: SubstreamPartitionRouter
            parent_stream_configs:
              - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid, lazy_read_pointer: [kids]}
`)
		api := servePartitions(t, map[string]any{
			"GET /parents":        parents,
			"GET /parents/7/kids": `{"data":[{"k":"7"}]}`,
			"GET /parents/1/kids": `{"data":[{"k":"1"}]}`,
			"GET /parents/2/kids": `{"data":[{"k":"2"}]}`,
			"GET /parents/3/kids": `{"data":[{"k":"3"}]}`,
		})
		recs, res, _ := partitionsRead(t, api, def, "kids", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /parents/7/kids", "GET /parents", "GET /parents/1/kids", "GET /parents/2/kids", "GET /parents/3/kids"})
		checkLines(t, "records", recs, []string{`{"k":"7"}`, `{"k":"1"}`, `{"k":"2"}`, `{"k":"3"}`})
		checkResult(t, res, 4, 4, 4, "")
	})
	t.Run("pointer to a list, selector of the whole body", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: kids
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/parents/{{ stream_partition.pid }}/kids"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid, lazy_read_pointer: [kids, data]}
`)
		api := servePartitions(t, map[string]any{"GET /parents": parents})
		recs, res, _ := partitionsRead(t, api, def, "kids", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /parents"})
		checkLines(t, "records", recs, []string{`{"k":"1a"}`, `{"k":"3a"}`})
		checkResult(t, res, 3, 3, 2, "")
	})
}

// GroupingPartitionRouter: group_size partitions per slice, each key's values in a list
// (parent_slice and the extra fields too), the last group shorter; deduplicate (the
// default) drops a value seen before, deduplicate: false keeps it. The grouped values reach
// the request through a template. Checked against the CDK.
func TestGroupingRouter(t *testing.T) {
	t.Run("deduplicated parent records", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: /items
        request_parameters: {ids: "{{ stream_partition.pid | join(',') }}", s: "{{ stream_slice }}", e: "{{ stream_slice.extra_fields }}"}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: GroupingPartitionRouter
        group_size: 2
        underlying_partition_router:
          type: SubstreamPartitionRouter
          parent_stream_configs:
            - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid, extra_fields: [[name]]}
`)
		want := []string{
			"GET /parents",
			"GET /items?ids=1,0&s={'pid': [1, 0], 'parent_slice': [{}, {}]}&e={'name': ['one', 'zero']}",
			"GET /parents?cursor=c2",
			"GET /items?ids=2,3&s={'pid': [2, 3], 'parent_slice': [{}, {}]}&e={'name': ['two', None]}",
			"GET /items?ids=4&s={'pid': [4], 'parent_slice': [{}]}&e={'name': ['four']}",
		}
		routes := map[string]any{
			"GET /parents":           `{"data":[{"id":1,"name":"one"},{"id":0,"name":"zero"},{"id":1,"name":"again"}],"next":"c2"}`,
			"GET /parents?cursor=c2": `{"data":[{"id":2,"name":"two"},{"id":3},{"id":0},{"id":4,"name":"four"}]}`,
			want[1]:                  `{"data":[{"n":1}]}`,
			want[3]:                  `{"data":[{"n":2}]}`,
			want[4]:                  `{"data":[{"n":3}]}`,
		}
		api := servePartitionsAPI(t, &partAPI{decode: true}, routes)
		recs, res, _ := partitionsRead(t, api, def, "items", nil)
		checkLines(t, "requests", api.requests(), want)
		checkLines(t, "records", recs, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`})
		checkResult(t, res, 3, 3, 3, "")
	})
	t.Run("deduplicate false", func(t *testing.T) {
		def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items, request_parameters: {s: "{{ stream_slice }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: GroupingPartitionRouter
        group_size: 2
        deduplicate: false
        underlying_partition_router: {type: ListPartitionRouter, values: ["x", "y", "x", "z", "y"], cursor_field: v}
`)
		want := []string{"GET /items?s={'v': ['x', 'y']}", "GET /items?s={'v': ['x', 'z']}", "GET /items?s={'v': ['y']}"}
		routes := map[string]any{}
		for i, line := range want {
			routes[line] = fmt.Sprintf(`{"data":[{"n":%d}]}`, i+1)
		}
		api := servePartitionsAPI(t, &partAPI{decode: true}, routes)
		recs, res, _ := partitionsRead(t, api, def, "items", nil)
		checkLines(t, "requests", api.requests(), want)
		checkLines(t, "records", recs, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`})
		checkResult(t, res, 3, 3, 3, "")
	})
}

// UnionPartitionRouter: the partitions of each child in order, a value seen before dropped
// (by Python equality: "1" and 1 differ), every partition reduced to the partition field
// with the other keys (parent_slice) moved to the extra fields. Checked against the CDK.
func TestUnionRouter(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items, request_parameters: {s: "{{ stream_slice }}", e: "{{ stream_slice.extra_fields }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: UnionPartitionRouter
        partition_field: pid
        partition_routers:
          - {type: ListPartitionRouter, values: ["1", "9", "1"], cursor_field: pid}
          - type: SubstreamPartitionRouter
            parent_stream_configs:
              - {type: ParentStreamConfig, stream: {$ref: "#/definitions/others"}, parent_key: id, partition_field: pid, extra_fields: [[name]]}
`)
	want := []string{
		"GET /items?s={'pid': '1'}&e={}",
		"GET /items?s={'pid': '9'}&e={}",
		"GET /others",
		"GET /items?s={'pid': 9}&e={'name': 'nine', 'parent_slice': {}}",
		"GET /items?s={'pid': 1}&e={'name': 'one', 'parent_slice': {}}",
	}
	routes := map[string]any{"GET /others": `{"data":[{"id":9,"name":"nine"},{"id":1,"name":"one"},{"id":9,"name":"nine again"}]}`}
	for i, line := range want {
		if _, ok := routes[line]; !ok {
			routes[line] = fmt.Sprintf(`{"data":[{"n":%d}]}`, i+1)
		}
	}
	api := servePartitionsAPI(t, &partAPI{decode: true}, routes)
	recs, res, _ := partitionsRead(t, api, def, "items", nil)
	checkLines(t, "requests", api.requests(), want)
	checkLines(t, "records", recs, []string{`{"n":1}`, `{"n":2}`, `{"n":4}`, `{"n":5}`})
	checkResult(t, res, 4, 4, 4, "")
}

// A list of routers is their cartesian product, the first router varying slowest: each
// partition merges the routers' partitions as Python's dict(ChainMap(...)) does (keys in the
// order of the last router's partition, then the one before; for a key in two, the first
// router's value), and so do the extra fields. Two routers setting the same request option:
// the first one's value. Checked against the CDK.
func TestCartesianRouters(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items, request_parameters: {s: "{{ stream_slice }}", e: "{{ stream_slice.extra_fields }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        - {type: ListPartitionRouter, values: ["x", "y"], cursor_field: k1, request_option: {type: RequestOption, inject_into: request_parameter, field_name: k}}
        - {type: ListPartitionRouter, values: ["1", "2"], cursor_field: k2, request_option: {type: RequestOption, inject_into: request_parameter, field_name: k}}
        - type: SubstreamPartitionRouter
          parent_stream_configs:
            - {type: ParentStreamConfig, stream: {$ref: "#/definitions/others"}, parent_key: id, partition_field: k1, extra_fields: [[name]], request_option: {type: RequestOption, inject_into: header, field_name: X-K}}
`)
	var want []string
	for _, k1 := range []string{"x", "y"} {
		for _, k2 := range []string{"1", "2"} {
			for _, name := range []string{"nine", "one"} {
				want = append(want, fmt.Sprintf("GET /items?s={'k1': '%s', 'parent_slice': {}, 'k2': '%s'}&e={'name': '%s'}&k=%s X-K: %s", k1, k2, name, k1, k1))
			}
		}
	}
	routes := map[string]any{"GET /others": `{"data":[{"id":9,"name":"nine"},{"id":1,"name":"one"}]}`}
	var wantRecs []string
	for i, line := range want {
		routes[line] = fmt.Sprintf(`{"data":[{"n":%d}]}`, i+1)
		wantRecs = append(wantRecs, fmt.Sprintf(`{"n":%d}`, i+1))
	}
	api := servePartitionsAPI(t, &partAPI{decode: true, watch: []string{"X-K"}}, routes)
	recs, res, _ := partitionsRead(t, api, def, "items", nil)
	// The routers' partitions are all known before the first product: the parent is read
	// first.
	checkLines(t, "requests", api.requests(), append([]string{"GET /others"}, want...))
	checkLines(t, "records", recs, wantRecs)
	checkResult(t, res, 8, 8, 8, "")
}

// A failing slice ends the stream: the error names the stream, the slice and the page; the
// records of the slices before it are emitted, the slices after it are not read. A failing
// parent fails its child, the error naming the parent stream (and its page). The CDK, which
// reads partitions concurrently, goes on with the other partitions and fails the stream at
// the end.
func TestFailingSliceAndParent(t *testing.T) {
	child := func(router string) string {
		return partitionsDef(`
  - type: DeclarativeStream
    name: tasks
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/tasks/{{ stream_partition.pid }}"}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
` + router)
	}
	substream := `
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid}
`
	broken := partAnswer{Status: http.StatusNotFound, Body: `{"error":"gone"}`}
	tests := []struct {
		name     string
		router   string
		routes   map[string]any
		requests []string
		records  []string
		slices   int
		pages    int
		err      string
	}{
		{
			name:   "the second page of the second slice",
			router: `        {type: ListPartitionRouter, values: ["1", "2", "3"], cursor_field: pid}`,
			routes: map[string]any{
				"GET /tasks/1":          `{"data":[{"t":1}]}`,
				"GET /tasks/2":          `{"data":[{"t":2}],"next":"n"}`,
				"GET /tasks/2?cursor=n": broken,
				"GET /tasks/3":          `{"data":[{"t":3}]}`,
			},
			// As in the CDK, the slices after a failing one are read all the same; the
			// stream fails at its end with the first failure.
			requests: []string{"GET /tasks/1", "GET /tasks/2", "GET /tasks/2?cursor=n", "GET /tasks/3"},
			records:  []string{`{"t":1}`, `{"t":2}`, `{"t":3}`},
			slices:   3, pages: 3,
			err: `stream tasks, slice {pid: "2"}, page 2: 404 Not Found from GET API/tasks/2?cursor=n: {"error":"gone"}`,
		},
		{
			name:   "the first page of a substream slice",
			router: substream,
			routes: map[string]any{
				"GET /parents": `{"data":[{"id":1},{"id":2},{"id":3}]}`,
				"GET /tasks/1": `{"data":[{"t":1}]}`,
				"GET /tasks/2": broken,
				"GET /tasks/3": `{"data":[{"t":3}]}`,
			},
			requests: []string{"GET /parents", "GET /tasks/1", "GET /tasks/2", "GET /tasks/3"},
			records:  []string{`{"t":1}`, `{"t":3}`},
			slices:   3, pages: 2,
			err: `stream tasks, slice {pid: 2, parent_slice: {}}, page 1: 404 Not Found from GET API/tasks/2: {"error":"gone"}`,
		},
		{
			name:   "the parent's second page",
			router: substream,
			routes: map[string]any{
				"GET /parents":          `{"data":[{"id":1}],"next":"n"}`,
				"GET /tasks/1":          `{"data":[{"t":1}]}`,
				"GET /parents?cursor=n": broken,
			},
			requests: []string{"GET /parents", "GET /tasks/1", "GET /parents?cursor=n"},
			records:  []string{`{"t":1}`},
			slices:   1, pages: 1,
			err: `stream tasks: stream parents, page 2: 404 Not Found from GET API/parents?cursor=n: {"error":"gone"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := servePartitions(t, tt.routes)
			recs, res, _ := partitionsRead(t, api, child(tt.router), "tasks", nil)
			checkLines(t, "requests", api.requests(), tt.requests)
			checkLines(t, "records", recs, tt.records)
			if res.Err != nil {
				res.Err = fmt.Errorf("%s", strings.ReplaceAll(res.Err.Error(), api.URL, "API"))
			}
			checkResult(t, res, tt.slices, tt.pages, len(tt.records), tt.err)
		})
	}
}

// ignore_stream_slicer_parameters_on_paginated_requests: the partition router's request
// option is sent on the first page of each slice only; the requester's own templates still
// see the slice on every page. Checked against the CDK (with a RequestPath next URL and with
// a cursor parameter).
func TestIgnoreSlicerParametersOnPaginatedRequests(t *testing.T) {
	for _, tt := range []struct {
		name, tokenOption, next string
		want                    []string
	}{
		{"next URL", `{type: RequestPath}`, "{base}/items?p=2", []string{
			"GET /items?k2=x&k=x", "GET /items?p=2&k2=x", "GET /items?k2=y&k=y", "GET /items?p=2&k2=y",
		}},
		{"cursor parameter", `{type: RequestOption, inject_into: request_parameter, field_name: cursor}`, "c2", []string{
			"GET /items?k2=x&k=x", "GET /items?k2=x&cursor=c2", "GET /items?k2=y&k=y", "GET /items?k2=y&cursor=c2",
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      ignore_stream_slicer_parameters_on_paginated_requests: true
      requester: {$ref: "#/definitions/req", path: /items, request_parameters: {k2: "{{ stream_partition.k }}"}}
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        page_token_option: ` + tt.tokenOption + `
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
      partition_router:
        type: ListPartitionRouter
        values: ["x", "y"]
        cursor_field: k
        request_option: {type: RequestOption, inject_into: request_parameter, field_name: k}
`)
			api := servePartitions(t, map[string]any{
				tt.want[0]: `{"data":[{"n":1}],"next":"` + tt.next + `"}`,
				tt.want[1]: `{"data":[{"n":2}]}`,
				tt.want[2]: `{"data":[{"n":3}],"next":"` + tt.next + `"}`,
				tt.want[3]: `{"data":[{"n":4}]}`,
			})
			recs, res, _ := partitionsRead(t, api, def, "items", nil)
			checkLines(t, "requests", api.requests(), tt.want)
			checkLines(t, "records", recs, []string{`{"n":1}`, `{"n":2}`, `{"n":3}`, `{"n":4}`})
			checkResult(t, res, 2, 4, 4, "")
		})
	}
}

// parent_key is a dpath: a segment may be a list index, and `*` any key or index as long as
// it leads to one value only (the CDK's dpath.get raises otherwise, and the stream fails).
// Checked against the CDK.
func TestParentKeyPaths(t *testing.T) {
	parents := `{"data":[{"ids":[5,6],"one":[{"id":"g1"}]},{"ids":[7],"one":[{"id":"g2"},{"id":"g3"}]}]}`
	for _, tt := range []struct {
		key      string
		requests []string
		err      string
	}{
		{"ids/1", []string{"GET /parents", "GET /items?p=6"}, ""},
		{"one/*/id", []string{"GET /parents", "GET /items?p=g1"}, "stream items: parent stream parents: the path one/*/id matches 2 values, not one"},
	} {
		t.Run(tt.key, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: "` + tt.key + `", partition_field: p, request_option: {type: RequestOption, inject_into: request_parameter, field_name: p}}
`)
			routes := map[string]any{"GET /parents": parents}
			for _, line := range tt.requests[1:] {
				routes[line] = `{"data":[{"n":1}]}`
			}
			api := servePartitions(t, routes)
			recs, res, _ := partitionsRead(t, api, def, "items", nil)
			checkLines(t, "requests", api.requests(), tt.requests)
			checkLines(t, "records", recs, []string{`{"n":1}`})
			checkResult(t, res, 1, 1, 1, tt.err)
		})
	}
}

// Partitions a router cannot make fail the stream, saying why and what to do (the CDK
// iterates over the characters of a text in values; connector refuses it).
func TestRouterErrors(t *testing.T) {
	for _, tt := range []struct {
		name, router, err string
		slices            int // read before the error
	}{
		{"values that are not a list", `{type: ListPartitionRouter, values: "{{ config['kinds'] }}", cursor_field: kind}`,
			`stream items: partition_router: ListPartitionRouter values: {{ config['kinds'] }} gives "a,b", not a list: make the testing value a list, or split a text in the template (.split(','))`, 0},
		{"a union child without the partition field", `
        type: UnionPartitionRouter
        partition_field: pid
        partition_routers:
          - {type: ListPartitionRouter, values: ["1"], cursor_field: pid}
          - {type: ListPartitionRouter, values: ["2"], cursor_field: other}`,
			`stream items: UnionPartitionRouter expects every child to give the partition field "pid", got {other: "2"}: name it pid in every child (cursor_field, partition_field)`, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router: ` + tt.router + "\n")
			api := servePartitions(t, map[string]any{"GET /items": `{"data":[{"n":1}]}`})
			_, res, _ := partitionsRead(t, api, def, "items", map[string]any{"kinds": "a,b"})
			checkResult(t, res, tt.slices, tt.slices, tt.slices, tt.err)
		})
	}
}
