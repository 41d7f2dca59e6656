package cmd

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// readAPI serves the streams of testdata/airbyte/read.yaml: books and authors, events
// filtered by the since/until dates, and a refused /broken.
func readAPI(t *testing.T) *recorder {
	events := []struct{ id, at string }{{"1", "2024-01-10"}, {"2", "2024-02-05"}, {"3", "2024-02-20"}, {"4", "2024-03-15"}}
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/books":
			_, _ = w.Write([]byte(`{"data":[{"id":1,"title":"Dune","price":9.50},{"id":2,"title":"Emma","price":7}]}`))
		case "/authors":
			_, _ = w.Write([]byte(`{"data":[{"id":"a1","name":"Frank Herbert"}]}`))
		case "/events":
			since, until := r.URL.Query().Get("since"), r.URL.Query().Get("until")
			var recs []string
			for _, e := range events {
				if e.at >= since && e.at <= until {
					recs = append(recs, `{"id":`+e.id+`,"updated_at":"`+e.at+`"}`)
				}
			}
			_, _ = w.Write([]byte(`{"data":[` + strings.Join(recs, ",") + `]}`))
		default:
			w.WriteHeader(http.StatusForbidden)
			_, _ = w.Write([]byte(`{"error":"no access"}`))
		}
	})
}

// catalog is a configured catalog of the streams named, each with its sync mode.
func catalog(t *testing.T, streams ...string) string {
	var entries []string
	for _, s := range streams {
		name, mode, _ := strings.Cut(s, ":")
		if mode == "" {
			mode = "full_refresh"
		}
		entries = append(entries, `{"stream":{"name":"`+name+`","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"`+mode+`","destination_sync_mode":"append"}`)
	}
	return writeFile(t, "catalog.json", `{"streams":[`+strings.Join(entries, ",")+`]}`)
}

// The goldens in testdata/airbyte/read-*.golden are the stdout of `airbyte read`, the test
// server's address replaced by BASE_URL; stderr stays empty. Like every airbyte run of the
// tests, each line is checked against the protocol's schema (runCLIEnv).
func TestAirbyteRead(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	def := "testdata/airbyte/read.yaml"
	cases := []struct {
		name    string
		streams []string
		state   string
		code    int
	}{
		// Catalog order, not the definition's.
		{"two-streams", []string{"authors", "books"}, "", 0},
		// Reads from the state in, one STATE a month out; the state file is left as it was.
		{"incremental", []string{"events:incremental"}, `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-02-01"}}}]`, 0},
		// The CDK's _select_streams: an INCOMPLETE status, the other streams read, exit 0.
		{"unknown-stream", []string{"nosuch", "books"}, "", 0},
		// A TRACE ERROR then INCOMPLETE, the next stream still read, exit 1.
		{"http-failure", []string{"broken", "authors"}, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			api := readAPI(t)
			config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","start_date":"2024-01-01"}`)
			args := []string{"airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog(t, tc.streams...)}
			var statePath string
			if tc.state != "" {
				statePath = writeFile(t, "state.json", tc.state)
				args = append(args, "--state", statePath)
			}
			res := runCLIEnv(t, env, "", args...)
			if res.Code != tc.code || res.Stderr != "" {
				t.Errorf("exit %d (want %d), stderr %q", res.Code, tc.code, res.Stderr)
			}
			golden(t, "airbyte/read-"+tc.name+".golden", strings.ReplaceAll(res.Stdout, api.URL, "BASE_URL"))
			if statePath != "" {
				if b, err := os.ReadFile(statePath); err != nil || string(b) != tc.state {
					t.Errorf("the state file was changed: %s (%v)", b, err)
				}
			}
		})
	}
}

// The definition may come inside the config, as the platform passes it.
func TestAirbyteReadInjectedManifest(t *testing.T) {
	src, err := os.ReadFile("testdata/airbyte/read.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := yamlToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	api := readAPI(t)
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","start_date":"2024-01-01","__injected_declarative_manifest":`+manifest+`}`)
	res := runCLIEnv(t, env, "", "airbyte", "read", "--config", config, "--catalog", catalog(t, "authors", "books"))
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr %q", res.Code, res.Stderr)
	}
	golden(t, "airbyte/read-two-streams.golden", res.Stdout)
}

