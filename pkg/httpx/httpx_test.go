package httpx

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"connector/pkg/redact"
)

func TestRetriesHonourRetryAfter(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
		case 2:
			w.WriteHeader(503)
		default:
			w.Write([]byte(`{"ok":true}`))
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	var seen []Exchange
	c := &Client{HTTP: srv.Client(), Sleep: func(_ context.Context, d time.Duration) error {
		waits = append(waits, d)
		return nil
	}, Observe: func(e Exchange) { seen = append(seen, e) }}
	resp, err := c.Do(context.Background(), &Request{Kind: "data", Method: "GET", URL: srv.URL + "/x"})
	if err != nil {
		t.Fatal(err)
	}
	if string(resp.Body) != `{"ok":true}` {
		t.Fatalf("body %q", resp.Body)
	}
	if len(waits) != 2 || waits[0] != 7*time.Second || waits[1] != 2*time.Second {
		t.Fatalf("waits %v, want [7s 2s]", waits)
	}
	if len(seen) != 3 || seen[0].Status != 429 || seen[1].Status != 503 || seen[2].Status != 200 {
		t.Fatalf("exchanges %+v", seen)
	}
}

func TestStatusErrorRedactedAndNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.WriteHeader(404)
		w.Write([]byte("no such key topsecret\n  here"))
	}))
	defer srv.Close()
	var r redact.Redactor
	r.Add("topsecret")
	c := &Client{HTTP: srv.Client(), Redactor: &r}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/x?key=topsecret"})
	want := "404 Not Found from GET " + srv.URL + "/x?key=**** : no such key **** here"
	want = strings.Replace(want, "**** :", "****:", 1)
	if err == nil || err.Error() != want {
		t.Fatalf("err %v\nwant %s", err, want)
	}
	if calls.Load() != 1 {
		t.Fatalf("%d calls, want 1", calls.Load())
	}
}

func TestRetryAfterDate(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	d, ok := retryAfter(now.Add(30*time.Second).Format(http.TimeFormat), now)
	if !ok || d != 30*time.Second {
		t.Fatalf("got %v %v", d, ok)
	}
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
	}))
	defer srv.Close()
	defer close(release)
	c := &Client{HTTP: srv.Client(), Timeout: 50 * time.Millisecond, MaxRetries: -1}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL})
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != "GET URL: no answer within 50 ms (the server accepted the connection but did not answer)" {
		t.Fatalf("err %v", err)
	}
}

// A body that fits Request.Buffer is read into it; one that does not gets memory of its
// own, and the buffer is left alone.
func TestBodyReadIntoTheGivenBuffer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(r.URL.Query().Get("body")))
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client()}
	get := func(body string, buf []byte) []byte {
		t.Helper()
		resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/?body=" + body, Buffer: buf})
		if err != nil {
			t.Fatal(err)
		}
		if string(resp.Body) != body {
			t.Fatalf("body %q, want %q", resp.Body, body)
		}
		return resp.Body
	}
	buf := make([]byte, 0, 64)
	if got := get(strings.Repeat("a", 40), buf); &got[:1][0] != &buf[:1][0] {
		t.Error("a 40-byte body was not read into the 64-byte buffer")
	}
	if got := get(strings.Repeat("b", 64), buf); &got[:1][0] == &buf[:1][0] {
		t.Error("a 64-byte body was read into a 64-byte buffer: the read that meets the end needs a byte more")
	}
	if got := get(strings.Repeat("c", 500), buf); &got[:1][0] == &buf[:1][0] || len(got) != 500 {
		t.Error("a 500-byte body was read into the 64-byte buffer")
	}
	if string(buf[:40]) != strings.Repeat("a", 40) {
		t.Errorf("the buffer was written by a body that did not fit: %q", buf[:40])
	}
}

// roundTripFunc is a transport made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// fixedError is a transport error that no retry can fix.
type fixedError struct{}

func (fixedError) Error() string   { return "no recorded answer" }
func (fixedError) Permanent() bool { return true }

