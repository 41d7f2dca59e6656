package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/redact"
	"connector/pkg/request"
	"connector/pkg/template"
)

// quotaAPI is a local API with a quota status endpoint (/rate_limit) that answers per token
// from status, and data endpoints that answer from data (by call number, the last one again
// when they run out). It keeps "METHOD path token" of every request.
type quotaAPI struct {
	*httptest.Server
	mu     sync.Mutex
	status map[string]string // token → JSON body (a body "404" answers 404)
	data   []quotaAnswer
	calls  int
	log    []string
	extra  []http.Header // the headers of each request
}

// quotaAnswer is the answer to one data request.
type quotaAnswer struct {
	status int
	header map[string]string
}

func newQuotaAPI(t *testing.T, status map[string]string, data ...quotaAnswer) *quotaAPI {
	q := &quotaAPI{status: status, data: data}
	q.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.Header.Get("Authorization") + r.Header.Get("X-Auth")
		q.mu.Lock()
		defer q.mu.Unlock()
		q.log = append(q.log, r.Method+" "+r.URL.RequestURI()+" "+tok)
		q.extra = append(q.extra, r.Header.Clone())
		if r.URL.Path == "/rate_limit" {
			body := q.status[tok]
			if body == "404" || body == "500" {
				w.WriteHeader(map[string]int{"404": 404, "500": 500}[body])
				return
			}
			fmt.Fprint(w, body)
			return
		}
		a := quotaAnswer{status: 200}
		if len(q.data) > 0 {
			a = q.data[min(q.calls, len(q.data)-1)]
		}
		q.calls++
		for k, v := range a.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(a.status)
		fmt.Fprint(w, `{"data": []}`)
	}))
	t.Cleanup(q.Close)
	return q
}

func (q *quotaAPI) requests() []string {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append([]string(nil), q.log...)
}

// quotaRun is an authenticator built against a quotaAPI, with a clock that a sleep moves.
type quotaRun struct {
	t      *testing.T
	a      Authenticator
	client *httpx.Client
	clock  *clock
	slept  []time.Duration
	r      *redact.Redactor
	notes  []string
	logs   []string // "LEVEL text"
}

// status is a quota status body: remaining, limit and reset (seconds after the clock's start)
// of the pool core.
func status(remaining, limit, reset int) string {
	return fmt.Sprintf(`{"resources": {"core": {"remaining": %d, "limit": %d, "reset": %d}}}`, remaining, limit, quotaEpoch+int64(reset))
}

// quotaEpoch is the start of the tests' clock in epoch seconds.
const quotaEpoch = 1798761600 // 2027-01-01T00:00:00Z

func newQuotaRun(t *testing.T, authYAML string, config map[string]any) (*quotaRun, error) {
	t.Helper()
	q := &quotaRun{t: t, clock: &clock{now: time.Unix(quotaEpoch, 0).UTC()}, r: &redact.Redactor{}}
	q.client = &httpx.Client{HTTP: http.DefaultClient, Redactor: q.r, Now: q.clock.Now,
		Sleep: func(_ context.Context, d time.Duration) error {
			q.slept = append(q.slept, d)
			q.clock.advance(d)
			return nil
		}}
	a, err := New(loadAuth(t, authYAML), Env{Globals: template.Globals{Config: config}, Client: q.client, Redactor: q.r,
		Now: q.clock.Now, Note: func(s string) { q.notes = append(q.notes, s) },
		Log: func(level, text string) { q.logs = append(q.logs, level+" "+text) }})
	q.a = a
	return q, err
}

// get sends GET url with the authenticator, as a read does.
func (q *quotaRun) get(url string) (*httpx.Response, error) {
	q.t.Helper()
	b := request.New("data", "GET", url)
	if err := q.a.Apply(context.Background(), b); err != nil {
		q.t.Fatal(err)
	}
	req, err := b.Build()
	if err != nil {
		q.t.Fatal(err)
	}
	return q.client.Do(context.Background(), req)
}

// rlYAML is a RateLimitedMultipleTokenAuthenticator on api's quota status, with extra fields.
func rlYAML(api *quotaAPI, tokens, extra string) string {
	return `
    type: RateLimitedMultipleTokenAuthenticator
    tokens: ` + tokens + `
    quota_status_source:
      type: QuotaStatusSource
      url: "` + api.URL + `/rate_limit"
    quotas:
      - type: TokenQuota
        name: core
        remaining_path: [resources, core, remaining]
        reset_path: [resources, core, reset]
        limit_path: [resources, core, limit]` + extra
}