// Inputs that cannot be read are one TRACE ERROR (config_error) and exit 1.
func TestAirbyteReadBadInputs(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	def := "testdata/airbyte/read.yaml"
	config := writeFile(t, "config.json", `{"base_url":"http://127.0.0.1:1","start_date":"2024-01-01"}`)
	badState := writeFile(t, "state.json", `[{"type":"STREAM"}]`)
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		{"catalog missing", []string{"--catalog", "/nonexistent/catalog.json"},
			"Error starting the sync. This could be due to an invalid configuration or catalog. Error: cannot read the catalog: /nonexistent/catalog.json: no such file or directory"},
		{"state invalid", []string{"--catalog", catalog(t, "books"), "--state", badState},
			"Error starting the sync. This could be due to an invalid configuration or catalog. Error: state file " + badState + ": "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLIEnv(t, env, "", append([]string{"airbyte", "read", "--manifest-path", def, "--config", config}, tc.args...)...)
			var m struct {
				Type  string
				Trace struct {
					Type  string
					Error struct {
						Message     string
						FailureType string `json:"failure_type"`
					}
				}
			}
			// A FATAL log, then the TRACE ERROR.
			lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"LOG","log":{"level":"FATAL"`) {
				t.Fatalf("stdout %q: want a FATAL log and a TRACE ERROR", res.Stdout)
			}
			if err := json.Unmarshal([]byte(lines[1]), &m); err != nil {
				t.Fatalf("stdout %q: %v", res.Stdout, err)
			}
			if res.Code != 1 || res.Stderr != "" || m.Trace.Type != "ERROR" || m.Trace.Error.FailureType != "config_error" ||
				!strings.HasPrefix(m.Trace.Error.Message, tc.msg) {
				t.Errorf("exit %d, stderr %q, message %+v", res.Code, res.Stderr, m)
			}
		})
	}
}

// A catalog's cursor_field replaces the definition's where allow_catalog_defined_cursor_field
// is set (the CDK's _get_catalog_defined_cursor_field): the records are filtered and the
// state kept on that field; [""] means no choice; a nested path is refused.
func TestAirbyteReadCatalogCursorField(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":1,"updated_at":"2024-01-05","seen_at":"2024-01-20"},{"id":2,"updated_at":"2024-01-25","seen_at":"2024-01-07"}]}`))
	})
	def := writeFile(t, "def.yaml", `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [events]}
streams:
  - type: DeclarativeStream
    name: events
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "`+api.URL+`", path: /events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      allow_catalog_defined_cursor_field: true
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-31"
      step: P1M
      cursor_granularity: P1D
      is_client_side_incremental: true
`)
	config := writeFile(t, "config.json", `{}`)
	cat := func(cursor string) string {
		return writeFile(t, "catalog.json", `{"streams":[{"stream":{"name":"events","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append","cursor_field":`+cursor+`}]}`)
	}
	state := writeFile(t, "state.json", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"seen_at":"2024-01-10"}}}]`)
	finalState := func(stdout string) string {
		var last string
		for _, line := range strings.Split(stdout, "\n") {
			if strings.HasPrefix(line, `{"type":"STATE"`) {
				last = line
			}
		}
		return last
	}
	// seen_at: only record 1 is at or after the state's 2024-01-10.
	res := runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", cat(`["seen_at"]`), "--state", state)
	if res.Code != 0 || strings.Count(res.Stdout, `"type":"RECORD"`) != 1 || !strings.Contains(res.Stdout, `"data":{"id":1,`) {
		t.Errorf("catalog cursor seen_at: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if got := finalState(res.Stdout); !strings.Contains(got, `"stream_state":{"seen_at":"2024-01-20"}`) {
		t.Errorf("final state %s, want seen_at 2024-01-20", got)
	}
	// [""]: the definition's updated_at; the seen_at state means nothing to it, both records read.
	res = runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", cat(`[""]`))
	if res.Code != 0 || strings.Count(res.Stdout, `"type":"RECORD"`) != 2 {
		t.Errorf(`cursor_field [""]: exit %d\n%s%s`, res.Code, res.Stdout, res.Stderr)
	}
	if got := finalState(res.Stdout); !strings.Contains(got, `"stream_state":{"updated_at":"2024-01-25"}`) {
		t.Errorf("final state %s, want updated_at 2024-01-25", got)
	}
	res = runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", cat(`["a","b"]`))
	if res.Code != 1 || !strings.Contains(res.Stdout, "does not support nested cursor_field") || strings.Contains(res.Stdout, `"type":"RECORD"`) {
		t.Errorf("nested cursor_field: exit %d\n%s", res.Code, res.Stdout)
	}
}

// An OAuth token rotated during `airbyte read` is announced by a CONTROL message with the
// whole new config, where the platform keeps it (the config file is not the store). The
// golden is testdata/airbyte/read-control.golden, the server's address as BASE_URL.
func TestAirbyteReadControl(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/oauth/rotating/token":
			_, _ = w.Write([]byte(`{"access_token":"access-2","refresh_token":"refresh-2","expires_in":3600}`))
		case r.Header.Get("Authorization") != "Bearer access-2":
			w.WriteHeader(http.StatusUnauthorized)
		default:
			_, _ = w.Write([]byte(`{"data":[{"id":1,"title":"Dune"}]}`))
		}
	})
	configText := `{"base_url":"` + api.URL + `","client_id":"demo-client","client_secret":"demo-secret",` +
		`"credentials":{"refresh_token":"refresh-1","access_token":"access-1","token_expiry_date":"2020-01-01T00:00:00Z"}}`
	config := writeFile(t, "config.json", configText)
	res := runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", "../definitions/oauth-rotating-refresh-token.yaml",
		"--config", config, "--catalog", catalog(t, "books"))
	if res.Code != 0 || res.Stderr != "" {
		t.Errorf("exit %d, stderr %q", res.Code, res.Stderr)
	}
	golden(t, "airbyte/read-control.golden", strings.ReplaceAll(res.Stdout, api.URL, "BASE_URL"))
	if b, err := os.ReadFile(config); err != nil || string(b) != configText {
		t.Errorf("the config file was changed: %s (%v)", b, err)
	}
	var urls []string
	for _, r := range api.requests() {
		urls = append(urls, r.Method+" "+r.URL)
	}
	if want := []string{"POST /oauth/rotating/token", "GET /v1/oauth/books?offset=0&limit=100"}; !slices.Equal(urls, want) {
		t.Errorf("requests %q, want %q", urls, want)
	}
}

// With the definition inside the config, a CONTROL message's config carries it back, as the
// CDK's (whose config is the whole file the platform passed).
func TestAirbyteReadControlKeepsTheInjectedManifest(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/oauth/rotating/token" {
			_, _ = w.Write([]byte(`{"access_token":"access-2","refresh_token":"refresh-2","expires_in":3600}`))
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":1,"title":"Dune"}]}`))
	})
	src, err := os.ReadFile("../definitions/oauth-rotating-refresh-token.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := yamlToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","client_id":"demo-client","client_secret":"demo-secret",`+
		`"credentials":{"refresh_token":"refresh-1","access_token":"access-1","token_expiry_date":"2020-01-01T00:00:00Z"},`+
		`"__injected_declarative_manifest":`+manifest+`}`)
	res := runCLIEnv(t, env, "", "airbyte", "read", "--config", config, "--catalog", catalog(t, "books"))
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stdout)
	}
	var control struct {
		Control struct {
			ConnectorConfig struct {
				Config map[string]json.RawMessage `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
	for _, line := range strings.Split(res.Stdout, "\n") {
		if strings.HasPrefix(line, `{"type":"CONTROL"`) {
			if err := json.Unmarshal([]byte(line), &control); err != nil {
				t.Fatal(err)
			}
		}
	}
	cfg := control.Control.ConnectorConfig.Config
	if string(cfg["__injected_declarative_manifest"]) != manifest || !strings.Contains(string(cfg["credentials"]), `"refresh-2"`) {
		t.Errorf("CONTROL config: manifest %.80s…, credentials %s", cfg["__injected_declarative_manifest"], cfg["credentials"])
	}
}

