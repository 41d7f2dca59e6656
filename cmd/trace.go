package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/httpx"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/run"
	"connector/pkg/session"
	"connector/pkg/slice"
	"connector/pkg/template"
)

type traceOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
	// showRecords is --show-records, showBodies --show-bodies.
	showRecords, showBodies int
}

func newCmdTrace(io *ioStreams, env *Env, runF func(*traceOptions) error) *cobra.Command {
	opts := &traceOptions{io: io, env: env}
	opts.flags.command = "paginate-trace"
	c := &cobra.Command{
		Use:   "paginate-trace DEF --testing-values FILE",
		Short: "Show every request, response and pagination decision of a read",
		Long: `paginate-trace runs exactly what read runs, but instead of the records it prints on stdout,
for every request (data requests and authentication requests: token refresh, session login),
the method, URL, headers and body with secrets replaced by ****, the response status and size,
the number of records extracted, the page token before and after, and the decision with its
reason:

  next: offset=200 (100 records ≥ limit 100)
  stop: 37 records < limit 100
  stop: no value at response.meta.next_cursor
  stop: stop_condition true
  stop: --max-pages 5
  stop: --max-records 100
  error: pagination token "abc" repeated

A stop by --max-pages or --max-records also ends the stream's summary ("stopped early by
--max-records 100"; "stopped_by" in json) and is noted on stderr.

Each response shows its status line and its headers (masked); --show-bodies N shows the
first N bytes of each body too, JSON pretty-printed, secrets masked.

--format json prints one JSON object per event, for scripts.

--format builder prints, for the one stream --stream names, what the Airbyte Connector
Builder's test read shows: the StreamRead JSON (slices, each with its pages' requests,
responses and records and the state after it; auxiliary requests such as token refreshes,
logins, parent streams and asynchronous jobs; logs; the config after a token rotation;
test_read_limit_reached). Its limits are the Builder's unless told: 100 records
(--max-records; like the Builder's, it only sets test_read_limit_reached), 5 pages per slice
(--max-pages) and 5 slices (--max-slices).

` + recordingHelp,
		Example: `  connector paginate-trace definitions/offset-pagination.yaml --testing-values testing-values.example.yaml
  connector paginate-trace def.yaml --testing-values creds.yaml --stream users --max-pages 3 --format json | jq .
  connector paginate-trace def.yaml --testing-values creds.yaml --max-records 250
  connector paginate-trace def.yaml --testing-values creds.yaml --show-bodies 400
  connector paginate-trace def.yaml --testing-values creds.yaml --format builder --stream users
  connector paginate-trace def.yaml --replay books.har   # the requests of a recording, offline`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return traceRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	opts.flags.addVerbosity(c)
	addStreamFlags(c, &opts.flags)
	addMaxRecords(c, &opts.flags)
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json", "builder"}, "output format: text, json (one object per event) or builder (the Connector Builder's StreamRead JSON of one --stream)")
	c.Flags().BoolVar(&opts.flags.failFast, "fail-fast", false, "stop at the first stream that fails")
	opts.flags.state.add(c)
	opts.flags.rec.add(c)
	intFlag(c.Flags(), &opts.showRecords, "show-records", 0, "show the first `N` records of each page as they are emitted (after the transformations)", 0, "must be 0 or more", 1000, "must be at most 1000")
	opts.flags.addSchemaCheck(c)
	intFlag(c.Flags(), &opts.showBodies, "show-bodies", 0, "show the first `N` bytes of each response body (JSON pretty-printed, secrets masked)", 0, "must be 0 or more", 0, "")
	return c
}

func traceRun(ctx context.Context, opts *traceOptions) (err error) {
	if opts.format == "builder" && len(opts.flags.streams) != 1 {
		return usagef("--format builder shows the test read of one stream: name it with --stream")
	}
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	defer func() { err = p.finish(opts.io, err) }()
	states, err := p.openState(opts.flags.state)
	if err != nil {
		return err
	}
	if opts.format == "builder" {
		return builderRun(ctx, opts, p, states)
	}
	t := newTracer(opts.io, opts.format == "json")
	t.showBodies = opts.showBodies
	p.Client.Observe = t.exchange
	if err := p.Resolve(ctx, t); err != nil {
		return sessionError(opts.io, err)
	}
	ro := p.Options()
	ro.StateOf, ro.Now = states.Of, opts.env.clock()
	if err := states.Check(ro, opts.flags.state.path, p.Streams); err != nil {
		return sessionError(opts.io, err)
	}
	ro.Checkpoint = func(cp run.Checkpoint) {
		if cp.Failed && cp.NoCursor() {
			return
		}
		t.checkpoint(cp)
		states.Set(cp.Stream, cp.State)
	}
	ro.Observer = t
	ro.MaxSlices, ro.MaxPages, ro.MaxRecords = opts.flags.maxSlices, opts.flags.maxPages, opts.flags.maxRecords
	ro.Prefetch = opts.flags.prefetch
	ro.FailFast = opts.flags.failFast
	ro.ShowRecords = opts.showRecords
	ro.Warn = func(text string) { fmt.Fprintln(opts.io.Err, opts.io.redactor.String("note: "+text)) }
	var checks *session.SchemaChecks
	if opts.flags.checkSchema {
		checks = session.NewSchemaChecks(p.Streams)
		ro.Out = checks
	}
	failed, schemaWarnings := 0, 0
	for _, s := range p.Streams {
		res := run.Stream(ctx, ro, s)
		if checks != nil && !errors.Is(res.Err, context.Canceled) {
			rep, err := checks.Report(s.Name)
			schemaWarnings += rep.Total()
			printSchemaCheck(opts.io, opts.flags.quiet, s.Name, rep, err)
		}
		if res.Limit.Set() && res.Err == nil {
			fmt.Fprintf(opts.io.Err, "%s: stopped early by %s after %s and %s\n", s.Name, res.Limit,
				plural(res.Records, "record"), plural(res.Pages, "page"))
		}
		if res.Err != nil {
			if errors.Is(res.Err, context.Canceled) || isBrokenPipe(res.Err) {
				return res.Err
			}
			failed++
			opts.io.printError(res.Err)
			if opts.flags.failFast {
				break
			}
		}
	}
	if err := states.Close(); err != nil {
		opts.io.printError(err)
		return &silentError{code: exitFailure}
	}
	if failed > 0 {
		return &silentError{code: exitFailure}
	}
	if opts.flags.strict && schemaWarnings > 0 {
		opts.io.printError(fmt.Errorf("--strict: the schema check found %s", plural(schemaWarnings, "warning")))
		return &silentError{code: exitFailure}
	}
	return nil
}

// checkpoint shows where an incremental stream's state stands after a slice, and at its end.
func (t *tracer) checkpoint(cp run.Checkpoint) {
	if _, ok := cp.State.Get("__ab_no_cursor_state_message"); ok && cp.State.Len() == 1 {
		return // a full refresh stream
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	text, err := record.Marshal(cp.State)
	if err != nil {
		return
	}
	if t.json {
		t.emit(map[string]any{"event": "checkpoint", "stream": cp.Stream, "state": json.RawMessage(text), "final": cp.Final})
		return
	}
	if cp.Final {
		t.printf("  %s %s\n", t.bold("state at the end:"), text)
		return
	}
	t.printf("    %s %s\n", t.cyan("checkpoint: state"), text)
}

// tracer prints the events of a read: every HTTP attempt (from the client) and every page
// decision (from the read loop). Every text is redacted before it is written.
type tracer struct {
	mu       sync.Mutex
	w        io.Writer
	json     bool
	redactor *redact.Redactor
	stream   string
	// sliceStream and slice are the stream and the slice (nil: none) whose pages were
	// announced last; a page of another is announced first, so that the pages of a parent
	// read between a child's slices are not taken for the child's.
	sliceStream string
	slice       *slice.Slice
	// parentOf maps a parent stream to the stream it is read for; partitioned holds the
	// streams that had a page in a partition. Both are for the stream being read.
	parentOf    map[string]string
	partitioned map[string]bool
	// properties holds the streams read for the property names of a PropertiesFromEndpoint.
	properties map[string]bool
	// showBodies is how many bytes of each response body are shown (--show-bodies).
	showBodies int
	bold       func(string) string
	dim        func(string) string
	green      func(string) string
	red        func(string) string
	cyan       func(string) string
}

func newTracer(s *ioStreams, asJSON bool) *tracer {
	return &tracer{
		w: s.Out, json: asJSON, redactor: s.redactor,
		bold:  s.paint(false, color.Bold),
		dim:   s.paint(false, color.Faint),
		green: s.paint(false, color.FgGreen),
		red:   s.paint(false, color.FgRed, color.Bold),
		cyan:  s.paint(false, color.FgCyan),
	}
}

func (t *tracer) emit(event map[string]any) {
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(event)
	io.WriteString(t.w, t.redactor.String(buf.String()))
}

func (t *tracer) printf(format string, args ...any) {
	io.WriteString(t.w, t.redactor.String(fmt.Sprintf(format, args...)))
}

func (t *tracer) StreamStart(ss run.StreamStart) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if ss.ParentOf == "" {
		t.stream = ss.Stream
		t.sliceStream, t.slice = "", nil
		t.parentOf, t.partitioned, t.properties = map[string]string{}, map[string]bool{}, map[string]bool{}
	} else if t.parentOf != nil {
		t.parentOf[ss.Stream] = ss.ParentOf
		t.properties[ss.Stream] = ss.Properties
	}
	if t.json {
		ev := map[string]any{"event": "stream_start", "stream": ss.Stream, "pagination": ss.Pagination}
		if ss.Cursor != "" {
			ev["cursor"] = ss.Cursor
		}
		if ss.Schema {
			ev["schema_of"] = ss.ParentOf
		} else if ss.ParentOf != "" {
			ev["parent_of"] = ss.ParentOf
		}
		if ss.Properties {
			ev["properties"] = true
		}
		if ss.Group != "" {
			ev["group"] = ss.Group
		}
		t.emit(ev)
		return
	}
	if ss.Schema {
		t.printf("  %s %s, read for the schema of %s (DynamicSchemaLoader; %s)\n", t.bold("schema loader"), t.bold(ss.Stream), ss.ParentOf, ss.Pagination)
		return
	}
	if ss.ParentOf == "dynamic_streams" {
		t.printf("%s %s (%s)\n", t.bold("components of the dynamic streams"), t.bold(ss.Stream), ss.Pagination)
		return
	}
	if ss.Properties {
		t.printf("  %s %s, read for the property names of %s (PropertiesFromEndpoint; %s)\n", t.bold("properties stream"), t.bold(ss.Stream), ss.ParentOf, ss.Pagination)
		return
	}
	group := ""
	if ss.Group != "" {
		group = ", group " + ss.Group // its group's other streams are not read meanwhile
	}
	if ss.ParentOf != "" {
		t.printf("  %s %s%s, read for the partitions of %s (%s)\n", t.bold("parent stream"), t.bold(ss.Stream), group, ss.ParentOf, ss.Pagination)
		return
	}
	if ss.Cursor != "" {
		t.printf("%s %s%s (%s; %s)\n", t.bold("stream"), t.bold(ss.Stream), group, ss.Pagination, ss.Cursor)
		return
	}
	t.printf("%s %s%s (%s)\n", t.bold("stream"), t.bold(ss.Stream), group, ss.Pagination)
}

func (t *tracer) exchange(e httpx.Exchange) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		stream := t.stream
		if e.Stream != "" {
			stream = e.Stream
		}
		ev := map[string]any{
			"event": "request", "stream": stream, "kind": e.Kind, "attempt": e.Attempt,
			"method": e.Method, "url": e.URL, "headers": flatHeaders(e.Header),
			"status": e.Status, "size": e.Size,
		}
		if e.Body != "" {
			ev["body"] = e.Body
		}
		if e.Cached {
			ev["cached"] = true
		}
		if e.Err != "" {
			ev["error"] = e.Err
		}
		if e.Wait > 0 {
			ev["retry_in"] = e.Wait.String()
		}
		if e.Paced > 0 {
			ev["budget_wait_ms"], ev["budget_policy"] = e.Paced.Milliseconds(), e.Policy
		}
		if t.showBodies > 0 && e.RespBody != nil {
			t.learnTokens(e)
			ev["response_body"], _ = bodyExcerpt(t.redactor, e.RespBody, t.showBodies)
		}
		t.emit(ev)
		return
	}
	if e.Paced > 0 {
		t.printf("  %s\n", t.dim(fmt.Sprintf("waited %s for %s", diag.Duration(e.Paced), e.Policy)))
	}
	label := e.Kind
	if e.Attempt > 1 {
		label += fmt.Sprintf(", attempt %d", e.Attempt)
	}
	if e.Cached {
		label += ", answered from the run's cache of parent streams: not sent"
	}
	t.printf("  %s %s %s\n", t.cyan("→ "+e.Method), e.URL, t.dim("("+label+")"))
	for _, k := range slices.Sorted(maps.Keys(e.Header)) {
		for _, v := range e.Header[k] {
			t.printf("      %s %s\n", t.dim(k+":"), v)
		}
	}
	if e.Body != "" {
		t.printf("      %s %s\n", t.dim("body:"), e.Body)
	}
	switch {
	case e.Err != "":
		t.printf("    %s %s\n", t.red("✗"), e.Err)
	default:
		status := fmt.Sprintf("%d %s", e.Status, http.StatusText(e.Status))
		if e.Status >= 400 {
			status = t.red(status)
		} else {
			status = t.green(status)
		}
		t.printf("    ← %s, %s\n", status, plural(e.Size, "byte"))
		for _, k := range slices.Sorted(maps.Keys(e.RespHeader)) {
			for _, v := range e.RespHeader[k] {
				t.printf("      %s %s\n", t.dim(k+":"), t.redactor.Header(k, v, false))
			}
		}
		if t.showBodies > 0 && len(e.RespBody) > 0 {
			t.learnTokens(e)
			text, cut := bodyExcerpt(t.redactor, e.RespBody, t.showBodies)
			t.printf("      %s\n", t.dim("body:"))
			for _, line := range strings.Split(text, "\n") {
				t.printf("        %s\n", line)
			}
			if cut {
				t.printf("        %s\n", t.dim(fmt.Sprintf("… (cut after %s)", plural(t.showBodies, "byte"))))
			}
		}
	}
	if e.Wait > 0 {
		t.printf("    retry in %s\n", diag.Duration(e.Wait))
	}
}

