package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// handlerFrom loads a definition whose requester has the error_handler block (YAML at
// column 0) and binds it to config.
func handlerFrom(t *testing.T, block string, config map[string]any) *Handler {
	t.Helper()
	var b strings.Builder
	b.WriteString("version: 6.0.0\nstreams:\n  - name: s\n    retriever:\n      requester:\n        url_base: http://x\n        error_handler:\n")
	for _, line := range strings.Split(strings.TrimSpace(block), "\n") {
		b.WriteString("          " + line + "\n")
	}
	b.WriteString("      record_selector:\n        extractor:\n          field_path: []\n")
	def, diags := manifest.Parse("def.yaml", []byte(b.String()))
	if diags.HasErrors() {
		t.Fatalf("definition does not load:\n%v\n%s", diags, b.String())
	}
	h, err := NewHandler(def.Streams[0].Requester.ErrorHandler, template.Globals{Config: config})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// step is one answer of a scripted server.
type step struct {
	status int
	header map[string]string
	body   string
}

// script serves the steps in order, repeating the last one.
func script(t *testing.T, steps ...step) (*httptest.Server, func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		s := steps[min(n, len(steps)-1)]
		n++
		mu.Unlock()
		for k, v := range s.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(s.status)
		w.Write([]byte(s.body))
	}))
	t.Cleanup(srv.Close)
	return srv, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// fakeClient records the waits instead of sleeping; its clock stands still at now.
