package httpx

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"connector/pkg/redact"
)

func noWait(_ context.Context, _ time.Duration) error { return nil }

func TestRedirectToAnotherHostDropsCredentials(t *testing.T) {
	var got http.Header
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		w.Write([]byte(`[]`))
	}))
	defer other.Close()
	// The same server under the name localhost is another host for the redirect.
	otherURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, otherURL+"/moved", http.StatusFound)
	}))
	defer first.Close()
	var r redact.Redactor
	r.Add("k3y")
	c := &Client{HTTP: &http.Client{}, Redactor: &r, Sleep: noWait}
	h := http.Header{}
	h.Set("Authorization", "Bearer t0ken")
	h.Set("X-Api-Key", "k3y")
	h.Set("X-Custom", "k3y")
	h.Set("Accept", "application/json")
	resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: first.URL + "/items", Header: h})
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL != otherURL+"/moved" {
		t.Errorf("answered by %s", resp.URL)
	}
	for _, name := range []string{"Authorization", "X-Api-Key", "X-Custom"} {
		if v := got.Get(name); v != "" {
			t.Errorf("%s = %q reached the other host", name, v)
		}
	}
	if got.Get("Accept") != "application/json" {
		t.Errorf("Accept = %q, want it kept", got.Get("Accept"))
	}
}

func TestRedirectOnTheSameHostKeepsCredentials(t *testing.T) {
	var got string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/new", http.StatusMovedPermanently)
			return
		}
		got = r.Header.Get("X-Api-Key")
		w.Write([]byte(`[]`))
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Sleep: noWait}
	if _, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/old", Header: http.Header{"X-Api-Key": {"k"}}}); err != nil {
		t.Fatal(err)
	}
	if got != "k" {
		t.Errorf("X-Api-Key = %q after a same-host redirect", got)
	}
}

func TestRedirectLoopAndTooManyRedirects(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/a":
			http.Redirect(w, r, "/b", http.StatusFound)
		case "/b":
			http.Redirect(w, r, "/a", http.StatusFound)
		default: // /n/1 → /n/11 → … never the same URL twice
			http.Redirect(w, r, r.URL.Path+"1", http.StatusFound)
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Sleep: func(context.Context, time.Duration) error { t.Fatal("a redirect error was retried"); return nil }}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/a"})
	want := "GET URL/a: redirect loop: URL/a → URL/b → URL/a"
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	_, err = c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/n/"})
	want = "GET URL/n/: stopped after 10 redirects (last to URL/n/1111111111)"
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestCompressedBodiesAreDecoded(t *testing.T) {
	var gz, zl bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`[{"id":1}]`))
	w.Close()
	z := zlib.NewWriter(&zl)
	z.Write([]byte(`[{"id":2}]`))
	z.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(gz.Bytes())
		case "/deflate":
			w.Header().Set("Content-Encoding", "deflate")
			w.Write(zl.Bytes())
		default:
			w.Header().Set("Content-Encoding", "gzip")
			w.Write([]byte("not gzip at all"))
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Sleep: noWait, MaxRetries: -1}
	// Asking for gzip ourselves turns off Go's transparent decoding.
	h := http.Header{"Accept-Encoding": {"gzip, deflate"}}
	for path, want := range map[string]string{"/gzip": `[{"id":1}]`, "/deflate": `[{"id":2}]`} {
		resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + path, Header: h})
		if err != nil || string(resp.Body) != want {
			t.Errorf("%s: %v %q", path, err, resp.Body)
		}
	}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/broken", Header: h})
	want := "GET URL/broken: 200 OK, but the gzip body cannot be decoded: gzip: invalid header"
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestTruncatedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		w.Write([]byte(`{"data":[{"id":1},`))
		// The handler returns: the connection closes 82 bytes short.
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Sleep: noWait, MaxRetries: 1}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL})
	want := `GET URL: 200 OK, but the body was cut short after 18 bytes (unexpected EOF): "{\"data\":[{\"id\":1}," (gave up after 1 retry)`
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

func TestStallAndTrickleEndInATimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/trickle" {
			w.Header().Set("Content-Length", "1000")
			for i := 0; i < 1000; i++ {
				w.Write([]byte(" "))
				w.(http.Flusher).Flush()
				select {
				case <-release:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
			return
		}
		<-release // accepts and never answers
	}))
	defer srv.Close()
	defer close(release)
	c := &Client{HTTP: srv.Client(), Timeout: 60 * time.Millisecond, Sleep: noWait, MaxRetries: 1}
	for _, tt := range []struct{ path, want string }{
		{"/stall", "GET URL/stall: no answer within 60 ms (the server accepted the connection but did not answer; gave up after 1 retry)"},
		{"/trickle", "GET URL/trickle: the body did not complete within 60 ms (200 OK, * bytes of the body received; --timeout waits longer; gave up after 1 retry)"},
	} {
		_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + tt.path})
		var ne *NetError
		got := ""
		if err != nil {
			got = regexp.MustCompile(`OK, \d+ bytes`).ReplaceAllString(strings.ReplaceAll(err.Error(), srv.URL, "URL"), "OK, * bytes")
		}
		if !errors.As(err, &ne) || !ne.Timeout || ne.Unreachable || got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.path, got, tt.want)
		}
	}
}

