package run

import (
	"context"
	"fmt"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/template"
)

// Overlap. With OffsetIncrement and PageIncrement the next page token depends only on how
// many records a page holds, and counting the elements of the records list is several times
// faster than validating them. So the requests of a read are sent by a fetcher goroutine:
// once a page has arrived it is counted, the paginator decides on that count, and the next
// request goes out at once, while the read loop validates, emits and decides on the pages
// in order (handle). Only requests the read would send anyway go out early: after a short
// page, at a limit, or on a page the count cannot be sure of, the fetcher stops, and the
// read loop starts the next one from its own decision. (Without Overlap every page is such
// a stretch of one: each request waits for the decision on the page before.) When a page
// fails (not JSON) or its decision differs from the count's (an object with the records key
// twice: Count reads the first list, Parse both), the requests sent beyond it are cancelled
// and reported as discarded, like prefetched pages, and the read goes on from the right
// token.

// overlapAhead is how many requests a fetcher may have sent beyond the page the read loop
// handles: the page counted and waiting to be handed over, and the one after it in flight.
// At most overlapAhead+1 page bodies are in memory, and at most overlapAhead requests are
// discarded after a page that fails.
const overlapAhead = 2

// overlaps says whether the stream's next page token follows from the count of a page's
// records alone.
func (r *reader) overlaps() bool {
	if !r.pag.Enabled() {
		return false
	}
	t := r.s.Paginator.Strategy.Type
	return t == manifest.OffsetIncrement || t == manifest.PageIncrement
}

// fetcher sends the requests of a stretch of pages and hands the pages over in order, one
// at a time. Each page's request goes out before the page before it is handed over, as soon
// as that page is counted. The stretch ends after a page whose count does not decide the
// next one (slot.last).
type fetcher struct {
	out    chan *slot
	cancel context.CancelFunc
}

// fetch starts a fetcher at token; pages and records are those the read has handled, for
// the limits.
func (r *reader) fetch(ctx context.Context, token any, first bool, prevURL string, pages, records int) *fetcher {
	fctx, cancel := context.WithCancel(ctx)
	f := &fetcher{out: make(chan *slot), cancel: cancel}
	go func() {
		defer close(f.out)
		s := r.launch(fctx, token, first, prevURL, r.spareBuffer())
		for s != nil {
			<-s.done
			pages++
			n, next, ok := r.guess(s, pages, records)
			s.last, s.guess = !ok, next
			var after *slot
			if ok && fctx.Err() == nil {
				after = r.launch(fctx, next, false, s.req.URL, r.spareBuffer())
			}
			f.out <- s
			s, records = after, records+n
		}
	}()
	return f
}

// spareBuffer is the body of a page already handled, or nil.
func (r *reader) spareBuffer() []byte {
	select {
	case b := <-r.spare:
		return b
	default:
		return nil
	}
}

// guess counts the records of s and says which page follows it, when the count decides
// that and no limit can stop the read at s.
func (r *reader) guess(s *slot, pages, records int) (n int, next any, ok bool) {
	if !r.overlap || s.err != nil || s.resp.Ignored || r.o.MaxPages > 0 && pages >= r.o.MaxPages {
		return 0, nil, false
	}
	n, ok = extract.Count(s.resp.Body, r.fieldPath(s.token, s.first))
	if !ok || r.o.MaxRecords > 0 && records+n >= r.o.MaxRecords {
		return 0, nil, false
	}
	d, err := r.pag.Next(s.token, paginate.Page{Count: n, URL: s.req.URL})
	if err != nil || d.Stop {
		return 0, nil, false
	}
	return n, d.Token, true
}

// readPages is the read loop: the fetcher sends, the loop handles the pages in order.
func (r *reader) readPages(ctx context.Context, token any) (err error) {
	r.overlap = r.o.Overlap && r.overlaps()
	r.fieldPath(token, true) // a literal field path is rendered once, before any goroutine reads it
	r.spare = make(chan []byte, overlapAhead+1)
	f := r.fetch(ctx, token, true, "", 0, 0)
	why := "sent before its page was known to be the last"
	defer func() {
		if err != nil {
			why = "sent before the page before it failed"
		}
		r.stop(f, why)
	}()
	for {
		s := <-f.out
		r.page = r.res.Pages + 1
		if s.err != nil {
			return s.err
		}
		next, stop, err := r.handle(s.req, s.resp, s.token, s.first)
		if err != nil || stop {
			return err
		}
		if !r.want.Body {
			select {
			case r.spare <- s.resp.Body:
			default: // enough memory waits already
			}
		}
		switch {
		case s.last:
			f = r.fetch(ctx, next, false, s.req.URL, r.res.Pages, r.res.Records)
		case s.guess != next:
			r.stop(f, fmt.Sprintf("sent with a token the page did not confirm (next is %s)", template.ToString(next)))
			f = r.fetch(ctx, next, false, s.req.URL, r.res.Pages, r.res.Records)
		}
	}
}

// stop cancels the fetcher's requests and reports the pages it still holds as discarded.
func (r *reader) stop(f *fetcher, why string) {
	f.cancel()
	var rest []*slot
	for s := range f.out {
		rest = append(rest, s)
	}
	r.discard(rest, why)
}
