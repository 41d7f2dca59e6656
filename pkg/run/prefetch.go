package run

import (
	"context"
	"fmt"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// Page prefetch (--prefetch N). With OffsetIncrement or PageIncrement and a page_size, the
// token of every page is known before the page before it arrives: offset+k×limit, page+k.
// Up to N of those pages are requested at once, and handled strictly in order by the same
// code as a sequential read (handle), so records, limits and decisions are the same. The
// first page that stops the stream ends it; pages fetched beyond it are reported to the
// observer as discarded and never emitted. When a page's real next token is not the one
// predicted (an API that returns more records than the limit), the pages fetched ahead are
// discarded and prediction starts again from the real token.
//
// Requests are built in the reading goroutine, in page order (authenticators and templates
// see exactly the sequence of a sequential read, next_page_token included); only sending runs
// concurrently.

// prefetchBlocker says why the stream's next page tokens cannot be predicted ("" when they
// can).
func (r *reader) prefetchBlocker() string {
	if !r.pag.Enabled() {
		return "the stream does not paginate"
	}
	switch t := r.s.Paginator.Strategy.Type; t {
	case manifest.OffsetIncrement, manifest.PageIncrement:
	default:
		return fmt.Sprintf("%s takes each next page token from the previous response", t)
	}
	if _, ok := r.pag.PageSize(); !ok {
		return "without a page_size the next offset depends on the previous page"
	}
	return ""
}

// predict is the token of the page after the one requested with token.
func (r *reader) predict(token any) any {
	n, _ := template.ToInt(token)
	if r.s.Paginator.Strategy.Type == manifest.OffsetIncrement {
		size, _ := r.pag.PageSize()
		return n + size
	}
	return n + 1
}

// slot is one page in flight.
type slot struct {
	token  any
	first  bool
	req    *httpx.Request
	resp   *httpx.Response
	err    error
	cancel context.CancelFunc
	done   chan struct{}
	// last and guess, from a fetcher (see fetch): last says it stopped after this page;
	// otherwise guess is the token of the page it sent next.
	last  bool
	guess any
}

// readAhead reads the stream with up to n pages in flight, starting at token.
func (r *reader) readAhead(ctx context.Context, token any, n int) (err error) {
	var queue []*slot
	defer func() {
		why := "fetched ahead, past the end of the read"
		if err != nil {
			why = "fetched ahead, beyond the failed page"
		}
		r.discard(queue, why)
	}()
	next, first, launched := token, true, 0
	for {
		for len(queue) < n && (r.o.MaxPages == 0 || launched < r.o.MaxPages) {
			queue = append(queue, r.launch(ctx, next, first, "", nil))
			launched++
			next, first = r.predict(next), false
		}
		s := queue[0]
		<-s.done
		queue = queue[1:]
		r.page = r.res.Pages + 1
		if s.err != nil {
			return s.err
		}
		actual, stop, err := r.handle(s.req, s.resp, s.token, s.first)
		if err != nil || stop {
			return err
		}
		if len(queue) > 0 && actual != queue[0].token {
			r.discard(queue, fmt.Sprintf("fetched ahead with a token the API did not confirm (next is %s)", template.ToString(actual)))
			queue = nil
			launched = r.res.Pages
			next = actual
		}
	}
}

// launch builds the request for token and starts sending it. The request is built
// before it returns, so that requests are built in the order they are launched. prevURL is
// the URL of the page before (see paginate.Inject); buf, when set, is memory the body may be
// read into.
func (r *reader) launch(ctx context.Context, token any, first bool, prevURL string, buf []byte) *slot {
	s := &slot{token: token, first: first, done: make(chan struct{})}
	if !r.prepare(ctx, s, prevURL, buf) {
		close(s.done)
		return s
	}
	sctx, cancel := context.WithCancel(ctx)
	s.cancel = cancel
	go func() {
		defer close(s.done)
		s.resp, s.err = r.send(sctx, s.req)
	}()
	return s
}

// prepare builds the request of s, or sets s.err (reported in order, when the read gets to
// the page).
func (r *reader) prepare(ctx context.Context, s *slot, prevURL string, buf []byte) bool {
	req, err := r.build(ctx, s.token, s.first, prevURL)
	if err != nil {
		s.err = err
		return false
	}
	req.Handler = r.handler
	if !r.want.Body {
		// Without a `response` for templates to read, nothing refers to a page's body
		// once the page is handled (records are copied out when they are emitted), so
		// a page can be read into the memory of one already handled.
		req.Buffer = buf
	}
	s.req = req
	return true
}

// discard cancels the pages still in flight, waits for them, and reports each one to the
// observer with the reason it was not used.
func (r *reader) discard(queue []*slot, why string) {
	for i, s := range queue {
		if s.cancel != nil {
			s.cancel()
		}
		<-s.done
		if r.o.Observer == nil || s.req == nil {
			continue
		}
		ev := PageEvent{
			Stream: r.s.Name, Number: r.page + i + 1, Method: s.req.Method,
			URL: r.o.Client.Redactor.String(s.req.URL), TokenBefore: s.token, Discarded: true,
			Reason: "discarded: " + why + ", not emitted",
		}
		if s.resp != nil {
			ev.Status, ev.Size = s.resp.Status, len(s.resp.Body)
		} else {
			ev.Reason = "discarded: " + why + ", cancelled before its answer"
		}
		r.o.Observer.Page(ev)
	}
}
