package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/output"
	"connector/pkg/run"
	"connector/pkg/schemacheck"
	"connector/pkg/template"
)

// ReadSpec says where a read writes and how far it goes.
type ReadSpec struct {
	// Out receives the records, states, statuses and protocol messages, written in Format
	// (records, envelope or airbyte).
	Out    io.Writer
	Format string
	// State is where the read starts and where its checkpoints go; StatePath names its file
	// in the problems Check finds ("" when there is none).
	State     *State
	StatePath string
	// MaxSlices, MaxPages and MaxRecords end each stream early (0: no limit).
	MaxSlices, MaxPages, MaxRecords int
	// Prefetch is how many pages a stream may request ahead; Workers how many slices are read
	// at once, across and within streams (0: the definition's concurrency_level, at most
	// MaxConcurrency, else 1).
	Prefetch, Workers int
	// FailFast stops the read at the first stream that fails.
	FailFast bool
	// Protocol is a read of the Airbyte entry point: LOG messages where the CDK writes them
	// (the sync's start and end, each stream's start, RUNNING and end, retries, notes as
	// warnings), and a read in which streams failed ends with one more TRACE ERROR naming
	// them all, without a stream, as the CDK's concurrent read does.
	Protocol bool
	// Missing are streams asked for that the definition lacks: an INCOMPLETE status each
	// before any other message (the catalog of airbyte read, as the CDK does).
	Missing []string
	// ConfigAsGiven lays out the config of a CONTROL message as the config was written (key
	// order, the injected definition back in its place); nil: as is.
	ConfigAsGiven func(config map[string]any) any
	// Observer hears every page and stream (a progress line); nil: nobody.
	Observer run.Observer
	// Report hears what a person should know about the read, as typed events, in the order
	// they happen; nil drops them. It is never called twice at once.
	Report func(Event)
	// CheckSchema checks every record written against its stream's declared schema and
	// primary key; each stream's end then reports a SchemaChecked.
	CheckSchema bool
	// FilesDir is the folder the files of streams with a file_uploader are downloaded to, a
	// folder per stream in it ("": they are not downloaded).
	FilesDir string
}

// Event is something a person should know about a read: one of the types below.
type Event interface{ event() }

type (
	// Warning is a note about the definition or the data that does not stop the read.
	Warning struct{ Text string }
	// StreamEnded says a stream's read ended, whatever the outcome; every other event about
	// the stream's end comes after it.
	StreamEnded struct{ Result run.Result }
	// StateSaved says where a stream's state stands at its end, and the file that keeps it
	// ("" when none does).
	StateSaved struct{ Stream, Text, File string }
	// BudgetWaited says the requests of a stream waited for the api_budget.
	BudgetWaited struct {
		Stream   string
		Requests int
		Wait     time.Duration
		Policies []string
	}
	// NoPartition says records of a parent stream had no value at the parent key, so they
	// gave the stream no partition.
	NoPartition struct {
		Stream string
		Skip   run.Skipped
	}
	// Interrupted says the read was cancelled while a stream was read.
	Interrupted struct {
		Stream         string
		Records, Pages int
	}
	// StreamFailed says a stream failed; Message is the failure as a person reads it, Err
	// the cause. Grouped failures (a host already found unreachable) are said once at the
	// end by an Unreached event instead.
	StreamFailed struct {
		Stream  string
		Message string
		Err     error
		Grouped bool
	}
	// StoppedEarly says a limit ended a stream that otherwise succeeded.
	StoppedEarly struct {
		Stream         string
		Limit          run.Limit
		Records, Pages int
	}
	// Unreached names the streams that failed at once, unsent, because an earlier request
	// found their host unreachable.
	Unreached struct {
		Host, Cause string
		Streams     []string
	}
	// StateUnchanged says the state file keeps what it had for streams that failed before a
	// slice was read whole.
	StateUnchanged struct {
		File    string
		Streams []string
	}
	// StateNotWritten says the state file could not be written at the read's end.
	StateNotWritten struct{ Err error }
	// Failures closes a read in which streams failed: how many of how many, and how many
	// streams --fail-fast left unread.
	Failures struct{ Failed, Streams, NotRead int }
	// SchemaChecked is what the checks of a stream's records found (ReadSpec.CheckSchema);
	// Err says why the declared schema could not be used.
	SchemaChecked struct {
		Stream string
		Report schemacheck.Report
		Err    error
	}
)

