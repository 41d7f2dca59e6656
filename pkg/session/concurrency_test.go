package session

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/redact"
)

// concurrencyDef is stripe's concurrency_level on a stream of four daily windows.
const concurrencyDef = `version: 6.5.0
type: DeclarativeSource
concurrency_level:
  type: ConcurrencyLevel
  default_concurrency: "{{ config.get('num_workers', 4 if 'sk_test_' in config['client_secret'] else 25) }}"
  max_concurrency: 100
streams:
  - type: DeclarativeStream
    name: charges
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /charges
        authenticator: {type: BearerAuthenticator, api_token: "{{ config['client_secret'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: created
      datetime_format: "%s"
      cursor_datetime_formats: ["%s"]
      step: P1D
      cursor_granularity: PT1S
      start_datetime: {type: MinMaxDatetime, datetime: "2024-01-01T00:00:00Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
      end_datetime: {type: MinMaxDatetime, datetime: "2024-01-04T23:59:59Z", datetime_format: "%Y-%m-%dT%H:%M:%SZ"}
      start_time_option: {type: RequestOption, field_name: "created[gte]", inject_into: request_parameter}
      end_time_option: {type: RequestOption, field_name: "created[lte]", inject_into: request_parameter}
`

// default_concurrency written as a template is rendered with the testing values and
// bounded by max_concurrency; one written as an integer is used as it is, as the CDK's
// ConcurrencyLevel does.
func TestWorkersFromConcurrencyLevel(t *testing.T) {
	fixed := strings.Replace(concurrencyDef,
		`default_concurrency: "{{ config.get('num_workers', 4 if 'sk_test_' in config['client_secret'] else 25) }}"
  max_concurrency: 100`, "default_concurrency: 5\n  max_concurrency: 2", 1)
	for _, tt := range []struct {
		name, def, vals string
		flag, want      int
		err             string
	}{
		{"test key", concurrencyDef, "client_secret: sk_test_abc\n", 0, 4, ""},
		{"live key", concurrencyDef, "client_secret: sk_live_abc\n", 0, 25, ""},
		{"num_workers", concurrencyDef, "client_secret: sk_test_abc\nnum_workers: 7\n", 0, 7, ""},
		{"over max_concurrency, then this tool's limit", concurrencyDef, "client_secret: sk_test_abc\nnum_workers: 500\n", 0, MaxConcurrency, ""},
		{"the flag wins", concurrencyDef, "client_secret: sk_test_abc\n", 2, 2, ""},
		{"an integer is not bounded", fixed, "client_secret: sk_test_abc\n", 0, 5, ""},
		{"not an integer", concurrencyDef, "client_secret: sk_test_abc\nnum_workers: many\n", 0, 0,
			`def.yaml:4:3: concurrency_level.default_concurrency renders "many", not a whole number: correct the value it reads in VALUES`},
		{"no concurrency_level", readDef, "base_url: http://127.0.0.1:1\napi_key: k\n", 0, 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s, err := open(t, tt.def, tt.vals, Inputs{}, Env{Redactor: &redact.Redactor{}})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			n, err := s.workers(tt.flag)
			want := strings.ReplaceAll(tt.err, "VALUES", s.Values.Name())
			if fmt.Sprint(err) != fmt.Sprint(map[bool]any{true: nil, false: want}[tt.err == ""]) {
				t.Fatalf("error %v, want %q", err, tt.err)
			}
			if n != tt.want {
				t.Errorf("workers %d, want %d", n, tt.want)
			}
		})
	}
}

