package run

import (
	"context"
	"errors"

	"connector/pkg/httpx"
	"connector/pkg/incremental"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// sliceReader reads the pages of one slice, in order, into one emitter.
type sliceReader struct {
	st  *stream
	sv  *sliceVars
	out Emitter
	// pagesBefore and recordsBefore are what the stream read before this slice, for the
	// per-stream limits.
	pagesBefore, recordsBefore int
	res                        sliceResult
	// page is the number of the page being requested or decided on (for errors).
	page int
	// pagesFrom is the number of pages the slice had when its pagination last started (a
	// job's download target, a pagination reset): a test read's pages per slice count
	// from there, as the CDK's count starts over with every initial token.
	pagesFrom int
	// spare holds the bodies of pages already handled, for the next page to be read into
	// (see httpx.Request.Buffer) when nothing of a page outlives its handling.
	spare chan []byte
	// batch gathers a page's records to emit.
	batch []record.Record
	// arena makes the objects of the records the stream's transformations edit.
	arena record.Arena
	// track follows the cursor values of the slice's records (nil: no incremental cursor).
	track *incremental.Tracker
	// shown are the records of the page being handled that its event shows.
	shown [][]byte
	// resets follows the pagination resets of the slice (reset.go).
	resets resets
	// ctx is the read's context, for the requests a record makes (a file download).
	ctx context.Context
}

// sliceResult is the outcome of one slice.
type sliceResult struct {
	pages, records, firstPageRecords int
	Limit                            Limit
	err                              error
}

func (st *stream) newSliceReader(sl *slice.Slice, out Emitter, pagesBefore, recordsBefore int) *sliceReader {
	return &sliceReader{st: st, sv: newSliceVars(sl, st.in), out: out, pagesBefore: pagesBefore,
		recordsBefore: recordsBefore, spare: make(chan []byte, st.depth+1), track: st.cursor.Track(sl),
		resets: newResets(st)}
}

// read reads the slice and reports its outcome; an error names the stream, the slice and the
// page.
func (r *sliceReader) read(ctx context.Context) sliceResult {
	r.ctx = ctx
	readSlice := r.readPages
	if r.st.s.Async != nil {
		readSlice = r.readJob
	}
	if err := readSlice(ctx); err != nil {
		page := max(r.page, 1)
		if r.st.s.Async != nil {
			page = r.page // 0: the job failed before its downloads
		}
		r.res.err = r.st.wrap(r.sv.s, page, err)
	}
	return r.res
}

// readPages is the loop of the slice: the pager sends, the loop handles the pages in order.
func (r *sliceReader) readPages(ctx context.Context) (err error) {
	token, first, prevURL := r.st.pag.Initial(), true, ""
	r.pagesFrom = r.res.pages
	orig := r.sv.s
	var guard repeatGuard
	if lazy := r.sv.s.Lazy; lazy != nil {
		// The first page comes from the parent record; pagination goes on from it.
		r.page = 1
		p, err := r.lazyPage(lazy)
		if err != nil {
			return err
		}
		next, end, err := r.handle(p, &guard, orig)
		if err != nil || end != Continue {
			return err // a reset on a lazy first page: see reset.go
		}
		token, first = next, false
	}
	f := r.fetch(ctx, token, first, prevURL)
	defer func() {
		why := Discard{Why: PastTheEnd}
		if err != nil {
			why = Discard{Why: AfterFailure}
		}
		r.stop(f, why)
	}()
	for {
		p, ok := <-f.out
		if !ok {
			if err := ctx.Err(); err != nil {
				return err // interrupted between two pages
			}
			return errors.New("internal error: the pager ended before the slice")
		}
		r.page = r.res.pages + 1
		if p.err != nil {
			var re *httpx.ResetError
			if !errors.As(p.err, &re) {
				return p.err
			}
			ev := PageEvent{Stream: r.st.s.Name, Slice: r.sv.s, Number: r.page, Method: p.req.Method, URL: p.req.URL,
				Status: re.Status, TokenBefore: p.token, End: Reset}
			if ev.Restart.Slice, err = r.restart(orig, re.Error()); err != nil {
				ev.End, ev.Err = Failed, err
			}
			r.observe(ev)
			if err != nil {
				return err
			}
		}
		var next any
		end := Reset
		if p.err == nil {
			if next, end, err = r.handle(p, &guard, orig); err != nil {
				return err
			}
		}
		if end == Reset {
			// The slice starts again from its first page (reset.go).
			r.stop(f, Discard{Why: AfterReset})
			guard = repeatGuard{}
			r.pagesFrom = r.res.pages
			f = r.fetch(ctx, r.st.pag.Initial(), true, "")
			continue
		}
		if p.cancel != nil {
			p.cancel() // the page is handled: its request's context is done with
		}
		if end != Continue {
			return nil
		}
		if !r.st.want.Body {
			select {
			case r.spare <- p.resp.Body:
			default: // enough memory waits already
			}
		}
		switch {
		case !p.ahead:
			r.drain(f)
			f = r.fetch(ctx, next, false, p.req.URL)
		case p.next != next:
			r.stop(f, Discard{Why: WrongGuess, Next: next})
			f = r.fetch(ctx, next, false, p.req.URL)
		}
	}
}

// lazyPage is the first page of a slice as its parent record holds it.
func (r *sliceReader) lazyPage(body []byte) (*fetched, error) {
	vars := r.sv.vars(r.st.o.globals(), r.st.pag.Initial(), true)
	path, err := r.st.fieldPath(vars)
	if err != nil {
		return nil, err
	}
	done := make(chan struct{})
	close(done)
	return &fetched{token: r.st.pag.Initial(), first: true, lazy: true, path: path, done: done,
		req:  &httpx.Request{Kind: "data", Method: "GET", URL: "(the parent record)", Stream: r.st.s.Name},
		resp: &httpx.Response{Status: 200, Body: body}}, nil
}

// repeatGuard stops a slice whose API returns the same page token twice in a row.
type repeatGuard struct {
	last string
	seen bool
}

func (g *repeatGuard) check(token any) error {
	text := template.ToString(token)
	if g.seen && text == g.last {
		return &paginate.RepeatedTokenError{Token: text}
	}
	g.last, g.seen = text, true
	return nil
}
