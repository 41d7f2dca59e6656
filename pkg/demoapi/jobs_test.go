package demoapi

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// A report job's life: created, processing until its polls-th poll, ready with its files
// (JSON lines, 25 rows each), deleted; the counters follow.
func TestReportJob(t *testing.T) {
	e := newEnv(t, Options{})
	bearer := map[string]string{"Authorization": "Bearer " + DemoBearerToken, "Content-Type": jsonType}
	e.do(req{method: "POST", url: "/v1/bearer/jobs", header: bearer, body: `{"country":"SE","polls":3}`}).
		want(t, 201, `{"id":"job-000001","status":"processing","country":"SE"}`+"\n")
	for range 2 {
		e.do(req{url: "/v1/bearer/jobs/job-000001", header: bearer}).
			want(t, 200, `{"id":"job-000001","status":"processing","country":"SE"}`+"\n")
	}
	e.do(req{url: "/v1/bearer/jobs/job-000001/files/1", header: bearer}).
		want(t, 409, `{"error":"job_not_ready","message":"job job-000001 is processing: its files exist once it is ready"}`+"\n")
	files := fmt.Sprintf(`["%[1]s/v1/bearer/jobs/job-000001/files/1","%[1]s/v1/bearer/jobs/job-000001/files/2"]`, e.ts.URL)
	e.do(req{url: "/v1/bearer/jobs/job-000001", header: bearer}).
		want(t, 200, `{"id":"job-000001","status":"ready","country":"SE","rows":36,"files":`+files+"}\n")

	rows := ReportRows(DefaultRecords, "SE")
	for n, want := range [][]int{rows[:25], rows[25:]} {
		r := e.do(req{url: fmt.Sprintf("/v1/bearer/jobs/job-000001/files/%d", n+1), header: bearer})
		var lines []string
		for _, id := range want {
			lines = append(lines, string(encode(Author(id))))
		}
		r.want(t, 200, strings.Join(lines, "\n")+"\n")
		if ct := r.header.Get("Content-Type"); ct != "application/x-ndjson" {
			t.Errorf("Content-Type %q", ct)
		}
	}
	e.do(req{url: "/v1/bearer/jobs/job-000001/files/3", header: bearer}).wantStatus(t, 404)
	e.do(req{method: "DELETE", url: "/v1/bearer/jobs/job-000001", header: bearer}).want(t, 204, "")
	e.do(req{url: "/v1/bearer/jobs/job-000001", header: bearer}).
		want(t, 404, `{"error":"not_found","message":"no job \"job-000001\" (deleted, or never created in this area)"}`+"\n")
	if got, want := e.srv.Jobs(), (JobStats{Created: 1, Polls: 3, Deleted: 1, PeakRunning: 1}); got != want {
		t.Errorf("jobs %+v, want %+v", got, want)
	}
	if got := e.srv.Stats().DataRequests; got != 2 {
		t.Errorf("%d data requests, want 2 (the files)", got)
	}
}

// "fail": true makes the job fail at the poll that would have made it ready; the job stays
// failed and has no files.
func TestReportJobFails(t *testing.T) {
	e := newEnv(t, Options{})
	e.do(req{method: "POST", url: "/v1/public/jobs", header: map[string]string{"Content-Type": formType}, body: "country=JP&polls=1&fail=true"}).
		want(t, 201, `{"id":"job-000001","status":"processing","country":"JP"}`+"\n")
	for range 2 {
		e.get("/v1/public/jobs/job-000001").want(t, 200, `{"id":"job-000001","status":"failed","country":"JP"}`+"\n")
	}
	e.get("/v1/public/jobs/job-000001/files/1").wantStatus(t, 409)
}

func TestReportJobErrors(t *testing.T) {
	e := newEnv(t, Options{})
	post := func(url, body string) response {
		return e.do(req{method: "POST", url: url, header: map[string]string{"Content-Type": jsonType}, body: body})
	}
	post("/v1/public/jobs", `{}`).
		want(t, 400, `{"error":"bad_request","message":"country must be one of NG, SE, FR, JP, PT, CZ, LB, got \"\""}`+"\n")
	post("/v1/public/jobs", `{"country":"SE","polls":11}`).wantStatus(t, 400)
	post("/v1/public/jobs", `{"country":"SE","fail":"maybe"}`).
		want(t, 400, `{"error":"bad_request","message":"fail must be true or false, got \"maybe\""}`+"\n")
	post("/v1/bearer/jobs", `{"country":"SE"}`).wantStatus(t, http.StatusUnauthorized)
	e.get("/v1/public/jobs").wantStatus(t, http.StatusMethodNotAllowed)
	post("/v1/public/jobs", `{"country":"SE"}`).wantStatus(t, 201)
	// A job belongs to the area it was created in.
	e.do(req{url: "/v1/bearer/jobs/job-000001", header: map[string]string{"Authorization": "Bearer " + DemoBearerToken}}).wantStatus(t, 404)
	e.get("/v1/public/jobs/job-000001/other").wantStatus(t, 404)
	if got := e.srv.Jobs(); got.Created != 1 || got.PeakRunning != 1 {
		t.Errorf("jobs %+v", got)
	}
}
