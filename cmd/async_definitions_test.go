package cmd

import (
	"bytes"
	"context"
	"encoding/json"
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

	"connector/pkg/demoapi"
	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/slice"
)

// definitions/async-job.yaml against the demo API's report jobs: the exact requests, the
// waits (a fake clock that only the poll interval moves: nothing really sleeps), the
// records, and what paginate-trace and read print about the jobs.

// jobClock is a clock that Sleep moves; it writes down each wait. before, when set, runs at
// the start of each wait.
type jobClock struct {
	mu     sync.Mutex
	now    time.Time
	waits  []time.Duration
	before func()
}

func (c *jobClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *jobClock) Sleep(_ context.Context, d time.Duration) error {
	if c.before != nil {
		c.before()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.waits = append(c.waits, d)
	return nil
}

// jobDemo is the demo API behind a server that writes down each request as
// "METHOD /path?query body".
type jobDemo struct {
	api   *demoapi.Server
	srv   *httptest.Server
	clock *jobClock
	env   Env
	mu    sync.Mutex
	got   []string
}

func newJobDemo(t *testing.T) *jobDemo {
	t.Helper()
	d := &jobDemo{api: demoapi.New(demoapi.Options{}), clock: &jobClock{now: resT0}}
	d.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		line := r.Method + " " + r.URL.RequestURI()
		if len(body) > 0 {
			line += " " + string(body)
		}
		d.mu.Lock()
		d.got = append(d.got, line)
		d.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		d.api.ServeHTTP(w, r)
	}))
	t.Cleanup(d.srv.Close)
	d.env = testEnv(nil)
	d.env.Now, d.env.Sleep = d.clock.Now, d.clock.Sleep
	return d
}

func (d *jobDemo) requests() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.got...)
}

// run runs a command on definitions/async-job.yaml (or def, a path, when not "") against
// the demo API.
func (d *jobDemo) run(t *testing.T, command, def string, args ...string) cliResult {
	t.Helper()
	if def == "" {
		def = filepath.Join("..", "definitions", "async-job.yaml")
	}
	all := append([]string{command, def, "--testing-values", filepath.Join("..", "testing-values.example.yaml"),
		"--set", "base_url=" + d.srv.URL}, args...)
	return runCLIEnv(t, d.env, "", all...)
}

// jobRequests are the requests of one job of the definition that completes at its second
// poll, id its API id, files the number of its result files.
func jobRequests(country, id string, files int) []string {
	const key = "?api_key=demo-api-key"
	out := []string{
		"POST /v1/apikey-query/jobs" + key + ` {"country":"` + country + `"}`,
		"GET /v1/apikey-query/jobs/" + id + key,
		"GET /v1/apikey-query/jobs/" + id + key,
	}
	for n := 1; n <= files; n++ {
		out = append(out, fmt.Sprintf("GET /v1/apikey-query/jobs/%s/files/%d%s", id, n, key))
	}
	return append(out, "POST /v1/apikey-query/jobs/"+id+"/delete"+key)
}