func TestRateLimitedRotatesWhenAQuotaIsSpent(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(1, 10, 60), "Bearer t2": status(2, 10, 60)})
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}", " {{ config.b }} ", "{{ config.none }}"]`, `
    budget_min_reserve: 0
    budget_reserve_fraction: 0`), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if q.a.Name() != "RateLimitedMultipleTokenAuthenticator" {
		t.Errorf("Name() = %s", q.a.Name())
	}
	for range 3 {
		if _, err := q.get(api.URL + "/items"); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"GET /rate_limit Bearer t1", "GET /rate_limit Bearer t2",
		"GET /items Bearer t1", "GET /items Bearer t2", "GET /items Bearer t2",
	}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
	if len(q.slept) != 0 {
		t.Errorf("slept %v", q.slept)
	}
}

func TestRateLimitedTokensInOneStringAuthMethodAndHeaders(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"token t1": status(5, 5, 60), "token t2": status(5, 5, 60)})
	q, err := newQuotaRun(t, rlYAML(api, `"{{ config.tokens }}"`, `
    token_delimiter: ";"
    auth_method: token
    header: X-Auth
    budget_min_reserve: 0`)+`
    max_wait_time: "PT{{ config.minutes }}M"`, map[string]any{"tokens": " t1 ;; t2 ", "minutes": 3})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /rate_limit token t1", "GET /rate_limit token t2", "GET /items token t1"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
	if rl := q.a.(*rateLimited); rl.maxWait != 3*time.Minute || !reflect.DeepEqual(rl.tokens, []string{"t1", "t2"}) {
		t.Errorf("maxWait %s, tokens %q", rl.maxWait, rl.tokens)
	}
}

func TestRateLimitedStatusRequestHeadersAndMethod(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(5, 5, 60)})
	q, err := newQuotaRun(t, strings.Replace(rlYAML(api, `"{{ config.a }}"`, ""), `/rate_limit"`, `/rate_limit"
      http_method: POST
      request_headers:
        X-Version: "{{ config.v }}"`, 1), map[string]any{"a": "t1", "v": "2024"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	if got := api.requests()[0]; got != "POST /rate_limit Bearer t1" {
		t.Errorf("status request %q", got)
	}
	if got := api.extra[0].Get("X-Version"); got != "2024" {
		t.Errorf("X-Version %q", got)
	}
}

func TestRateLimitedPoolsByMatcher(t *testing.T) {
	body := func(core, search int) string {
		return fmt.Sprintf(`{"core": {"remaining": %d, "reset": "2027-01-01T01:00:00Z"}, "search": {"remaining": %d, "reset": "2027-01-01 00:01:00"}}`, core, search)
	}
	api := newQuotaAPI(t, map[string]string{"Bearer t1": body(5, 1), "Bearer t2": body(5, 5)})
	q, err := newQuotaRun(t, `
    type: RateLimitedMultipleTokenAuthenticator
    tokens: ["{{ config.a }}", "{{ config.b }}"]
    quota_status_source: {type: QuotaStatusSource, url: "`+api.URL+`/rate_limit"}
    budget_min_reserve: 0
    budget_reserve_fraction: 0
    quotas:
      - {type: TokenQuota, name: core, remaining_path: [core, remaining], reset_path: [core, reset]}
      - type: TokenQuota
        name: search
        remaining_path: [search, remaining]
        reset_path: [search, reset]
        matchers: [{type: HttpRequestRegexMatcher, url_path_pattern: "/search"}]`, map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"/search", "/items", "/search", "/items"} {
		if _, err := q.get(api.URL + p); err != nil {
			t.Fatal(err)
		}
	}
	// Token 1's one search call is spent by the first search: the second goes with token 2,
	// which stays the active token for every pool.
	want := []string{"GET /rate_limit Bearer t1", "GET /rate_limit Bearer t2",
		"GET /search Bearer t1", "GET /items Bearer t1", "GET /search Bearer t2", "GET /items Bearer t2"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
}

func TestRateLimitedHeadersCorrectTheCounters(t *testing.T) {
	reset := fmt.Sprint(quotaEpoch + 60)
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(5, 10, 60), "Bearer t2": status(5, 10, 60)},
		// Another client used token 1: the API says 1 is left, then 0, then refuses.
		quotaAnswer{200, map[string]string{"X-Left": "1", "X-Reset": reset, "X-Limit": "10"}},
		quotaAnswer{200, map[string]string{"X-Left": "0", "X-Reset": reset}},
		quotaAnswer{200, map[string]string{"X-Left": "4", "X-Reset": reset}},
		// A newer window: token 2 is full again as far as the API says.
		quotaAnswer{200, map[string]string{"X-Reset": fmt.Sprint(quotaEpoch + 120), "X-Limit": "7"}},
		quotaAnswer{200, nil},
	)
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}", "{{ config.b }}"]`, `
        remaining_header: X-Left
        reset_header: X-Reset
        limit_header: X-Limit
        exhaustion_status_codes: [429]
    budget_min_reserve: 0
    budget_reserve_fraction: 0`), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := q.get(api.URL + "/items"); err != nil {
			t.Fatal(err)
		}
	}
	rl := q.a.(*rateLimited)
	st1, st2 := *rl.states["t1"]["core"], *rl.states["t2"]["core"]
	if st1.remaining != 0 || st1.limit != 10 {
		t.Errorf("token 1: %+v", st1)
	}
	if st2.remaining != 7 || st2.limit != 7 || !st2.reset.Equal(time.Unix(quotaEpoch+120, 0)) {
		t.Errorf("token 2: %+v", st2)
	}
	want := []string{"GET /rate_limit Bearer t1", "GET /rate_limit Bearer t2",
		"GET /items Bearer t1", "GET /items Bearer t1", "GET /items Bearer t2", "GET /items Bearer t2"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
}

