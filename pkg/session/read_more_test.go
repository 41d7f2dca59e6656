package session

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/redact"
)

// A read's notes and retries: a --prefetch that cannot apply is a Warning (and a LOG WARN
// in a protocol read); a 429 is retried, logged as the CDK's backoff handler does, with the
// stream's RUNNING status saying RATE_LIMITED.
func TestReadWarningsAndRetries(t *testing.T) {
	_, events, _ := readWith(t, ReadSpec{Format: "records", Prefetch: 4})
	var warnings []string
	for _, e := range events {
		if strings.HasPrefix(e, "session.Warning") {
			warnings = append(warnings, e)
		}
	}
	checkText(t, "warnings", warnings, []string{
		"session.Warning {Text:gone: --prefetch 4 ignored, reading one page at a time: the stream does not paginate}",
		"session.Warning {Text:more: --prefetch 4 ignored, reading one page at a time: the stream does not paginate}",
	})

	var mu sync.Mutex
	limited := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		first := !limited
		limited = true
		mu.Unlock()
		if first {
			w.Header().Set("Retry-After", "3")
			http.Error(w, `{"error":"slow down"}`, http.StatusTooManyRequests)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}))
	t.Cleanup(srv.Close)
	var slept []time.Duration
	s, err := open(t, readDef, "base_url: "+srv.URL+"\napi_key: key-secret-1\n", Inputs{Streams: []string{"more"}},
		Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second,
			Sleep: func(_ context.Context, d time.Duration) error { slept = append(slept, d); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	out, _, res := readSession(t, s, srv.URL, ReadSpec{Format: "airbyte", Protocol: true, Prefetch: 2})
	if res.Failed != 0 {
		t.Errorf("outcome %+v", res)
	}
	checkText(t, "protocol messages", protocolSummary(t, out), []string{
		"LOG INFO Starting syncing",
		"LOG INFO Marking stream more as STARTED",
		"LOG INFO Syncing stream: more",
		"STATUS more STARTED",
		"LOG WARN more: --prefetch 2 ignored, reading one page at a time: the stream does not paginate",
		"STATUS more RUNNING RATE_LIMITED",
		"LOG INFO Caught retryable error '429 Too Many Requests (Retry-After: 3)' from GET API/more after 1 tries. Waiting 3 seconds then retrying...",
		"LOG INFO Marking stream more as RUNNING",
		"STATUS more RUNNING",
		"RECORD more",
		"LOG INFO Read 1 records from more stream",
		"LOG INFO Marking stream more as STOPPED",
		"LOG INFO Finished syncing more",
		"STATUS more COMPLETE",
		"STATE",
		"LOG INFO Finished syncing",
	})
	if fmt.Sprint(slept) != "[3s]" {
		t.Errorf("slept %v, want the Retry-After's 3s", slept)
	}
}

// checkText compares lines, showing both whole when they differ.
func checkText(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n  %s\nwant:\n  %s", what, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// With FailFast, a host that cannot be reached fails the first stream after its few
// retries, and every later stream at once, unsent: those are grouped under the host, and
// the read ends with one Unreached event naming them.
func TestReadUnreachableHost(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	base := srv.URL
	srv.Close() // nothing listens there any more
	s, err := open(t, readDef, "base_url: "+base+"\napi_key: key-secret-1\n", Inputs{},
		Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second, FailFast: true,
			Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	_, events, res := readSession(t, s, base, ReadSpec{Format: "records"})
	for i := range events {
		events[i] = strings.ReplaceAll(events[i], strings.TrimPrefix(base, "http://"), "HOST")
	}
	checkText(t, "events", events, []string{
		"ended items 0 records 0 pages",
		"failed items grouped=false: stream items, page 1: GET API/items?page=1: connection refused by HOST (is the server running?) (gave up after 2 retries) (0 records written before the failure)",
		"ended gone 0 records 0 pages",
		"failed gone grouped=true: stream gone, page 1: GET API/gone: not sent: HOST could not be reached earlier in this run (connection refused) (0 records written before the failure)",
		"ended more 0 records 0 pages",
		"failed more grouped=true: stream more, page 1: GET API/more: not sent: HOST could not be reached earlier in this run (connection refused) (0 records written before the failure)",
		"session.Unreached {Host:HOST Cause:connection refused Streams:[gone more]}",
		"failures 3 of 3, 0 not read",
	})
	if res.Failed != 3 {
		t.Errorf("outcome %+v", res)
	}
}

// incrementalDef is readDef with a first stream "events", incremental on updated, at
// /events (which the API answers with a 404).
var incrementalDef = strings.Replace(readDef, "streams:\n", `streams:
  - type: DeclarativeStream
    name: events
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /events}, record_selector: {$ref: "#/definitions/selector"}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-02"
      step: P1D
      cursor_granularity: P1D
`, 1)

// The state file after a read whose streams failed: an incremental stream that read no
// slice whole keeps the state it had, and the read ends saying so; a full refresh stream
// that failed earns no state; the streams read whole have theirs written.
func TestReadStateOfFailedStreams(t *testing.T) {
	srv := readAPI(t)
	dir := t.TempDir()
	in := writeText(t, dir, "state.json", `{"events": {"updated": "2023-12-31"}}`)
	st, err := OpenState(StateFiles{In: in})
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t, incrementalDef, "base_url: "+srv.URL+"\napi_key: key-secret-1\n", Inputs{},
		Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, events, res := readSession(t, s, srv.URL, ReadSpec{Format: "records", State: st, StatePath: in})
	checkText(t, "events", events, []string{
		"ended events 0 records 0 pages",
		`failed events grouped=false: stream events, slice {start_time: "2024-01-01", end_time: "2024-01-02"}, page 1: 404 Not Found from GET API/events: {"error":"no such thing"} (0 records written before the failure)`,
		"ended items 3 records 2 pages",
		"ended gone 0 records 0 pages",
		`failed gone grouped=false: stream gone, page 1: 404 Not Found from GET API/gone: {"error":"no such thing"} (0 records written before the failure)`,
		"ended more 1 records 1 pages",
		"session.StateUnchanged {File:" + in + " Streams:[events]}",
		"failures 2 of 4, 0 not read",
	})
	if res.Failed != 2 || res.StateErr != nil {
		t.Errorf("outcome %+v", res)
	}
	got, err := os.ReadFile(in)
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated":"2023-12-31"}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"__ab_no_cursor_state_message":true}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"more"},"stream_state":{"__ab_no_cursor_state_message":true}}}` + "\n]\n"
	if string(got) != want {
		t.Errorf("state file:\n%s\nwant (no state for gone):\n%s", got, want)
	}
}
