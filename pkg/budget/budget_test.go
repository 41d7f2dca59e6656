package budget

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// load reads a definition whose api_budget is budget (YAML at column 0).
func load(t *testing.T, budget string) *manifest.APIBudget {
	t.Helper()
	src := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
api_budget:
` + indent(budget)
	def, diags := manifest.Parse("def.yaml", []byte(src))
	if diags.HasErrors() || def == nil {
		t.Fatalf("load:\n%v", diags)
	}
	return def.Budget
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
		b.WriteString("  " + line + "\n")
	}
	return b.String()
}

// clock is a fake clock that a sleep moves forward.
type clock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

func newBudget(t *testing.T, def string, config map[string]any) (*Budget, *clock) {
	t.Helper()
	c := &clock{now: t0}
	b, err := New(load(t, def), template.Globals{Config: config}, c.Now, c.Sleep)
	if err != nil {
		t.Fatal(err)
	}
	return b, c
}

func get(url string, header ...string) *httpx.Request {
	h := http.Header{}
	for i := 0; i+1 < len(header); i += 2 {
		h[header[i]] = []string{header[i+1]}
	}
	return &httpx.Request{Kind: "data", Method: "GET", URL: url, Header: h, Read: "items"}
}

// policyOf is the name of the policy that paces req, "" when none does.
func policyOf(b *Budget, req *httpx.Request) string {
	p, _ := b.match(req)
	if p == nil {
		return ""
	}
	return p.name[:len("policy 1")]
}

func TestMatchersAsTheCDK(t *testing.T) {
	b, _ := newBudget(t, `
type: HTTPAPIBudget
policies:
  - type: UnlimitedCallRatePolicy
    matchers:
      - {headers: {X-Sandbox: true}}
  - type: MovingWindowCallRatePolicy
    rates: [{limit: 5, interval: PT1S}]
    matchers:
      - {method: post, url_base: "https://api.example.com/", url_path_pattern: "/search"}
      - {url_path_pattern: "ad_accounts/[^/]+/analytics", params: {level: 2, granularity: DAY}}
  - type: FixedWindowCallRatePolicy
    period: PT1M
    call_limit: 10
    matchers:
      - {url_base: "https://api.example.com"}
`, nil)
	post := func(url string) *httpx.Request { r := get(url); r.Method = "POST"; return r }
	for _, tt := range []struct {
		req  *httpx.Request
		want string
	}{
		// header names in any case, values as Python's str(True)
		{get("https://api.example.com/items", "x-sandbox", "True"), "policy 1"},
		{get("https://api.example.com/items", "X-Sandbox", "true"), "policy 3"},
		// the method in any case; the path pattern searched anywhere in the path; url_base
		// without its trailing slash
		{post("https://api.example.com/v1/search/"), "policy 2"},
		{get("https://api.example.com/v1/search"), "policy 3"},
		{post("https://other.example.com/v1/search"), ""},
		// params: every one present, with the value; other parameters allowed; the last
		// of a repeated key; a blank value is no value
		{get("https://api.example.com/v5/ad_accounts/42/analytics?granularity=DAY&level=2&x=1"), "policy 2"},
		{get("https://api.example.com/v5/ad_accounts/42/analytics?granularity=DAY&level=1&level=2"), "policy 2"},
		{get("https://api.example.com/v5/ad_accounts/42/analytics?granularity=DAY&level=2&level=1"), "policy 3"},
		{get("https://api.example.com/v5/ad_accounts/42/analytics?granularity=DAY"), "policy 3"},
		{get("https://api.example.com/v5/ad_accounts//analytics?granularity=DAY&level=2"), "policy 3"},
		// url_base is scheme://host exactly, the port included
		{get("https://api.example.com:8443/items"), ""},
		{get("http://api.example.com/items"), ""},
	} {
		if got := policyOf(b, tt.req); got != tt.want {
			t.Errorf("%s %s %v: %q, want %q", tt.req.Method, tt.req.URL, tt.req.Header, got, tt.want)
		}
	}
}

func TestNoMatchersMatchEveryRequest(t *testing.T) {
	b, c := newBudget(t, `
type: HTTPAPIBudget
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1S
    call_limit: 1
    matchers: []
`, nil)
	ctx := context.Background()
	login := &httpx.Request{Kind: "login", Method: "POST", URL: "https://api.example.com/login", Header: http.Header{}}
	for _, req := range []*httpx.Request{get("https://anything.example/x"), login} {
		if _, err := b.Acquire(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	// The data request took the window's call, the login waited for the next window. (OAuth
	// token requests never reach the budget: they are httpx.Request.Unpaced.)
	if len(c.slept) != 1 || c.slept[0] != time.Second {
		t.Fatalf("slept %v, want [1s] (the login request, in the next window)", c.slept)
	}
}

func TestWeightsAndTemplatesOnConfig(t *testing.T) {
	b, _ := newBudget(t, `
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates:
      - limit: "{{ config.get('per_second', 25) }}"
        interval: PT1S
    matchers:
      - {url_path_pattern: "^/heavy", weight: "{{ config['heavy'] }}"}
      - {}
`, map[string]any{"per_second": 4, "heavy": "3"})
	ctx := context.Background()
	// 3 + 1 calls fill the window of 4; the second heavy request waits for the first to leave.
	for i, u := range []string{"/heavy", "/light", "/heavy"} {
		pace, err := b.Acquire(ctx, get("https://api.example.com"+u))
		if err != nil {
			t.Fatal(err)
		}
		want := httpx.Pace{}
		if i == 2 {
			want = httpx.Pace{Wait: 1001 * time.Millisecond, Policy: "policy 1 (MovingWindowCallRatePolicy: 4 calls per PT1S)"}
		}
		if pace != want {
			t.Fatalf("request %d (%s): %+v, want %+v", i+1, u, pace, want)
		}
	}
	if tot, _ := b.Waited("items"); tot.Wait != 1001*time.Millisecond || tot.Requests != 1 {
		t.Fatalf("total %+v", tot)
	}

	_, err := New(load(t, `
type: HTTPAPIBudget
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1M
    call_limit: 2
    matchers: [{weight: 3}]
`), template.Globals{}, nil, nil)
	want := "api_budget.policies[0].matchers[0].weight: a weight of 3 is more than the 2 calls policy 1 (FixedWindowCallRatePolicy: 2 calls per PT1M) allows: such a request could never go"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
	_, err = New(load(t, `
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates: [{limit: "{{ config['n'] }}", interval: PT1S}]
    matchers: []
`), template.Globals{Config: map[string]any{"n": "many"}}, nil, nil)
	if want := `api_budget.policies[0].rates[0].limit: "many" is not an integer`; err == nil || err.Error() != want {
		t.Fatalf("error %v\nwant %s", err, want)
	}
}

func TestUpdateFromHeaders(t *testing.T) {
	b, c := newBudget(t, `
type: HTTPAPIBudget
ratelimit_remaining_header: X-RateLimit-Remaining
ratelimit_reset_header: X-RateLimit-Reset
status_codes_for_ratelimit_hit: [429, 503]
policies:
  - type: FixedWindowCallRatePolicy
    period: PT1M
    call_limit: 100
    matchers: [{url_path_pattern: "^/limited"}]
`, nil)
	ctx := context.Background()
	req := get("https://api.example.com/limited")
	h := func(kv ...string) http.Header {
		out := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			out.Set(kv[i], kv[i+1])
		}
		return out
	}
	b.Acquire(ctx, req)
	// 503 without the remaining header: none left; the reset header (an epoch second)
	// ends the window 5 s from now.
	b.Update(req, 503, h("X-RateLimit-Reset", "1772366405"))
	// a request no policy matches changes nothing
	b.Update(get("https://api.example.com/other"), 429, h())
	pace, _ := b.Acquire(ctx, req)
	if pace.Wait != 5*time.Second {
		t.Fatalf("waited %v, want 5s (until the reset time)", pace.Wait)
	}
	// the remaining header wins over the status; values that are not integers are ignored
	b.Update(req, 429, h("X-RateLimit-Remaining", "1", "X-RateLimit-Reset", "soon"))
	if pace, _ := b.Acquire(ctx, req); pace.Wait != 0 {
		t.Fatalf("waited %v, want 0: one call was left", pace.Wait)
	}
	if pace, _ := b.Acquire(ctx, req); pace.Wait != time.Minute {
		t.Fatalf("waited %v at %v, want 1m (the window after the reset)", pace.Wait, c.Now())
	}
}

func TestConcurrentRequestsShareTheBudget(t *testing.T) {
	b, err := New(load(t, `
type: HTTPAPIBudget
policies:
  - type: MovingWindowCallRatePolicy
    rates: [{limit: 5, interval: PT0.05S}]
    matchers: []
`), template.Globals{}, nil, nil) // the real clock, in milliseconds: 15 calls take at least 100 ms
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	for range 15 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Acquire(context.Background(), get("https://api.example.com/x")); err != nil {
				t.Error(err)
			}
			mu.Lock()
			times = append(times, time.Since(start))
			mu.Unlock()
		}()
	}
	wg.Wait()
	late, last := 0, time.Duration(0)
	for _, d := range times {
		if d >= 50*time.Millisecond {
			late++
		}
		last = max(last, d)
	}
	if late < 10 || last < 100*time.Millisecond {
		t.Fatalf("%d of 15 calls went after 50 ms, the last after %v; want 10 at least, and 100 ms (5 per 50 ms): %v", late, last, times)
	}
	if tot, _ := b.Waited("items"); tot.Requests < 10 {
		t.Fatalf("%d requests waited, want 10 at least", tot.Requests)
	}
}
