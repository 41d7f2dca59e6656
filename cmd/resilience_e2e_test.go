package cmd

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file runs `connector read` against local servers that misbehave on purpose and
// asserts the exact retry sequence, the waits (with a fake clock: nothing really sleeps),
// the outcome and what was written before a failure.

// resT0 is the fake clock of these tests.
var resT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// fakeWaits is a test environment (testEnv) whose runs record their waits instead of
// sleeping, with a clock standing still at resT0. It also returns the waits seen so far.
func fakeWaits() (Env, func() []time.Duration) {
	var mu sync.Mutex
	var waits []time.Duration
	env := testEnv(nil)
	env.Sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}
	env.Now = func() time.Time { return resT0 }
	return env, func() []time.Duration {
		mu.Lock()
		defer mu.Unlock()
		return append([]time.Duration(nil), waits...)
	}
}

// resDef is a definition with one stream, items, paged with ?page=1, 2, … two records per
// page; errorHandler (YAML at column 0, may be empty) is the requester's error_handler.
func resDef(errorHandler string) string {
	def := `version: 6.0.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: ApiKeyAuthenticator
          api_token: "{{ config['api_key'] }}"
          inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}
`
	if errorHandler != "" {
		def += "        error_handler:\n"
		for _, line := range strings.Split(strings.TrimSpace(errorHandler), "\n") {
			def += "          " + line + "\n"
		}
	}
	return def + `      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
`
}

// reply is one scripted answer.
type reply struct {
	status int
	header map[string]string
	body   string
}

// page is a 200 with the records n, n+1, … under data.
func page(ids ...int) reply {
	var recs []string
	for _, id := range ids {
		recs = append(recs, fmt.Sprintf(`{"id":%d}`, id))
	}
	return reply{200, map[string]string{"Content-Type": "application/json"}, `{"data":[` + strings.Join(recs, ",") + `]}`}
}

// scripted answers the requests in order with replies; past the end it repeats the last.
func scripted(t *testing.T, replies ...reply) *recorder {
	var mu sync.Mutex
	n := 0
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		rp := replies[min(n, len(replies)-1)]
		n++
		mu.Unlock()
		for k, v := range rp.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rp.status)
		w.Write([]byte(rp.body))
	})
}

// resRead runs read in env with the definition and testing values pointing at api.
func resRead(t *testing.T, env Env, api *recorder, def string, args ...string) cliResult {
	t.Helper()
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\napi_key: k-12345\n")
	return runCLIEnv(t, env, "", append([]string{"read", defPath, "--testing-values", vals}, args...)...)
}

// paths lists the path and query of every request api received.
func paths(api *recorder) []string {
	var out []string
	for _, r := range api.requests() {
		out = append(out, r.URL)
	}
	return out
}

