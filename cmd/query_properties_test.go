package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// QueryProperties checked against the Airbyte CDK 7.28.2: testdata/query-properties/
// definition.yaml was run through the CDK (run-cdk read --concurrency 1, one stream at a
// time) against logserver.py answering the routes of queryPropertiesRoutes; the requests and
// records below are what it sent and emitted. Each page is one request per property chunk
// with the page's token; the chunk goes last among the requester's parameters; records
// without a merge key come first, the merged ones after in the order their keys first
// appeared; the merged count is the page size (page 1 of `chunked` has 4 records, page 2
// has 2 of 3: the end); the next token is the last chunk's (`cursor`: Z, not X or Y).

var queryPropertiesRoutes = []resetRoute{
	{path: "/chunked", want: map[string]string{"fields": "id,name,email", "page": ""},
		body: `{"data":[{"id":"1","name":"n1","email":"e1"},{"x":1},{"id":"2","name":"n2","email":"e2","nested":{"a":1,"b":1}},{"id":"3","name":"n3"}]}`},
	{path: "/chunked", want: map[string]string{"fields": "id,created_at,a", "page": ""},
		body: `{"data":[{"id":"2","created_at":"c2","a":2,"nested":{"b":2,"c":2}},{"id":"1","created_at":"c1","a":1},{"id":"","y":2},{"id":"3","a":3}]}`},
	{path: "/chunked", want: map[string]string{"fields": "id,updated", "page": ""},
		body: `{"data":[{"id":"3","updated":"u3"},{"id":"1","updated":"u1"},{"id":"2","updated":"u2"}]}`},
	{path: "/chunked", want: map[string]string{"fields": "id,name,email", "page": "2"}, body: `{"data":[{"id":"4","name":"n4"},{"id":"5","name":"n5"}]}`},
	{path: "/chunked", want: map[string]string{"fields": "id,created_at,a", "page": "2"}, body: `{"data":[{"id":"4","a":4},{"id":"5","a":5}]}`},
	{path: "/chunked", want: map[string]string{"fields": "id,updated", "page": "2"}, body: `{"data":[{"id":"5","updated":"u5"},{"id":"4","updated":"u4"}]}`},
	{path: "/insights", want: map[string]string{"period": "day"},
		body: `{"data":[{"date":"d1","kind":"k","follower_count":1,"reach":10},{"date":"d2","kind":"k","reach":20}]}`},
	{path: "/insights", want: map[string]string{"period": "week"},
		body: `{"data":[{"date":"d2","kind":"k","reach":200,"week":true},{"date":"d1","kind":"k","week_reach":100}]}`},
	{path: "/cursor", want: map[string]string{"props": "alpha,beta", "after": ""}, body: `{"next":"X","data":[{"id":"1","alpha":1,"beta":1}]}`},
	{path: "/cursor", want: map[string]string{"props": "gamma_long_name", "after": ""}, body: `{"next":"Y","data":[{"id":"1","gamma_long_name":1}]}`},
	{path: "/cursor", want: map[string]string{"props": "d", "after": ""}, body: `{"next":"Z","data":[{"id":"1","d":1}]}`},
	{path: "/cursor", want: map[string]string{"props": "alpha,beta", "after": "Z"}, body: `{"next":"W","data":[{"id":"2","alpha":2}]}`},
	{path: "/cursor", want: map[string]string{"props": "gamma_long_name", "after": "Z"}, body: `{"next":"V","data":[{"id":"2","gamma_long_name":2}]}`},
	{path: "/cursor", want: map[string]string{"props": "d", "after": "Z"}, body: `{"next":null,"data":[{"id":"2","d":2}]}`},
	{path: "/nochunk", body: `{"data":[{"id":"1","name":"a"},{"id":"1","email":"b"}]}`},
}

func TestQueryPropertiesAsTheCDK(t *testing.T) {
	def, err := os.ReadFile(filepath.Join("testdata", "query-properties", "definition.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	lines := func(l ...string) string { return strings.Join(l, "\n") + "\n" }
	chunked := []string{
		"/chunked?sort=asc&limit=3&fields=id%2Cname%2Cemail",
		"/chunked?sort=asc&limit=3&fields=id%2Ccreated_at%2Ca",
		"/chunked?sort=asc&limit=3&fields=id%2Cupdated",
		"/chunked?sort=asc&limit=3&fields=id%2Cname%2Cemail&page=2",
		"/chunked?sort=asc&limit=3&fields=id%2Ccreated_at%2Ca&page=2",
		"/chunked?sort=asc&limit=3&fields=id%2Cupdated&page=2",
	}
	chunkedRecords := lines(`{"x":1}`, `{"id":"","y":2}`,
		`{"id":"1","name":"n1","email":"e1","created_at":"c1","a":1,"updated":"u1"}`,
		`{"id":"2","name":"n2","email":"e2","nested":{"a":1,"b":2,"c":2},"created_at":"c2","a":2,"updated":"u2"}`,
		`{"id":"3","name":"n3","a":3,"updated":"u3"}`,
		`{"id":"4","name":"n4","a":4,"updated":"u4"}`,
		`{"id":"5","name":"n5","a":5,"updated":"u5"}`)
	tests := []struct {
		name   string
		args   []string
		urls   []string
		stdout string
		stderr string
	}{{
		name:   "chunks merged by id, page size the merged count",
		args:   []string{"--stream", "chunked"},
		urls:   chunked,
		stdout: chunkedRecords,
	}, {
		name:   "no requests ahead",
		args:   []string{"--stream", "chunked", "--prefetch", "4"},
		urls:   chunked,
		stdout: chunkedRecords,
		stderr: "note: chunked: --prefetch 4 ignored, reading one page at a time: QueryProperties sends each page's property chunks one after the other\n",
	}, {
		name:   "requester query_properties read by templates, merged by two keys",
		args:   []string{"--stream", "insights"},
		urls:   []string{"/insights?period=day&metric=follower_count%2Creach", "/insights?period=week&metric=reach"},
		stdout: lines(`{"date":"d1","kind":"k","follower_count":1,"reach":10,"week_reach":100}`, `{"date":"d2","kind":"k","reach":200,"week":true}`),
	}, {
		name: "characters chunks, next token from the last chunk",
		args: []string{"--stream", "cursor"},
		urls: []string{"/cursor?props=alpha%2Cbeta", "/cursor?props=gamma_long_name", "/cursor?props=d",
			"/cursor?props=alpha%2Cbeta&after=Z", "/cursor?props=gamma_long_name&after=Z", "/cursor?props=d&after=Z"},
		stdout: lines(`{"id":"1","alpha":1,"beta":1,"gamma_long_name":1,"d":1}`, `{"id":"2","alpha":2,"gamma_long_name":2,"d":2}`),
	}, {
		name:   "without chunking one request, always-included first, no merge",
		args:   []string{"--stream", "nochunk"},
		urls:   []string{"/nochunk?properties=id%2Cname%2Cemail"},
		stdout: lines(`{"id":"1","name":"a"}`, `{"id":"1","email":"b"}`),
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := resetAPI(t, queryPropertiesRoutes)
			res := e2eRead(t, api, string(def), "", tt.args...)
			var want []e2eRequest
			for _, u := range tt.urls {
				want = append(want, e2eRequest{Method: "GET", URL: u})
			}
			e2eCheckRequests(t, api, want...)
			e2eCheckResult(t, api, res, 0, tt.stdout, tt.stderr)
		})
	}
}
