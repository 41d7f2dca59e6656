package run

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"connector/pkg/auth"
	"connector/pkg/diag"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// An AsyncRetriever stream reads each slice through a job the API runs, as the Airbyte
// CDK's AsyncJobOrchestrator and AsyncHttpJobRepository do:
//
//	create ─→ poll (at once, then every 5 s) ─→ completed: download target(s) ─→ pages ─→ delete
//	                                          ├ failed:   a new job, after 5 s (or failed_retry_wait_time_in_seconds)
//	                                          ├ timeout:  the job is aborted, a new job
//	                                          └ skipped:  no records
//
// A slice has at most three jobs (attempts); the last failing or timing out fails the
// slice with a JobError. The download is the stream's DownloadView read page by page like
// a SimpleRetriever's, so its records go through the same transformations, filter, cursor
// and limits. At most max_concurrent_async_job_count jobs run at once in a read (a job
// holds its place from its creation until it completes).

// pollInterval is the CDK's wait between two rounds of polling
// (AsyncJobOrchestrator._WAIT_TIME_BETWEEN_STATUS_UPDATE_IN_SECONDS).
const pollInterval = 5 * time.Second

// MaxJobAttempts is how many jobs a slice may create (AsyncPartition._DEFAULT_MAX_JOB_RETRY):
// the last failing or timing out fails the slice.
const MaxJobAttempts = 3

// JobStep is what happened to an asynchronous job.
type JobStep int

// The steps of a job, in the order they happen.
const (
	JobCreated JobStep = iota + 1
	// JobCreateFailed: the creation request failed; the job counts as failed.
	JobCreateFailed
	JobPolled
	// JobTimedOut: polling_job_timeout passed while the job was running.
	JobTimedOut
	JobAborted
	// JobTargets: the download targets are known (Targets).
	JobTargets
	JobDeleted
)

// JobEvent is one step of an asynchronous job of a slice.
type JobEvent struct {
	Stream string
	Slice  *slice.Slice
	// Attempt is the job's number in its slice (1 to 3).
	Attempt int
	Step    JobStep
	// Method and URL of the request of the step (URL with secrets: print it redacted);
	// Status its HTTP status.
	Method, URL string
	Status      int
	// APIStatus is the status the API reported (JobPolled), Mapped what status_mapping
	// makes of it (running, completed, failed, timeout, skipped).
	APIStatus, Mapped string
	// Elapsed is the job's age at this step.
	Elapsed time.Duration
	// Targets is how many download targets the job has (JobTargets).
	Targets int
	// Err is why the creation failed (JobCreateFailed).
	Err error
}

// JobObserver is an Observer that also hears the steps of asynchronous jobs.
type JobObserver interface {
	Job(ev JobEvent)
}

// JobError is a slice whose last job failed or timed out.
type JobError struct {
	Attempts int
	// Status is failed or timeout; APIStatus what the API last said ("" when the job timed
	// out or could not be created).
	Status, APIStatus string
	// Poll is the last polling request's URL (it usually names the API's job), redacted.
	Poll    string
	Timeout time.Duration
	// Err is why the last creation failed, when it did.
	Err error
}

func (e *JobError) Error() string {
	var what string
	switch {
	case e.Err != nil:
		what = fmt.Sprintf("could not be created: %v", e.Err)
	case e.Status == manifest.JobTimeout && e.APIStatus == "":
		what = fmt.Sprintf("did not complete within polling_job_timeout (%s)", diag.Duration(e.Timeout))
	default:
		what = fmt.Sprintf("%s: the API reported the status `%s`", e.Status, e.APIStatus)
	}
	job := "the async job"
	if e.Poll != "" {
		job += " polled at " + e.Poll
	}
	return fmt.Sprintf("%s %s (attempt %d of %d)", job, what, e.Attempts, MaxJobAttempts)
}

func (e *JobError) Unwrap() error { return e.Err }

// job is one job of a slice, as it goes.
type job struct {
	attempt  int
	start    time.Time
	creation any // creation_response
	polling  any // polling_response
	// pollReq and pollResp are the last poll's.
	pollReq   *httpx.Request
	pollResp  *httpx.Response
	apiStatus string
	createErr error
}

