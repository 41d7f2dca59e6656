package demoapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a settable clock for token expiry.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// env is a demo server under test.
type env struct {
	t     *testing.T
	srv   *Server
	ts    *httptest.Server
	clock *fakeClock
}

func newEnv(t *testing.T, opts Options) *env {
	t.Helper()
	clock := newClock()
	if opts.Now == nil {
		opts.Now = clock.Now
	}
	srv := New(opts)
	ts := httptest.NewServer(srv)
	t.Cleanup(ts.Close)
	return &env{t: t, srv: srv, ts: ts, clock: clock}
}

// response is what a test looks at.
type response struct {
	status int
	header http.Header
	body   string
}

// req describes one request; url may be a path or an absolute URL.
type req struct {
	method   string
	url      string
	header   map[string]string
	body     string
	user     string // Basic credentials when user != "" or basic is set
	password string
	basic    bool
}

func (e *env) do(r req) response {
	e.t.Helper()
	method := r.method
	if method == "" {
		method = http.MethodGet
	}
	u := r.url
	if strings.HasPrefix(u, "/") {
		u = e.ts.URL + u
	}
	var body io.Reader
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	hr, err := http.NewRequest(method, u, body)
	if err != nil {
		e.t.Fatal(err)
	}
	for k, v := range r.header {
		hr.Header.Set(k, v)
	}
	if r.user != "" || r.basic {
		hr.SetBasicAuth(r.user, r.password)
	}
	resp, err := e.ts.Client().Do(hr)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

func (e *env) get(url string) response { return e.do(req{url: url}) }

// want checks status and exact body.
func (r response) want(t *testing.T, status int, body string) {
	t.Helper()
	if r.status != status || r.body != body {
		t.Fatalf("got %d %s\nwant %d %s", r.status, r.body, status, body)
	}
}

func (r response) wantStatus(t *testing.T, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("got status %d, want %d; body %s", r.status, status, r.body)
	}
}

// decode parses the body into v with numbers kept as json.Number.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(r.body))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("decode %q: %v", r.body, err)
	}
}

const (
	formType = "application/x-www-form-urlencoded"
	jsonType = "application/json"
)
