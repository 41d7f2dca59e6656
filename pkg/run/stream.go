package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"connector/pkg/auth"
	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// streamReader reads one stream. What does not change from page to page is made once, in
// setUp.
type streamReader struct {
	o   *Options
	s   *manifest.Stream
	res Result
	pag *paginate.Paginator
	// handler is the stream's error handler, set on every data request.
	handler *httpx.Handler
	// want says which Go values the templates of the stream need from a page.
	want extract.Want
	// page is the number of the page being requested or decided on (for errors).
	page int
	// depth is how many pages may be requested and not yet handled; speculate sends them
	// assuming full pages (--prefetch), overlap after counting the page before
	// (Options.Overlap).
	depth     int
	speculate bool
	overlap   bool
	predictor *paginate.Predictor
	// spare holds the bodies of pages already handled, for the next page to be read into
	// (see httpx.Request.Buffer) when nothing of a page outlives its handling.
	spare chan []byte
	// batch gathers a page's records to emit.
	batch []record.Record
}

// recordBytes is the share of --max-body each record of a page stands for: a page holds at
// most one record per recordBytes of the limit, so that a page of tiny records cannot make
// its records (some 64 bytes of bookkeeping each) take more memory than half the limit.
const recordBytes = 128

func (r *streamReader) setUp() error {
	pag, err := paginate.New(r.s.Paginator, r.o.Config)
	if err != nil {
		return fmt.Errorf("paginator: %w", err)
	}
	if r.o.strategy != nil {
		pag = pag.WithStrategy(r.o.strategy)
	}
	r.pag = pag
	if r.handler, err = httpx.NewHandler(r.s.Requester.ErrorHandler, r.o.Config); err != nil {
		return err
	}
	r.want = wants(r.s)
	r.want.MaxRecords = int(max(r.o.Client.BodyLimit()/recordBytes, 1))
	r.depth = 1
	r.predictor = pag.Predictor()
	if n := r.o.Prefetch; n > 1 {
		if why := r.prefetchBlocker(); why != "" {
			if r.o.Warn != nil {
				r.o.Warn(fmt.Sprintf("%s: --prefetch %d ignored, reading one page at a time: %s", r.s.Name, n, why))
			}
		} else {
			r.depth, r.speculate = n, true
		}
	}
	r.overlap = r.o.Overlap && r.predictor != nil
	if r.overlap {
		// The page counted and waiting to be handed over, and the one after it in flight:
		// at most two bodies in memory beyond the page being handled, at most two
		// requests discarded after a page that fails.
		r.depth = max(r.depth, 2)
	}
	r.spare = make(chan []byte, r.depth+1)
	return nil
}

// prefetchBlocker says why the stream's next page tokens cannot be predicted before its
// pages arrive ("" when they can).
func (r *streamReader) prefetchBlocker() string {
	switch {
	case !r.pag.Enabled():
		return "the stream does not paginate"
	case r.predictor == nil:
		return fmt.Sprintf("%s takes each next page token from the previous response", r.s.Paginator.Strategy.Type)
	case r.predictor.Size <= 0:
		return "without a page_size the next offset depends on the previous page"
	}
	return ""
}

// wants says which Go values the stream's templates read, so the page parser builds only
// those.
func wants(s *manifest.Stream) extract.Want {
	var w extract.Want
	if s.Selector.Filter != nil {
		w.Values = true
	}
	if p := s.Paginator; p != nil && p.Strategy != nil {
		for _, t := range []*template.Template{p.Strategy.CursorValue, p.Strategy.StopCondition} {
			if t == nil {
				continue
			}
			if t.Reads("response") {
				w.Body, w.LazyBody = true, true
			}
			if t.Reads("last_records") || t.Reads("last_record") {
				w.Values = true
			}
		}
	}
	return w
}