func (Warning) event()         {}
func (StreamEnded) event()     {}
func (StateSaved) event()      {}
func (BudgetWaited) event()    {}
func (NoPartition) event()     {}
func (Interrupted) event()     {}
func (StreamFailed) event()    {}
func (StoppedEarly) event()    {}
func (Unreached) event()       {}
func (StateUnchanged) event()  {}
func (StateNotWritten) event() {}
func (Failures) event()        {}
func (SchemaChecked) event()   {}

// MaxConcurrency is the most slices a read reads at once.
const MaxConcurrency = 64

// workers is how many slices a read reads at once: the flag, else the definition's
// concurrency_level (at most MaxConcurrency), else 1. A default_concurrency written as a
// string is a template on the testing values (stripe's reads 4 for a test key, 25 for a live
// one), bounded by max_concurrency, as the CDK's ConcurrencyLevel reads it.
func (s *Session) workers(flag int) (int, error) {
	if flag > 0 {
		return flag, nil
	}
	cl := s.Def.Concurrency
	if cl == nil {
		return 1, nil
	}
	n := cl.Fixed
	if cl.Default != nil {
		at := fmt.Sprintf("%s:%d:%d: concurrency_level.default_concurrency", s.in.DefName, cl.Pos.Line, cl.Pos.Column)
		text, err := cl.Default.Render(s.globals().Vars(nil))
		if err != nil {
			return 0, fmt.Errorf("%s: %w", at, err)
		}
		if n, err = strconv.Atoi(strings.TrimSpace(text)); err != nil {
			return 0, fmt.Errorf("%s renders %q, not a whole number: correct the value it reads in %s",
				at, text, s.Values.Name())
		}
		if cl.Max > 0 {
			n = min(n, cl.Max)
		}
	}
	return min(max(n, 1), MaxConcurrency), nil
}

// Outcome is how a read ended.
type Outcome struct {
	// Failed counts the streams that failed.
	Failed int
	// Stopped is what ended the read before its end: an interrupt, a closed output.
	Stopped error
	// StateErr is the state file's last write error.
	StateErr error
	// SchemaWarnings counts what the schema checks found (ReadSpec.CheckSchema).
	SchemaWarnings int
}