func (t *tracer) Page(ev run.PageEvent) {
	t.mu.Lock()
	defer t.mu.Unlock()
	decision, reason := pageDecision(ev)
	partitioned := ev.Slice != nil && !ev.Slice.Empty()
	if partitioned && t.partitioned != nil {
		t.partitioned[ev.Stream] = true
	}
	if t.json {
		out := map[string]any{
			"event": "page", "stream": ev.Stream, "page": ev.Number, "status": ev.Status,
			"size": ev.Size, "records": ev.Records, "emitted": ev.Emitted,
			"token_before": tokenJSON(ev.TokenBefore), "token_after": tokenJSON(ev.TokenAfter),
			"decision": decision, "reason": reason,
		}
		if partitioned {
			out["slice"], out["slice_number"] = ev.Slice.String(), ev.Slice.Number
		}
		if ev.Lazy {
			out["from_parent_record"] = true
		}
		if len(ev.Shown) > 0 {
			shown := make([]json.RawMessage, len(ev.Shown))
			for i, r := range ev.Shown {
				shown[i] = json.RawMessage(r)
			}
			out["records_shown"] = shown
		}
		t.emit(out)
		return
	}
	if ev.Stream != t.sliceStream || partitioned && ev.Slice != t.slice {
		first := t.sliceStream == ""
		t.sliceStream, t.slice = ev.Stream, nil
		switch {
		case partitioned:
			t.slice = ev.Slice
			t.printf("  %s %d %s of %s\n", t.bold("slice"), ev.Slice.Number, ev.Slice.Label(), ev.Stream)
		case t.properties[ev.Stream]:
			t.printf("  %s %s (properties of %s)\n", t.bold("pages of"), ev.Stream, t.parentOf[ev.Stream])
		case t.parentOf[ev.Stream] != "":
			t.printf("  %s %s (parent of %s)\n", t.bold("pages of"), ev.Stream, t.parentOf[ev.Stream])
		case !first:
			t.printf("  %s %s\n", t.bold("pages of"), ev.Stream)
		}
	}
	if ev.Lazy {
		t.printf("    page %d read from the parent record (lazy_read_pointer), no request\n", ev.Number)
	}
	if ev.End == run.Discarded {
		t.printf("    page %d, token %s: %s\n", ev.Number, tokenText(ev.TokenBefore), t.dim(reason))
		return
	}
	kept := ""
	if ev.Emitted != ev.Records {
		kept = fmt.Sprintf(" (%d emitted)", ev.Emitted)
	}
	t.printf("    page %d: %s extracted%s, token %s → %s\n", ev.Number, plural(ev.Records, "record"), kept,
		tokenText(ev.TokenBefore), tokenText(ev.TokenAfter))
	for _, r := range ev.Shown {
		t.printf("      %s %s\n", t.dim("record"), r)
	}
	switch decision {
	case "next":
		reason = t.green(reason)
	case "error":
		reason = t.red(reason)
	default:
		reason = t.bold(reason)
	}
	t.printf("    %s\n", reason)
}