// A RECORD's data leaves out the record's null members, not nested ones, as the CDK's
// serializer does (serpyco-rs' omit_none applies to the data dict itself).
func TestAirbyteReadRecordNulls(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"data":[{"id":1,"note":null,"tags":[null],"author":{"name":null}},{"id":null}]}`))
	})
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","start_date":"2024-01-01"}`)
	res := runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", "testdata/airbyte/read.yaml", "--config", config, "--catalog", catalog(t, "books"))
	var got []string
	for _, line := range strings.Split(res.Stdout, "\n") {
		if strings.HasPrefix(line, `{"type":"RECORD"`) {
			got = append(got, line)
		}
	}
	want := []string{
		`{"type":"RECORD","record":{"stream":"books","data":{"id":1,"tags":[null],"author":{"name":null}},"emitted_at":1700000000000}}`,
		`{"type":"RECORD","record":{"stream":"books","data":{},"emitted_at":1700000000000}}`,
	}
	if res.Code != 0 || !slices.Equal(got, want) {
		t.Errorf("exit %d, records:\n%s\nwant:\n%s", res.Code, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// A retried request is an INFO log before the wait, as the CDK logs it ("Caught retryable
// error … Waiting … seconds then retrying..."), between the stream's STARTED and its records.
func TestAirbyteReadLogsRetries(t *testing.T) {
	res, api := airbyteReadAfter(t, http.StatusInternalServerError)
	want := `{"type":"LOG","log":{"level":"INFO","message":"Caught retryable error '500 Internal Server Error' from GET ` + api.URL + `/books after 1 tries. Waiting 1 seconds then retrying..."}}`
	lines := strings.Split(res.Stdout, "\n")
	at := slices.Index(lines, want)
	if res.Code != 0 || at < 0 || !strings.Contains(lines[at-1], `"status":"STARTED"`) || !strings.Contains(strings.Join(lines[at:], "\n"), `"type":"RECORD"`) {
		t.Errorf("exit %d, want the line\n%s\nafter STARTED, before the records, in\n%s", res.Code, want, res.Stdout)
	}
}

// The protocol's input files are read within limits: a config over 32 MiB or a catalog
// over 16 MiB ends the command at once with a TRACE ERROR naming the file and the limit.
func TestAirbyteInputLimits(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	big := func(name string, size int64) string {
		path := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(path, []byte("{"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size); err != nil { // sparse: nothing written
			t.Fatal(err)
		}
		return path
	}
	config := writeFile(t, "config.json", `{"base_url":"http://127.0.0.1:1","start_date":"2024-01-01"}`)
	bigConfig, bigCatalog := big("config.json", 32<<20+1), big("catalog.json", 16<<20+1)
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"check", "--manifest-path", "testdata/airbyte/read.yaml", "--config", bigConfig},
			"Error: the config " + bigConfig + " is larger than 32 MiB (a limit of connector)"},
		{[]string{"read", "--manifest-path", "testdata/airbyte/read.yaml", "--config", config, "--catalog", bigCatalog},
			"Error: the catalog " + bigCatalog + " is larger than 16 MiB (a limit of connector)"},
	} {
		res := runCLIEnv(t, env, "", append([]string{"airbyte"}, tc.args...)...)
		if res.Code != 1 || !strings.Contains(res.Stdout, `"type":"ERROR"`) || !strings.Contains(res.Stdout, tc.msg) {
			t.Errorf("%s: exit %d\n%s\nwant a TRACE ERROR with %q", tc.args[0], res.Code, res.Stdout, tc.msg)
		}
	}
}