// Read reads the session's streams into spec.Out: what `read`, `airbyte read` and `test`
// do. The error is one that prevents the read (a state that does not fit the streams); how
// the read itself went is the Outcome.
func (s *Session) Read(ctx context.Context, spec ReadSpec) (Outcome, error) {
	ro := s.Options()
	ro.StateOf, ro.Now = spec.State.Of, s.env.Now
	if err := spec.State.Check(ro, spec.StatePath, s.Streams); err != nil {
		return Outcome{}, err
	}
	workers, err := s.workers(spec.Workers)
	if err != nil {
		return Outcome{}, &InvalidError{err}
	}
	out, err := output.NewRecordOutput(spec.Out, spec.Format, s.env.Now)
	if err != nil {
		return Outcome{}, &ArgumentError{err}
	}
	defer out.Close() // every stream's end already waited for its records to be written
	r := &reading{s: s, spec: spec, out: out, closed: map[string]bool{}}
	if spec.CheckSchema {
		r.checks = NewSchemaChecks(s.Streams)
	}
	if spec.Protocol || output.Protocol(spec.Format) {
		s.Client.FailFast = false // the CDK's retries
	}
	if spec.Protocol {
		r.out.LogStatuses()
		s.Client.OnRetry = r.retried
		logf := func(level, text string) { r.logf(level, "%s", text) }
		s.logTo.Store(&logf)
		defer s.logTo.Store(nil)
	}
	r.logf("INFO", "Starting syncing")
	for _, name := range spec.Missing {
		// The CDK's words for the same stream when it raises instead (AbstractSource.read).
		r.logf("WARN", "The stream '%s' in your connection configuration was not found in the source. Refresh the schema in your replication settings and remove this stream from future sync attempts.", name)
		r.out.StreamStatus(name, "INCOMPLETE")
	}
	for _, st := range s.Streams {
		if st.Group != "" {
			// The CDK's words as its concurrent read begins.
			r.logf("INFO", "Stream '%s' is in blocking group '%s'. Will defer starting this stream if another stream in the same group or its parents are active.", st.Name, st.Group)
		}
	}
	s.OnConfigUpdate = func(config map[string]any) {
		if spec.ConfigAsGiven != nil {
			r.out.Control(spec.ConfigAsGiven(config))
			return
		}
		r.out.Control(config)
	}
	ro.MaxSlices, ro.MaxPages, ro.MaxRecords = spec.MaxSlices, spec.MaxPages, spec.MaxRecords
	ro.Observer, ro.Prefetch, ro.Overlap, ro.FailFast = spec.Observer, spec.Prefetch, true, spec.FailFast
	if spec.FilesDir != "" {
		ro.Files = &run.Files{Dir: spec.FilesDir}
		if spec.Protocol {
			ro.Files.Log = func(text string) { r.logf("INFO", "%s", text) }
		}
	}
	ro.Warn = r.warn
	ro.Checkpoint = r.checkpoint
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	r.stop = stop
	hooks := run.Hooks{Start: r.started, End: func(res run.Result) { r.ended(ctx, res) }}
	if spec.Protocol {
		hooks.SliceFailed = r.sliceFailed
	}
	var dst run.Output = sequenced{output.NewSequencer(rctx, r.out)}
	if r.checks != nil {
		dst = r.checks.Wrap(dst)
	}
	run.Read(rctx, ro, s.Streams, workers, dst, hooks)
	o := Outcome{Failed: r.failed, Stopped: r.stopErr, StateErr: spec.State.Close(), SchemaWarnings: r.schemaWarnings}
	if o.StateErr != nil {
		r.report(StateNotWritten{Err: o.StateErr})
	}
	if r.stopErr != nil || r.failed == 0 {
		if r.stopErr == nil && ctx.Err() == nil {
			r.logf("INFO", "Finished syncing")
		}
		return o, nil
	}
	for _, u := range r.unreached {
		r.report(u)
	}
	if len(r.unearned) > 0 && spec.State.Out() != "" {
		r.report(StateUnchanged{File: spec.State.Out(), Streams: r.unearned})
	}
	if spec.Protocol {
		summary := "During the sync, the following streams did not sync successfully: " + strings.Join(r.failures, "\n")
		r.logf("INFO", "%s", summary)
		r.logf("FATAL", "%s", summary)
		r.out.Error(output.ErrorTrace{Message: summary, InternalMessage: "Concurrent read failure", FailureType: "config_error"})
		r.out.Flush()
	}
	r.report(Failures{Failed: r.failed, Streams: len(s.Streams), NotRead: len(s.Streams) - r.done})
	return o, nil
}

// reading is the state of one Read: what the hooks and callbacks of pkg/run share.
type reading struct {
	s    *Session
	spec ReadSpec
	out  output.RecordOutput
	stop context.CancelFunc

	mu       sync.Mutex      // orders the events and guards what follows
	closed   map[string]bool // streams with a slice read whole
	unearned []string        // failed streams whose state stays as it was
	failed   int
	done     int
	failures []string // "stream: repr of the cause", for the protocol's closing summary
	// sliceErrs holds each stream's first failed slice, which sliceFailed reported.
	sliceErrs map[string]error
	// unreached are failed streams whose host an earlier request found unreachable.
	unreached []Unreached
	checks    *SchemaChecks // nil without CheckSchema
	// Warnings counts what the schema checks found.
	schemaWarnings int
	stopErr        error // an interrupt or a closed output: the read ends
}

// report gives ev to the face; the caller holds r.mu or runs alone.
func (r *reading) report(ev Event) {
	if r.spec.Report != nil {
		r.spec.Report(ev)
	}
}

// logf writes a protocol LOG message (only in a protocol read), redacted.
func (r *reading) logf(level, format string, args ...any) {
	if r.spec.Protocol {
		r.out.Log(level, r.s.env.Redactor.String(fmt.Sprintf(format, args...)))
	}
}