// restartReason words a pagination reset: what caused it and where the slice starts again.
func restartReason(ev run.PageEvent) string {
	cause := fmt.Sprintf("the error handler answered %d with RESET_PAGINATION", ev.Status)
	if ev.Restart.Limit > 0 {
		cause = fmt.Sprintf("number_of_records %d reached", ev.Restart.Limit)
	}
	text := cause + "; the pagination starts again from the first page"
	if sl := ev.Restart.Slice; sl != nil && sl != ev.Slice {
		text += " of slice " + sl.Label()
	}
	return text
}

// pageDecision words what a page meant for the read: the decision (next, stop, error or
// discarded) and its reason, e.g. "next: offset=200 (100 records ≥ limit 100)".
func pageDecision(ev run.PageEvent) (decision, reason string) {
	switch ev.End {
	case run.Continue:
		return "next", "next: " + paginationReason(ev.Decision)
	case run.Paginated:
		return "stop", "stop: " + paginationReason(ev.Decision)
	case run.Limited:
		return "stop", "stop: " + ev.Limit.String()
	case run.Ignored:
		return "stop", "stop: " + ev.Ignored
	case run.Failed:
		return "error", "error: " + ev.Err.Error()
	case run.Reset:
		return "reset", "reset: " + restartReason(ev)
	}
	var why string
	switch ev.Discard.Why {
	case run.PastTheEnd:
		why = "sent ahead, past the last page"
	case run.AfterFailure:
		why = "sent ahead, beyond the page that failed"
	case run.WrongGuess:
		why = "sent ahead with a token the page before did not lead to (next is " + template.ToString(ev.Discard.Next) + ")"
	case run.AfterReset:
		why = "sent ahead, before the pagination was reset"
	}
	if ev.Discard.Answered {
		return "discarded", "discarded: " + why + ", not emitted"
	}
	return "discarded", "discarded: " + why + ", cancelled before its answer"
}

