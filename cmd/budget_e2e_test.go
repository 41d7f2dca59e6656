package cmd

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// These tests read through an api_budget with a fake clock that a wait moves forward
// (nothing really sleeps), and assert when each request reached the API. Checked against
// the CDK 7.28.2 on the same definitions with a local server that logs arrival times: a
// moving window of 2 per PT1S sends pages at 0, 0, 1.001, 1.001, 2.002 s; a "none left"
// answer counts one more call; a fixed window follows the reset time the API sends.

// stepClock is a clock that stands still until a wait moves it forward. It is for reads
// that wait one at a time (one stream, one slice at a time).
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

func (c *stepClock) env() Env {
	env := testEnv(nil)
	env.Now, env.Sleep = c.Now, c.Sleep
	return env
}

// budgetDef is one stream, items, paged with ?page=1, 2, … one record per page, under
// the api_budget budget (YAML at column 0).
func budgetDef(budget string) string {
	return `version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
api_budget:
` + e2eIndent(budget, 2)
}

// budgetAPI answers pages 1 to pages with one record each, then an empty page, and logs
// when each request arrived (ms after t0 on clock), with the answer's extra headers from
// answer (nil: none).
func budgetAPI(t *testing.T, clock *stepClock, pages int, answer func(n int, w http.ResponseWriter) int) (*recorder, func() []string) {
	var mu sync.Mutex
	var log []string
	t0 := clock.Now()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, fmt.Sprintf("%d %s", clock.Now().Sub(t0).Milliseconds(), r.URL.RequestURI()))
		n := len(log)
		mu.Unlock()
		status := 200
		if answer != nil {
			status = answer(n, w)
		}
		w.WriteHeader(status)
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if status == 200 && page <= pages {
			fmt.Fprintf(w, `{"data": [{"id": %d}]}`, page)
			return
		}
		fmt.Fprint(w, `{"data": []}`)
	})
	return api, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
}

func budgetRead(t *testing.T, clock *stepClock, api *recorder, def string, args ...string) cliResult {
	t.Helper()
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	return runCLIEnv(t, clock.env(), "", append([]string{"read", defPath, "--testing-values", vals}, args...)...)
}

func TestBudgetPacesRequests(t *testing.T) {
	tests := []struct {
		name, budget string
		times        string
		note         string
	}{
		{"moving window", `
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates: [{limit: 2, interval: PT1S}]
    matchers: []
`, "0 /items?page=1, 0 /items?page=2, 1001 /items?page=3, 1001 /items?page=4, 2002 /items?page=5",
			"waiting 1.0 s for the API budget before GET http://API/items?page=3 (policy 1 (MovingWindowCallRatePolicy: 2 calls per PT1S))\n" +
				"waiting 1.0 s for the API budget before GET http://API/items?page=5 (policy 1 (MovingWindowCallRatePolicy: 2 calls per PT1S))\n" +
				"note: items: 2 requests waited 2.0 s in total for the API budget: policy 1 (MovingWindowCallRatePolicy: 2 calls per PT1S)\n"},
		{"fixed window", `
type: HTTPAPIBudget
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1S
    call_limit: 2
    matchers: []
`, "0 /items?page=1, 0 /items?page=2, 1000 /items?page=3, 1000 /items?page=4, 2000 /items?page=5",
			"waiting 1 s for the API budget before GET http://API/items?page=3 (policy 1 (FixedWindowCallRatePolicy: 2 calls per PT1S))\n" +
				"waiting 1 s for the API budget before GET http://API/items?page=5 (policy 1 (FixedWindowCallRatePolicy: 2 calls per PT1S))\n" +
				"note: items: 2 requests waited 2 s in total for the API budget: policy 1 (FixedWindowCallRatePolicy: 2 calls per PT1S)\n"},
		{"first matching policy wins", `
type: HTTPAPIBudget
policies:
  - type: UnlimitedCallRatePolicy
    matchers: [{params: {page: 2}}, {params: {page: 3}}]
  - type: FixedWindowCallRatePolicy
    period: PT1S
    call_limit: 1
    matchers: [{url_path_pattern: "^/items$", method: GET}]
`, "0 /items?page=1, 0 /items?page=2, 0 /items?page=3, 1000 /items?page=4, 2000 /items?page=5",
			"waiting 1 s for the API budget before GET http://API/items?page=4 (policy 2 (FixedWindowCallRatePolicy: 1 call per PT1S))\n" +
				"waiting 1 s for the API budget before GET http://API/items?page=5 (policy 2 (FixedWindowCallRatePolicy: 1 call per PT1S))\n" +
				"note: items: 2 requests waited 2 s in total for the API budget: policy 2 (FixedWindowCallRatePolicy: 1 call per PT1S)\n"},
		{"a request no policy matches is not paced", `
type: HTTPAPIBudget
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1S
    call_limit: 1
    matchers: [{url_path_pattern: "^/other"}, {method: POST}]
`, "0 /items?page=1, 0 /items?page=2, 0 /items?page=3, 0 /items?page=4, 0 /items?page=5", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &stepClock{now: resT0}
			api, log := budgetAPI(t, clock, 4, nil)
			res := budgetRead(t, clock, api, budgetDef(tt.budget))
			e2eCheckResult(t, api, res, 0, `{"id":1}
{"id":2}
{"id":3}
{"id":4}
`, tt.note)
			if got := strings.Join(log(), ", "); got != tt.times {
				t.Errorf("requests (ms after the start):\n%s\nwant\n%s", got, tt.times)
			}
		})
	}
}