func TestRateLimited429RotatesAtOnce(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(5, 10, 60), "Bearer t2": status(5, 10, 60)},
		quotaAnswer{429, map[string]string{"Retry-After": "50"}},
		quotaAnswer{200, nil},
	)
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}", "{{ config.b }}"]`, `
        exhaustion_status_codes: [429]
    budget_min_reserve: 0
    budget_reserve_fraction: 0`), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	want := []string{"GET /rate_limit Bearer t1", "GET /rate_limit Bearer t2", "GET /items Bearer t1", "GET /items Bearer t2"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
	if !reflect.DeepEqual(q.slept, []time.Duration{100 * time.Millisecond}) {
		t.Errorf("slept %v, want the rotation's 100ms instead of Retry-After's 50s", q.slept)
	}
}

func TestRateLimitedWaitsForTheResetThenAsksAgain(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(1, 1, 30), "Bearer t2": status(0, 1, 2)})
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}", "{{ config.b }}"]`, `
    max_wait_time: PT1M
    budget_min_reserve: 0`), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	// Both spent: token 2's reset is 2 s away, but a wait is at least 5 s. After it the
	// quotas are asked again, still spent, and the next reset is beyond the minute.
	api.mu.Lock()
	api.status["Bearer t1"], api.status["Bearer t2"] = status(0, 1, 600), status(0, 1, 600)
	api.mu.Unlock()
	_, err = q.get(api.URL + "/items")
	if err == nil || !strings.Contains(err.Error(), `the quota "core" of every token is spent and the next reset is beyond max_wait_time (1m0s)`) {
		t.Fatalf("err = %v", err)
	}
	if want := []time.Duration{5 * time.Second}; !reflect.DeepEqual(q.slept, want) {
		t.Errorf("slept %v, want %v", q.slept, want)
	}
	if len(q.notes) != 1 || q.notes[0] != `every token's quota "core" is spent: waiting 5s for the reset` {
		t.Errorf("notes %q", q.notes)
	}
	if want := []string{"INFO All tokens exhausted (quota: core). Waiting 5s until rate limit resets."}; !reflect.DeepEqual(q.logs, want) {
		t.Errorf("logs %q, want the CDK's %q", q.logs, want)
	}
	// Seeded once, then again after the wait.
	if got := strings.Count(strings.Join(api.requests(), "\n"), "/rate_limit"); got != 4 {
		t.Errorf("%d quota status requests, want 4: %q", got, api.requests())
	}
}