// paginationReason words a paginator's decision: "offset=200 (100 records ≥ limit 100)",
// "37 records < limit 100", "no value at response.next", "stop_condition true".
func paginationReason(d paginate.Decision) string {
	token, size := paginate.Words(d.Strategy)
	sizeWord := strings.ReplaceAll(size, "_", " ") // said in words: "page size"
	switch d.Why {
	case paginate.NotPaginated:
		return "no pagination"
	case paginate.FullPage:
		return fmt.Sprintf("%s=%s (%s ≥ %s %d)", token, template.ToString(d.Token), plural(d.Count, "record"), sizeWord, d.Size)
	case paginate.NonEmptyPage:
		return fmt.Sprintf("%s=%s (%s, no %s set)", token, template.ToString(d.Token), plural(d.Count, "record"), sizeWord)
	case paginate.ShortPage:
		return fmt.Sprintf("%s < %s %d", plural(d.Count, "record"), sizeWord, d.Size)
	case paginate.EmptyPage:
		return fmt.Sprintf("empty page (no %s set)", sizeWord)
	case paginate.CursorFound:
		return "cursor=" + strconv.Quote(template.ToString(d.Token)) + " from " + d.Source
	case paginate.NoCursor:
		return "no value at " + d.Source
	case paginate.StopCondition:
		return "stop_condition true"
	case paginate.DataFeedEnd:
		return "the page's last record is out of the cursor's range (is_data_feed)"
	}
	return fmt.Sprintf("decision %d", d.Why)
}