// readJob reads a slice of an AsyncRetriever stream.
func (r *sliceReader) readJob(ctx context.Context) error {
	st, a := r.st, r.st.s.Async
	timeout, err := JobTimeout(st.o, st.s)
	if err != nil {
		return err
	}
	seconds, err := st.whole(a.FailedRetryWait, 0)
	if err != nil {
		return fmt.Errorf("failed_retry_wait_time_in_seconds: %w", err)
	}
	retryWait := time.Duration(seconds) * time.Second
	slots, err := st.o.jobSlots(a.MaxJobs)
	if err != nil {
		return err
	}
	if err := slots.acquire(ctx); err != nil {
		return err
	}
	held := true
	defer func() {
		if held {
			slots.release()
		}
	}()
	var atOnce bool
	for attempt := 1; ; attempt++ {
		if attempt > 1 && !atOnce {
			if err := st.o.sleep(ctx, pollInterval); err != nil {
				return err
			}
		}
		j := &job{attempt: attempt}
		status, early, err := r.runJob(ctx, j, timeout)
		if err != nil {
			return err
		}
		atOnce = false
		switch status {
		case manifest.JobCompleted:
			slots.release()
			held = false
			return r.download(ctx, j)
		case manifest.JobSkipped:
			return nil
		}
		last := attempt >= MaxJobAttempts
		if status == manifest.JobTimeout && (!early || last) {
			// Found on a poll (or at the last attempt): the CDK aborts the job.
			if err := r.jobStep(ctx, j, manifest.JobTimeout, a.Abort, JobAborted); err != nil {
				return err
			}
		}
		if last {
			e := &JobError{Attempts: attempt, Status: status, APIStatus: j.apiStatus, Timeout: timeout, Err: j.createErr}
			if j.pollReq != nil {
				e.Poll = st.o.Client.Redactor.String(j.pollReq.URL)
			}
			if status == manifest.JobTimeout {
				e.APIStatus = ""
			}
			return e
		}
		// A timeout found when the next round begins starts the new job in that round.
		atOnce = status == manifest.JobTimeout && early
		if status == manifest.JobFailed && j.createErr == nil && retryWait > 0 {
			// failed_retry_wait_time_in_seconds: the retry is deferred from the next round
			// on, and looked at every round.
			if err := st.o.sleep(ctx, pollInterval); err != nil {
				return err
			}
			due := st.o.now().Add(retryWait)
			for st.o.now().Before(due) {
				if err := st.o.sleep(ctx, pollInterval); err != nil {
					return err
				}
			}
			atOnce = true // the round that finds it due creates the job at once
		}
	}
}

// runJob creates a job and polls it until its status is no longer running. early says a
// timeout was found at the start of a round, before polling.
func (r *sliceReader) runJob(ctx context.Context, j *job, timeout time.Duration) (status string, early bool, err error) {
	st, a := r.st, r.st.s.Async
	o := st.o
	j.start = o.now()
	req, resp, err := r.jobRequest(ctx, httpx.StepCreate, a.Creation, r.jobVars(nil))
	if err != nil {
		if breaking(err) {
			return "", false, err
		}
		// The CDK keeps the job as failed, to be created again.
		j.createErr = err
		ev := r.jobEvent(j, JobCreateFailed, req, nil)
		ev.Err = err
		r.observeJob(ev)
		return manifest.JobFailed, false, nil
	}
	j.creation = responseContext(req, resp)
	r.observeJob(r.jobEvent(j, JobCreated, req, resp))
	for {
		vars := r.jobVars(map[string]any{"creation_response": j.creation})
		req, resp, err := r.jobRequest(ctx, httpx.StepPoll, a.Polling, vars)
		if err != nil {
			return "", false, fmt.Errorf("polling the async job: %w", err)
		}
		j.pollReq, j.pollResp = req, resp
		api, err := st.jobStatus(resp, vars)
		if err != nil {
			return "", false, err
		}
		mapped, known := a.Statuses[api]
		j.apiStatus = api
		ev := r.jobEvent(j, JobPolled, req, resp)
		ev.APIStatus, ev.Mapped = api, mapped
		r.observeJob(ev)
		if !known {
			return "", false, fmt.Errorf("the async job polled at %s has the API status `%s`, which status_mapping does not map",
				o.Client.Redactor.String(req.URL), api)
		}
		if mapped == manifest.JobRunning && o.now().Sub(j.start) > timeout {
			mapped = manifest.JobTimeout
			r.observeJob(r.jobEvent(j, JobTimedOut, nil, nil))
		}
		if mapped != manifest.JobRunning {
			if mapped == manifest.JobCompleted {
				j.polling = responseContext(req, resp)
			}
			return mapped, false, nil
		}
		if err := o.sleep(ctx, pollInterval); err != nil {
			return "", false, err
		}
		if o.now().Sub(j.start) > timeout {
			r.observeJob(r.jobEvent(j, JobTimedOut, nil, nil))
			return manifest.JobTimeout, true, nil
		}
	}
}