// retried logs a retry as the CDK's backoff handler does, and a rate limit as the RUNNING
// status the CDK's HttpClient writes at once.
func (r *reading) retried(rt httpx.Retry) {
	if rt.RateLimited && rt.Stream != "" {
		r.out.StreamStatus(rt.Stream, "RUNNING", "RATE_LIMITED")
	}
	r.logf("INFO", "Caught retryable error '%s' from %s %s after %d tries. Waiting %g seconds then retrying...",
		rt.Cause, rt.Method, rt.URL, rt.Attempt, rt.Wait.Seconds())
}

func (r *reading) warn(text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.report(Warning{Text: text})
	r.logf("WARN", "%s", text)
}

// checkpoint writes a state message and keeps the state. It comes in output order, once the
// slice's records are in the output: they reach stdout before the state file says they were
// read.
func (r *reading) checkpoint(cp run.Checkpoint) {
	if cp.Message {
		r.out.State(cp.Stream, cp.State, cp.Records)
	}
	states := r.spec.State
	switch {
	case !cp.Final:
		r.closed[cp.Stream] = true
	case cp.Failed && cp.NoCursor():
		return // a message only: a failed stream without a cursor earned no state
	case cp.Failed && !r.closed[cp.Stream]:
		// Nothing was read: the state file keeps what the stream had (said at the end).
		r.mu.Lock()
		r.unearned = append(r.unearned, cp.Stream)
		r.mu.Unlock()
		return
	}
	if states.Out() != "" {
		r.out.Flush()
	}
	states.Set(cp.Stream, cp.State)
	if cp.Final {
		if text, ok := states.Describe(cp.Stream); ok {
			r.mu.Lock()
			r.report(StateSaved{Stream: cp.Stream, Text: text, File: states.Out()})
			r.mu.Unlock()
		}
	}
}

// sliceFailed writes, on the protocol, the failure of one slice when its place in the
// output is reached, as the CDK writes the failure of each partition when it comes: an
// ERROR log and a TRACE ERROR naming the stream; the closing summary lists each.
func (r *reading) sliceFailed(f run.SliceFailure) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.sliceErrs[f.Stream]; !ok {
		if r.sliceErrs == nil {
			r.sliceErrs = map[string]error{}
		}
		r.sliceErrs[f.Stream] = f.Err
	}
	msg := fmt.Sprintf("%v (%s written before the failure)", f.Err, plural(f.Records, "record"))
	trace := r.failureTrace(f.Stream, msg, f.Err)
	r.logf("ERROR", "Exception while syncing stream %s: %s", f.Stream, trace.InternalMessage)
	r.out.Error(trace)
	r.failures = append(r.failures, f.Stream+": AirbyteTracedException("+template.PyRepr(trace.InternalMessage)+")")
}

// started runs when a stream's place in the output is reached, before its records.
func (r *reading) started(s *manifest.Stream) {
	r.logf("INFO", "Marking stream %s as STARTED", s.Name)
	r.logf("INFO", "Syncing stream: %s", s.Name)
	r.out.StreamStatus(s.Name, "STARTED")
}

