package run

import (
	"context"

	"connector/pkg/extract"
	"connector/pkg/httpx"
)

// The pager sends the requests of a slice and hands the pages to the read loop (readSlice)
// in order. Pages are always handled in order, by the loop alone: it extracts, emits and asks
// the paginator, so records, limits and decisions are those of a read that waits for each
// page. Only when requests go out changes:
//
//   - one at a time (the default for traces): each request waits for the loop's decision on
//     the page before it;
//   - overlap (Options.Overlap, offset and page-number pagination): once a page has arrived,
//     its records are counted — several times faster than validating them — and the request
//     the count predicts goes out while the loop validates and emits the page;
//   - prefetch (--prefetch N with a page size): up to N requests are in flight at once, each
//     assuming the page before it is full.
//
// The loop checks every guess against its decision. A page the guesses went past (the last
// page was short), a page after one that failed, and a page requested with a token the loop
// did not confirm are cancelled and reported as discarded; the read then goes on from the
// loop's own token. Only the paginator's Predictor, a plain value, is used off the loop's
// goroutine, so a strategy's own state is never shared.

// fetched is one page in flight: the request for token, and its answer once done is closed.
type fetched struct {
	token any
	first bool
	req   *httpx.Request
	// path is the record selector's field path rendered for this page.
	path   []string
	resp   *httpx.Response
	err    error
	cancel context.CancelFunc
	done   chan struct{}
	// ahead says the pager had already requested the next page, with next, when it handed
	// this one to the loop.
	ahead bool
	next  any
	// lazy marks the first page of a slice read from its parent record, not requested.
	lazy bool
	// parts are the requests of a QueryProperties page, one per property chunk
	// (queryprops.go); req and resp are the last one's.
	parts []part
	// spool holds the body on disk, for a stream whose extractor reads whole files
	// (spool.go); nil: the body is resp.Body.
	spool *spool
}

// fetcher is the goroutine that sends a stretch of requests: it starts at one token and ends
// when the next token is unknown until the loop decides.
type fetcher struct {
	out    chan *fetched
	cancel context.CancelFunc
}

// fetch starts a fetcher at token; prevURL is the URL of the page before (for a next-page
// URL to be resolved against).
func (r *sliceReader) fetch(ctx context.Context, token any, first bool, prevURL string) *fetcher {
	st := r.st
	fctx, cancel := context.WithCancel(ctx)
	f := &fetcher{out: make(chan *fetched), cancel: cancel}
	pages, records := r.pagesBefore+r.res.pages, r.recordsBefore+r.res.records
	go func() {
		defer close(f.out)
		var queue []*fetched
		next, first, known := token, first, true
		// fill sends the requests it can, held being the page waiting to be handed over.
		fill := func(held int) {
			for known && len(queue)+held < st.depth && fctx.Err() == nil && (st.o.MaxPages == 0 || pages < st.o.MaxPages) {
				p := r.launch(fctx, next, first, prevURL)
				queue = append(queue, p)
				pages++
				first, known = false, false
				if p.req != nil {
					prevURL = p.req.URL
				}
				if st.speculate && p.req != nil {
					next, known = st.predictor.Speculate(p.token)
				}
			}
		}
		for {
			fill(0)
			if len(queue) == 0 {
				return
			}
			head := queue[0]
			queue = queue[1:]
			<-head.done
			if len(queue) == 0 && !known {
				var n int
				if n, next, known = r.guess(fctx, head, pages, records); known {
					records += n
				}
			}
			fill(1) // the next request goes out before this page is handed over
			if len(queue) > 0 {
				head.ahead, head.next = true, queue[0].token
			}
			f.out <- head
		}
	}()
	return f
}

// launch builds the request for token and starts sending it. Requests are built in the
// order they are launched.
func (r *sliceReader) launch(ctx context.Context, token any, first bool, prevURL string) *fetched {
	if r.st.qp != nil {
		return r.launchChunks(ctx, token, first, prevURL)
	}
	p := &fetched{token: token, first: first, done: make(chan struct{})}
	req, path, err := r.st.build(ctx, r.sv, token, first, prevURL)
	if err != nil {
		p.err = err
		close(p.done)
		return p
	}
	if !r.st.want.Body {
		// Without a `response` for templates to read, nothing refers to a page's body once
		// the page is handled (records are copied out when emitted), so a page can be read
		// into the memory of one already handled.
		select {
		case req.Buffer = <-r.spare:
		default:
		}
	}
	p.req, p.path = req, path
	if r.st.spools {
		p.spool = &spool{}
		req.Sink = p.spool.take
	}
	sctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		p.resp, p.err = r.st.send(sctx, req)
		if p.err != nil {
			p.spool.close() // the body of a failed attempt is of no use
		}
	}()
	return p
}

// guess counts the records of a page and returns the token of the page after it, when the
// count decides that and no limit can stop the read at this page.
func (r *sliceReader) guess(ctx context.Context, p *fetched, pages, records int) (n int, next any, ok bool) {
	o := r.st.o
	if !r.st.overlap || r.st.dec != nil || ctx.Err() != nil || p.err != nil || p.resp.Ignored || o.MaxPages > 0 && pages >= o.MaxPages {
		return 0, nil, false
	}
	n, ok = extract.Count(p.resp.Body, p.path)
	if !ok || o.MaxRecords > 0 && records+n >= o.MaxRecords {
		return 0, nil, false
	}
	next, ok = r.st.predictor.After(p.token, n)
	return n, next, ok
}

// drain waits for a fetcher that has nothing more to hand over to end, and releases its
// context.
func (r *sliceReader) drain(f *fetcher) {
	for range f.out {
	}
	f.cancel()
}

// stop cancels a fetcher's requests and reports the pages it still holds as discarded.
func (r *sliceReader) stop(f *fetcher, why Discard) {
	f.cancel()
	n := 0
	for p := range f.out {
		if p.cancel != nil {
			p.cancel()
		}
		p.spool.close()
		n++
		if r.st.o.Observer == nil || p.req == nil {
			continue
		}
		ev := PageEvent{Stream: r.st.s.Name, Slice: r.sv.s, Number: r.page + n, Method: p.req.Method, URL: p.req.URL,
			TokenBefore: p.token, End: Discarded, Discard: why}
		if p.resp != nil {
			ev.Status, ev.Size, ev.Discard.Answered = p.resp.Status, len(p.resp.Body)+int(p.resp.Sunk), true
		}
		r.st.o.Observer.Page(ev)
	}
}