func TestBudgetFollowsTheRateLimitHeaders(t *testing.T) {
	fixed := `
type: HTTPAPIBudget
ratelimit_remaining_header: X-Left
ratelimit_reset_header: X-Reset
policies:
  - type: FixedWindowCallRatePolicy
    period: PT10S
    call_limit: 5
    matchers: []
`
	moving := `
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates: [{limit: 3, interval: PT1S}]
    matchers: []
`
	reset := strconv.FormatInt(resT0.Add(3*time.Second).Unix(), 10)
	tests := []struct {
		name, budget string
		answer       func(n int, w http.ResponseWriter) int
		times        string
	}{
		// The API says 1 call is left until 3 s from now: the third request waits for that
		// reset, then the window of 5 runs on from it.
		{"remaining and reset", fixed, func(n int, w http.ResponseWriter) int {
			if n == 1 {
				w.Header().Set("X-Left", "1")
				w.Header().Set("X-Reset", reset)
			}
			return 200
		}, "0 /items?page=1, 0 /items?page=2, 3000 /items?page=3, 3000 /items?page=4, 3000 /items?page=5"},
		// A 429 without the remaining header: no call is left in the window; the retry
		// (after the error handler's 1 s) waits for the next window.
		{"429 on a fixed window", fixed, func(n int, w http.ResponseWriter) int {
			if n == 2 {
				return 429
			}
			return 200
		}, "0 /items?page=1, 0 /items?page=2, 10000 /items?page=2, 10000 /items?page=3, 10000 /items?page=4, 10000 /items?page=5"},
		// "None left" on a moving window counts one more call (as the CDK's bucket does):
		// the third request, which had room, waits for the first to leave.
		{"none left on a moving window", moving, func(n int, w http.ResponseWriter) int {
			if n == 1 {
				w.Header().Set("ratelimit-remaining", "0")
			}
			return 200
		}, "0 /items?page=1, 0 /items?page=2, 1001 /items?page=3, 1001 /items?page=4, 1001 /items?page=5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &stepClock{now: resT0}
			api, log := budgetAPI(t, clock, 4, tt.answer)
			res := budgetRead(t, clock, api, budgetDef(tt.budget))
			if res.Code != 0 {
				t.Fatalf("exit %d: %s", res.Code, res.Stderr)
			}
			if got := strings.Join(log(), ", "); got != tt.times {
				t.Errorf("requests (ms after the start):\n%s\nwant\n%s", got, tt.times)
			}
		})
	}
}

