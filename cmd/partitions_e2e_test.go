package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// Partitioned streams through the real command: `read` and `paginate-trace` against a local
// API, the exact requests, stdout, stderr and exit code. The behaviour of each router is
// tested in pkg/run (partitions_test.go); here the command's view of it.

// partsDef has four streams: projects (two pages), tasks (a SubstreamPartitionRouter over
// projects: its path from stream_partition, the project's name from the extra fields, the
// project id in the header X-Project, two pages for project 1), regions (a
// ListPartitionRouter over the testing value regions, each value in the JSON body at
// filter.region) and nothing (a ListPartitionRouter with no values).
const partsDef = `version: 6.44.0
type: DeclarativeSource
definitions:
  req: {type: HttpRequester, url_base: "{{ config['base_url'] }}", http_method: GET}
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  cursor:
    type: DefaultPaginator
    page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
    pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  projects:
    type: DeclarativeStream
    name: projects
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /projects}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
streams:
  - $ref: "#/definitions/projects"
  - type: DeclarativeStream
    name: tasks
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/req"
        path: "/projects/{{ stream_partition.project_id }}/tasks"
        request_parameters: {project: "{{ stream_slice.extra_fields.name }}"}
      record_selector: {$ref: "#/definitions/sel"}
      paginator: {$ref: "#/definitions/cursor"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            stream: {$ref: "#/definitions/projects"}
            parent_key: id
            partition_field: project_id
            extra_fields: [[name]]
            request_option: {type: RequestOption, inject_into: header, field_name: X-Project}
  - type: DeclarativeStream
    name: regions
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /search, http_method: POST, request_body_json: {limit: 10}}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: ListPartitionRouter
        values: "{{ config['regions'] }}"
        cursor_field: region
        request_option: {type: RequestOption, inject_into: body_json, field_path: [filter, region]}
  - type: DeclarativeStream
    name: nothing
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /nothing}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router: {type: ListPartitionRouter, values: [], cursor_field: k}
`

// partsAPI answers the requests of partsDef; fail lists request URIs answered 404.
func partsAPI(t *testing.T, fail ...string) *recorder {
	answers := map[string]string{
		"/projects":                                 `{"data":[{"id":1,"name":"alpha"},{"id":2,"name":"beta"}],"next":"p2"}`,
		"/projects?cursor=p2":                       `{"data":[{"id":3,"name":"gamma"}]}`,
		"/projects/1/tasks?project=alpha":           `{"data":[{"task":"1a"}],"next":"t2"}`,
		"/projects/1/tasks?project=alpha&cursor=t2": `{"data":[{"task":"1b"}]}`,
		"/projects/2/tasks?project=beta":            `{"data":[]}`,
		"/projects/3/tasks?project=gamma":           `{"data":[{"task":"3a"}]}`,
	}
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		uri := r.URL.RequestURI()
		for _, f := range fail {
			if uri == f {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error":"gone"}`))
				return
			}
		}
		if r.URL.Path == "/search" {
			var q struct{ Filter struct{ Region string } }
			if err := json.NewDecoder(r.Body).Decode(&q); err != nil || q.Filter.Region == "" {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"data":[{"hit":"` + q.Filter.Region + `"}]}`))
			return
		}
		body, ok := answers[uri]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"no route"}`))
			return
		}
		w.Write([]byte(body))
	})
}

// partsRead runs `read` of partsDef against api with the regions eu and us.
func partsRead(t *testing.T, api *recorder, args ...string) cliResult {
	t.Helper()
	return e2eRead(t, api, partsDef, "regions: [eu, us]\n", args...)
}

func partsTask(uri, project string) e2eRequest {
	return e2eRequest{Method: "GET", URL: uri, Headers: map[string]string{"X-Project": project}}
}

func partsSearch(region string) e2eRequest {
	return e2eRequest{Method: "POST", URL: "/search", Body: `{"limit":10,"filter":{"region":"` + region + `"}}`,
		Headers: map[string]string{"Content-Type": "application/json"}}
}

// Every stream in order: projects is read for its own records, and read again, page by
// page as tasks needs them, for the partitions of tasks (its records are not written
// then): from the run's cache, as the CDK caches a stream named as a parent, so its pages
// are asked for once. A partition with no records, and a stream with no partitions, write
// nothing.
func TestPartitionsReadE2E(t *testing.T) {
	api := partsAPI(t)
	res := partsRead(t, api)
	e2eCheckResult(t, api, res, 0,
		`{"id":1,"name":"alpha"}`+"\n"+`{"id":2,"name":"beta"}`+"\n"+`{"id":3,"name":"gamma"}`+"\n"+
			`{"task":"1a"}`+"\n"+`{"task":"1b"}`+"\n"+`{"task":"3a"}`+"\n"+
			`{"hit":"eu"}`+"\n"+`{"hit":"us"}`+"\n", "")
	e2eCheckRequests(t, api,
		e2eGet("/projects"), e2eGet("/projects?cursor=p2"),
		partsTask("/projects/1/tasks?project=alpha", "1"),
		partsTask("/projects/1/tasks?project=alpha&cursor=t2", "1"),
		partsTask("/projects/2/tasks?project=beta", "2"),
		partsTask("/projects/3/tasks?project=gamma", "3"),
		partsSearch("eu"), partsSearch("us"),
	)
}