func (t *tracer) StreamEnd(res run.Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.json {
		ev := map[string]any{"event": "stream_end", "stream": res.Stream, "pages": res.Pages, "records": res.Records}
		if res.Schema {
			ev["schema_of"] = res.ParentOf
		} else if res.ParentOf != "" {
			ev["parent_of"] = res.ParentOf
		}
		if res.Properties {
			ev["properties"] = true
		}
		if t.showSlices(res) {
			ev["slices"] = res.Slices
		}
		if res.Limit.Set() {
			ev["stopped_by"] = res.Limit.String()
		}
		if res.Err != nil {
			ev["error"] = res.Err.Error()
		}
		t.emit(ev)
		return
	}
	end := ""
	switch {
	case res.Err != nil:
		end = ", " + t.red("failed")
	case res.Limit.Set():
		end = ", stopped early by " + res.Limit.String()
	}
	if res.Schema {
		t.printf("  %s (schema of %s): %s, %s read for the schema%s\n", res.Stream, res.ParentOf, plural(res.Pages, "page"), plural(res.Records, "record"), end)
		return
	}
	if res.Properties {
		t.printf("  %s (properties of %s): %s, %s read for property names%s\n", res.Stream, res.ParentOf, plural(res.Pages, "page"), plural(res.Records, "record"), end)
		return
	}
	if res.ParentOf != "" {
		t.printf("  %s (parent of %s): %s, %s read for partitions%s\n", res.Stream, res.ParentOf, plural(res.Pages, "page"), plural(res.Records, "record"), end)
		return
	}
	slices := ""
	if t.showSlices(res) {
		slices = plural(res.Slices, "slice") + ", "
	}
	t.printf("  %s: %s%s, %s emitted%s\n", res.Stream, slices, plural(res.Pages, "page"), plural(res.Records, "record"), end)
}