// A stream whose windows all keep failing (503) is retried as the CDK retries it: each
// window 6 times with waits of 1, 2, 4, 8 and 16 s, and, since stripe's concurrency_level
// gives 4 for a test key, the four windows at once, so the read waits 31 s, not 4 × 31 s.
// The API holds each window's first request until all four have come: read one at a time,
// they never would, and the order below would not hold.
func TestFailingWindowsAreRetriedAtOnce(t *testing.T) {
	const windows = 4
	var mu sync.Mutex
	var got []string
	firsts := map[string]bool{}
	all := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Authorization"))
		first := !firsts[r.URL.RawQuery]
		firsts[r.URL.RawQuery] = true
		if first && len(firsts) == windows {
			close(all)
		}
		mu.Unlock()
		if first {
			select {
			case <-all:
			case <-time.After(2 * time.Second):
			}
		}
		http.Error(w, `{"error":{"message":"unavailable"}}`, http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	var slept []time.Duration
	s, err := open(t, concurrencyDef, "base_url: "+srv.URL+"\nclient_secret: sk_test_abc\n", Inputs{},
		Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second,
			Sleep: func(_ context.Context, d time.Duration) error {
				mu.Lock()
				slept = append(slept, d)
				mu.Unlock()
				return nil
			}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := OpenState(StateFiles{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var failed []string
	res, err := s.Read(context.Background(), ReadSpec{Out: &out, Format: "records", State: st, Report: func(ev Event) {
		if f, ok := ev.(StreamFailed); ok {
			failed = append(failed, strings.ReplaceAll(f.Message, srv.URL, "API"))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != 1 || out.Len() != 0 {
		t.Errorf("outcome %+v, stdout %q", res, out.String())
	}
	window := func(day int) string {
		start := 1704067200 + day*86400
		return fmt.Sprintf("GET /charges?created%%5Bgte%%5D=%d&created%%5Blte%%5D=%d Bearer sk_test_abc", start, start+86399)
	}
	var want []string
	for day := range windows {
		for range 6 {
			want = append(want, window(day))
		}
	}
	// The first four requests are the four windows' first attempts, in any order.
	firstFour := slices.Clone(got[:min(windows, len(got))])
	slices.Sort(firstFour)
	if wantFirst := []string{window(0), window(1), window(2), window(3)}; !slices.Equal(firstFour, wantFirst) {
		t.Errorf("first requests:\n  %s\nwant the four windows at once:\n  %s", strings.Join(firstFour, "\n  "), strings.Join(wantFirst, "\n  "))
	}
	sorted := slices.Clone(got)
	slices.Sort(sorted)
	if !slices.Equal(sorted, want) {
		t.Errorf("requests (sorted):\n  %s\nwant:\n  %s", strings.Join(sorted, "\n  "), strings.Join(want, "\n  "))
	}
	slices.Sort(slept)
	var wantSlept []time.Duration
	for _, d := range []time.Duration{1, 2, 4, 8, 16} {
		for range windows {
			wantSlept = append(wantSlept, d*time.Second)
		}
	}
	if !slices.Equal(slept, wantSlept) {
		t.Errorf("waits %v, want %v", slept, wantSlept)
	}
	wantFailed := []string{`stream charges, slice {start_time: "1704067200", end_time: "1704153599"}, page 1: 503 Service Unavailable from GET API/charges?created%5Bgte%5D=1704067200&created%5Blte%5D=1704153599: {"error":{"message":"unavailable"}} (gave up after 5 retries) (4 of 4 slices failed; 0 records written)`}
	if !slices.Equal(failed, wantFailed) {
		t.Errorf("failures:\n  %s\nwant:\n  %s", strings.Join(failed, "\n  "), strings.Join(wantFailed, "\n  "))
	}
}

// An interrupt that comes while a stream goes on reading after one of its slices failed
// ends the read as an interrupt: the stream's failure is said, then the interrupt, and the
// stream left unread is not put down to --fail-fast, which was not asked for.
func TestInterruptAfterAFailedSlice(t *testing.T) {
	def := concurrencyDef + `  - type: DeclarativeStream
    name: refunds
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /refunds, authenticator: {type: BearerAuthenticator, api_token: "{{ config['client_secret'] }}"}}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		n := len(got)
		mu.Unlock()
		switch n {
		case 1: // the first window fails at once: a 404 is not retried
			http.Error(w, `{"error":"gone"}`, http.StatusNotFound)
		case 2: // the second is interrupted while it is read
			cancel()
			<-r.Context().Done()
		default:
			fmt.Fprint(w, `{"data":[{"id":"x"}]}`)
		}
	}))
	t.Cleanup(srv.Close)
	s, err := open(t, def, "base_url: "+srv.URL+"\nclient_secret: sk_test_abc\n", Inputs{},
		Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second, Sleep: func(context.Context, time.Duration) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	st, err := OpenState(StateFiles{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var events []string
	res, err := s.Read(ctx, ReadSpec{Out: &out, Format: "records", State: st, Workers: 1, Report: func(ev Event) {
		switch ev := ev.(type) {
		case StreamFailed:
			events = append(events, "failed "+ev.Stream+": "+strings.ReplaceAll(ev.Message, srv.URL, "API"))
		case Interrupted:
			events = append(events, fmt.Sprintf("interrupted %s after %d records", ev.Stream, ev.Records))
		case Failures:
			events = append(events, fmt.Sprintf("failures %d of %d, %d not read", ev.Failed, ev.Streams, ev.NotRead))
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, "events", events, []string{
		`failed charges: stream charges, slice {start_time: "1704067200", end_time: "1704153599"}, page 1: 404 Not Found from GET API/charges?created%5Bgte%5D=1704067200&created%5Blte%5D=1704153599: {"error":"gone"} (2 of 2 slices failed; 0 records written)`,
		"interrupted charges after 0 records",
	})
	if res.Stopped == nil || res.Failed != 1 {
		t.Errorf("outcome %+v, want the interrupt as what stopped the read", res)
	}
	if len(got) != 2 {
		t.Errorf("requests %q, want the two windows only", got)
	}
}