// download reads the records of a completed job: one read of the download requester per
// download target, then the job is deleted.
func (r *sliceReader) download(ctx context.Context, j *job) error {
	st, a := r.st, r.st.s.Async
	targets := []any{""}
	if a.HasTarget {
		resp, vars := j.pollResp, r.jobVars(map[string]any{"creation_response": j.creation, "polling_response": j.polling})
		if a.DownloadTarget != nil {
			// The CDK sends it with a slice of the polling response alone.
			tv := newSliceVars(extend(slice.New(nil), map[string]any{"polling_response": j.polling}), st.in).
				vars(st.o.globals(), nil, true)
			tv["polling_response"] = j.polling
			var err error
			if _, resp, err = r.jobRequest(ctx, httpx.StepTarget, a.DownloadTarget, tv); err != nil {
				return fmt.Errorf("download_target_requester: %w", err)
			}
			vars = tv
		}
		path, err := renderPath(a.TargetPath, withParams(vars, nil))
		if err != nil {
			return fmt.Errorf("download_target_extractor: %w", err)
		}
		if targets, err = dpathValues(resp.Body, path); err != nil {
			return fmt.Errorf("download_target_extractor: %w", err)
		}
	}
	ev := r.jobEvent(j, JobTargets, nil, nil)
	ev.Targets = len(targets)
	r.observeJob(ev)
	orig := r.sv
	defer func() { r.sv = orig }()
	for _, target := range targets {
		extra := map[string]any{"download_target": target, "creation_response": j.creation, "polling_response": j.polling}
		r.sv = newSliceVars(extend(orig.s, extra), st.in)
		for k, v := range extra {
			r.sv.base[k] = v
		}
		if err := r.readPages(ctx); err != nil {
			return err
		}
		if r.res.Limit.Set() {
			break
		}
	}
	r.sv = orig
	return r.jobStep(ctx, j, "", a.Delete, JobDeleted)
}

// jobStep sends the abort or delete request of a job, when the definition has one.
func (r *sliceReader) jobStep(ctx context.Context, j *job, _ string, q *manifest.Requester, step JobStep) error {
	if q == nil {
		return nil
	}
	kind := httpx.StepDelete
	if step == JobAborted {
		kind = httpx.StepAbort
	}
	req, resp, err := r.jobRequest(ctx, kind, q, r.jobVars(map[string]any{"creation_response": j.creation}))
	if err != nil {
		if step == JobAborted {
			return fmt.Errorf("aborting the async job: %w", err)
		}
		return fmt.Errorf("deleting the async job: %w", err)
	}
	r.observeJob(r.jobEvent(j, step, req, resp))
	return nil
}

// jobVars are the variables of a job's request: the slice's, with extra (creation_response,
// …) both as variables and in stream_slice.extra_fields, as the CDK gives them.
func (r *sliceReader) jobVars(extra map[string]any) map[string]any {
	sv := r.sv
	if len(extra) > 0 {
		sv = newSliceVars(extend(r.sv.s, extra), r.st.in)
	}
	v := sv.vars(r.st.o.globals(), nil, true)
	for k, x := range extra {
		v[k] = x
	}
	return v
}

// extend returns a copy of sl with more extra fields.
func extend(sl *slice.Slice, extra map[string]any) *slice.Slice {
	c := *sl
	c.Extra = &record.Object{}
	for _, k := range sl.Extra.Keys() {
		v, _ := sl.Extra.Get(k)
		c.Extra.Set(k, v)
	}
	for _, k := range []string{"download_target", "creation_response", "polling_response"} {
		if v, ok := extra[k]; ok {
			c.Extra.Set(k, v)
		}
	}
	return &c
}