// reportRecords are the records of the reports of countries, in order.
func reportRecords(t *testing.T, countries ...string) string {
	t.Helper()
	var b strings.Builder
	for _, c := range countries {
		for _, id := range demoapi.ReportRows(demoapi.DefaultRecords, c) {
			line, err := json.Marshal(demoapi.Author(id))
			if err != nil {
				t.Fatal(err)
			}
			b.Write(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// Checked against the Airbyte CDK's order for one job (create, poll, poll 5 s later,
// the downloads, delete); connector finishes a slice before it creates the next slice's job
// (README, "Asynchronous jobs").
func TestAsyncJobDefinitionReadsTheDemoAPI(t *testing.T) {
	d := newJobDemo(t)
	res := d.run(t, "read", "")
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	// 36 authors in each country: two files of 25 and 11 rows.
	want := append(jobRequests("SE", "job-000001", 2), jobRequests("JP", "job-000002", 2)...)
	if got := d.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.Stdout != reportRecords(t, "SE", "JP") {
		t.Errorf("records:\n%s", res.Stdout)
	}
	if fmt.Sprint(d.clock.waits) != "[5s 5s]" {
		t.Errorf("waits %v, want one poll interval per job", d.clock.waits)
	}
	if got, want := d.api.Jobs(), (demoapi.JobStats{Created: 2, Polls: 4, Deleted: 2, PeakRunning: 1}); got != want {
		t.Errorf("jobs %+v, want %+v", got, want)
	}
}

// max_concurrent_async_job_count 2 with --concurrency 3 and three countries: two jobs run at
// once, never three, and the records still come out in slice order.
func TestAsyncJobsAtOnce(t *testing.T) {
	d := newJobDemo(t)
	// The first wait of a job holds until two jobs exist, so that both slots are in use
	// whatever the scheduling (or 10 s have passed, and the peak check below fails).
	d.clock.before = func() {
		for i := 0; i < 10000 && d.api.Jobs().Created < 2; i++ {
			time.Sleep(time.Millisecond)
		}
	}
	res := d.run(t, "read", "", "--concurrency", "3", "--set-json", `report_countries=["SE","JP","FR"]`)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if res.Stdout != reportRecords(t, "SE", "JP", "FR") {
		t.Errorf("records out of slice order:\n%s", res.Stdout)
	}
	if got := d.api.Jobs(); got.PeakRunning != 2 || got.Created != 3 || got.Deleted != 3 {
		t.Errorf("jobs %+v, want 3 created and deleted, at most 2 running at once", got)
	}
	// Each job's requests are in their order, whatever the interleaving (which country
	// gets which id is not).
	got := d.requests()
	byJob := map[string][]string{}
	var created []string
	for _, line := range got {
		if id := jobOf(line); id != "" {
			byJob[id] = append(byJob[id], line)
		} else {
			created = append(created, line)
		}
	}
	if len(created) != 3 || len(got) != 3*6 {
		t.Errorf("requests:\n%s\nwant 3 creations and 5 requests a job", strings.Join(got, "\n"))
	}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("job-%06d", i)
		if want := jobRequests("", id, 2)[1:]; strings.Join(byJob[id], "\n") != strings.Join(want, "\n") {
			t.Errorf("requests of %s:\n%s\nwant:\n%s", id, strings.Join(byJob[id], "\n"), strings.Join(want, "\n"))
		}
	}
}

// jobOf is the job id in the path of a request line ("" for a creation).
func jobOf(line string) string {
	_, rest, ok := strings.Cut(line, "/jobs/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	id, _, _ = strings.Cut(id, "?")
	return id
}

// paginate-trace shows each step of each job after its request, with the elapsed time of
// the fake clock; the API key is **** in every URL, text and JSON. (The size of the ready
// poll counts the server's URL twice: test servers get five-digit ephemeral ports.)
func TestAsyncJobTrace(t *testing.T) {
	for _, format := range []string{"text", "json"} {
		t.Run(format, func(t *testing.T) {
			d := newJobDemo(t)
			res := d.run(t, "paginate-trace", "", "--set-json", `report_countries=["SE"]`, "--format", format)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			if strings.Contains(res.Stdout, demoapi.DemoAPIKey) {
				t.Errorf("the API key is in the trace:\n%s", res.Stdout)
			}
			golden(t, "trace/async-job."+format, strings.ReplaceAll(res.Stdout, d.srv.URL, "http://API"))
		})
	}
}

// asyncFailingDef is definitions/async-job.yaml with jobs that the API fails.
func asyncFailingDef(t *testing.T) string {
	t.Helper()
	def, err := os.ReadFile(filepath.Join("..", "definitions", "async-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	from := `            country: "{{ stream_partition['country'] }}"` + "\n"
	if !bytes.Contains(def, []byte(from)) {
		t.Fatal("the creation body of async-job.yaml changed")
	}
	return writeFile(t, "async-job.yaml", strings.Replace(string(def), from, from+"            fail: true\n", 1))
}

// A job the API fails is created again twice; the third failure fails the stream: exit 1,
// a note per retry and the error naming the job on stderr, an airbyte TRACE ERROR; the API
// key is in none of them.
func TestAsyncJobFailsThroughTheCLI(t *testing.T) {
	d := newJobDemo(t)
	res := d.run(t, "read", asyncFailingDef(t), "--set-json", `report_countries=["SE"]`, "--format", "airbyte")
	if res.Code != 1 {
		t.Errorf("exit %d, want 1", res.Code)
	}
	poll := d.srv.URL + "/v1/apikey-query/jobs/job-000003?api_key=****"
	wantErr := `note: author_report: slice {country: "SE"}: the async job failed (API status ` + "`failed`" + `, attempt 1 of 3); creating a new job
note: author_report: slice {country: "SE"}: the async job failed (API status ` + "`failed`" + `, attempt 2 of 3); creating a new job
error: stream author_report, slice {country: "SE"}: the async job polled at ` + poll + " failed: the API reported the status `failed` (attempt 3 of 3) (0 records written before the failure)\n"
	if res.Stderr != wantErr {
		t.Errorf("stderr:\n%s\nwant:\n%s", res.Stderr, wantErr)
	}
	var trace struct {
		Type  string
		Trace struct {
			Type  string
			Error struct {
				Message          string
				InternalMessage  string                `json:"internal_message"`
				FailureType      string                `json:"failure_type"`
				StreamDescriptor struct{ Name string } `json:"stream_descriptor"`
			}
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		if strings.Contains(line, `"ERROR"`) {
			if err := json.Unmarshal([]byte(line), &trace); err != nil {
				t.Fatal(err)
			}
		}
	}
	e := trace.Trace.Error
	wantMsg := `stream author_report, slice {country: "SE"}: the async job polled at ` + poll + " failed: the API reported the status `failed` (attempt 3 of 3) (0 records written before the failure)"
	if trace.Type != "TRACE" || e.Message != wantMsg || e.StreamDescriptor.Name != "author_report" {
		t.Errorf("TRACE ERROR %+v\nstdout:\n%s", trace, res.Stdout)
	}
	if strings.Contains(res.Stdout+res.Stderr, demoapi.DemoAPIKey) {
		t.Errorf("the API key was printed:\n%s\n%s", res.Stdout, res.Stderr)
	}
	want := []string{}
	for i := 1; i <= 3; i++ {
		id := fmt.Sprintf("job-%06d", i)
		want = append(want, jobRequests("SE", id, 0)[:3]...)
		want[len(want)-3] = `POST /v1/apikey-query/jobs?api_key=demo-api-key {"country":"SE","fail":true}`
	}
	if got := d.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Two polls a job, one interval between them, one before each new job.
	if fmt.Sprint(d.clock.waits) != "[5s 5s 5s 5s 5s]" {
		t.Errorf("waits %v", d.clock.waits)
	}
}

// read's progress line, on a terminal, follows the job of the stream it shows; the notes
// about a job created again or skipped are written whether or not stderr is a terminal.
func TestAsyncJobProgress(t *testing.T) {
	sl := slice.New(nil)
	sl.Number = 1
	ev := func(step run.JobStep, attempt int, api, mapped string) run.JobEvent {
		return run.JobEvent{Stream: "reports", Slice: sl, Attempt: attempt, Step: step, APIStatus: api, Mapped: mapped, Elapsed: 5 * time.Second}
	}
	events := []run.JobEvent{
		ev(run.JobCreated, 1, "", ""),
		ev(run.JobPolled, 1, "processing", manifest.JobRunning),
		ev(run.JobPolled, 1, "failed", manifest.JobFailed),
		ev(run.JobTimedOut, 2, "", ""),
		ev(run.JobPolled, 3, "failed", manifest.JobFailed), // the last: the stream's error says it
		ev(run.JobPolled, 1, "gone", manifest.JobSkipped),
	}
	tests := []struct {
		live bool
		want string
	}{
		{false, `note: reports: slice {}: the async job failed (API status ` + "`failed`" + `, attempt 1 of 3); creating a new job
note: reports: slice {}: the async job did not complete within polling_job_timeout (attempt 2 of 3); creating a new job
note: reports: slice {}: the API skipped the async job (status ` + "`gone`" + `): no records
`},
		{true, "\r\033[Kreports: job 1 of slice 1: created after 5 s\r" +
			"\r\033[Kreports: job 1 of slice 1: polled: API status `processing` → running after 5 s\r" +
			"\r\033[K\r" + `note: reports: slice {}: the async job failed (API status ` + "`failed`" + `, attempt 1 of 3); creating a new job
` + "\r\033[Kreports: job 1 of slice 1: polled: API status `failed` → failed after 5 s\r" +
			"\r\033[K\r" + `note: reports: slice {}: the async job did not complete within polling_job_timeout (attempt 2 of 3); creating a new job
` + "\r\033[Kreports: job 2 of slice 1: timed out after 5 s\r" +
			"\r\033[Kreports: job 3 of slice 1: polled: API status `failed` → failed after 5 s\r" +
			"\r\033[K\r" + `note: reports: slice {}: the API skipped the async job (status ` + "`gone`" + `): no records
` + "\r\033[Kreports: job 1 of slice 1: polled: API status `gone` → skipped after 5 s\r"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		p := &progress{io: &ioStreams{Err: &b}, now: time.Now, live: tt.live, stream: "reports"}
		for _, e := range events {
			p.Job(e)
		}
		if b.String() != tt.want {
			t.Errorf("live %v:\n%q\nwant\n%q", tt.live, b.String(), tt.want)
		}
	}
}