// A slice that fails fails its stream, naming the slice and the page; the records before it
// are written, the streams after it are read. A parent that fails fails its child, naming
// the parent stream.
func TestPartitionsFailureE2E(t *testing.T) {
	t.Run("a slice", func(t *testing.T) {
		api := partsAPI(t, "/projects/1/tasks?project=alpha&cursor=t2")
		res := partsRead(t, api, "--stream", "tasks", "--stream", "regions")
		// The slices after the failing one are read all the same, as in the CDK.
		e2eCheckResult(t, api, res, 1, `{"task":"1a"}`+"\n"+`{"task":"3a"}`+"\n"+`{"hit":"eu"}`+"\n"+`{"hit":"us"}`+"\n",
			`error: stream tasks, slice {project_id: 1, parent_slice: {}}, page 2: 404 Not Found from GET http://API/projects/1/tasks?project=alpha&cursor=t2: {"error":"gone"} (1 of 3 slices failed; 2 records written)`+"\n"+
				"1 of 2 streams failed\n")
		e2eCheckRequests(t, api,
			e2eGet("/projects"),
			partsTask("/projects/1/tasks?project=alpha", "1"),
			partsTask("/projects/1/tasks?project=alpha&cursor=t2", "1"),
			partsTask("/projects/2/tasks?project=beta", "2"),
			e2eGet("/projects?cursor=p2"),
			partsTask("/projects/3/tasks?project=gamma", "3"),
			partsSearch("eu"), partsSearch("us"),
		)
	})
	t.Run("the parent", func(t *testing.T) {
		api := partsAPI(t, "/projects?cursor=p2")
		res := partsRead(t, api, "--stream", "tasks")
		e2eCheckResult(t, api, res, 1, `{"task":"1a"}`+"\n"+`{"task":"1b"}`+"\n",
			`error: stream tasks: stream projects, page 2: 404 Not Found from GET http://API/projects?cursor=p2: {"error":"gone"} (2 records written before the failure)`+"\n")
		e2eCheckRequests(t, api,
			e2eGet("/projects"),
			partsTask("/projects/1/tasks?project=alpha", "1"),
			partsTask("/projects/1/tasks?project=alpha&cursor=t2", "1"),
			partsTask("/projects/2/tasks?project=beta", "2"),
			e2eGet("/projects?cursor=p2"),
		)
	})
}

// paginate-trace of partitioned streams, text and JSON, pinned in
// testdata/trace/partitions.*: each slice announced with its partition, the parent's
// requests and pages under the parent's name, the pages of a parent read between two slices
// of its child announced as the parent's, slice counts only for partitioned streams.
// Refresh with go test ./cmd -run TestPartitionsTraceGolden -update
func TestPartitionsTraceGolden(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			api := partsAPI(t)
			defPath := writeFile(t, "def.yaml", partsDef)
			vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nregions: [eu, us]\n")
			res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals, "--format", format,
				"--stream", "tasks", "--stream", "projects", "--stream", "regions", "--stream", "nothing")
			got := fmt.Sprintf("%s--- stderr (exit %d) ---\n%s", res.Stdout, res.Code, res.Stderr)
			got = strings.ReplaceAll(got, api.URL, "http://API")
			ext := ".txt"
			if format == "json" {
				ext = ".jsonl"
			}
			golden(t, "trace/partitions"+ext, got)
		})
	}
}

// paginate-trace of a lazy_read_pointer: the first page of each slice read from the parent
// record (no request), the next one requested. Pinned in testdata/trace/partitions-lazy.*.
func TestPartitionsLazyTraceGolden(t *testing.T) {
	def := `version: 6.44.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: kids
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: "/parents/{{ stream_partition.pid }}/kids"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: id
            partition_field: pid
            lazy_read_pointer: [kids]
            stream:
              type: DeclarativeStream
              name: parents
              retriever:
                type: SimpleRetriever
                requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /parents}
                record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				switch r.URL.RequestURI() {
				case "/parents":
					w.Write([]byte(`{"data":[{"id":1,"kids":{"data":[{"k":"1a"}],"next":"n1"}},{"id":2}]}`))
				case "/parents/1/kids?cursor=n1":
					w.Write([]byte(`{"data":[{"k":"1b"}]}`))
				default:
					w.WriteHeader(http.StatusNotFound)
				}
			})
			res := e2eTrace(t, api, def, format)
			e2eCheckRequests(t, api, e2eGet("/parents"), e2eGet("/parents/1/kids?cursor=n1"))
			ext := ".txt"
			if format == "json" {
				ext = ".jsonl"
			}
			golden(t, "trace/partitions-lazy"+ext, res)
		})
	}
}

// e2eTrace runs paginate-trace of def against api and returns stdout, the exit code and
// stderr, the API's address shown as http://API.
func e2eTrace(t *testing.T, api *recorder, def, format string, args ...string) string {
	t.Helper()
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	res := runCLI(t, "", append([]string{"paginate-trace", defPath, "--testing-values", vals, "--format", format}, args...)...)
	got := fmt.Sprintf("%s--- stderr (exit %d) ---\n%s", res.Stdout, res.Code, res.Stderr)
	return strings.ReplaceAll(got, api.URL, "http://API")
}