func TestNetworkFailures(t *testing.T) {
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0)
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	tests := []struct {
		url, want string
		retried   bool
	}{
		{"http://api.example.invalid/items", "GET http://api.example.invalid/items: cannot resolve the host api.example.invalid: ", false},
		{closed + "/items", "GET " + closed + "/items: connection refused by " + strings.TrimPrefix(closed, "http://") + " (is the server running?) (gave up after 2 retries)", true},
		{tlsSrv.URL + "/items", "GET " + tlsSrv.URL + "/items: TLS failure: tls: failed to verify certificate: x509: certificate signed by unknown authority", false},
		{"ftp://127.0.0.1/items", `GET ftp://127.0.0.1/items: unsupported URL scheme "ftp": only http and https are supported`, false},
		{"127.0.0.1:8/items", `GET 127.0.0.1:8/items: invalid URL: first path segment in URL cannot contain colon`, false},
		{"/items", `GET /items: invalid URL: it has no scheme; it must start with http:// or https://`, false},
	}
	for _, tt := range tests {
		waits := 0
		c := &Client{HTTP: &http.Client{}, MaxRetries: 2, Timeout: 5 * time.Second,
			Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
		_, err := c.Do(context.Background(), &Request{Method: "GET", URL: tt.url})
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s:\n got %v\nwant %s", tt.url, err, tt.want)
		}
		if (waits > 0) != tt.retried {
			t.Errorf("%s: %d retries", tt.url, waits)
		}
	}
}

// With FailFast, a connection refused is tried 3 times (waits 1 s, 2 s), and every later
// request to the host fails at once, unsent, naming the first failure; another host is
// still asked. An error handler that writes max_retries gets its retries.
func TestFailFastUnreachableHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	host := l.Addr().String()
	l.Close()
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{}`)) }))
	defer up.Close()
	var waits []time.Duration
	var retried []Retry
	c := &Client{HTTP: &http.Client{}, FailFast: true, Timeout: 5 * time.Second,
		Sleep:   func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil },
		OnRetry: func(r Retry) { retried = append(retried, r) }}
	scrub := func(err error) string { return strings.ReplaceAll(err.Error(), host, "HOST") }
	_, err = c.Do(context.Background(), &Request{Method: "GET", URL: closed + "/a"})
	want := "GET http://HOST/a: connection refused by HOST (is the server running?) (gave up after 2 retries)"
	if err == nil || scrub(err) != want {
		t.Fatalf("first request:\n got %v\nwant %s", err, want)
	}
	if fmt.Sprint(waits) != "[1s 2s]" || len(retried) != 2 || retried[1].Attempt != 2 || retried[1].Cause != "connection refused by "+host+" (is the server running?)" {
		t.Errorf("waits %v, retries %+v", waits, retried)
	}
	waits = nil
	_, err = c.Do(context.Background(), &Request{Method: "GET", URL: closed + "/b?page=2"})
	var ne *NetError
	want = "GET http://HOST/b?page=2: not sent: HOST could not be reached earlier in this run (connection refused)"
	if !errors.As(err, &ne) || !ne.Earlier || !ne.Unreachable || scrub(err) != want || len(waits) != 0 {
		t.Errorf("later request:\n got %v (waits %v)\nwant %s", err, waits, want)
	}
	if _, err := c.Do(context.Background(), &Request{Method: "GET", URL: up.URL}); err != nil {
		t.Errorf("another host: %v", err)
	}
	// max_retries written in the definition: its retries, and the host is still remembered.
	h := handlerFrom(t, "type: DefaultErrorHandler\nmax_retries: 3", nil)
	c2 := &Client{HTTP: &http.Client{}, FailFast: true, Sleep: noWait}
	_, err = c2.Do(context.Background(), &Request{Method: "GET", URL: closed + "/a", Handler: h})
	if err == nil || scrub(err) != "GET http://HOST/a: connection refused by HOST (is the server running?) (gave up after 3 retries)" {
		t.Errorf("max_retries 3: %v", err)
	}
	_, err = c2.Do(context.Background(), &Request{Method: "GET", URL: closed + "/b", Handler: h})
	if err == nil || scrub(err) != "GET http://HOST/b: not sent: HOST could not be reached earlier in this run (connection refused)" {
		t.Errorf("max_retries 3, a later request: %v", err)
	}
	// Without FailFast (the Airbyte protocol), the CDK's 5 retries, and nothing remembered.
	c3 := &Client{HTTP: &http.Client{}, Sleep: noWait}
	for range 2 {
		_, err = c3.Do(context.Background(), &Request{Method: "GET", URL: closed + "/a"})
		if err == nil || scrub(err) != "GET http://HOST/a: connection refused by HOST (is the server running?) (gave up after 5 retries)" {
			t.Errorf("without FailFast: %v", err)
		}
	}
}

// With FailFast, a server that accepts the connection and never answers is tried 3 times;
// its host is not remembered (another path may answer).
func TestFailFastHungServer(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-release }))
	defer srv.Close()
	defer close(release)
	calls := 0
	c := &Client{HTTP: srv.Client(), FailFast: true, Timeout: 30 * time.Millisecond,
		Sleep: func(context.Context, time.Duration) error { calls++; return nil }}
	for range 2 {
		_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/x"})
		want := "GET URL/x: no answer within 30 ms (the server accepted the connection but did not answer; gave up after 2 retries)"
		if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
			t.Errorf("got %v\nwant %s", err, want)
		}
	}
	if calls != 4 {
		t.Errorf("%d waits, want 2 per request", calls)
	}
}