// jobRequest builds and sends one request of a job, the step of the job it is (an
// httpx.Step). The connector's authenticator applies when the requester has one.
func (r *sliceReader) jobRequest(ctx context.Context, step string, q *manifest.Requester, vars map[string]any) (*httpx.Request, *httpx.Response, error) {
	st := r.st
	b, err := request.FromRequester("job", q, request.NewScope(withParams(vars, q.Parameters), st.o.Client.Redactor))
	if err != nil {
		return nil, nil, err
	}
	if q.Authenticator != nil {
		a, err := st.o.authFor(q.Authenticator)
		if err != nil {
			return nil, nil, err
		}
		if err := a.Apply(ctx, b); err != nil {
			return nil, nil, err
		}
	}
	req, err := b.Build()
	if err != nil {
		return nil, nil, err
	}
	req.Handler = st.jobHandlers[q]
	req.Stream, req.Step = st.s.Name, step
	resp, err := st.send(ctx, req)
	return req, resp, err
}

// jobHandlers are the error handlers of the job requesters of a (creation, polling,
// download target, abort, delete), made once with the stream, so that the slices read at
// once share them without a lock. The download requester's is the stream's own.
func jobHandlers(a *manifest.Async, g template.Globals) (map[*manifest.Requester]*httpx.Handler, error) {
	hs := map[*manifest.Requester]*httpx.Handler{}
	for _, q := range []*manifest.Requester{a.Creation, a.Polling, a.DownloadTarget, a.Abort, a.Delete} {
		if q == nil {
			continue
		}
		h, err := httpx.NewHandler(q.ErrorHandler, g)
		if err != nil {
			return nil, err
		}
		hs[q] = h
	}
	return hs, nil
}

// jobStatus is the API's status of a job in a polling response: the status_extractor's
// first record, as Python's str() writes it ("None" when there is none).
func (st *stream) jobStatus(resp *httpx.Response, vars map[string]any) (string, error) {
	path, err := renderPath(st.s.Async.StatusPath, withParams(vars, nil))
	if err != nil {
		return "", fmt.Errorf("status_extractor: %w", err)
	}
	vals, err := dpathValues(resp.Body, path)
	if err != nil {
		return "", fmt.Errorf("status_extractor: %w", err)
	}
	if len(vals) == 0 {
		return "None", nil
	}
	return pyStr(vals[0]), nil
}

// dpathValues is what a DpathExtractor extracts from a JSON body, values of any kind: the
// value at path ("*" matches every key or index), a list giving its items.
func dpathValues(body []byte, path []string) ([]any, error) {
	if len(body) == 0 {
		return nil, nil
	}
	v, err := record.Decode(body)
	if err != nil {
		return nil, fmt.Errorf("the response is not JSON: %w", err)
	}
	cur := []any{v}
	for _, seg := range path {
		var next []any
		for _, x := range cur {
			switch t := x.(type) {
			case *record.Object:
				if seg == "*" {
					for _, k := range t.Keys() {
						y, _ := t.Get(k)
						next = append(next, y)
					}
				} else if y, ok := t.Get(seg); ok {
					next = append(next, y)
				}
			case []any:
				if seg == "*" {
					next = append(next, t...)
				} else if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(t) {
					next = append(next, t[i])
				}
			}
		}
		cur = next
	}
	wild := false
	for _, seg := range path {
		wild = wild || seg == "*"
	}
	if wild {
		return cur, nil
	}
	var out []any
	for _, x := range cur {
		if l, ok := x.([]any); ok {
			out = append(out, l...)
		} else if template.Truthy(x) {
			out = append(out, x)
		}
	}
	return out, nil
}

// pyStr writes a JSON value as Python's str() does.
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	}
	return template.ToString(v)
}

