package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStateFileFolderCheckedBeforeTheRead: a --state or --state-out in a folder that does
// not exist is a usage error before any request, not a failure at the first checkpoint.
func TestStateFileFolderCheckedBeforeTheRead(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	missing := filepath.Join(t.TempDir(), "no", "such", "state.json")
	for _, flag := range []string{"--state", "--state-out"} {
		res := runCLI(t, "", "read", def, "--testing-values", vals, flag, missing)
		if res.Code != exitUsage || !strings.Contains(res.Stderr, "does not exist") {
			t.Errorf("%s in a missing folder: exit %d, stderr %q; want exit 2 naming the folder", flag, res.Code, res.Stderr)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests were sent before the state file was found unwritable", n)
	}
	dir := t.TempDir()
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--state-out", dir)
	if res.Code != exitUsage || !strings.Contains(res.Stderr, "is a folder") {
		t.Errorf("--state-out on a folder: exit %d, stderr %q", res.Code, res.Stderr)
	}
}

// TestFullRefreshStreamStateIsNoCursor: a full refresh stream read to its end writes the
// CDK's state of a stream without a cursor, so that a StateDelegatingStream turns
// incremental next time; states of streams not read are kept.
func TestFullRefreshStreamStateIsNoCursor(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	st := writeFile(t, "state.json", `{"other": {"updated_at": "2024-01-01"}}`)
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--state", st)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	got, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"other"},"stream_state":{"updated_at":"2024-01-01"}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"__ab_no_cursor_state_message":true}}}` + "\n]\n"
	if string(got) != want {
		t.Errorf("state file:\n%s\nwant:\n%s", got, want)
	}
	if res.Stderr != "" {
		t.Errorf("stderr %q, want nothing for a full refresh stream", res.Stderr)
	}
}

// TestStateDelegatingRetentionPeriod: a StateDelegatingStream whose state is older than its
// api_retention_period reads its full refresh stream (with a note), as the CDK does; a
// recent state, or a full refresh's own state, reads the incremental stream.
func TestStateDelegatingRetentionPeriod(t *testing.T) {
	t.Parallel()
	manifest, err := os.ReadFile("testdata/incremental-cdk/state-delegating/manifest.yaml")
	if err != nil {
		t.Fatal(err)
	}
	def := writeFile(t, "def.yaml", strings.Replace(string(manifest),
		"  - type: StateDelegatingStream\n    name: customers\n",
		"  - type: StateDelegatingStream\n    name: customers\n    api_retention_period: P30D\n", 1))
	api := newRecorder(t, e2eAnswer(`{"data":[]}`))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nstart_date: 2024-03-01T00:00:00Z\nend_date: 2024-03-10T00:00:00Z\n")
	env := testEnv(nil)
	env.Now = func() time.Time { return time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC) }
	for _, c := range []struct {
		name, state, path, note string
	}{
		{"recent", `{"customers":{"updated":"2024-03-04T10:00:00Z"}}`, "/customer_events", ""},
		{"old", `{"customers":{"updated":"2024-01-04T10:00:00Z"}}`, "/customers", "older than the API's retention period of P30D (cutoff 2024-02-19T00:00:00Z)"},
		{"full refresh state", `{"customers":{"__ab_no_cursor_state_message":true}}`, "/customer_events", ""},
	} {
		st := writeFile(t, "state-"+strings.ReplaceAll(c.name, " ", "-")+".json", c.state)
		before := len(api.requests())
		res := runCLIEnv(t, env, "", "read", def, "--testing-values", vals, "--state", st)
		if res.Code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, res.Code, res.Stderr)
		}
		reqs := api.requests()[before:]
		if len(reqs) != 1 || !strings.HasPrefix(reqs[0].URL, c.path+"?") && reqs[0].URL != c.path {
			t.Errorf("%s: requests %v, want one to %s", c.name, reqs, c.path)
		}
		if got := strings.Contains(res.Stderr, "retention period"); got != (c.note != "") || c.note != "" && !strings.Contains(res.Stderr, c.note) {
			t.Errorf("%s: stderr %q, want the note %q", c.name, res.Stderr, c.note)
		}
	}
}

// TestTraceShowsWindowsAndCheckpoints: paginate-trace names the cursor, shows each window as
// its slice and each checkpoint, and writes the state with --state.
func TestTraceShowsWindowsAndCheckpoints(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("since") {
		case "2024-03-01T00:00:00Z":
			w.Write([]byte(`[{"id":1,"updated_at":"2024-03-01T10:00:00Z"}]`))
		default:
			w.Write([]byte(`[]`))
		}
	})
	def := writeFile(t, "def.yaml", `version: 6.0.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-03-01T00:00:00Z"
      end_datetime: "2024-03-02T12:00:00Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`)
	st := filepath.Join(t.TempDir(), "state.json")
	res := runCLI(t, "", "paginate-trace", def, "--set", "base_url="+api.URL, "--state", st)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	for _, want := range []string{
		"DatetimeBasedCursor on updated_at from 2024-03-01T00:00:00Z)\n",
		"  slice 1 2024-03-01T00:00:00Z → 2024-03-01T23:59:59Z of events\n",
		"    checkpoint: state {\"updated_at\":\"2024-03-01T10:00:00Z\"}\n",
		"  slice 2 2024-03-02T00:00:00Z → 2024-03-02T12:00:00Z of events\n",
		"  state at the end: {\"updated_at\":\"2024-03-01T10:00:00Z\"}\n",
		"  events: 2 slices, 2 pages, 1 record emitted\n",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("trace lacks %q:\n%s", want, res.Stdout)
		}
	}
	if got, _ := os.ReadFile(st); !strings.Contains(string(got), `"stream_state":{"updated_at":"2024-03-01T10:00:00Z"}`) {
		t.Errorf("state file %s", got)
	}
}