func fakeClient(srv *httptest.Server, now time.Time) (*Client, *[]time.Duration, *[]Exchange) {
	var waits []time.Duration
	var seen []Exchange
	c := &Client{
		HTTP:    srv.Client(),
		Sleep:   func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		Now:     func() time.Time { return now },
		Observe: func(e Exchange) { seen = append(seen, e) },
	}
	return c, &waits, &seen
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestHandlerDecisions(t *testing.T) {
	const filters = `
type: DefaultErrorHandler
max_retries: 2
response_filters:
  - type: HttpResponseFilter
    action: IGNORE
    http_codes: [404]
    error_message: "{{ response.message }}"
  - type: HttpResponseFilter
    action: FAIL
    predicate: "{{ response.error.code == 32000 }}"
    error_message: "bad key: {{ response.error.text }}"
  - type: HttpResponseFilter
    action: RETRY
    error_message_contains: try again
  - type: HttpResponseFilter
    action: SUCCESS
    http_codes: [409]
  - type: HttpResponseFilter
    action: FAIL
    predicate: "{{ headers['X-Fail'] == 'yes' }}"
`
	tests := []struct {
		name    string
		steps   []step
		calls   int
		waits   []time.Duration
		err     string
		ignored string
	}{
		{"a matching filter acts on a 200", []step{{200, nil, `{"error":{"code":32000,"text":"expired"}}`}}, 1, nil,
			`200 OK from GET URL/x: bad key: expired (body: {"error":{"code":32000,"text":"expired"}})`, ""},
		{"IGNORE yields the response marked ignored", []step{{404, nil, `{"message":"gone"}`}}, 1, nil, "",
			"404 Not Found ignored by the error handler: gone"},
		{"error_message_contains reads the JSON error message", []step{{400, nil, `{"errors":[{"message":"please try again"}]}`}, {200, nil, `[]`}}, 2,
			[]time.Duration{1 * time.Second}, "", ""},
		{"SUCCESS accepts an error status", []step{{409, nil, `[]`}}, 1, nil, "", ""},
		{"the headers variable is case-insensitive", []step{{200, map[string]string{"X-Fail": "yes"}, `[]`}}, 1, nil, "200 OK from GET URL/x: []", ""},
		{"no filter matches: the default retries 5xx up to max_retries", []step{{503, nil, "busy"}}, 3,
			[]time.Duration{1 * time.Second, 2 * time.Second}, "503 Service Unavailable from GET URL/x: busy (gave up after 2 retries)", ""},
		{"no filter matches: another 4xx fails at once", []step{{400, nil, `{"message":"bad"}`}}, 1, nil, `400 Bad Request from GET URL/x: {"message":"bad"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := script(t, tt.steps...)
			c, waits, _ := fakeClient(srv, t0)
			resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/x", Handler: handlerFrom(t, filters, nil)})
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), srv.URL, "URL")
			}
			if got != tt.err {
				t.Errorf("error\n got %q\nwant %q", got, tt.err)
			}
			if tt.ignored != "" && (resp == nil || !resp.Ignored || resp.Reason != tt.ignored) {
				t.Errorf("response %+v, want ignored: %q", resp, tt.ignored)
			}
			if calls() != tt.calls {
				t.Errorf("%d calls, want %d", calls(), tt.calls)
			}
			if fmt.Sprint(*waits) != fmt.Sprint(tt.waits) && len(*waits)+len(tt.waits) > 0 {
				t.Errorf("waits %v, want %v", *waits, tt.waits)
			}
		})
	}
}

// A filter with an action and nothing to match (huntr.yaml, rootly.yaml) is built, as the
// CDK builds it, and never matches: the default decisions apply.
func TestFilterWithNothingToMatchNeverMatches(t *testing.T) {
	const handler = `
type: DefaultErrorHandler
max_retries: 1
response_filters:
  - type: HttpResponseFilter
    action: IGNORE
`
	for _, tt := range []struct {
		name  string
		step  step
		calls int
		err   string
	}{
		{"a 404 fails", step{404, nil, `{"message":"gone"}`}, 1, `404 Not Found from GET URL/x: {"message":"gone"}`},
		{"a 500 is retried", step{500, nil, "down"}, 2, "500 Internal Server Error from GET URL/x: down (gave up after 1 retry)"},
		{"a 200 succeeds", step{200, nil, "[]"}, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := script(t, tt.step)
			c, _, _ := fakeClient(srv, t0)
			resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/x", Handler: handlerFrom(t, handler, nil)})
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), srv.URL, "URL")
			}
			if got != tt.err || calls() != tt.calls {
				t.Errorf("error %q after %d calls, want %q after %d", got, calls(), tt.err, tt.calls)
			}
			if resp != nil && resp.Ignored {
				t.Errorf("the response was ignored: %q", resp.Reason)
			}
		})
	}
}

func TestBackoffStrategies(t *testing.T) {
	tests := []struct {
		name    string
		handler string
		config  map[string]any
		steps   []step
		waits   []time.Duration
		err     string
	}{
		{"exponential: factor × 2^attempts", `
backoff_strategies:
  - type: ExponentialBackoffStrategy
    factor: "{{ config['factor'] }}"
max_retries: 3`, map[string]any{"factor": 2}, []step{{500, nil, ""}}, []time.Duration{4 * time.Second, 8 * time.Second, 16 * time.Second},
			"500 Internal Server Error from GET URL (gave up after 3 retries)"},
		{"constant", `
backoff_strategies:
  - type: ConstantBackoffStrategy
    backoff_time_in_seconds: 1.5
max_retries: 2`, nil, []step{{429, nil, ""}, {502, nil, ""}, {200, nil, "[]"}}, []time.Duration{1500 * time.Millisecond, 1500 * time.Millisecond}, ""},
		{"WaitTimeFromHeader with a regex, then the next strategy when the header is absent", `
backoff_strategies:
  - type: WaitTimeFromHeader
    header: X-Wait
    regex: "[0-9.]+"
  - type: ConstantBackoffStrategy
    backoff_time_in_seconds: 3`, nil,
			[]step{{503, map[string]string{"X-Wait": "2.5 seconds"}, ""}, {503, nil, ""}, {200, nil, "[]"}},
			[]time.Duration{2500 * time.Millisecond, 3 * time.Second}, ""},
		{"WaitTimeFromHeader stops at max_waiting_time_in_seconds", `
backoff_strategies:
  - type: WaitTimeFromHeader
    header: Retry-After
    max_waiting_time_in_seconds: 300`, nil, []step{{429, map[string]string{"Retry-After": "301"}, ""}}, nil,
			"429 Too Many Requests from GET URL (the Retry-After header asks for a wait of 301s, at least max_waiting_time_in_seconds (300s) of WaitTimeFromHeader; stopping)"},
		{"WaitUntilTimeFromHeader: until the reset time, at least min_wait", `
backoff_strategies:
  - type: WaitUntilTimeFromHeader
    header: X-RateLimit-Reset
    min_wait: 5`, nil,
			[]step{{429, map[string]string{"X-RateLimit-Reset": fmt.Sprint(t0.Unix() + 42)}, ""}, {429, map[string]string{"X-RateLimit-Reset": fmt.Sprint(t0.Unix() + 1)}, ""}, {200, nil, "[]"}},
			[]time.Duration{42 * time.Second, 5 * time.Second}, ""},
		{"RATE_LIMITED is not counted by max_retries but stops at max_time", `
max_retries: 1
max_time: 100
response_filters:
  - type: HttpResponseFilter
    action: RATE_LIMITED
    http_codes: [429]
backoff_strategies:
  - type: ConstantBackoffStrategy
    backoff_time_in_seconds: 30`, nil, []step{{429, nil, "slow down"}},
			[]time.Duration{30 * time.Second, 30 * time.Second, 30 * time.Second},
			"429 Too Many Requests from GET URL: slow down (gave up: waiting 30 s more would pass the error handler's max_time of 1 min 40 s)"},
		{"a composite takes the first RETRY, IGNORE or SUCCESS, and the first child's max_retries", `
type: CompositeErrorHandler
error_handlers:
  - type: DefaultErrorHandler
    max_retries: 1
    response_filters:
      - type: HttpResponseFilter
        action: FAIL
        http_codes: [400]
        error_message: first
  - type: DefaultErrorHandler
    max_retries: 9
    response_filters:
      - type: HttpResponseFilter
        action: RETRY
        http_codes: [400]
    backoff_strategies:
      - type: ConstantBackoffStrategy
        backoff_time_in_seconds: 7`, nil, []step{{400, nil, ""}}, []time.Duration{7 * time.Second},
			"400 Bad Request from GET URL (gave up after 1 retry)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := script(t, tt.steps...)
			c, waits, _ := fakeClient(srv, t0)
			_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL, Handler: handlerFrom(t, tt.handler, tt.config)})
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), srv.URL, "URL")
			}
			if got != tt.err {
				t.Errorf("error\n got %q\nwant %q", got, tt.err)
			}
			if fmt.Sprint(*waits) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", *waits, tt.waits)
			}
		})
	}
}

func TestNewHandlerErrors(t *testing.T) {
	def, diags := manifest.Parse("d.yaml", []byte(`version: 1
streams:
  - name: s
    retriever:
      requester:
        url_base: http://x
        error_handler:
          max_retries: "{{ config['n'] }}"
          backoff_strategies:
            - type: ExponentialBackoffStrategy
              factor: "{{ config['f'] }}"
      record_selector: {extractor: {field_path: []}}
`))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	eh := def.Streams[0].Requester.ErrorHandler
	_, err := NewHandler(eh, template.Globals{Config: map[string]any{"n": "three", "f": 1}})
	want := "error_handler: `max_retries` of the DefaultErrorHandler at line 8 must be a number, but \"{{ config['n'] }}\" gives \"three\""
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = NewHandler(eh, template.Globals{Config: map[string]any{"n": 2, "f": "x"}})
	want = "error_handler: `factor` of the ExponentialBackoffStrategy at line 10 must be a number, but \"{{ config['f'] }}\" gives \"x\""
	if err == nil || err.Error() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestMaxWaitCapsEveryPause(t *testing.T) {
	srv, _ := script(t, step{429, map[string]string{"Retry-After": "3600"}, ""}, step{200, nil, "[]"})
	c, waits, seen := fakeClient(srv, t0)
	c.MaxWait = 90 * time.Second
	if _, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(*waits) != "[1m30s]" {
		t.Errorf("waits %v", *waits)
	}
	if len(*seen) != 2 || (*seen)[0].Action != "RETRY" || (*seen)[0].Wait != 90*time.Second || (*seen)[1].Action != "SUCCESS" {
		t.Errorf("exchanges %+v", *seen)
	}
}

func TestCancelStopsTheWait(t *testing.T) {
	srv, calls := script(t, step{503, nil, ""})
	ctx, cancel := context.WithCancel(context.Background())
	c := &Client{HTTP: srv.Client(), Sleep: func(ctx context.Context, _ time.Duration) error { cancel(); return ctx.Err() }}
	_, err := c.Do(ctx, &Request{Method: "GET", URL: srv.URL})
	if !errors.Is(err, context.Canceled) || calls() != 1 {
		t.Errorf("err %v after %d calls", err, calls())
	}
}

func TestSecretsInFilterMessagesAreRedacted(t *testing.T) {
	srv, _ := script(t, step{401, nil, `{"message":"key s3cr3t is revoked"}`})
	var r redact.Redactor
	r.Add("s3cr3t")
	c, _, _ := fakeClient(srv, t0)
	c.Redactor = &r
	h := handlerFrom(t, `
response_filters:
  - type: HttpResponseFilter
    action: FAIL
    http_codes: [401]
    error_message: "{{ response.message }}"`, nil)
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL, Handler: h})
	var se *StatusError
	if !errors.As(err, &se) || !se.IsAuth() || strings.Contains(err.Error(), "s3cr3t") ||
		se.Message != "key **** is revoked" {
		t.Errorf("got %v", err)
	}
}