// renderPath renders a field path.
func renderPath(segs []*template.Template, vars map[string]any) ([]string, error) {
	out := make([]string, len(segs))
	for i, t := range segs {
		s, err := t.Render(vars)
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// responseContext is a job response as templates see it (creation_response,
// polling_response): the decoded body, with `headers` and `request` (its `headers`, `url`,
// `method`) added unless the body has keys of those names.
func responseContext(req *httpx.Request, resp *httpx.Response) any {
	body, err := record.Decode(resp.Body)
	if err != nil {
		body = &record.Object{}
	}
	obj, ok := body.(*record.Object)
	if !ok {
		return body
	}
	if _, has := obj.Get("headers"); !has {
		obj.Set("headers", paginate.NewHeaders(resp.Header, req.URL))
	}
	if _, has := obj.Get("request"); !has {
		obj.Set("request", map[string]any{"headers": paginate.NewHeaders(req.Header, req.URL), "url": req.URL, "method": req.Method})
	}
	return obj
}

// breaking reports an error that ends the read at once rather than failing the job: an
// interrupt, or credentials that do not work (the CDK's config errors).
func breaking(err error) bool {
	return errors.Is(err, context.Canceled) || auth.IsAuthError(err) || stopping(err)
}

func (r *sliceReader) jobEvent(j *job, step JobStep, req *httpx.Request, resp *httpx.Response) JobEvent {
	ev := JobEvent{Stream: r.st.s.Name, Slice: r.sv.s, Attempt: j.attempt, Step: step, Elapsed: r.st.o.now().Sub(j.start)}
	if req != nil {
		ev.Method, ev.URL = req.Method, req.URL
	}
	if resp != nil {
		ev.Status = resp.Status
	}
	return ev
}

func (r *sliceReader) observeJob(ev JobEvent) {
	if jo, ok := r.st.o.Observer.(JobObserver); ok {
		jo.Job(ev)
	}
}

// whole evaluates a whole number field (def when unset).
// JobTimeout is how long an asynchronous job of stream s may run: its polling_job_timeout,
// else 60 minutes (a test read's TestLimits.JobMinutes when set).
func JobTimeout(o *Options, s *manifest.Stream) (time.Duration, error) {
	def := 60
	if tl := o.TestRead; tl != nil && tl.JobMinutes > 0 {
		def = tl.JobMinutes
	}
	st := &stream{o: o, s: s}
	minutes, err := st.whole(s.Async.Timeout, def)
	if err != nil {
		return 0, fmt.Errorf("polling_job_timeout: %w", err)
	}
	return time.Duration(minutes) * time.Minute, nil
}

func (st *stream) whole(t *template.Template, def int) (int, error) {
	n := def
	if t != nil {
		v, err := t.Eval(st.o.globals().Vars(nil))
		if err != nil {
			return 0, err
		}
		s := strings.TrimSpace(template.ToString(v))
		if n, err = strconv.Atoi(s); err != nil {
			return 0, fmt.Errorf("`%s` is not a whole number", s)
		}
	}
	return n, nil
}

// jobSlots counts the jobs running in a read (the CDK's JobTracker). Each read has its own
// (Options.forRead), shared by its helper streams; the first async slice sizes it.
type jobSlots struct {
	once sync.Once
	ch   chan struct{}
	err  error
}

// jobSlots returns the read's job slots, sized by the first async slice from the
// definition's max_concurrent_async_job_count (below 1, or unset: 1).
func (o *Options) jobSlots(limit *manifest.JobLimit) (*jobSlots, error) {
	s := o.jobs
	s.once.Do(func() {
		n := 1
		if limit != nil && limit.T != nil {
			v, err := limit.T.Eval(o.globals().Vars(nil))
			if err != nil {
				s.err = fmt.Errorf("max_concurrent_async_job_count: %w", err)
				return
			}
			// The CDK falls back to 1 on a value it cannot read.
			if i, err := strconv.Atoi(strings.TrimSpace(template.ToString(v))); err == nil && i > 1 {
				n = i
			}
		}
		s.ch = make(chan struct{}, n)
	})
	if s.err != nil {
		return nil, s.err
	}
	return s, nil
}

func (s *jobSlots) acquire(ctx context.Context) error {
	select {
	case s.ch <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *jobSlots) release() { <-s.ch }

// now is the read's clock: Options.Now, else the client's.
func (o *Options) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	if o.Client != nil && o.Client.Now != nil {
		return o.Client.Now()
	}
	return time.Now()
}

// sleep waits d, or until ctx ends (the client's Sleep in tests).
func (o *Options) sleep(ctx context.Context, d time.Duration) error { return o.Client.Wait(ctx, d) }