func TestResilienceRetries(t *testing.T) {
	t.Parallel()
	retryAt := resT0.Add(30 * time.Second).Format(http.TimeFormat)
	tests := []struct {
		name    string
		handler string
		replies []reply
		args    []string
		paths   []string
		waits   []time.Duration
		code    int
		stdout  string
		// retried are the retry lines stderr starts with, then stderr.
		retried []string
		stderr  string
	}{
		{
			name:    "429 with Retry-After in seconds, then 503, then success",
			retried: []string{"retrying GET http://API/items?page=1 in 7 s (attempt 2 of 6): 429 Too Many Requests (Retry-After: 7)", "retrying GET http://API/items?page=2 in 1 s (attempt 2 of 6): 503 Service Unavailable"},
			replies: []reply{{429, map[string]string{"Retry-After": "7"}, ""}, page(1, 2), {503, nil, "busy"}, page(3)},
			paths:   []string{"/items?page=1", "/items?page=1", "/items?page=2", "/items?page=2"},
			waits:   []time.Duration{7 * time.Second, 1 * time.Second},
			stdout:  "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n",
		},
		{
			name:    "429 with Retry-After as an HTTP date",
			retried: []string{"retrying GET http://API/items?page=1 in 30 s (attempt 2 of 6): 429 Too Many Requests (Retry-After: Sun, 01 Mar 2026 12:00:30 GMT)"},
			replies: []reply{{429, map[string]string{"Retry-After": retryAt}, ""}, page(1)},
			paths:   []string{"/items?page=1", "/items?page=1"},
			waits:   []time.Duration{30 * time.Second},
			stdout:  "{\"id\":1}\n",
		},
		{
			name:    "503 until the retries run out: the first page is written, stderr names page 2",
			retried: []string{"retrying GET http://API/items?page=2 in 1 s (attempt 2 of 6): 503 Service Unavailable", "retrying GET http://API/items?page=2 in 2 s (attempt 3 of 6): 503 Service Unavailable", "retrying GET http://API/items?page=2 in 4 s (attempt 4 of 6): 503 Service Unavailable", "retrying GET http://API/items?page=2 in 8 s (attempt 5 of 6): 503 Service Unavailable", "retrying GET http://API/items?page=2 in 16 s (attempt 6 of 6): 503 Service Unavailable"},
			replies: []reply{page(1, 2), {503, nil, "<html><body>down for maintenance</body></html>"}},
			paths:   []string{"/items?page=1", "/items?page=2", "/items?page=2", "/items?page=2", "/items?page=2", "/items?page=2", "/items?page=2"},
			waits:   []time.Duration{1 * time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second},
			code:    1,
			stdout:  "{\"id\":1}\n{\"id\":2}\n",
			stderr: "error: stream items, page 2: 503 Service Unavailable from GET http://API/items?page=2: " +
				"<html><body>down for maintenance</body></html> (gave up after 5 retries) (2 records written before the failure)\n",
		},
		{
			name:    "an HTML 500 page with the definition's own retries and backoff",
			retried: []string{"retrying GET http://API/items?page=1 in 6 s (attempt 2 of 3): 500 Internal Server Error", "retrying GET http://API/items?page=1 in 12 s (attempt 3 of 3): 500 Internal Server Error"},
			handler: "max_retries: 2\nbackoff_strategies:\n  - type: ExponentialBackoffStrategy\n    factor: 3",
			replies: []reply{{500, map[string]string{"Content-Type": "text/html"}, "<!DOCTYPE html>\n<h1>Internal error</h1>"}},
			paths:   []string{"/items?page=1", "/items?page=1", "/items?page=1"},
			waits:   []time.Duration{6 * time.Second, 12 * time.Second},
			code:    1,
			stderr: "error: stream items, page 1: 500 Internal Server Error from GET http://API/items?page=1: " +
				"<!DOCTYPE html> <h1>Internal error</h1> (gave up after 2 retries) (0 records written before the failure)\n",
		},
		{
			name: "IGNORE ends the stream quietly after the records already read",
			handler: `response_filters:
  - type: HttpResponseFilter
    action: IGNORE
    http_codes: [404]`,
			replies: []reply{page(1, 2), {404, nil, `{"message":"no such page"}`}},
			paths:   []string{"/items?page=1", "/items?page=2"},
			stdout:  "{\"id\":1}\n{\"id\":2}\n",
		},
		{
			name: "a FAIL filter acts on a 200 and its error_message is shown",
			handler: `response_filters:
  - type: HttpResponseFilter
    action: FAIL
    predicate: "{{ response.status == 'error' }}"
    error_message: "the API says: {{ response.reason }}"`,
			replies: []reply{{200, nil, `{"status":"error","reason":"quota exhausted"}`}},
			paths:   []string{"/items?page=1"},
			code:    1,
			stderr: "error: stream items, page 1: 200 OK from GET http://API/items?page=1: the API says: quota exhausted " +
				"(body: {\"status\":\"error\",\"reason\":\"quota exhausted\"}) (0 records written before the failure)\n",
		},
		{
			name:    "RATE_LIMITED waits what the header says and is not counted by max_retries",
			retried: []string{"retrying GET http://API/items?page=1 in 11 s (attempt 2): 429 Too Many Requests", "retrying GET http://API/items?page=1 in 12 s (attempt 3): 429 Too Many Requests", "retrying GET http://API/items?page=1 in 13 s (attempt 4): 429 Too Many Requests"},
			handler: `max_retries: 1
response_filters:
  - type: HttpResponseFilter
    action: RATE_LIMITED
    http_codes: [429]
backoff_strategies:
  - type: WaitTimeFromHeader
    header: X-Wait`,
			replies: []reply{{429, map[string]string{"X-Wait": "11"}, ""}, {429, map[string]string{"X-Wait": "12"}, ""}, {429, map[string]string{"X-Wait": "13"}, ""}, page(1)},
			paths:   []string{"/items?page=1", "/items?page=1", "/items?page=1", "/items?page=1"},
			waits:   []time.Duration{11 * time.Second, 12 * time.Second, 13 * time.Second},
			stdout:  "{\"id\":1}\n",
		},
		{
			name:    "the 401 of a data request is an authentication failure, not retried",
			replies: []reply{{401, nil, `{"error":"bad key"}`}},
			paths:   []string{"/items?page=1"},
			code:    1,
			stderr: "error: stream items, page 1: authentication failed: 401 Unauthorized from GET http://API/items?page=1: " +
				"{\"error\":\"bad key\"} (0 records written before the failure)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			env, waits := fakeWaits()
			api := scripted(t, tt.replies...)
			res := resRead(t, env, api, resDef(tt.handler), tt.args...)
			if got := paths(api); fmt.Sprint(got) != fmt.Sprint(tt.paths) {
				t.Errorf("requests %q\nwant %q", got, tt.paths)
			}
			if got := waits(); fmt.Sprint(got) != fmt.Sprint(tt.waits) {
				t.Errorf("waits %v, want %v", got, tt.waits)
			}
			stderr := tt.stderr
			if len(tt.retried) > 0 {
				stderr = strings.Join(tt.retried, "\n") + "\n" + stderr
			}
			if res.Code != tt.code || res.Stdout != tt.stdout || resScrub(res.Stderr, api) != stderr {
				t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d, stdout:\n%s\nstderr:\n%s",
					res.Code, res.Stdout, resScrub(res.Stderr, api), tt.code, tt.stdout, stderr)
			}
		})
	}
}