func TestRateLimitedUntrackedTokensTakeTurns(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": "404", "Bearer t2": "404"},
		quotaAnswer{429, nil}, quotaAnswer{200, nil})
	q, err := newQuotaRun(t, strings.Replace(rlYAML(api, `["{{ config.a }}", "{{ config.b }}"]`, `
        exhaustion_status_codes: [429]`), `/rate_limit"`, `/rate_limit"
      unavailable_status_codes: [404]`, 1), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := q.get(api.URL + "/items"); err != nil {
			t.Fatal(err)
		}
	}
	// The 429 is retried with the next token in turn, after the usual backoff (no counter
	// says token 1 is the one spent).
	want := []string{"GET /rate_limit Bearer t1", "GET /rate_limit Bearer t2",
		"GET /items Bearer t1", "GET /items Bearer t2", "GET /items Bearer t1"}
	if got := api.requests(); !reflect.DeepEqual(got, want) {
		t.Errorf("requests\n got %q\nwant %q", got, want)
	}
	if len(q.slept) != 1 || q.slept[0] == 100*time.Millisecond {
		t.Errorf("slept %v, want one backoff", q.slept)
	}
	// Once, in the CDK's words.
	if len(q.logs) != 1 || !strings.HasPrefix(q.logs[0], "INFO Quota status endpoint reports that rate limiting is unavailable. Token quotas are untracked: ") {
		t.Errorf("logs %q", q.logs)
	}
}

