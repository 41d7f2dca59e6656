package run

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// AsyncRetriever end to end: a definition read against a local job API, the exact requests
// it sent, the waits between them, and the records. TestAsyncTwoSlices is the definition
// and the answers run with the Airbyte Python CDK 7.28.2 (run-cdk, concurrency 1): the CDK
// sent the same requests for each job (create, poll, poll 5 s later, the downloads with
// no credentials, delete) and emitted the same records in the same order. The CDK makes the
// next slice's job while the first one's downloads wait in its queue; connector reads the
// slices in order, so its requests of the second job come after the first one's delete.

// jobAPI answers each request line ("METHOD /path?query body …") with the next of its
// answers (the last one repeats); every line is written down.
type jobAPI struct {
	*httptest.Server
	mu      sync.Mutex
	got     []string
	answers map[string][]partAnswer
}

func serveJobs(t *testing.T, routes map[string][]string) *jobAPI {
	t.Helper()
	a := &jobAPI{answers: map[string][]partAnswer{}}
	for k, vs := range routes {
		for _, v := range vs {
			ans := partAnswer{Status: 200, Body: v}
			if s, body, ok := strings.Cut(v, " "); ok && len(s) == 3 && s[0] >= '1' && s[0] <= '5' {
				fmt.Sscan(s, &ans.Status)
				ans.Body = body
			}
			a.answers[k] = append(a.answers[k], ans)
		}
	}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		line := r.Method + " " + r.URL.RequestURI()
		if h := r.Header.Get("Authorization"); h != "" {
			line += " [" + h + "]"
		}
		if len(body) > 0 {
			line += " body " + string(body)
		}
		a.mu.Lock()
		a.got = append(a.got, line)
		list := a.answers[line]
		var ans partAnswer
		switch {
		case len(list) == 0:
			ans = partAnswer{Status: 404, Body: `{"error":"no route"}`}
		case len(list) == 1:
			ans = list[0]
		default:
			ans, a.answers[line] = list[0], list[1:]
		}
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(ans.Status)
		io.WriteString(w, strings.ReplaceAll(ans.Body, "{base}", "http://"+r.Host))
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *jobAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// fakeClock is a clock that only Sleep moves; it writes down each wait.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	slept []time.Duration
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.slept = append(c.slept, d)
	return nil
}

// jobLog writes down the job events and pages of a read.
type jobLog struct {
	streamLog
}

func (l *jobLog) Job(ev JobEvent) {
	s := fmt.Sprintf("job %d/%d step %d", ev.Slice.Number, ev.Attempt, ev.Step)
	if ev.Step == JobPolled {
		s += " " + ev.APIStatus + "→" + ev.Mapped
	}
	l.add(s)
}

const asyncDef = `version: 6.44.0
type: DeclarativeSource
definitions:
  auth: {type: BearerAuthenticator, api_token: "{{ config['api_key'] }}"}
  req: {type: HttpRequester, url_base: "{{ config['base_url'] }}", authenticator: "#/definitions/auth"}
streams:
  - type: DeclarativeStream
    name: reports
    primary_key: id
    retriever:
      type: AsyncRetriever
      partition_router: {type: ListPartitionRouter, cursor_field: region, values: [eu, us]}
      creation_requester:
        $ref: "#/definitions/req"
        path: /jobs
        http_method: POST
        request_body_json: {region: "{{ stream_partition['region'] }}"}
      polling_requester:
        $ref: "#/definitions/req"
        path: "/jobs/{{ creation_response['id'] }}"
        request_parameters: {region: "{{ stream_slice.extra_fields['creation_response']['region'] }}"}
      download_target_extractor: {type: DpathExtractor, field_path: [files, "*"]}
      download_requester:
        type: HttpRequester
        url_base: "{{ download_target }}"
        request_parameters: {job: "{{ creation_response['id'] }}", status: "{{ polling_response['status'] }}"}
      delete_requester:
        $ref: "#/definitions/req"
        path: "/jobs/{{ creation_response['id'] }}/delete"
        http_method: POST
      status_extractor: {type: DpathExtractor, field_path: [status]}
      status_mapping: {type: AsyncJobStatusMap, running: [pending], completed: [done], failed: [error], timeout: []}
      download_extractor: {type: DpathExtractor, field_path: [rows]}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [ignored]}
        record_filter: {condition: "{{ record['n'] > 1 }}"}
EXTRA
    transformations:
      - type: AddFields
        fields: [{path: [region], value: "{{ stream_partition['region'] }}"}]
spec:
  type: Spec
  connection_specification: {type: object, properties: {}}
`

