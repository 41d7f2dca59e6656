package demoapi

import (
	"bytes"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// Report jobs, for AsyncRetriever: a job is created, polled until it is ready, its result
// downloaded as JSON lines in files of JobFileRows rows, then deleted. Nothing depends on
// the clock: a job is ready at its polls-th poll.
//
//	POST   /v1/{area}/jobs                     {"country": "SE", "polls": 2, "fail": false} → 201 the job
//	GET    /v1/{area}/jobs/{id}                the job; "files" once it is ready
//	GET    /v1/{area}/jobs/{id}/files/{n}      file n (from 1) of a ready job, JSON lines
//	DELETE /v1/{area}/jobs/{id}                204; the job and its files are gone
//	POST   /v1/{area}/jobs/{id}/delete         the same, for definitions (the CDK's HttpRequester
//	                                           sends GET and POST only)

// The defaults and bounds of a report job.
const (
	DefaultJobPolls = 2  // a job is ready at its second poll unless "polls" says otherwise
	MaxJobPolls     = 10 // larger "polls" values are a 400
	JobFileRows     = 25 // rows per result file
)

// The statuses a job has, as its polls answer them.
const (
	JobProcessing = "processing"
	JobReady      = "ready"
	JobFailed     = "failed"
)

// JobStats are counters of the report jobs, for tests. They only grow.
type JobStats struct {
	Created int
	Polls   int
	Deleted int
	// PeakRunning is the most jobs processing at once: created, not yet answered ready or
	// failed by a poll, and not deleted.
	PeakRunning int
}

// jobStore holds the report jobs of a server; its zero value is ready to use.
type jobStore struct {
	mu      sync.Mutex
	jobs    map[string]*reportJob
	issued  int
	running int
	stats   JobStats
}

type reportJob struct {
	id, area, country string
	polls, seen       int // the poll that finishes the job; polls answered so far
	fail              bool
	status            string
}

// Jobs returns the counters of the report jobs.
func (s *Server) Jobs() JobStats {
	s.jobs.mu.Lock()
	defer s.jobs.mu.Unlock()
	return s.jobs.stats
}

// ReportRows returns the ids of the authors of a country's report, in the order the files
// list them (empty for a country without authors).
func ReportRows(records int, country string) []int {
	var ids []int
	for id := 1; id <= records; id++ {
		if Author(id).Country == country {
			ids = append(ids, id)
		}
	}
	return ids
}

// isJobPath says whether p is /v1/{area}/jobs or below.
func isJobPath(p string) bool {
	parts := strings.Split(strings.TrimPrefix(p, "/v1/"), "/")
	return len(parts) >= 2 && parts[1] == "jobs"
}

// reportJobs serves /v1/{area}/jobs[/{id}[/files/{n}]] with the area's authentication.
func (s *Server) reportJobs(w *recorder, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	check, ok := areas[parts[0]]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown area "+quote(parts[0]))
		return
	}
	q, ok := s.admit(w, r, check)
	if !ok {
		return
	}
	area, rest := parts[0], parts[2:]
	switch {
	case len(rest) == 0:
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST to create a report job")
			return
		}
		s.createJob(w, q, area)
	case len(rest) == 1:
		switch r.Method {
		case http.MethodGet:
			s.pollJob(w, r, area, rest[0])
		case http.MethodDelete:
			s.deleteJob(w, area, rest[0])
		default:
			w.Header().Set("Allow", "GET, DELETE")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET to poll the job or DELETE to delete it")
		}
	case len(rest) == 2 && rest[1] == "delete":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
			return
		}
		s.deleteJob(w, area, rest[0])
	case len(rest) == 3 && rest[1] == "files":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", "GET")
			writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
			return
		}
		s.jobFile(w, area, rest[0], rest[2])
	default:
		writeError(w, http.StatusNotFound, "not_found", "expected /v1/{area}/jobs, /v1/{area}/jobs/{id}, /v1/{area}/jobs/{id}/delete or /v1/{area}/jobs/{id}/files/{n}")
	}
}

