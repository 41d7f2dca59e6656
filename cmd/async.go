package cmd

import (
	"fmt"

	"connector/pkg/run"
)

// The steps of an AsyncRetriever's jobs: a line each in paginate-trace (an object with
// --json), and the job's state on the progress line of read.

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
	return s + fmt.Sprintf(" after %s", ev.Elapsed)
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

func (p *progress) Job(ev run.JobEvent) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.live || ev.Stream != p.stream {
		return
	}
	fmt.Fprintf(p.io.Err, "\r\033[K%s: %s\r", ev.Stream, jobLine(ev))
	p.shown = true
}
