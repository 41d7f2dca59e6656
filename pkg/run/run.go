// Package run reads streams: the pipeline shared by `read`, `check` and `paginate-trace`.
//
//	stream ─→ slices ─→ pages ─→ records ─→ (transform) ─→ filter ─→ emit ─→ checkpoint
//	  │          │         │
//	  │          │         └ pager: build the request (requester, authenticator, paginator),
//	  │          │           send it, extract the records, decide on the next page
//	  │          └ one empty slice today; partition routers and cursors add more
//	  └ the stream's paginator, error handler and field path, made once
//
// Stream reads one stream: slice after slice, each slice page after page (pagination starts
// again in every slice). A page's records go through the record filter to the Emitter; the
// paginator decides on the next page. The template variables of a request are built once per
// page from the stream's and the slice's (see vars.go). Requests may go out before the page
// before them is handled (see pager.go); pages are always handled, and records emitted, in
// order.
package run

import (
	"context"
	"errors"
	"fmt"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/record"
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

// Observer hears about the progress of a read. Its methods are called from the goroutine
// that reads the stream.
type Observer interface {
	StreamStart(stream string)
	Page(ev PageEvent)
	StreamEnd(res Result)
}

// Result is the outcome of one stream.
type Result struct {
	Stream  string
	Records int
	Pages   int
	// Limit is set when --max-pages or --max-records ended the stream early.
	Limit Limit
	Err   error
	// FirstPageRecords is the number of records the first page yielded (for check).
	FirstPageRecords int
}

// Options configure a read.
type Options struct {
	Config   map[string]any
	Auth     auth.Authenticator
	Client   *httpx.Client
	Out      Emitter  // nil: records are counted, not written
	Observer Observer // nil: nobody listens
	// MaxPages and MaxRecords end each stream early (0: no limit).
	MaxPages, MaxRecords int
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

	// strategy, when set (tests), replaces the pagination strategy of every stream.
	strategy paginate.Strategy
}

// StreamError is a stream that failed, naming the stream and the page.
type StreamError struct {
	Stream string
	Page   int
	Err    error
}

func (e *StreamError) Error() string {
	return fmt.Sprintf("stream %s, page %d: %v", e.Stream, e.Page, e.Err)
}

func (e *StreamError) Unwrap() error { return e.Err }

// Stream reads one stream to its end (or its limit) and reports the outcome.
func Stream(ctx context.Context, o *Options, s *manifest.Stream) Result {
	r := &streamReader{o: o, s: s, res: Result{Stream: s.Name}}
	if o.Observer != nil {
		o.Observer.StreamStart(s.Name)
	}
	if err := r.read(ctx); err != nil {
		r.res.Err = &StreamError{Stream: s.Name, Page: max(r.page, 1), Err: err}
		if errors.Is(err, context.Canceled) {
			r.res.Err = err
		}
	}
	if o.Out != nil {
		if ferr := o.Out.EndPage(); ferr != nil && r.res.Err == nil {
			r.res.Err = ferr
		}
	}
	if o.Observer != nil {
		o.Observer.StreamEnd(r.res)
	}
	return r.res
}

// read is the pipeline of one stream: set up, then every slice in order.
func (r *streamReader) read(ctx context.Context) error {
	if err := r.setUp(); err != nil {
		return err
	}
	for _, sl := range r.slices() {
		done, err := r.readSlice(ctx, sl)
		if err != nil || done {
			return err
		}
	}
	return nil
}