func (s *Server) createJob(w *recorder, q *request, area string) {
	country, ok, err := q.param("country")
	if err != nil {
		err.write(w)
		return
	}
	if !ok || !knownCountry(country) {
		badRequest("country must be one of %s, got %q", countryList(), country).write(w)
		return
	}
	polls, err := q.intParam("polls", DefaultJobPolls, 1, MaxJobPolls)
	if err != nil {
		err.write(w)
		return
	}
	fail := false
	if v, given, err := q.param("fail"); err != nil {
		err.write(w)
		return
	} else if given {
		if fail, ok = parseBool(v); !ok {
			badRequest("fail must be true or false, got %q", v).write(w)
			return
		}
	}
	js := &s.jobs
	js.mu.Lock()
	if js.jobs == nil {
		js.jobs = map[string]*reportJob{}
	}
	js.issued++
	j := &reportJob{id: fmt.Sprintf("job-%06d", js.issued), area: area, country: country, polls: polls, fail: fail, status: JobProcessing}
	js.jobs[j.id] = j
	js.stats.Created++
	js.running++
	js.stats.PeakRunning = max(js.stats.PeakRunning, js.running)
	body := jobBody{ID: j.id, Status: j.status, Country: j.country}
	js.mu.Unlock()
	writeJSON(w, http.StatusCreated, body)
}

// jobBody is a job as the API shows it, in this key order.
type jobBody struct {
	ID      string   `json:"id"`
	Status  string   `json:"status"`
	Country string   `json:"country"`
	Rows    *int     `json:"rows,omitempty"`
	Files   []string `json:"files,omitempty"`
}

func (s *Server) pollJob(w *recorder, r *http.Request, area, id string) {
	js := &s.jobs
	js.mu.Lock()
	j := js.find(area, id)
	if j == nil {
		js.mu.Unlock()
		noJob(w, id)
		return
	}
	js.stats.Polls++
	j.seen++
	if j.status == JobProcessing && j.seen >= j.polls {
		j.status = JobReady
		if j.fail {
			j.status = JobFailed
		}
		js.running--
	}
	body := jobBody{ID: j.id, Status: j.status, Country: j.country}
	js.mu.Unlock()
	if body.Status == JobReady {
		rows := len(ReportRows(s.opts.Records, body.Country))
		body.Rows = &rows
		body.Files = []string{}
		for n := 1; n <= (rows+JobFileRows-1)/JobFileRows; n++ {
			body.Files = append(body.Files, fmt.Sprintf("%s/v1/%s/jobs/%s/files/%d", baseURL(r), area, id, n))
		}
	}
	writeJSON(w, http.StatusOK, body)
}

func (s *Server) deleteJob(w *recorder, area, id string) {
	js := &s.jobs
	js.mu.Lock()
	j := js.find(area, id)
	if j != nil {
		delete(js.jobs, id)
		js.stats.Deleted++
		if j.status == JobProcessing {
			js.running--
		}
	}
	js.mu.Unlock()
	if j == nil {
		noJob(w, id)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *Server) jobFile(w *recorder, area, id, file string) {
	js := &s.jobs
	js.mu.Lock()
	j := js.find(area, id)
	var status, country string
	if j != nil {
		status, country = j.status, j.country
	}
	js.mu.Unlock()
	if j == nil {
		noJob(w, id)
		return
	}
	if status != JobReady {
		writeError(w, http.StatusConflict, "job_not_ready", fmt.Sprintf("job %s is %s: its files exist once it is %s", id, status, JobReady))
		return
	}
	rows := ReportRows(s.opts.Records, country)
	n, err := strconv.Atoi(file)
	if err != nil || n < 1 || (n-1)*JobFileRows >= len(rows) {
		writeError(w, http.StatusNotFound, "not_found", fmt.Sprintf("job %s has no file %s", id, quote(file)))
		return
	}
	var b bytes.Buffer
	for _, a := range rows[(n-1)*JobFileRows : min(n*JobFileRows, len(rows))] {
		b.Write(encode(Author(a)))
		b.WriteByte('\n')
	}
	w.data = true
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	w.Write(b.Bytes())
}

// find is the job id of area (nil when there is none); js.mu is held.
func (js *jobStore) find(area, id string) *reportJob {
	if j := js.jobs[id]; j != nil && j.area == area {
		return j
	}
	return nil
}

func noJob(w http.ResponseWriter, id string) {
	writeError(w, http.StatusNotFound, "not_found", "no job "+quote(id)+" (deleted, or never created in this area)")
}

func knownCountry(c string) bool {
	for _, x := range cities {
		if x.country == c {
			return true
		}
	}
	return false
}

func countryList() string {
	var cs []string
	for _, x := range cities {
		cs = append(cs, x.country)
	}
	return strings.Join(cs, ", ")
}

func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "true", "1":
		return true, true
	case "false", "0", "":
		return false, true
	}
	return false, false
}