func TestBudgetWaitsInPaginateTrace(t *testing.T) {
	clock := &stepClock{now: resT0}
	api, _ := budgetAPI(t, clock, 2, nil)
	defPath := writeFile(t, "def.yaml", budgetDef(`
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates: [{limit: 1, interval: PT2S}]
    matchers: []
`))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	res := runCLIEnv(t, clock.env(), "", "paginate-trace", defPath, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	out := e2eScrub(res.Stdout, api)
	for _, want := range []string{
		"  waited 2.0 s for policy 1 (MovingWindowCallRatePolicy: 1 call per PT2S)\n  → GET http://API/items?page=2 (data)\n",
		"  waited 2.0 s for policy 1 (MovingWindowCallRatePolicy: 1 call per PT2S)\n  → GET http://API/items?page=3 (data)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the trace lacks %q:\n%s", want, out)
		}
	}
	if strings.Count(out, "waited") != 2 {
		t.Errorf("the trace shows %d waits, want 2:\n%s", strings.Count(out, "waited"), out)
	}
	res = runCLIEnv(t, clock.env(), "", "paginate-trace", defPath, "--testing-values", vals, "--format", "json")
	if !strings.Contains(res.Stdout, `"budget_policy":"policy 1 (MovingWindowCallRatePolicy: 1 call per PT2S)","budget_wait_ms":2001`) {
		t.Errorf("the json trace lacks the wait:\n%s", res.Stdout)
	}
}

// Concurrent slices, two streams and a parent stream share one budget. The real clock, in
// milliseconds: 2 requests per 50 ms over 9 requests take 200 ms at least. use_cache: false
// keeps the parent's answers out of the cache, so that every request goes to the API.
func TestBudgetIsSharedByConcurrentSlicesAndStreams(t *testing.T) {
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data": [{"id": 1}]}`)
	})
	def := `version: 6.5.0
definitions:
  requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", use_cache: false}
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  regions:
    type: DeclarativeStream
    name: regions
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /regions}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router: {type: ListPartitionRouter, cursor_field: region, values: [a, b, c, d, e, f]}
streams:
  - $ref: "#/definitions/regions"
  - type: DeclarativeStream
    name: children
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: "/children/{{ stream_partition.parent_id }}"}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/regions"}, parent_key: id, partition_field: parent_id}
api_budget:
  type: HTTPAPIBudget
  policies:
    - type: MovingWindowCallRatePolicy
      rates: [{limit: 2, interval: PT0.05S}]
      matchers: []
`
	start := time.Now()
	res := e2eRead(t, api, def, "", "--concurrency", "4")
	took := time.Since(start)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	// 6 slices of regions, 6 parent requests and 6 children: 18 requests.
	if n := len(api.requests()); n != 18 {
		t.Fatalf("%d requests, want 18", n)
	}
	if took < 400*time.Millisecond {
		t.Errorf("the read took %v; 18 requests at 2 per 50 ms take 400 ms at least", took)
	}
	for _, s := range []string{"regions", "children"} {
		if !strings.Contains(res.Stderr, "note: "+s+": ") {
			t.Errorf("stderr has no note for %s:\n%s", s, res.Stderr)
		}
	}
}