// readSlice reads the pages of one slice in order. done reports that the stream must end
// here (a limit was reached).
func (r *streamReader) readSlice(ctx context.Context, sl *slice) (done bool, err error) {
	f := r.fetch(ctx, sl, r.pag.Initial(), true, "")
	defer func() {
		why := Discard{Why: PastTheEnd}
		if err != nil {
			why = Discard{Why: AfterFailure}
		}
		r.stop(f, why)
	}()
	var guard repeatGuard
	for {
		p, ok := <-f.out
		if !ok {
			return false, errors.New("internal error: the pager ended before the slice")
		}
		r.page = r.res.Pages + 1
		if p.err != nil {
			return false, p.err
		}
		next, end, err := r.handle(sl, p, &guard)
		if err != nil || end != Continue {
			return end == Limited, err
		}
		if !r.want.Body {
			select {
			case r.spare <- p.resp.Body:
			default: // enough memory waits already
			}
		}
		switch {
		case !p.ahead:
			r.drain(f)
			f = r.fetch(ctx, sl, next, false, p.req.URL)
		case p.next != next:
			r.stop(f, Discard{Why: WrongGuess, Next: next})
			f = r.fetch(ctx, sl, next, false, p.req.URL)
		}
	}
}

// repeatGuard stops a slice whose API returns the same page token twice in a row (SPEC 6.5).
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

// send sends a data request; a 401 on an OAuth data request renews the token and tries
// once more (SPEC section 10).
func (r *streamReader) send(ctx context.Context, req *httpx.Request) (*httpx.Response, error) {
	resp, err := r.o.Client.Do(ctx, req)
	var se *httpx.StatusError
	if errors.As(err, &se) && se.Status == http.StatusUnauthorized {
		if renewer, ok := r.o.Auth.(auth.Retrier); ok {
			renewed, rerr := renewer.Renew(ctx)
			if rerr != nil {
				return nil, rerr
			}
			if renewed {
				if err := reapply(ctx, r.o.Auth, req); err != nil {
					return nil, err
				}
				resp, err = r.o.Client.Do(ctx, req)
			}
		}
	}
	if err != nil {
		if errors.As(err, &se) && se.IsAuth() {
			return nil, &auth.Error{Msg: se.Error()}
		}
		return nil, err
	}
	return resp, nil
}

// reapply replaces the credentials of req after a token renewal.
func reapply(ctx context.Context, a auth.Authenticator, req *httpx.Request) error {
	b := request.New(req.Kind, req.Method, req.URL)
	if err := a.Apply(ctx, b); err != nil {
		return err
	}
	fresh, err := b.Build()
	if err != nil {
		return err
	}
	for k, v := range fresh.Header {
		req.Header[k] = v
	}
	return nil
}

// build assembles the request for one page of sl, and renders the field path its records
// are read from.
func (r *streamReader) build(ctx context.Context, sl *slice, token any, first bool, prevURL string) (*httpx.Request, []string, error) {
	vars := sl.vars(r.o.Config, token, first)
	path, err := r.fieldPath(sl, vars)
	if err != nil {
		return nil, nil, err
	}
	b, err := request.FromRequester("data", r.s.Requester, request.NewScope(withParams(vars, r.s.Requester.Parameters), r.o.Client.Redactor))
	if err != nil {
		return nil, nil, err
	}
	if err := r.o.Auth.Apply(ctx, b); err != nil {
		return nil, nil, err
	}
	if err := r.pag.Inject(b, token, first, prevURL); err != nil {
		return nil, nil, err
	}
	req, err := b.Build()
	if err != nil {
		return nil, nil, err
	}
	req.Handler = r.handler
	return req, path, nil
}

// fieldPath renders the record selector's field path for a page; a path without templates
// is rendered once per slice.
func (r *streamReader) fieldPath(sl *slice, vars map[string]any) ([]string, error) {
	segs := r.s.Selector.FieldPath
	if len(segs) == 0 {
		return nil, nil
	}
	if sl.path != nil {
		return sl.path, nil
	}
	pv := withParams(vars, r.s.Selector.Parameters)
	out := make([]string, len(segs))
	literal := true
	for i, t := range segs {
		s, err := t.Render(pv)
		if err != nil {
			return nil, fmt.Errorf("record_selector field_path: %w", err)
		}
		out[i] = s
		literal = literal && t.IsLiteral()
	}
	if literal {
		sl.path = out
	}
	return out, nil
}