// asyncRead reads the stream reports of asyncDef (EXTRA replaced by extra, lines of the
// retriever) against api, with a fake clock.
func asyncRead(t *testing.T, api *jobAPI, extra string, opts ...func(*Options)) ([]string, Result, *jobLog, *fakeClock) {
	t.Helper()
	return asyncReadDef(t, context.Background(), api, strings.Replace(asyncDef, "EXTRA\n", extra, 1), opts...)
}

// asyncReadDef is asyncRead of the definition def (its EXTRA, if any, left out) within ctx.
func asyncReadDef(t *testing.T, ctx context.Context, api *jobAPI, def string, opts ...func(*Options)) ([]string, Result, *jobLog, *fakeClock) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "def.yaml")
	if err := os.WriteFile(path, []byte(strings.Replace(def, "EXTRA\n", "", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	d, diags := manifest.Load(path)
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	cfg := map[string]any{"base_url": api.URL, "api_key": "tok"}
	clock := &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{}, Sleep: clock.Sleep, Now: clock.Now}
	a, err := auth.New(d.Authenticator, auth.Env{Globals: template.Globals{Config: cfg}, Client: client, Redactor: client.Redactor, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	out, log := &emitter{}, &jobLog{}
	o := &Options{Config: cfg, Auth: a, Client: client, Out: out, Observer: log, Now: clock.Now}
	for _, f := range opts {
		f(o)
	}
	res := Stream(ctx, o, d.Stream("reports"))
	return out.lines, res, log, clock
}

func TestAsyncTwoSlices(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j-eu", "region": "eu"}`},
		`POST /jobs [Bearer tok] body {"region":"us"}`: {`{"id": "j-us", "region": "us"}`},
		`GET /jobs/j-eu?region=eu [Bearer tok]`:        {`{"status": "pending"}`, `{"status": "done", "files": ["{base}/files/eu-1", "{base}/files/eu-2"]}`},
		`GET /jobs/j-us?region=us [Bearer tok]`:        {`{"status": "done", "files": ["{base}/files/us-1"]}`},
		`GET /files/eu-1?job=j-eu&status=done`:         {`{"rows": [{"id": 1, "n": 1}, {"id": 2, "n": 2}]}`},
		`GET /files/eu-2?job=j-eu&status=done`:         {`{"rows": [{"id": 3, "n": 3}]}`},
		`GET /files/us-1?job=j-us&status=done`:         {`{"rows": [{"id": 4, "n": 4}]}`},
		`POST /jobs/j-eu/delete [Bearer tok]`:          {`{}`},
		`POST /jobs/j-us/delete [Bearer tok]`:          {`{}`},
	})
	recs, res, log, clock := asyncRead(t, api, "")
	checkResult(t, res, 2, 3, 3, "")
	checkLines(t, "requests", api.requests(), []string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j-eu?region=eu [Bearer tok]`,
		`GET /jobs/j-eu?region=eu [Bearer tok]`,
		`GET /files/eu-1?job=j-eu&status=done`,
		`GET /files/eu-2?job=j-eu&status=done`,
		`POST /jobs/j-eu/delete [Bearer tok]`,
		`POST /jobs [Bearer tok] body {"region":"us"}`,
		`GET /jobs/j-us?region=us [Bearer tok]`,
		`GET /files/us-1?job=j-us&status=done`,
		`POST /jobs/j-us/delete [Bearer tok]`,
	})
	checkLines(t, "records", recs, []string{
		`{"id":2,"n":2,"region":"eu"}`,
		`{"id":3,"n":3,"region":"eu"}`,
		`{"id":4,"n":4,"region":"us"}`,
	})
	if fmt.Sprint(clock.slept) != "[5s]" {
		t.Errorf("waits %v, want [5s]", clock.slept)
	}
	checkLines(t, "events", log.lines, []string{
		"start reports",
		"job 1/1 step 1",
		"job 1/1 step 3 pending→running",
		"job 1/1 step 3 done→completed",
		"job 1/1 step 6",
		"page reports 1/1",
		"page reports 1/2",
		"job 1/1 step 7",
		"job 2/1 step 1",
		"job 2/1 step 3 done→completed",
		"job 2/1 step 6",
		"page reports 2/1",
		"job 2/1 step 7",
		"end reports: 2 slices, 3 pages, 3 records",
	})
}

func oneSlice(o *Options) { o.MaxSlices = 1 }

// A job the API reports failed is created again after the next 5 s round, three jobs in
// all; the third failing fails the slice, naming the job. (The CDK: the same requests and
// waits, and "One or more async jobs failed after exhausting all retry attempts.")
func TestAsyncFailedJob(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j1", "region": "eu"}`, `{"id": "j2", "region": "eu"}`, `{"id": "j3", "region": "eu"}`},
		`GET /jobs/j1?region=eu [Bearer tok]`:          {`{"status": "error"}`},
		`GET /jobs/j2?region=eu [Bearer tok]`:          {`{"status": "pending"}`, `{"status": "error"}`},
		`GET /jobs/j3?region=eu [Bearer tok]`:          {`{"status": "error"}`},
	})
	recs, res, _, clock := asyncRead(t, api, "", oneSlice)
	checkResult(t, res, 1, 0, 0, "stream reports, slice {region: \"eu\"}: the async job polled at "+api.URL+
		"/jobs/j3?region=eu failed: the API reported the status `error` (attempt 3 of 3)")
	checkLines(t, "requests", api.requests(), []string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j1?region=eu [Bearer tok]`,
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j2?region=eu [Bearer tok]`,
		`GET /jobs/j2?region=eu [Bearer tok]`,
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j3?region=eu [Bearer tok]`,
	})
	checkLines(t, "records", recs, nil)
	if fmt.Sprint(clock.slept) != "[5s 5s 5s]" {
		t.Errorf("waits %v, want [5s 5s 5s]", clock.slept)
	}
}

// A job still running after polling_job_timeout (minutes) is replaced by a new one when the
// next round finds it timed out; the third is aborted and fails the slice.
func TestAsyncTimedOutJob(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j1", "region": "eu"}`},
		`GET /jobs/j1?region=eu [Bearer tok]`:          {`{"status": "pending"}`},
		`POST /jobs/j1/abort [Bearer tok]`:             {`{}`},
	})
	extra := `      polling_job_timeout: 1
      abort_requester: {$ref: "#/definitions/req", path: "/jobs/{{ creation_response['id'] }}/abort", http_method: POST}
`
	_, res, _, clock := asyncRead(t, api, extra, oneSlice)
	checkResult(t, res, 1, 0, 0, "stream reports, slice {region: \"eu\"}: the async job polled at "+api.URL+
		"/jobs/j1?region=eu did not complete within polling_job_timeout (1 min) (attempt 3 of 3)")
	var want []string
	for range 3 {
		want = append(want, `POST /jobs [Bearer tok] body {"region":"eu"}`)
		for range 13 { // at 0 s, 5 s, … 60 s; at 65 s the job has timed out
			want = append(want, `GET /jobs/j1?region=eu [Bearer tok]`)
		}
	}
	want = append(want, `POST /jobs/j1/abort [Bearer tok]`)
	checkLines(t, "requests", api.requests(), want)
	if len(clock.slept) != 39 {
		t.Errorf("%d waits, want 39", len(clock.slept))
	}
}