// definitions/api-budget.yaml reads the demo API: books under a moving window, the first
// page of authors free, its others under a fixed window.
func TestBudgetDefinitionReadsTheDemoAPI(t *testing.T) {
	clock := &stepClock{now: resT0}
	srv := demoapi.New(demoapi.Options{Now: clock.Now})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	res := runCLIEnv(t, clock.env(), "", "read", filepath.Join("..", "definitions", "api-budget.yaml"),
		"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url="+ts.URL)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	if n := strings.Count(res.Stdout, "\n"); n != 2*demoapi.DefaultRecords {
		t.Errorf("%d records, want %d", n, 2*demoapi.DefaultRecords)
	}
	want := `waiting 1.0 s for the API budget before GET URL/v1/public/books?offset=200&limit=100 (policy 2 (MovingWindowCallRatePolicy: 2 calls per PT1S))
note: books: 1 request waited 1.0 s in total for the API budget: policy 2 (MovingWindowCallRatePolicy: 2 calls per PT1S)
waiting 1 s for the API budget before GET URL/v1/public/authors?offset=200&limit=100 (policy 3 (FixedWindowCallRatePolicy: 1 call per PT1S))
note: authors: 1 request waited 1 s in total for the API budget: policy 3 (FixedWindowCallRatePolicy: 1 call per PT1S)
`
	if strings.ReplaceAll(res.Stderr, ts.URL, "URL") != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", res.Stderr, want)
	}
	if got := srv.Stats().DataRequests; got != 6 {
		t.Errorf("%d data requests, want 6", got)
	}
	if got := clock.Now().Sub(resT0); got != 2001*time.Millisecond {
		t.Errorf("the read took %v of the fake clock, want 2.001s", got)
	}
}

// The OAuth token request is sent outside the api_budget, as the CDK sends it (with plain
// `requests`, not its budgeted HttpClient): under 1 call per second for every request, the
// token and the first page go out at once, the second page a second later.
func TestBudgetLeavesTheTokenRequestOut(t *testing.T) {
	clock := &stepClock{now: resT0}
	api, log := timedAPI(t, clock, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/token" {
			fmt.Fprint(w, `{"access_token":"tok-1","expires_in":3600}`)
			return
		}
		if page, _ := strconv.Atoi(r.URL.Query().Get("page")); page <= 2 {
			fmt.Fprintf(w, `{"data": [{"id": %d}]}`, page)
			return
		}
		fmt.Fprint(w, `{"data": []}`)
	})
	def := strings.Replace(budgetDef(`
type: HTTPAPIBudget
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1S
    call_limit: 1
    matchers: []
`), "        path: /items\n", `        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          grant_type: client_credentials
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
`, 1)
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nclient_id: id\nclient_secret: secret\n")
	res := runCLIEnv(t, clock.env(), "", "read", defPath, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	want := "0 POST /token, 0 GET /items?page=1, 1000 GET /items?page=2, 2000 GET /items?page=3"
	if got := log(); got != want {
		t.Errorf("requests (ms after the start):\n%s\nwant\n%s", got, want)
	}
}

// The legacy session token's validation and login go outside the api_budget too (the CDK
// sends them with plain `requests`): under 1 call per second, the validation, the login
// and the first page go at once.
func TestBudgetLeavesTheLegacySessionLoginOut(t *testing.T) {
	clock := &stepClock{now: resT0}
	api, log := timedAPI(t, clock, legacyAPI)
	def := `version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
` + e2eIndent(legacyRequester, 8) + `
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
` + legacyPaginator + `api_budget:
  type: HTTPAPIBudget
  policies:
    - type: FixedWindowCallRatePolicy
      period: PT1S
      call_limit: 1
      matchers: []
`
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nusername: u\npassword: p\nsession_token: stale\n")
	res := runCLIEnv(t, clock.env(), "", "read", defPath, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	want := "0 GET /api/user/current, 0 POST /api/session, 0 GET /api/items?page=1, 0 GET /api/user/current, 1000 GET /api/items?page=2"
	if got := log(); got != want {
		t.Errorf("requests (ms after the start):\n%s\nwant\n%s", got, want)
	}
}

// timedAPI serves h and logs when each request arrived ("ms-after-resT0 METHOD URI" on
// clock); log joins the lines with ", ".
func timedAPI(t *testing.T, clock *stepClock, h http.HandlerFunc) (api *recorder, log func() string) {
	var mu sync.Mutex
	var lines []string
	api = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf("%d %s %s", clock.Now().Sub(resT0).Milliseconds(), r.Method, r.URL.RequestURI()))
		mu.Unlock()
		h(w, r)
	})
	return api, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(lines, ", ")
	}
}