// A rate-limited request (429) is a RUNNING status with the reason RATE_LIMITED before the
// retry's log, as the CDK's HttpClient prints it; a 500 is not.
func TestAirbyteReadRateLimitedIsRunning(t *testing.T) {
	for _, tt := range []struct {
		status int
		want   bool
	}{{http.StatusTooManyRequests, true}, {http.StatusInternalServerError, false}} {
		res, _ := airbyteReadAfter(t, tt.status)
		limited := `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"RUNNING","reasons":[{"type":"RATE_LIMITED"}]}}}`
		lines := strings.Split(res.Stdout, "\n")
		at := slices.Index(lines, limited)
		switch {
		case res.Code != 0:
			t.Errorf("%d: exit %d\n%s", tt.status, res.Code, res.Stderr)
		case tt.want && (at < 0 || !strings.Contains(lines[at+1], "Caught retryable error '429 Too Many Requests'")):
			t.Errorf("%d: want the line\n%s\nbefore the retry's log, in\n%s", tt.status, limited, res.Stdout)
		case !tt.want && at >= 0:
			t.Errorf("%d: a RATE_LIMITED status in\n%s", tt.status, res.Stdout)
		}
	}
}

// airbyteReadAfter runs airbyte read of the books stream against an API that answers status
// first, then a page of one record; the retry does not wait.
func airbyteReadAfter(t *testing.T, status int) (cliResult, *recorder) {
	t.Helper()
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	env.Sleep = func(context.Context, time.Duration) error { return nil }
	var mu sync.Mutex
	calls := 0
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			w.WriteHeader(status)
			return
		}
		_, _ = w.Write([]byte(`{"data":[{"id":1}]}`))
	})
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","start_date":"2024-01-01"}`)
	return runCLIEnv(t, env, "", "airbyte", "read", "--manifest-path", "testdata/airbyte/read.yaml", "--config", config, "--catalog", catalog(t, "books")), api
}
