package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// Pagination resets checked against the Airbyte CDK 7.28.2: testdata/pagination-reset/
// definition.yaml was run through the CDK (run-cdk read --concurrency 1, one stream at a
// time) against logserver.py answering the routes of resetRoutes; the requests and records
// below are what it sent and emitted. The CDK's failures were "There were 2 attempts with
// the same slice already while the max allowed is 2" (RESET, or no cursor) and "There were 1
// attempts with the same slice already while the max allowed is 1" (SPLIT_USING_CURSOR).

// resetRoute answers a request to path whose query holds want (a value "" must be absent);
// times > 0 answers that many matches only.
type resetRoute struct {
	path   string
	want   map[string]string
	times  int
	status int
	body   string
}

func resetAPI(t *testing.T, routes []resetRoute) *recorder {
	var mu sync.Mutex
	used := make([]int, len(routes))
	return newRecorder(t, func(w http.ResponseWriter, req *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		q := req.URL.Query()
	next:
		for i, r := range routes {
			if r.path != req.URL.Path || r.times > 0 && used[i] >= r.times {
				continue
			}
			for k, v := range r.want {
				if _, has := q[k]; (v == "") == has || v != "" && q.Get(k) != v {
					continue next
				}
			}
			used[i]++
			w.Header().Set("Content-Type", "application/json")
			if r.status != 0 {
				w.WriteHeader(r.status)
			}
			w.Write([]byte(r.body))
			return
		}
		http.NotFound(w, req)
	})
}

var resetRoutes = []resetRoute{
	{path: "/reset", want: map[string]string{"page": ""}, body: `{"data":[{"id":"a"},{"id":"b"}]}`},
	{path: "/reset", want: map[string]string{"page": "2"}, times: 1, status: 400, body: `{"message":"too deep"}`},
	{path: "/reset", want: map[string]string{"page": "2"}, body: `{"data":[{"id":"c"}]}`},
	{path: "/reset2", want: map[string]string{"page": ""}, body: `{"data":[{"id":"a"},{"id":"b"}]}`},
	{path: "/reset2", want: map[string]string{"page": "2"}, status: 400, body: `{"message":"too deep"}`},
	{path: "/limit", want: map[string]string{"page": ""}, body: `{"data":[{"id":"a"},{"id":"b"}]}`},
	{path: "/limit", want: map[string]string{"page": "2"}, times: 1, body: `{"data":[{"id":"c"},{"id":"d"}]}`},
	{path: "/limit", want: map[string]string{"page": "2"}, body: `{"data":[{"id":"c"}]}`},
	{path: "/split", want: map[string]string{"since": "2024-01-01T00:00:00Z", "page": ""},
		body: `{"data":[{"id":"1","updated_at":"2024-02-01T00:00:00Z"},{"id":"2","updated_at":"2024-03-01T10:00:00Z"}]}`},
	{path: "/split", want: map[string]string{"since": "2024-01-01T00:00:00Z", "page": "2"}, status: 400, body: `{"message":"too deep"}`},
	{path: "/split", want: map[string]string{"since": "2024-03-01T10:00:00Z", "page": ""},
		body: `{"data":[{"id":"2","updated_at":"2024-03-01T10:00:00Z"},{"id":"3","updated_at":"2024-04-01T00:00:00Z"}]}`},
	{path: "/split", want: map[string]string{"since": "2024-03-01T10:00:00Z", "page": "2"}, body: `{"data":[]}`},
	{path: "/splitlimit", want: map[string]string{"since": "2024-01-01T00:00:00Z", "page": ""},
		body: `{"data":[{"id":"1","updated_at":"2024-02-01T00:00:00Z"},{"id":"2","updated_at":"2024-03-01T00:00:00Z"}]}`},
	{path: "/splitlimit", want: map[string]string{"since": "2024-03-01T00:00:00Z", "page": ""},
		body: `{"data":[{"id":"2","updated_at":"2024-03-01T00:00:00Z"},{"id":"3","updated_at":"2024-04-01T00:00:00Z"}]}`},
	{path: "/splitlimit", want: map[string]string{"since": "2024-04-01T00:00:00Z", "page": ""},
		body: `{"data":[{"id":"3","updated_at":"2024-04-01T00:00:00Z"}]}`},
	{path: "/splitstuck", want: map[string]string{"page": ""}, body: `{"data":[{"id":"1"},{"id":"2"}]}`},
	{path: "/splitstuck", want: map[string]string{"page": "2"}, status: 400, body: `{"message":"too deep"}`},
}