// The transport learns the kind and the stream of each request from its context, and an
// error that says it is permanent is not retried.
func TestTransportSeesInfoAndPermanentErrors(t *testing.T) {
	var got []Info
	c := &Client{HTTP: &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = append(got, InfoOf(r.Context()))
		return nil, fixedError{}
	})}, Sleep: func(context.Context, time.Duration) error { t.Error("a permanent error was retried"); return nil }}
	_, err := c.Do(context.Background(), &Request{Kind: "token", Stream: "books", Method: "GET", URL: "http://127.0.0.1:1/x"})
	var ne *NetError
	if !errors.As(err, &ne) || !ne.Permanent || ne.Err != "no recorded answer" {
		t.Fatalf("error %#v", err)
	}
	if len(got) != 1 || got[0] != (Info{Kind: "token", Stream: "books"}) {
		t.Fatalf("the transport saw %+v", got)
	}
	if InfoOf(context.Background()) != (Info{}) {
		t.Error("a context without a request has an Info")
	}
}

// countingPacer counts what it is asked and told.
type countingPacer struct{ acquired, updated int }

func (p *countingPacer) Acquire(context.Context, *Request) (Pace, error) {
	p.acquired++
	return Pace{}, nil
}

func (p *countingPacer) Update(*Request, int, http.Header) { p.updated++ }

// An Unpaced request (an OAuth token request, a legacy session login) goes without asking
// the budget, and tells it nothing; any other is paced.
func TestUnpacedRequestsSkipThePacer(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{}`)) }))
	defer srv.Close()
	p := &countingPacer{}
	c := &Client{HTTP: srv.Client(), Pacer: p}
	if _, err := c.Do(context.Background(), &Request{Kind: "token", Method: "POST", URL: srv.URL, Unpaced: true}); err != nil {
		t.Fatal(err)
	}
	if p.acquired != 0 || p.updated != 0 {
		t.Errorf("unpaced: acquired %d, updated %d; want 0, 0", p.acquired, p.updated)
	}
	if _, err := c.Do(context.Background(), &Request{Kind: "data", Method: "GET", URL: srv.URL}); err != nil {
		t.Fatal(err)
	}
	if p.acquired != 1 || p.updated != 1 {
		t.Errorf("paced: acquired %d, updated %d; want 1, 1", p.acquired, p.updated)
	}
}

// An observer sees the response's headers and body; with NoRetries a request is sent once
// whatever its answer, but an OAuth token request keeps its retries.
func TestObservedResponseAndNoRetries(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Trace", "t-1")
		if calls.Add(1) == 3 && r.URL.Path == "/token" {
			w.Write([]byte(`{"access_token":"x"}`))
			return
		}
		w.WriteHeader(503)
		w.Write([]byte(`{"error":"busy"}`))
	}))
	defer srv.Close()
	var seen []Exchange
	c := &Client{HTTP: srv.Client(), NoRetries: true, Sleep: func(context.Context, time.Duration) error { return nil },
		Observe: func(e Exchange) {
			e.RespBody = append([]byte(nil), e.RespBody...)
			seen = append(seen, e)
		}}
	_, err := c.Do(context.Background(), &Request{Kind: "data", Step: StepPoll, Method: "GET", URL: srv.URL + "/x"})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 || se.GaveUp != "" {
		t.Fatalf("err %v, want a 503 given up on at once", err)
	}
	if calls.Load() != 1 || len(seen) != 1 {
		t.Fatalf("%d calls, %d exchanges, want 1", calls.Load(), len(seen))
	}
	e := seen[0]
	if e.Step != StepPoll || e.RespHeader.Get("X-Trace") != "t-1" || string(e.RespBody) != `{"error":"busy"}` || e.Action != "RETRY" {
		t.Errorf("exchange %+v", e)
	}
	calls.Store(1)
	if _, err := c.Do(context.Background(), &Request{Kind: "token", Method: "POST", URL: srv.URL + "/token"}); err != nil {
		t.Fatalf("a token request is retried: %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls in all, want 3", calls.Load())
	}
}