// showSlices says whether the end of a stream counts its slices: a stream with partitions
// (a stream without them has one slice, and no partition comes with zero).
func (t *tracer) showSlices(res run.Result) bool {
	return t.partitioned[res.Stream] || res.Slices != 1 && res.Err == nil
}

func tokenText(v any) string {
	if v == nil {
		return "none"
	}
	if s, ok := v.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	return template.ToString(v)
}

func tokenJSON(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int64, int, float64, json.Number:
		return x
	}
	return template.ToString(v)
}

func flatHeaders(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = strings.Join(v, ", ")
	}
	return out
}

// learnTokens makes the tokens of an authentication response known to the redactor before
// its body is shown: the authenticator registers them only once the exchange is over. The
// strings held under a credential's name (access_token, refresh_token, token, …) are taken.
func (t *tracer) learnTokens(e httpx.Exchange) {
	switch e.Kind {
	case "token", "login", "validate":
	default:
		return
	}
	doc, err := record.Decode(e.RespBody)
	if err != nil {
		return
	}
	var walk func(v any, key string)
	walk = func(v any, key string) {
		switch x := v.(type) {
		case *record.Object:
			for _, k := range x.Keys() {
				e, _ := x.Get(k)
				walk(e, k)
			}
		case []any:
			for _, e := range x {
				walk(e, key)
			}
		case string:
			if len(x) >= 8 && har.CredentialKey(key) {
				t.redactor.Add(x)
			}
		}
	}
	walk(doc, "")
}

// bodyExcerpt is the start of a response body as the trace shows it: JSON pretty-printed
// with two spaces (other text as it is), masked, cut after n bytes (at a character's
// start, the spaces that end the cut dropped); cut says something was left out.
func bodyExcerpt(red *redact.Redactor, body []byte, n int) (text string, cut bool) {
	const pretty = 8 << 20 // a larger body is shown as sent: indenting it all for a glance costs too much
	shown := body
	if len(body) <= pretty && json.Valid(body) {
		var buf bytes.Buffer
		if json.Indent(&buf, body, "", "  ") == nil {
			shown = buf.Bytes()
		}
	}
	// Masked with a margin beyond the cut, so that a secret across it is masked whole.
	const margin = 4 << 10
	window := shown[:min(len(shown), n+margin)]
	masked := red.String(strings.ToValidUTF8(string(window), "\ufffd"))
	if len(window) == len(shown) && len(masked) <= n {
		return masked, false
	}
	end := min(n, len(masked))
	for end > 0 && !utf8.RuneStart(masked[end]) {
		end--
	}
	return strings.TrimRight(masked[:end], " \n"), true
}