// A long wait for a reset says what is left each minute, as the CDK's heartbeat does.
func TestRateLimitedWaitHeartbeat(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(1, 1, 150)})
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}"]`, `
    budget_min_reserve: 0`), map[string]any{"a": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	api.mu.Lock()
	api.status["Bearer t1"] = status(5, 5, 3600)
	api.mu.Unlock()
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{time.Minute, time.Minute, 30 * time.Second}; !reflect.DeepEqual(q.slept, want) {
		t.Errorf("slept %v, want %v", q.slept, want)
	}
	want := []string{
		"INFO All tokens exhausted (quota: core). Waiting 150s until rate limit resets.",
		"INFO Rate limit exhausted (quota: core). Waiting for reset — 90s remaining.",
		"INFO Rate limit exhausted (quota: core). Waiting for reset — 30s remaining.",
	}
	if !reflect.DeepEqual(q.logs, want) {
		t.Errorf("logs\n%q\nwant\n%q", q.logs, want)
	}
}

func TestRateLimitedSpacesTheLastCalls(t *testing.T) {
	// The default reserve is 50 calls: with 10 and 9 left and the reset 95 s away, each call
	// waits the time to the reset shared among the calls left.
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(10, 100, 95), "Bearer t2": status(9, 100, 95)})
	q, err := newQuotaRun(t, rlYAML(api, `["{{ config.a }}", "{{ config.b }}"]`, ""), map[string]any{"a": "t1", "b": "t2"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{95 * time.Second / 18}; !reflect.DeepEqual(q.slept, want) {
		t.Errorf("slept %v, want %v", q.slept, want)
	}
	if _, err := q.get(api.URL + "/items"); err != nil {
		t.Fatal(err)
	}
	if want := []string{"INFO API budget: throttling requests (5.3s delay) for quota 'core'."}; len(q.slept) != 2 || !reflect.DeepEqual(q.logs, want) {
		t.Errorf("slept %v, logs %q: want two pauses and the CDK's line once", q.slept, q.logs)
	}
}

func TestRateLimitedFailures(t *testing.T) {
	for _, tt := range []struct {
		name, status, extra string
		config              map[string]any
		want                string
		config3             bool // a ConfigError at build time
	}{
		{"no token", "", "", map[string]any{"a": " "},
			"RateLimitedMultipleTokenAuthenticator: no token: `tokens` renders empty; set the tokens in the testing values", true},
		{"max_wait_time in months", "", `
    max_wait_time: "{{ config.w }}"`, map[string]any{"a": "t1", "w": "P1M"},
			`RateLimitedMultipleTokenAuthenticator: max_wait_time "P1M" counts months or years, which have no fixed length`, true},
		{"a path the answer lacks", `{"resources": {}}`, "", map[string]any{"a": "t1"},
			`RateLimitedMultipleTokenAuthenticator: the quota status answer has nothing at the remaining path [resources, core, remaining] of the quota pool "core"`, false},
		{"not JSON", `nope`, "", map[string]any{"a": "t1"},
			"RateLimitedMultipleTokenAuthenticator: the quota status answer of URL/rate_limit is not JSON", false},
		{"a reset that is no time", `{"resources": {"core": {"remaining": 1, "limit": 1, "reset": "soon"}}}`, "", map[string]any{"a": "t1"},
			`RateLimitedMultipleTokenAuthenticator: the reset of the quota pool "core": "soon" is not a time (epoch seconds or ISO 8601)`, false},
		{"a count that is no number", `{"resources": {"core": {"remaining": "many", "limit": 1, "reset": 1}}}`, "", map[string]any{"a": "t1"},
			`RateLimitedMultipleTokenAuthenticator: the remaining of the quota pool "core" is "many", not a number`, false},
		{"the endpoint fails", "500", "", map[string]any{"a": "t1"},
			"authentication failed: RateLimitedMultipleTokenAuthenticator quota status request: 500 Internal Server Error from GET URL/rate_limit", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := newQuotaAPI(t, map[string]string{"Bearer t1": tt.status})
			q, err := newQuotaRun(t, rlYAML(api, `"{{ config.a }}"`, tt.extra), tt.config)
			var ce *ConfigError
			if tt.config3 {
				if !errors.As(err, &ce) || err.Error() != tt.want {
					t.Fatalf("err = %v, want the ConfigError %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			q.client.MaxRetries = -1
			_, err = q.get(api.URL + "/items")
			if err == nil || !strings.HasPrefix(strings.ReplaceAll(err.Error(), api.URL, "URL"), tt.want) {
				t.Errorf("err = %v\nwant %s…", err, tt.want)
			}
		})
	}
}

func TestResetTimeForms(t *testing.T) {
	for _, tt := range []struct {
		in   any
		want string
	}{
		{"1798761600", "2027-01-01T00:00:00Z"},
		{int64(1798761660), "2027-01-01T00:01:00Z"},
		{float64(1798761600), "2027-01-01T00:00:00Z"},
		{"2027-01-01T02:00:00+02:00", "2027-01-01T00:00:00Z"},
		{"2027-01-01T00:00:00.5Z", "2027-01-01T00:00:00.5Z"},
		{"2027-01-01 00:00:00", "2027-01-01T00:00:00Z"},
		{"2027-01-01", "2027-01-01T00:00:00Z"},
		{"12345678901", "error: the timestamp 12345678901 is too large"},
		{true, "error: true is not a time"},
	} {
		got, err := resetTime(tt.in)
		s := got.Format(time.RFC3339Nano)
		if err != nil {
			s = "error: " + err.Error()
		}
		if s != tt.want {
			t.Errorf("resetTime(%v) = %s, want %s", tt.in, s, tt.want)
		}
	}
}

func TestRateLimitedRequesterHeaderConflict(t *testing.T) {
	api := newQuotaAPI(t, map[string]string{"Bearer t1": status(5, 5, 60)})
	q, err := newQuotaRun(t, rlYAML(api, `"{{ config.a }}"`, ""), map[string]any{"a": "t1"})
	if err != nil {
		t.Fatal(err)
	}
	b := request.New("data", "GET", api.URL)
	if err := b.SetHeader("Authorization", "x", "the requester"); err != nil {
		t.Fatal(err)
	}
	err = q.a.Apply(context.Background(), b)
	if err == nil || err.Error() != `header "Authorization" is set by both the requester and the authenticator; remove one of them` {
		t.Errorf("err = %v", err)
	}
}

func TestTokenPathsOfEachKind(t *testing.T) {
	for _, tt := range []struct {
		yaml string
		want string
	}{
		{`
    type: OAuthAuthenticator
    token_refresh_endpoint: https://x.test/token
    client_id: "{{ config.id }}"
    client_secret: "{{ config.s }}"
    refresh_token: "{{ config.r }}"
    access_token_name: data.token`, "[{access_token [data token]} {refresh_token [refresh_token]}]"},
		{`
    type: BearerAuthenticator
    api_token: "{{ config.t }}"`, "[]"},
		{`
    type: LegacySessionTokenAuthenticator
    header: X-Session
    login_url: login
    validate_session_url: me
    session_token_response_key: id
    username: "{{ config.u }}"
    password: "{{ config.p }}"`, "[{session_token [id]}]"},
	} {
		if got := fmt.Sprint(TokenPaths(loadAuth(t, tt.yaml))); got != tt.want {
			t.Errorf("TokenPaths = %s, want %s", got, tt.want)
		}
	}
	if TokenPaths(nil) != nil {
		t.Error("TokenPaths(nil) is not nil")
	}
}

func TestRateLimitedTokensAreSecrets(t *testing.T) {
	api := newQuotaAPI(t, nil)
	q, err := newQuotaRun(t, rlYAML(api, `"{{ config.tokens }}"`, ""), map[string]any{"tokens": "ghp_first_token_1, ghp_second_token_2"})
	if err != nil {
		t.Fatal(err)
	}
	if got := q.r.String("ghp_first_token_1 ghp_second_token_2"); got != "**** ****" {
		t.Errorf("redacted: %q", got)
	}
}
