package cmd

import (
	"fmt"

	"connector/pkg/diag"

	"connector/pkg/manifest"
	"connector/pkg/run"
)

// The steps of an AsyncRetriever's jobs: a line each in paginate-trace (an object with
// --format json), the job's state on the progress line of read, and a note on read's stderr
// when a job is created again or skipped.

var jobSteps = map[run.JobStep]string{
	run.JobCreated: "created", run.JobCreateFailed: "creation failed", run.JobPolled: "polled",
	run.JobTimedOut: "timed out", run.JobAborted: "aborted", run.JobTargets: "download targets",
	run.JobDeleted: "deleted",
}

// jobLine words a job event for a person (the trace shows the request just before it).
func jobLine(ev run.JobEvent) string {
	s := fmt.Sprintf("job %d of slice %d: %s", ev.Attempt, ev.Slice.Number, jobSteps[ev.Step])
	switch ev.Step {
	case run.JobPolled:
		s += fmt.Sprintf(": API status `%s` → %s", ev.APIStatus, ev.Mapped)
	case run.JobTargets:
		s += fmt.Sprintf(": %d", ev.Targets)
	case run.JobCreateFailed:
		s += fmt.Sprintf(": %v", ev.Err)
	}
	return s + " after " + diag.Duration(ev.Elapsed)
}

func (t *tracer) Job(ev run.JobEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		out := map[string]any{"event": "job", "stream": ev.Stream, "slice": ev.Slice.String(),
			"slice_number": ev.Slice.Number, "attempt": ev.Attempt, "step": jobSteps[ev.Step],
			"elapsed_ms": ev.Elapsed.Milliseconds()}
		if ev.Method != "" {
			out["method"], out["url"], out["status"] = ev.Method, ev.URL, ev.Status
		}
		if ev.Step == run.JobPolled {
			out["api_status"], out["job_status"] = ev.APIStatus, ev.Mapped
		}
		if ev.Step == run.JobTargets {
			out["targets"] = ev.Targets
		}
		if ev.Err != nil {
			out["error"] = ev.Err.Error()
		}
		t.emit(out)
		return
	}
	t.printf("  %s: %s\n", ev.Stream, jobLine(ev))
}

// jobNote is what read says on stderr, whether or not it is a terminal, about a job that
// will be created again or gives no records ("" for the other steps). The last attempt's
// failure is the stream's error instead.
func jobNote(ev run.JobEvent) string {
	again := ev.Attempt < run.MaxJobAttempts
	var what string
	switch {
	case ev.Step == run.JobPolled && ev.Mapped == manifest.JobSkipped:
		return fmt.Sprintf("%s: slice %s: the API skipped the async job (status `%s`): no records", ev.Stream, ev.Slice, ev.APIStatus)
	case !again:
		return ""
	case ev.Step == run.JobPolled && ev.Mapped == manifest.JobFailed:
		what = fmt.Sprintf("failed (API status `%s`, ", ev.APIStatus)
	case ev.Step == run.JobTimedOut:
		what = "did not complete within polling_job_timeout ("
	case ev.Step == run.JobCreateFailed:
		what = fmt.Sprintf("could not be created: %v (", ev.Err)
	default:
		return ""
	}
	return fmt.Sprintf("%s: slice %s: the async job %sattempt %d of %d); creating a new job",
		ev.Stream, ev.Slice, what, ev.Attempt, run.MaxJobAttempts)
}

func (p *progress) Job(ev run.JobEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if note := jobNote(ev); note != "" {
		if p.shown {
			fmt.Fprint(p.io.Err, "\r\033[K\r")
			p.shown = false
		}
		fmt.Fprintln(p.io.Err, "note: "+note)
	}
	if !p.live || ev.Stream != p.stream {
		return
	}
	fmt.Fprintf(p.io.Err, "\r\033[K%s: %s\r", ev.Stream, jobLine(ev))
	p.shown = true
}
