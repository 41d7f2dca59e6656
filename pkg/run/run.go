// Package run reads streams: the pipeline shared by `read`, `check` and `paginate-trace`.
//
//	stream ─→ slices ─→ pages ─→ records ─→ (transform) ─→ filter ─→ emit ─→ checkpoint
//	  │          │         │
//	  │          │         └ pager: build the request (requester, authenticator, paginator,
//	  │          │           partition router), send it, extract the records, decide on the
//	  │          │           next page
//	  │          └ the partition router's slices (pkg/slice), made as they are needed; a
//	  │            parent stream is read through this same pipeline
//	  └ the stream's paginator, error handler, router and field path, made once
//
// Stream reads one stream: slice after slice, each slice page after page (pagination starts
// again in every slice). Read reads several streams with up to N slices at once and writes
// exactly what a read of one slice at a time writes. A page's records go through the record
// filter to an Emitter; the paginator decides on the next page. The template variables of a
// request are built once per page from the stream's and the slice's (see vars.go). Requests
// may go out before the page before them is handled (see pager.go); pages are always
// handled, and records emitted, in order.
package run

import (
	"context"
	"errors"
	"fmt"
	"syscall"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// Emitter receives the records of a read.
type Emitter interface {
	// Records takes the records of one page that are to be written, in order. A record's Raw
	// shares the page body's memory: the emitter must be done with it when Records returns.
	Records(stream string, recs []record.Record) error
	// EndPage is called after every page: what was emitted should reach the output soon,
	// but the read need not wait for it.
	EndPage() error
}

// Observer hears about the progress of a read. Read calls it from the goroutines that read
// slices, so an Observer of a concurrent read must be safe for concurrent use.
type Observer interface {
	StreamStart(s StreamStart)
	Page(ev PageEvent)
	StreamEnd(res Result)
}

// SliceObserver is an Observer that also hears where each slice begins and ends, in the
// stream read and in every helper stream it reads (a parent, a dynamic schema's retriever):
// the Connector Builder's test read groups the pages of a read by slice. A read tells it
// only when its Observer is one.
type SliceObserver interface {
	Observer
	// SliceStart is told before the first request of a slice.
	SliceStart(stream string, sl *slice.Slice)
	// SliceEnd is told when the read of a slice ends, with the error that ended it (nil: it
	// was read whole, or up to a limit).
	SliceEnd(stream string, sl *slice.Slice, err error)
}

// StreamStart announces the read of a stream.
type StreamStart struct {
	Stream string
	// Pagination describes the stream's pagination (paginate.Paginator.Describe).
	Pagination string
	// ParentOf is set when the stream is read for the partitions of another: its records
	// are not emitted.
	ParentOf string
	// Properties is set (with ParentOf) when the stream is the retriever of the
	// PropertiesFromEndpoint of ParentOf: its records are property names.
	Properties bool
	// Cursor describes the stream's incremental cursor ("" for a full refresh stream).
	Cursor string
	// Schema marks the retriever of a DynamicSchemaLoader, read for the schema of ParentOf.
	Schema bool
	// Group is the stream group (stream_groups) of the stream, "" for none.
	Group string
}

// Result is the outcome of one stream.
type Result struct {
	Stream string
	// ParentOf is set for a stream read for the partitions of another.
	ParentOf string
	// Schema marks the retriever of a DynamicSchemaLoader, read for the schema of ParentOf.
	Schema bool
	// Properties is set (with ParentOf) for the retriever of a PropertiesFromEndpoint.
	Properties bool
	Records    int
	Pages      int
	Slices     int
	// Limit is set when --max-slices, --max-pages or --max-records ended the stream early.
	Limit Limit
	Err   error
	// FirstPageRecords is the number of records the first page yielded (for check).
	FirstPageRecords int
	// Skipped counts the parent records that had no value at parent_key, per parent stream.
	Skipped []Skipped
	// FailedSlices counts the slices that failed; Err is the first of them (in slice order).
	// The other slices are read all the same, as the CDK does, unless FailFast.
	FailedSlices int
}

// Skipped is how many records of a parent stream gave no partition.
type Skipped struct {
	Parent, ParentKey string
	Records           int
}

// Options configure a read.
type Options struct {
	Config   map[string]any
	Auth     auth.Authenticator
	Client   *httpx.Client
	Out      Emitter  // nil: records are counted, not written
	Observer Observer // nil: nobody listens
	// MaxSlices, MaxPages and MaxRecords end each stream early (0: no limit).
	MaxSlices, MaxPages, MaxRecords int
	// TestRead holds the limits of a Connector Builder test read (nil: none), applied as the
	// CDK applies them: to the stream and to every helper stream it reads alike.
	TestRead *TestLimits
	// Prefetch is how many pages may be in flight at once when the next page tokens are
	// predictable (see pager.go); 0 or 1 reads one page at a time.
	Prefetch int
	// Overlap lets the next request of an offset or page-number pagination go out as soon
	// as a page's records are counted, while the page is validated and emitted. The
	// requests are the same; only their timing changes. Left off, each request waits for
	// the decision on the page before it, so that a trace tells its events in order.
	Overlap bool
	// Warn, when set, hears notes meant for the user (stderr), such as a --prefetch that
	// cannot apply.
	Warn func(text string)
	// FailFast ends a stream at its first failing slice (--fail-fast); otherwise the other
	// slices are still read and the stream fails at its end.
	FailFast bool
	// StateOf gives the input state of a stream (nil: none): an incremental stream starts
	// where it stands, and a StateDelegatingStream picks its stream by it.
	StateOf func(stream string) *record.Object
	// Checkpoint hears, in output order, an incremental stream's state after each of its
	// slices is read whole and its records are written out, and once more (Final) at the
	// stream's end.
	Checkpoint func(cp Checkpoint)
	// Now is the clock of incremental streams' default end_datetime (nil: time.Now).
	Now func() time.Time
	// TemplateNow is the clock that now_utc(), today_utc(), today_with_timezone() and
	// day_delta() read in the read's templates (nil: the machine's); a replay's is its
	// recording's.
	TemplateNow func() time.Time
	// ShowRecords is how many records of each page a PageEvent carries (paginate-trace
	// --show-records).
	ShowRecords int
	// AuthFor, when set, gives the authenticator of a requester whose authenticator differs
	// from Auth's in the credentials it sends (one method, other values: a project token
	// for some streams, an account token for others); nil: Auth for every requester.
	AuthFor func(a *manifest.Authenticator) (auth.Authenticator, error)
	// Files is where the files of streams with a file_uploader go (nil: they are not
	// downloaded; files.go).
	Files *Files
	// Cached are the requesters whose answers Client.Cache keeps and gives again
	// (manifest.Cached; nil: none): their data requests name the stream's store.
	Cached map[*manifest.Requester]bool

	// strategy, when set (tests), replaces the pagination strategy of every stream.
	strategy paginate.Strategy
	// jobs counts the asynchronous jobs running in the read (async.go).
	jobs *jobSlots
}

// globals are what every template of the read sees besides its component's own variables:
// the testing values and the templates' clock.
func (o *Options) globals() template.Globals {
	return template.Globals{Config: o.Config, Now: o.TemplateNow}
}

// authFor is the authenticator of a requester's authenticator a.
func (o *Options) authFor(a *manifest.Authenticator) (auth.Authenticator, error) {
	if o.AuthFor == nil || a == nil {
		return o.Auth, nil
	}
	return o.AuthFor(a)
}

// forRead returns the options of one read (Read, Stream, Components): a copy with the
// read's own state, so that two reads share nothing mutable even when given one Options.
func (o *Options) forRead() *Options {
	r := *o
	r.jobs = &jobSlots{}
	return &r
}

// helper returns the options of a helper stream's read: a parent stream, the retriever of
// dynamic components or of a dynamic schema, the property names of a QueryProperties. It
// shares the read's configuration, authentication, client, observer, clock and job slots,
// and takes none of its output, limits, prefetch, overlap, notes, state or checkpoints: its
// records only feed the stream that needs them, one page at a time.
// TestHelperOptions fails when a field of Options is added without a decision here.
func (o *Options) helper() *Options {
	h := *o
	h.Out, h.Warn = nil, nil
	h.MaxSlices, h.MaxPages, h.MaxRecords = 0, 0, 0
	h.Prefetch, h.Overlap = 1, false
	h.StateOf, h.Checkpoint = nil, nil
	h.Files = nil // a parent's records feed its child's slices: their files are not wanted
	return &h
}

// TestLimits are the limits of a Connector Builder test read. The CDK decorates every
// paginator it makes for a test read, and every stream's slicer: a slice ends after Pages
// pages (the pagination starting over in every slice), and a stream after Slices slices,
// no slice being made beyond them (a parent is not read further for a slice that is not
// read). 0 leaves a limit off. Records are not limited here: the CDK 7.28.2 reads them all
// and only reports whether their number reached its limit.
type TestLimits struct {
	Pages, Slices int
	// JobMinutes is the polling_job_timeout of an asynchronous job when the definition sets
	// none (0: 60 minutes, a sync's; the CDK's test read waits 15).
	JobMinutes int
}

// Checkpoint is where a stream stands after a slice read whole, or at its end.
type Checkpoint struct {
	Stream string
	// State is the stream's state, in the form the Airbyte CDK writes (a full refresh
	// stream's, at its end: {"__ab_no_cursor_state_message": true}).
	State *record.Object
	// Message says the CDK emits a STATE message here (its per-partition cursors emit one
	// per 600 s only); Records are the records of the stream written since its last one.
	Message bool
	Records int
	// Slice is the slice just closed (nil for the stream's final checkpoint).
	Slice *slice.Slice
	Final bool
	// Failed is set on the final checkpoint of a stream that failed: its state is what its
	// slices read whole before the failure earned, if any did; a stream without a cursor
	// earned none (NoCursor).
	Failed bool
}

// NoCursor says the state is the CDK's state of a stream without a cursor.
func (cp Checkpoint) NoCursor() bool {
	_, ok := cp.State.Get("__ab_no_cursor_state_message")
	return ok && cp.State.Len() == 1
}

// StreamError is a stream that failed, naming the stream, the slice and the page.
type StreamError struct {
	Stream string
	// Slice is the slice that failed; nil for a stream without partitions, or when making
	// the slices failed (a parent stream's failure).
	Slice *slice.Slice
	Page  int // 0 when no page was being read
	Err   error
}

func (e *StreamError) Error() string {
	switch {
	case e.Slice != nil && e.Page > 0:
		return fmt.Sprintf("stream %s, slice %s, page %d: %v", e.Stream, e.Slice, e.Page, e.Err)
	case e.Slice != nil:
		return fmt.Sprintf("stream %s, slice %s: %v", e.Stream, e.Slice, e.Err)
	case e.Page > 0:
		return fmt.Sprintf("stream %s, page %d: %v", e.Stream, e.Page, e.Err)
	}
	return fmt.Sprintf("stream %s: %v", e.Stream, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// Stream reads one stream to its end (or its limit), one slice at a time, and reports the
// outcome. Its records go to o.Out.
func Stream(ctx context.Context, o *Options, s *manifest.Stream) Result {
	o = o.forRead()
	st, err := newStream(o, s, "", o.stateOf(s.Name))
	if o.Observer != nil {
		ss := StreamStart{Stream: s.Name, Group: s.Group}
		if st != nil {
			ss.Pagination, ss.Cursor = st.pag.Describe(), st.describeCursor()
		}
		o.Observer.StreamStart(ss)
	}
	res := Result{Stream: s.Name}
	if err == nil {
		res = st.readAll(ctx, func(*slice.Slice) Emitter { return o.Out })
		st.finalCheckpoint(res.Err != nil)
	} else {
		res.Err = &StreamError{Stream: s.Name, Err: err}
	}
	if o.Out != nil {
		if ferr := o.Out.EndPage(); ferr != nil && res.Err == nil {
			res.Err = ferr
		}
	}
	if o.Observer != nil {
		o.Observer.StreamEnd(res)
	}
	return res
}

// readAll reads the slices of the stream in order, each into the emitter out gives it.
func (st *stream) readAll(ctx context.Context, out func(*slice.Slice) Emitter) Result {
	res := Result{Stream: st.s.Name, ParentOf: st.parentOf}
	if err := st.loadSchema(ctx); err != nil {
		res.Err = &StreamError{Stream: st.s.Name, Err: err}
		return res
	}
	for sl, err := range st.router.Slices(ctx) {
		if err != nil {
			res.Err = st.wrap(nil, 0, err)
			break
		}
		if lim := st.limitBefore(res); lim.Set() {
			res.Limit = lim
			break
		}
		res.Slices++
		sl.Number = res.Slices
		so, _ := st.o.Observer.(SliceObserver)
		if so != nil {
			so.SliceStart(st.s.Name, sl)
		}
		sr := st.newSliceReader(sl, out(sl), res.Pages, res.Records)
		sres := sr.read(ctx)
		if so != nil {
			so.SliceEnd(st.s.Name, sl, sres.err)
		}
		res.add(sres)
		st.checkpoint(sl, sr.track, sres)
		if sres.Limit.Set() || sres.err != nil && (st.o.FailFast || stopping(sres.err)) {
			break
		}
		if tl := st.o.TestRead; tl != nil && tl.Slices > 0 && res.Slices >= tl.Slices {
			// The router is not asked for a slice that will not be read.
			if st.cursor != nil {
				st.cursor.Abandon()
			}
			break
		}
	}
	res.Skipped = st.skipped
	return res
}

// limitBefore is the limit that ends the stream before its next slice, if one does: the
// slices, pages or records it may read are read already.
func (st *stream) limitBefore(res Result) Limit {
	o := st.o
	switch {
	case o.MaxSlices > 0 && res.Slices >= o.MaxSlices:
		return Limit{Flag: "--max-slices", N: o.MaxSlices}
	case o.MaxPages > 0 && res.Pages >= o.MaxPages:
		return Limit{Flag: "--max-pages", N: o.MaxPages}
	case o.MaxRecords > 0 && res.Records >= o.MaxRecords:
		return Limit{Flag: "--max-records", N: o.MaxRecords}
	}
	return Limit{}
}

// add takes in the outcome of one slice.
func (res *Result) add(s sliceResult) {
	if res.Pages == 0 && s.pages > 0 {
		res.FirstPageRecords = s.firstPageRecords
	}
	res.Pages += s.pages
	res.Records += s.records
	if s.Limit.Set() {
		res.Limit = s.Limit
	}
	if s.err != nil {
		res.FailedSlices++
		if res.Err == nil {
			res.Err = s.err
		}
	}
}

// stopping reports an error that ends the whole read, not only a slice: an interrupt, a
// closed stdout, a parent's failure to make the next slices.
func stopping(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, syscall.EPIPE) || errors.Is(err, errStop)
}

// wrap names the stream, the slice and the page in an error; a cancellation is passed as it
// is.
func (st *stream) wrap(sl *slice.Slice, page int, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var se *StreamError
	if errors.As(err, &se) && se.Stream == st.s.Name {
		return err
	}
	if sl != nil && sl.Empty() {
		sl = nil
	}
	return &StreamError{Stream: st.s.Name, Slice: sl, Page: page, Err: err}
}