func TestPaginationResetAsTheCDK(t *testing.T) {
	def, err := os.ReadFile(filepath.Join("testdata", "pagination-reset", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const window = "since=2024-01-01T00%3A00%3A00Z&until=2024-12-31T00%3A00%3A00Z"
	const moved = "since=2024-03-01T10%3A00%3A00Z&until=2024-12-31T00%3A00%3A00Z"
	tests := []struct {
		stream string
		urls   []string
		code   int
		stdout string
		stderr string
	}{{
		stream: "reset",
		urls:   []string{"/reset", "/reset?page=2", "/reset", "/reset?page=2"},
		stdout: `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"c"}` + "\n",
	}, {
		stream: "reset2",
		urls:   []string{"/reset2", "/reset2?page=2", "/reset2", "/reset2?page=2"},
		code:   1,
		stdout: `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n",
		stderr: "error: stream reset2, page 3: pagination reset (GET http://API/reset2?page=2 answered 400 Bad Request, which the error handler answers with RESET_PAGINATION): the slice was started again unchanged once already, and may be only once (4 records written before the failure)\n",
	}, {
		// number_of_records resets even after the last page (a short one).
		stream: "limit",
		urls:   []string{"/limit", "/limit?page=2", "/limit", "/limit?page=2"},
		code:   1,
		stdout: `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"c"}` + "\n" + `{"id":"d"}` + "\n" + `{"id":"a"}` + "\n" + `{"id":"b"}` + "\n" + `{"id":"c"}` + "\n",
		stderr: "error: stream limit, page 4: pagination reset (3 records since the slice started, number_of_records 3): the slice was started again unchanged once already, and may be only once (7 records written before the failure)\n",
	}, {
		stream: "split",
		urls:   []string{"/split?" + window, "/split?page=2&" + window, "/split?" + moved, "/split?page=2&" + moved},
		stdout: `{"id":"1","updated_at":"2024-02-01T00:00:00Z"}` + "\n" + `{"id":"2","updated_at":"2024-03-01T10:00:00Z"}` + "\n" +
			`{"id":"2","updated_at":"2024-03-01T10:00:00Z"}` + "\n" + `{"id":"3","updated_at":"2024-04-01T00:00:00Z"}` + "\n",
		stderr: "split: state {\"updated_at\":\"2024-04-01T00:00:00Z\"}\n",
	}, {
		stream: "splitlimit",
		urls: []string{"/splitlimit?" + window, "/splitlimit?since=2024-03-01T00%3A00%3A00Z&until=2024-12-31T00%3A00%3A00Z",
			"/splitlimit?since=2024-04-01T00%3A00%3A00Z&until=2024-12-31T00%3A00%3A00Z"},
		stdout: `{"id":"1","updated_at":"2024-02-01T00:00:00Z"}` + "\n" + `{"id":"2","updated_at":"2024-03-01T00:00:00Z"}` + "\n" +
			`{"id":"2","updated_at":"2024-03-01T00:00:00Z"}` + "\n" + `{"id":"3","updated_at":"2024-04-01T00:00:00Z"}` + "\n" +
			`{"id":"3","updated_at":"2024-04-01T00:00:00Z"}` + "\n",
		stderr: "splitlimit: state {\"updated_at\":\"2024-04-01T00:00:00Z\"}\n",
	}, {
		stream: "splitstuck",
		urls:   []string{"/splitstuck?" + window, "/splitstuck?page=2&" + window},
		code:   1,
		stdout: `{"id":"1"}` + "\n" + `{"id":"2"}` + "\n",
		stderr: "note: splitstuck: a record has no cursor value in `updated_at` that the cursor's formats read; such records are kept and do not move the state\n" +
			"error: stream splitstuck, slice {start_time: \"2024-01-01T00:00:00Z\", end_time: \"2024-12-31T00:00:00Z\"}, page 2: pagination reset (GET http://API/splitstuck?page=2&" + window + " answered 400 Bad Request, which the error handler answers with RESET_PAGINATION): SPLIT_USING_CURSOR would start the slice again unchanged, its records having no cursor value newer than its start 2024-01-01T00:00:00Z (2 records written before the failure)\n",
		// no state line: the stream failed before a slice was read whole
	}}
	for _, tt := range tests {
		t.Run(tt.stream, func(t *testing.T) {
			api := resetAPI(t, resetRoutes)
			res := e2eRead(t, api, string(def), "start: '2024-01-01T00:00:00Z'\n", "--stream", tt.stream)
			var want []e2eRequest
			for _, u := range tt.urls {
				want = append(want, e2eRequest{Method: "GET", URL: u})
			}
			e2eCheckRequests(t, api, want...)
			e2eCheckResult(t, api, res, tt.code, tt.stdout, tt.stderr)
		})
	}
}

// The CDK refuses number_of_records with a record filter ("PaginationResetLimits are not
// supported while having record filter.").
func TestPaginationResetLimitsWithFilterRefused(t *testing.T) {
	def := e2eOneStream("url_base: http://x\npath: /items\n",
		e2eDataPath+"\nrecord_filter: {type: RecordFilter, condition: \"{{ record.id }}\"}")
	def = strings.Replace(def, "      record_selector:", "      pagination_reset:\n        type: PaginationReset\n        action: RESET\n        limits: {type: PaginationResetLimits, number_of_records: 10}\n      record_selector:", 1)
	path := writeFile(t, "def.yaml", def)
	res := runCLI(t, "", "validate", path)
	want := path + ":12:9: error: `limits` of a PaginationReset cannot be used with a record_filter (the CDK refuses it: \"PaginationResetLimits are not supported while having record filter.\")\n" +
		path + ": invalid, 1 error\n"
	if res.Code != 3 || res.Stderr != want {
		t.Fatalf("exit %d, stderr:\n%s\nwant:\n%s", res.Code, res.Stderr, want)
	}
}
