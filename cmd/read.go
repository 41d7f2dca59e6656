package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/output"
	"connector/pkg/run"
	"connector/pkg/session"
	"connector/pkg/template"
)

type readOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
	// missing are streams asked for that the definition lacks: an INCOMPLETE status each
	// before any other message (airbyte read, as the CDK does for its catalog).
	missing []string
	// protocol is the read of the Airbyte entry point (airbyte read): LOG messages where the
	// CDK writes them (a stream's start, RUNNING and end, notes as warnings), and a read in
	// which streams failed ends with one more TRACE ERROR naming them all, without a stream,
	// as the CDK's concurrent read does.
	protocol bool
	// configAsGiven lays out the config of a CONTROL message as the config file was written
	// (airbyte read: key order, the injected definition back in its place); nil: as is.
	configAsGiven func(config map[string]any) any
}

func newCmdRead(io *ioStreams, env *Env, runF func(*readOptions) error) *cobra.Command {
	opts := &readOptions{io: io, env: env}
	opts.flags.command = "read"
	c := &cobra.Command{
		Use:   "read DEF --testing-values FILE",
		Short: "Stream the records of every stream as JSON lines",
		Long: `read requests the pages of each stream in definition order (or of the streams named with
--stream) and writes every record to stdout as one JSON line, as soon as its page arrives.
Records are written byte for byte as the API sent them: key order and numbers untouched; a
stream with transformations writes the record Airbyte would emit, numbers still as sent.

Formats: records (the record itself), envelope ({"stream": …, "data": …}) and airbyte
(Airbyte protocol RECORD, STATE, TRACE and CONTROL messages). In airbyte, a failed stream gives a
TRACE ERROR message (message, internal_message, failure_type config_error, transient_error or
system_error, stream_descriptor) before its INCOMPLETE status.

Incremental streams (incremental_sync) read from their start, or with --state FILE from where
the state file says they stopped; the file is rewritten after every slice whose records are all
written (a checkpoint), and stderr says where each stream's state stands at its end.

When a stream fails, the failure is reported on stderr, the remaining streams are still read,
and the exit code is 1 (--fail-fast stops at the first failure). Ctrl-C writes out what was
read and exits 130.

` + recordingHelp,
		Example: `  connector read definitions/bearer-auth.yaml --testing-values testing-values.example.yaml
  connector read def.yaml --testing-values creds.yaml --stream users --max-records 10
  API_KEY=… connector read def.yaml --testing-values creds.yaml --set api_key="$API_KEY" | jq .id
  connector read def.yaml --set base_url=http://127.0.0.1:8787 --set page_size=50   # no values file needed when the spec requires nothing else
  connector read def.yaml --testing-values creds.yaml --set-json 'filter={"status":["open","closed"]}'
  connector read def.yaml --testing-values creds.yaml --format airbyte --concurrency 4
  connector read def.yaml --testing-values creds.yaml --state state.json   # incremental: from where the last read stopped
  connector read def.yaml --testing-values creds.yaml --record books.har   # keep every exchange, secrets masked
  connector read def.yaml --replay books.har                              # the same read, offline`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return readRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	addStreamFlags(c, &opts.flags)
	opts.flags.addVerbosity(c)
	addMaxRecords(c, &opts.flags)
	enumFlag(c.Flags(), &opts.format, "format", output.Formats, "output format: records, envelope or airbyte")
	c.Flags().BoolVar(&opts.flags.failFast, "fail-fast", false, "stop at the first stream that fails instead of reading the others")
	opts.flags.state.add(c)
	opts.flags.rec.add(c)
	intFlag(c.Flags(), &opts.flags.concurrency, "concurrency", 0, fmt.Sprintf("read up to `N` slices at once, across and within streams (default: the definition's concurrency_level, else 1; at most %d); stdout stays exactly that of a read one slice at a time", maxConcurrency),
		0, "must be 0 (the definition's concurrency_level) or more", maxConcurrency, fmt.Sprintf("must be at most %d (a limit of connector)", maxConcurrency))
	return c
}

func addStreamFlags(c *cobra.Command, f *runFlags) {
	c.Flags().StringArrayVar(&f.streams, "stream", nil, "read only the stream `NAME` (repeatable; default: every stream in definition order)")
	intFlag(c.Flags(), &f.maxPages, "max-pages", 0, "stop each stream after `N` pages (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
	intFlag(c.Flags(), &f.maxSlices, "max-slices", 0, "stop each stream after `N` slices (partitions) (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
	intFlag(c.Flags(), &f.prefetch, "prefetch", 1, fmt.Sprintf("request up to `N` pages ahead at once, at most %d (OffsetIncrement or PageIncrement with a page_size; records stay in page order)", maxPrefetch),
		1, "must be 1 (one page at a time) or more", maxPrefetch, fmt.Sprintf("must be at most %d (a limit of connector)", maxPrefetch))
}

func addMaxRecords(c *cobra.Command, f *runFlags) {
	intFlag(c.Flags(), &f.maxRecords, "max-records", 0, "stop each stream after `N` records (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
}

func exactlyOneDefinition(c *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s needs exactly one definition file, got %d\nRun '%s --help' for usage.", c.Name(), len(args), c.CommandPath())
	}
	return nil
}

func readRun(ctx context.Context, opts *readOptions) (err error) {
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	defer func() { err = p.finish(opts.io, err) }()
	states, err := p.openState(opts.flags.state)
	if err != nil {
		return err
	}
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(opts.io, err)
	}
	return readStreams(ctx, opts, p, states)
}

// readStreams reads the prepared streams and writes them in opts.format; `read` and
// `airbyte read` share it, so both write the same messages.
func readStreams(ctx context.Context, opts *readOptions, p *prepared, states *session.State) error {
	ro := p.Options()
	ro.StateOf, ro.Now = states.Of, opts.env.clock()
	if err := states.Check(ro, opts.flags.state.path, p.Streams); err != nil {
		return sessionError(opts.io, err)
	}
	out, err := output.NewRecordOutput(opts.io.Out, opts.format, opts.env.clock())
	if err != nil {
		return usagef("%v", err)
	}
	defer out.Close() // every stream's end already waited for its records to be written
	widenPipe(opts.io.Out)
	if opts.protocol || output.Protocol(opts.format) {
		p.Client.FailFast = false // the CDK's retries (section "Never hang" of the README)
	}
	logf := func(level, format string, args ...any) {
		if opts.protocol {
			out.Log(level, opts.io.redactor.String(fmt.Sprintf(format, args...)))
		}
	}
	if opts.protocol {
		out.LogStatuses()
		// The CDK logs each retry (its backoff handler's "Caught retryable error" line).
		p.Client.OnRetry = func(r httpx.Retry) {
			if r.RateLimited && r.Stream != "" {
				// The CDK's HttpClient prints this at once, whatever it is writing.
				out.StreamStatus(r.Stream, "RUNNING", "RATE_LIMITED")
			}
			logf("INFO", "Caught retryable error '%s' from %s %s after %d tries. Waiting %g seconds then retrying...",
				r.Cause, r.Method, r.URL, r.Attempt, r.Wait.Seconds())
		}
	}
	logf("INFO", "Starting syncing")
	for _, name := range opts.missing {
		// The CDK's words for the same stream when it raises instead (AbstractSource.read).
		logf("WARN", "The stream '%s' in your connection configuration was not found in the source. Refresh the schema in your replication settings and remove this stream from future sync attempts.", name)
		out.StreamStatus(name, "INCOMPLETE")
	}
	p.OnConfigUpdate = func(config map[string]any) {
		if opts.configAsGiven != nil {
			out.Control(opts.configAsGiven(config))
			return
		}
		out.Control(config)
	}
	ro.MaxSlices, ro.MaxPages, ro.MaxRecords = opts.flags.maxSlices, opts.flags.maxPages, opts.flags.maxRecords
	prog := &progress{io: opts.io, now: opts.env.clock(), live: opts.io.errTTY && !opts.flags.quiet}
	ro.Observer = prog
	ro.Prefetch = opts.flags.prefetch
	ro.Overlap = true
	ro.FailFast = opts.flags.failFast
	var mu sync.Mutex // orders what the streams write on stderr
	ro.Warn = func(text string) {
		mu.Lock()
		defer mu.Unlock()
		if !opts.flags.quiet {
			fmt.Fprintln(opts.io.Err, opts.io.redactor.String("note: "+text))
		}
		logf("WARN", "%s", text)
	}
	// A checkpoint comes in output order, once the slice's records are in the output: they
	// reach stdout before the state file says they were read.
	closed := map[string]bool{} // streams with a slice read whole in this run
	var unearned []string       // failed streams whose state stays as it was
	ro.Checkpoint = func(cp run.Checkpoint) {
		if cp.Message {
			out.State(cp.Stream, cp.State, cp.Records)
		}
		switch {
		case !cp.Final:
			closed[cp.Stream] = true
		case cp.Failed && cp.NoCursor():
			return // a message only: a failed stream without a cursor earned no state
		case cp.Failed && !closed[cp.Stream]:
			// Nothing was read: the state file keeps what the stream had (said at the end).
			mu.Lock()
			unearned = append(unearned, cp.Stream)
			mu.Unlock()
			return
		}
		if states.Out() != "" {
			out.Flush()
		}
		states.Set(cp.Stream, cp.State)
		if cp.Final && !opts.flags.quiet {
			// Where the stream's state now stands, once its status is written.
			if text, ok := states.Describe(cp.Stream); ok {
				where := ""
				if states.Out() != "" {
					where = " (saved in " + states.Out() + ")"
				}
				mu.Lock()
				fmt.Fprint(opts.io.Err, opts.io.redactor.String(fmt.Sprintf("%s: state %s%s\n", cp.Stream, text, where)))
				mu.Unlock()
			}
		}
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	failed, ended := 0, 0
	var failures []string // "stream: repr of the cause", for the closing summary
	// unreached are the streams that failed at once, unsent, on a host an earlier request
	// found unreachable: stderr names them once at the end, under the first failure.
	var unreached unreachedStreams
	var stopErr error // an interrupt or a closed stdout: the read ends
	// The hooks run in output order, when the stream's place in stdout is reached: its
	// start before its records, its end after them.
	hooks := run.Hooks{
		Start: func(s *manifest.Stream) {
			logf("INFO", "Marking stream %s as STARTED", s.Name)
			logf("INFO", "Syncing stream: %s", s.Name)
			out.StreamStatus(s.Name, "STARTED")
		},
		End: func(res run.Result) {
			mu.Lock()
			defer mu.Unlock()
			ended++
			prog.clear()
			if stopErr != nil {
				return
			}
			if p.Budget != nil && !opts.flags.quiet {
				if t, ok := p.Budget.Waited(res.Stream); ok {
					fmt.Fprintf(opts.io.Err, "note: %s: %s waited %s in total for the API budget: %s\n",
						res.Stream, plural(t.Requests, "request"), diag.Duration(t.Wait), strings.Join(t.Policies, "; "))
				}
			}
			stopped := func() {
				logf("INFO", "Read %d records from %s stream", res.Records, res.Stream)
				logf("INFO", "Marking stream %s as STOPPED", res.Stream)
				logf("INFO", "Finished syncing %s", res.Stream)
			}
			for _, sk := range res.Skipped {
				fmt.Fprintf(opts.io.Err, "note: %s: %s of the parent stream %s had no value at %s and gave no partition\n",
					res.Stream, plural(sk.Records, "record"), sk.Parent, sk.ParentKey)
			}
			switch {
			case errors.Is(res.Err, context.Canceled):
				out.StreamStatus(res.Stream, "INCOMPLETE")
				out.Flush()
				if ctx.Err() != nil {
					fmt.Fprintf(opts.io.Err, "interrupted: %s stopped after %s and %s\n", res.Stream,
						plural(res.Records, "record"), plural(res.Pages, "page"))
					stopErr = res.Err
				}
				stop()
			case res.Err != nil && isBrokenPipe(res.Err):
				stopErr = res.Err
				stop()
			case res.Err != nil:
				failed++
				msg := fmt.Sprintf("%v (%s written before the failure)", res.Err, plural(res.Records, "record"))
				if res.FailedSlices > 0 && res.Slices > 1 {
					// The other slices were read all the same (the CDK's way).
					msg = fmt.Sprintf("%v (%d of %s failed; %s written)", res.Err, res.FailedSlices,
						plural(res.Slices, "slice"), plural(res.Records, "record"))
				}
				trace := failureTrace(opts.io, res.Stream, msg, res.Err)
				logf("ERROR", "Exception while syncing stream %s: %s", res.Stream, trace.InternalMessage)
				out.Error(trace)
				stopped()
				failures = append(failures, res.Stream+": AirbyteTracedException("+template.PyRepr(trace.InternalMessage)+")")
				out.StreamStatus(res.Stream, "INCOMPLETE")
				out.Flush()
				if !unreached.add(res) {
					opts.io.printError(errors.New(msg))
				}
				if opts.flags.failFast {
					stop()
				}
			default:
				stopped()
				out.StreamStatus(res.Stream, "COMPLETE")
				if err := out.Flush(); err != nil {
					stopErr = err
					stop()
					return
				}
				if res.Limit.Set() && !opts.flags.quiet {
					fmt.Fprintf(opts.io.Err, "%s: stopped early by %s after %s and %s\n", res.Stream, res.Limit,
						plural(res.Records, "record"), plural(res.Pages, "page"))
				}
			}
		},
	}
	run.Read(rctx, ro, p.Streams, workers(opts.flags.concurrency, p.Def), sequenced{output.NewSequencer(rctx, out)}, hooks)
	if err := states.Close(); err != nil {
		opts.io.printError(err)
		if stopErr == nil && failed == 0 {
			return &silentError{code: exitFailure}
		}
	}
	if stopErr != nil {
		return stopErr
	}
	if failed > 0 {
		unreached.print(opts.io)
		if len(unearned) > 0 && states.Out() != "" {
			fmt.Fprintf(opts.io.Err, "%s: state unchanged for %s that failed before a slice was read whole: %s\n",
				states.Out(), plural(len(unearned), "stream"), cutList(unearned, 10))
		}
		if opts.protocol {
			summary := "During the sync, the following streams did not sync successfully: " + strings.Join(failures, "\n")
			logf("INFO", "%s", summary)
			logf("FATAL", "%s", summary)
			out.Error(output.ErrorTrace{
				Message:         summary,
				InternalMessage: "Concurrent read failure",
				FailureType:     "config_error",
			})
			out.Flush()
		}
		if skipped := len(p.Streams) - ended; skipped > 0 {
			fmt.Fprintf(opts.io.Err, "--fail-fast: stopped at the first failure; %s not read\n", plural(skipped, "stream"))
		} else if len(p.Streams) > 1 {
			fmt.Fprintf(opts.io.Err, "%d of %d streams failed\n", failed, len(p.Streams))
		}
		return &silentError{code: exitFailure}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	logf("INFO", "Finished syncing")
	return nil
}

// unreachedStreams are the streams of a read that failed at once, without a record, because
// an earlier request found their host unreachable (httpx.Client.FailFast), by host.
type unreachedStreams struct {
	hosts   []string
	streams map[string][]string
	cause   map[string]string
}

// add takes res when it is such a stream.
func (u *unreachedStreams) add(res run.Result) bool {
	var ne *httpx.NetError
	if res.Records > 0 || !errors.As(res.Err, &ne) || !ne.Earlier {
		return false
	}
	if u.streams == nil {
		u.streams, u.cause = map[string][]string{}, map[string]string{}
	}
	if _, ok := u.streams[ne.Host]; !ok {
		u.hosts = append(u.hosts, ne.Host)
		u.cause[ne.Host] = ne.Cause
	}
	u.streams[ne.Host] = append(u.streams[ne.Host], res.Stream)
	return true
}

// print says, a line per host: "error: 2 more streams not read: HOST could not be reached
// (connection refused; see above): a, b".
func (u *unreachedStreams) print(s *ioStreams) {
	for _, host := range u.hosts {
		names := u.streams[host]
		s.printError(fmt.Errorf("%s not read: %s could not be reached (%s; see above): %s", plural(len(names), "more stream"), host, u.cause[host], cutList(names, 10)))
	}
}

// cutList joins names with ", ", the first max of them and "…" when there are more.
func cutList(names []string, max int) string {
	if len(names) > max {
		return strings.Join(names[:max], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}

// sequenced is the Sequencer as the output of run.Read.
type sequenced struct{ *output.Sequencer }

func (s sequenced) Part() run.Part { return s.Sequencer.Part() }

// failureTrace describes a failed stream for an airbyte TRACE ERROR message: message is
// what stderr says, internal_message the cause beneath the stream and page, both redacted.
func failureTrace(s *ioStreams, stream, msg string, err error) output.ErrorTrace {
	cause := err
	var se *run.StreamError
	if errors.As(err, &se) {
		cause = se.Err
	}
	return output.ErrorTrace{
		Stream:          stream,
		Message:         s.redactor.String(msg),
		InternalMessage: s.redactor.String(cause.Error()),
		FailureType:     run.FailureType(err),
	}
}

// workers is how many slices are read at once, across and within streams: --concurrency,
// else the definition's concurrency_level (at most maxConcurrency, the cap of the flag),
// else 1.
func workers(flag int, def *manifest.Definition) int {
	if flag > 0 {
		return flag
	}
	return min(max(def.ConcurrencyLevel, 1), maxConcurrency)
}

// progress shows records, pages and records/s on one refreshed stderr line when stderr is a
// terminal; otherwise it stays silent.
type progress struct {
	mu      sync.Mutex
	io      *ioStreams
	now     func() time.Time
	live    bool
	start   time.Time
	records int
	pages   int
	stream  string
	shown   bool
}

func (p *progress) StreamStart(ss run.StreamStart) {
	if ss.ParentOf != "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stream, p.records, p.pages, p.start = ss.Stream, 0, 0, p.now()
}

func (p *progress) Page(ev run.PageEvent) {
	if ev.End == run.Discarded {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Stream != p.stream {
		return // a parent's page
	}
	p.records += ev.Emitted
	p.pages++
	if !p.live {
		return
	}
	rate := float64(p.records) / p.now().Sub(p.start).Seconds()
	fmt.Fprintf(p.io.Err, "\r\033[K%s: %s, %s, %.0f records/s\r", p.stream, plural(p.records, "record"), plural(p.pages, "page"), rate)
	p.shown = true
}

func (p *progress) StreamEnd(run.Result) {}

func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.io.Err, "\r\033[K\r")
		p.shown = false
	}
}
