package run

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A job whose creation the API refuses is kept as failed and created again after the next
// round, as the CDK does; the job events say so.
func TestAsyncCreationRefused(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`400 {"error":"busy"}`, `{"id": "j2", "region": "eu"}`},
		`GET /jobs/j2?region=eu [Bearer tok]`:          {`{"status": "done", "files": ["{base}/files/1"]}`},
		`GET /files/1?job=j2&status=done`:              {`{"rows": [{"id": 1, "n": 5}]}`},
		`POST /jobs/j2/delete [Bearer tok]`:            {`{}`},
	})
	recs, res, log, clock := asyncRead(t, api, "", oneSlice)
	checkResult(t, res, 1, 1, 1, "")
	checkLines(t, "requests", api.requests(), []string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j2?region=eu [Bearer tok]`,
		`GET /files/1?job=j2&status=done`,
		`POST /jobs/j2/delete [Bearer tok]`,
	})
	checkLines(t, "records", recs, []string{`{"id":1,"n":5,"region":"eu"}`})
	checkLines(t, "events", log.lines, []string{
		"start reports",
		fmt.Sprintf("job 1/1 step %d", JobCreateFailed),
		"job 1/2 step 1",
		"job 1/2 step 3 done→completed",
		"job 1/2 step 6",
		"page reports 1/1",
		"job 1/2 step 7",
		"end reports: 1 slices, 1 pages, 1 records",
	})
	if fmt.Sprint(clock.slept) != "[5s]" {
		t.Errorf("waits %v, want [5s]", clock.slept)
	}
}

// The status the status_extractor finds is matched as Python's str() writes it: true as
// True; a status missing, or false (which the CDK's DpathExtractor drops, as it drops
// every falsy value), as None.
func TestAsyncStatusAsPythonWritesIt(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j1", "region": "eu"}`},
		`GET /jobs/j1?region=eu [Bearer tok]`:          {`{}`, `{"ready": false}`, `{"ready": true, "files": ["{base}/files/1"]}`},
		`GET /files/1?job=j1`:                          {`{"rows": [{"id": 1, "n": 5}]}`},
		`POST /jobs/j1/delete [Bearer tok]`:            {`{}`},
	})
	def := strings.NewReplacer(
		"status_extractor: {type: DpathExtractor, field_path: [status]}", "status_extractor: {type: DpathExtractor, field_path: [ready]}",
		"running: [pending], completed: [done]", `running: ["None"], completed: ["True"]`,
	)
	recs, res, log, _ := asyncReadDef(t, context.Background(), api, def.Replace(asyncDef), oneSlice)
	checkResult(t, res, 1, 1, 1, "")
	checkLines(t, "records", recs, []string{`{"id":1,"n":5,"region":"eu"}`})
	checkLines(t, "events", log.lines, []string{
		"start reports",
		"job 1/1 step 1",
		"job 1/1 step 3 None→running",
		"job 1/1 step 3 None→running",
		"job 1/1 step 3 True→completed",
		"job 1/1 step 6",
		"page reports 1/1",
		"job 1/1 step 7",
		"end reports: 1 slices, 1 pages, 1 records",
	})
}

// A read's job slots come from max_concurrent_async_job_count; a value its template
// cannot give fails the stream before any job is made.
func TestAsyncJobLimit(t *testing.T) {
	routes := map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j1", "region": "eu"}`},
		`GET /jobs/j1?region=eu [Bearer tok]`:          {`{"status": "done", "files": []}`},
		`POST /jobs/j1/delete [Bearer tok]`:            {`{}`},
	}
	api := serveJobs(t, routes)
	withLimit := strings.Replace(asyncDef, "streams:\n", "max_concurrent_async_job_count: \"{{ config['jobs'] }}\"\nstreams:\n", 1)
	_, res, _, _ := asyncReadDef(t, context.Background(), api, withLimit, oneSlice, func(o *Options) { o.Config["jobs"] = 2 })
	checkResult(t, res, 1, 0, 0, "")
	checkLines(t, "requests", api.requests(), []string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j1?region=eu [Bearer tok]`,
		`POST /jobs/j1/delete [Bearer tok]`,
	})

	api = serveJobs(t, routes)
	broken := strings.Replace(asyncDef, "streams:\n", "max_concurrent_async_job_count: \"{{ config['jobs'] | int / 0 }}\"\nstreams:\n", 1)
	_, res, _, _ = asyncReadDef(t, context.Background(), api, broken, oneSlice, func(o *Options) { o.Config["jobs"] = 2 })
	if res.Err == nil || !strings.Contains(res.Err.Error(), "max_concurrent_async_job_count: ") {
		t.Errorf("error %v", res.Err)
	}
	checkLines(t, "requests", api.requests(), nil)
}

// Without a clock of the test's, the wait between polls is a real timer, which the end of
// the read's context ends: the slice fails with the context's error, the job left running.
func TestAsyncWaitEndsWithTheContext(t *testing.T) {
	api := serveJobs(t, map[string][]string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`: {`{"id": "j1", "region": "eu"}`},
		`GET /jobs/j1?region=eu [Bearer tok]`:          {`{"status": "pending"}`},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, res, _, _ := asyncReadDef(t, ctx, api, asyncDef, oneSlice, func(o *Options) {
		o.Client.Sleep, o.Client.Now, o.Now = nil, nil, nil
	})
	if !errors.Is(res.Err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", res.Err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the read took %v: the wait did not end with the context", d)
	}
	checkLines(t, "requests", api.requests(), []string{
		`POST /jobs [Bearer tok] body {"region":"eu"}`,
		`GET /jobs/j1?region=eu [Bearer tok]`,
	})
}