// ended runs after a stream's records are in the output.
func (r *reading) ended(ctx context.Context, res run.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done++
	r.report(StreamEnded{Result: res})
	if r.stopErr != nil {
		return
	}
	if r.s.Budget != nil {
		if t, ok := r.s.Budget.Waited(res.Stream); ok {
			r.report(BudgetWaited{Stream: res.Stream, Requests: t.Requests, Wait: t.Wait, Policies: t.Policies})
		}
	}
	stopped := func() {
		r.logf("INFO", "Read %d records from %s stream", res.Records, res.Stream)
		r.logf("INFO", "Marking stream %s as STOPPED", res.Stream)
		r.logf("INFO", "Finished syncing %s", res.Stream)
	}
	for _, sk := range res.Skipped {
		r.report(NoPartition{Stream: res.Stream, Skip: sk})
	}
	if r.checks != nil && !errors.Is(res.Err, context.Canceled) {
		rep, err := r.checks.Report(res.Stream)
		r.schemaWarnings += rep.Total()
		r.report(SchemaChecked{Stream: res.Stream, Report: rep, Err: err})
	}
	switch {
	case errors.Is(res.Err, context.Canceled):
		r.out.StreamStatus(res.Stream, "INCOMPLETE")
		r.out.Flush()
		if ctx.Err() != nil {
			r.report(Interrupted{Stream: res.Stream, Records: res.Records, Pages: res.Pages})
			r.stopErr = res.Err
		}
		r.stop()
	case res.Err != nil && errors.Is(res.Err, syscall.EPIPE):
		r.stopErr = res.Err
		r.stop()
	case res.Err != nil:
		r.failed++
		msg := fmt.Sprintf("%v (%s written before the failure)", res.Err, plural(res.Records, "record"))
		if res.FailedSlices > 0 && res.Slices > 1 {
			// The other slices were read all the same (the CDK's way).
			msg = fmt.Sprintf("%v (%d of %s failed; %s written)", res.Err, res.FailedSlices,
				plural(res.Slices, "slice"), plural(res.Records, "record"))
		}
		if first, ok := r.sliceErrs[res.Stream]; !ok || first != res.Err {
			// Not a slice's failure, which sliceFailed reported when it came.
			trace := r.failureTrace(res.Stream, msg, res.Err)
			r.logf("ERROR", "Exception while syncing stream %s: %s", res.Stream, trace.InternalMessage)
			r.out.Error(trace)
			r.failures = append(r.failures, res.Stream+": AirbyteTracedException("+template.PyRepr(trace.InternalMessage)+")")
		}
		stopped()
		r.out.StreamStatus(res.Stream, "INCOMPLETE")
		r.out.Flush()
		r.report(StreamFailed{Stream: res.Stream, Message: msg, Err: res.Err, Grouped: r.addUnreached(res)})
		switch {
		case ctx.Err() != nil:
			// Interrupted while the slices after the failed one were read: the streams
			// left are unread because of the interrupt, not of --fail-fast.
			r.report(Interrupted{Stream: res.Stream, Records: res.Records, Pages: res.Pages})
			r.stopErr = ctx.Err()
			r.stop()
		case r.spec.FailFast:
			r.stop()
		}
	default:
		stopped()
		r.out.StreamStatus(res.Stream, "COMPLETE")
		if err := r.out.Flush(); err != nil {
			r.stopErr = err
			r.stop()
			return
		}
		if res.Limit.Set() {
			r.report(StoppedEarly{Stream: res.Stream, Limit: res.Limit, Records: res.Records, Pages: res.Pages})
		}
	}
}

// addUnreached keeps res among the unreached streams when it failed at once, without a
// record, because an earlier request found its host unreachable.
func (r *reading) addUnreached(res run.Result) bool {
	var ne *httpx.NetError
	if res.Records > 0 || !errors.As(res.Err, &ne) || !ne.Earlier {
		return false
	}
	for i := range r.unreached {
		if r.unreached[i].Host == ne.Host {
			r.unreached[i].Streams = append(r.unreached[i].Streams, res.Stream)
			return true
		}
	}
	r.unreached = append(r.unreached, Unreached{Host: ne.Host, Cause: ne.Cause, Streams: []string{res.Stream}})
	return true
}

// failureTrace describes a failed stream for an airbyte TRACE ERROR message: message is
// what a person reads, internal_message the cause beneath the stream and page, both
// redacted.
func (r *reading) failureTrace(stream, msg string, err error) output.ErrorTrace {
	cause := err
	var se *run.StreamError
	if errors.As(err, &se) {
		cause = se.Err
	}
	red := r.s.env.Redactor
	return output.ErrorTrace{
		Stream:          stream,
		Message:         red.String(msg),
		InternalMessage: red.String(cause.Error()),
		FailureType:     run.FailureType(err),
	}
}

// sequenced is the Sequencer as the output of run.Read.
type sequenced struct{ *output.Sequencer }

func (s sequenced) Part() run.Part { return s.Sequencer.Part() }

// plural says "1 record" or "2 records".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