// A server that accepts and never answers, and one that trickles its body, end in a clear
// timeout error after the retries; what was read before is written.
func TestResilienceStallAndTrickle(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"stall", "trickle"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			env, waits := fakeWaits()
			release := make(chan struct{})
			var mu sync.Mutex
			n := 0
			api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				n++
				first := n == 1
				mu.Unlock()
				if first {
					w.Write([]byte(`{"data":[{"id":1},{"id":2}]}`))
					return
				}
				if mode == "stall" {
					select {
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				w.Header().Set("Content-Length", "500")
				for i := 0; i < 500; i++ {
					w.Write([]byte(" "))
					w.(http.Flusher).Flush()
					select {
					case <-release:
						return
					case <-r.Context().Done():
						return
					case <-time.After(10 * time.Millisecond):
					}
				}
			})
			defer close(release)
			res := resRead(t, env, api, resDef("max_retries: 1"), "--timeout", "80ms")
			if got := len(api.requests()); got != 3 {
				t.Errorf("%d requests, want 3 (page 1, page 2 and one retry)", got)
			}
			if got := waits(); fmt.Sprint(got) != "[1s]" {
				t.Errorf("waits %v", got)
			}
			stderr := regexp.MustCompile(`OK, \d+ bytes`).ReplaceAllString(resScrub(res.Stderr, api), "OK, * bytes")
			want := map[string]string{
				"stall":   "error: stream items, page 2: GET http://API/items?page=2: no answer within 80 ms (the server accepted the connection but did not answer; gave up after 1 retry) (2 records written before the failure)\n",
				"trickle": "error: stream items, page 2: GET http://API/items?page=2: the body did not complete within 80 ms (200 OK, * bytes of the body received; --timeout waits longer; gave up after 1 retry) (2 records written before the failure)\n",
			}[mode]
			if res.Code != 1 || res.Stdout != "{\"id\":1}\n{\"id\":2}\n" || !strings.HasSuffix(stderr, want) {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant it to end with:\n%s", res.Code, res.Stdout, stderr, want)
			}
		})
	}
}

// A redirect to another host (127.0.0.1 → localhost) is followed without the API key.
func TestResilienceRedirectToAnotherHost(t *testing.T) {
	t.Parallel()
	env, _ := fakeWaits()
	other := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"data":[{"id":9}]}`))
	})
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/v2"+r.URL.RequestURI(), http.StatusTemporaryRedirect)
	})
	res := resRead(t, env, api, resDef(""))
	if res.Code != 0 || res.Stdout != "{\"id\":9}\n" || res.Stderr != "" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}
	got := api.requests()
	if len(got) != 1 || got[0].Header.Get("X-Api-Key") != "k-12345" {
		t.Errorf("the first host got %+v", got)
	}
	moved := other.requests()
	if len(moved) != 1 || moved[0].URL != "/v2/items?page=1" {
		t.Fatalf("the other host got %+v", moved)
	}
	if v := moved[0].Header.Get("X-Api-Key"); v != "" {
		t.Errorf("the API key reached the other host: %q", v)
	}
}

// resScrub replaces the local API's address (a random port) by http://API.
func resScrub(s string, api *recorder) string {
	return strings.ReplaceAll(s, api.URL, "http://API")
}
