// Package run is the read loop shared by `read`, `check` and `paginate-trace`: for each page,
// build the request (requester options, authenticator, paginator), send it, extract the
// records, emit them, and ask the paginator what comes next.
package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"connector/pkg/auth"
	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
	"connector/pkg/request"
	"connector/pkg/template"
)

// Emitter receives the records of a read. Records are the bytes the API sent.
type Emitter interface {
	// Records takes the records of one page that are to be written, in order. It must not
	// keep raws or the records after it returns: they share the page body's memory.
	Records(stream string, raws [][]byte) error
	// EndPage is called after every page: what was emitted should reach the output soon,
	// but the read need not wait for it.
	EndPage() error
}

// Observer hears about the progress of a read. Every method may be left as a no-op.
type Observer interface {
	StreamStart(stream string)
	Page(ev PageEvent)
	StreamEnd(res Result)
}

// PageEvent describes one data request and what followed from it.
type PageEvent struct {
	Stream string
	Number int // 1 for the first page
	Method string
	URL    string // redacted
	Status int
	Size   int
	// Records extracted (before the filter) and emitted (after the filter and limits).
	Records, Emitted int
	TokenBefore      any
	TokenAfter       any
	Stop             bool
	Reason           string
	// Discarded marks a page fetched ahead (--prefetch) that the read did not use: it lies
	// beyond the last page. Its records were not emitted and it is not counted in Result.
	Discarded bool
}

// Result is the outcome of one stream.
type Result struct {
	Stream  string
	Records int
	Pages   int
	// Limit is set when --max-pages or --max-records ended the stream early.
	Limit string
	Err   error
	// FirstPageRecords is the number of records the first page yielded (for check).
	FirstPageRecords int
}

// Options configure a read.
type Options struct {
	Def      *manifest.Definition
	Config   map[string]any
	Auth     auth.Authenticator
	Client   *httpx.Client
	Out      Emitter  // nil: records are counted, not written
	Observer Observer // nil: nobody listens
	// MaxPages and MaxRecords end each stream early (0: no limit).
	MaxPages, MaxRecords int
	// Prefetch is how many pages may be in flight at once when the next page tokens are
	// predictable (see readAhead); 0 or 1 reads one page at a time.
	Prefetch int
	// Warn, when set, hears notes meant for the user (stderr), such as a --prefetch that
	// cannot apply.
	Warn func(text string)
	// Overlap lets the next request of an offset or page-number pagination go out as soon
	// as a page's records are counted, while the page is validated and emitted (see fetch).
	// The requests are the same; only their timing changes. Left off, each request waits
	// for the decision on the page before it, so that a trace tells its events in order.
	Overlap bool
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
	r := &reader{o: o, s: s, res: Result{Stream: s.Name}}
	if o.Observer != nil {
		o.Observer.StreamStart(s.Name)
	}
	err := r.read(ctx)
	if err != nil {
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

type reader struct {
	o   *Options
	s   *manifest.Stream
	res Result
	pag *paginate.Paginator
	// want says which Go values the templates of the stream need.
	want extract.Want
	// page is the number of the page being requested or decided on (for errors).
	page int
	// handler is the stream's error handler, set on every data request.
	handler *httpx.Handler
	// spare holds the bodies of pages already handled, for a fetcher to read the next page
	// into (see httpx.Request.Buffer) when nothing of a page outlives its handling; batch
	// gathers a page's records to emit.
	spare chan []byte
	batch [][]byte
	// overlap: the next request may go out while a page is handled (see fetch).
	overlap bool
	// literalPath is the field path once rendered, when no segment is a template.
	literalPath []string
}

func (r *reader) read(ctx context.Context) error {
	pag, err := paginate.New(r.s.Paginator, r.o.Config)
	if err != nil {
		return fmt.Errorf("paginator: %w", err)
	}
	r.pag = pag
	handler, err := httpx.NewHandler(r.s.Requester.ErrorHandler, r.o.Config)
	if err != nil {
		return err
	}
	r.want = wants(r.s)
	r.want.MaxRecords = int(max(r.o.Client.BodyLimit()/recordBytes, 1))
	r.handler = handler
	token := pag.Initial()
	if n := r.o.Prefetch; n > 1 {
		why := r.prefetchBlocker()
		if why == "" {
			return r.readAhead(ctx, token, n)
		}
		if r.o.Warn != nil {
			r.o.Warn(fmt.Sprintf("%s: --prefetch %d ignored, reading one page at a time: %s", r.s.Name, n, why))
		}
	}
	return r.readPages(ctx, token)
}

// recordBytes is the share of --max-body each record of a page stands for: a page holds at
// most one record per recordBytes of the limit, so that a page of tiny records cannot make
// its records (some 64 bytes of bookkeeping each) take more memory than half the limit.
const recordBytes = 128

// handle extracts, emits and reports the page that answered req (sent with token), and
// decides what comes next: the next token, or stop. Sequential and prefetched reads share it.
func (r *reader) handle(req *httpx.Request, resp *httpx.Response, token any, first bool) (next any, stop bool, err error) {
	if resp.Ignored {
		// The error handler said IGNORE: no records, and the stream ends here.
		r.res.Pages++
		if r.o.Observer != nil {
			r.o.Observer.Page(PageEvent{Stream: r.s.Name, Number: r.res.Pages, Method: req.Method,
				URL: r.o.Client.Redactor.String(req.URL), Status: resp.Status, Size: len(resp.Body),
				TokenBefore: token, Stop: true, Reason: "stop: " + resp.Reason})
		}
		return nil, true, nil
	}
	page, err := extract.Parse(resp.Body, r.fieldPath(token, first), r.want)
	if err != nil {
		var nr *extract.NotRecordError
		var de *extract.DepthError
		var tm *extract.TooManyRecordsError
		if errors.Is(err, extract.ErrEmpty) && (resp.Status == http.StatusNoContent) {
			page = &extract.Page{}
		} else if errors.As(err, &de) {
			// No excerpt: the start of such a body is brackets.
			return nil, false, fmt.Errorf("%s %s answered %d with %w", req.Method, r.o.Client.Redactor.String(req.URL), resp.Status, err)
		} else if errors.As(err, &tm) {
			return nil, false, fmt.Errorf("%s %s answered %d with more than %d records on one page, a limit of one record per %d bytes of --max-body (--max-body raises the limit)",
				req.Method, r.o.Client.Redactor.String(req.URL), resp.Status, tm.Max, recordBytes)
		} else if errors.As(err, &nr) {
			return nil, false, fmt.Errorf("%s %s answered %d, but %v: %s", req.Method, r.o.Client.Redactor.String(req.URL),
				resp.Status, err, quoteExcerpt(r.o.Client.RedactedExcerpt(resp.Body)))
		} else {
			return nil, false, fmt.Errorf("%s %s answered %d with a body that is not JSON (%v): %s",
				req.Method, r.o.Client.Redactor.String(req.URL), resp.Status, err,
				quoteExcerpt(r.o.Client.RedactedExcerpt(resp.Body)))
		}
	}
	r.res.Pages++
	emitted, limited, leftOut, err := r.emit(page, token, first)
	if err != nil {
		return nil, false, err
	}
	if r.res.Pages == 1 {
		r.res.FirstPageRecords = emitted
	}
	ev := PageEvent{
		Stream: r.s.Name, Number: r.res.Pages, Method: req.Method, Status: resp.Status,
		Size: len(resp.Body), Records: len(page.Records), Emitted: emitted, TokenBefore: token,
	}
	decision, derr := r.pag.Next(token, r.pageInfo(page, resp, req.URL))
	switch {
	case derr != nil:
		ev.Stop, ev.Reason, ev.TokenAfter = true, "error: "+derr.Error(), decision.Token
	case limited != "" && !leftOut && decision.Stop:
		// The limit coincided with the natural end of the stream: nothing was left out.
		ev.Stop, ev.Reason, ev.TokenAfter = true, decision.Reason, decision.Token
	case limited != "":
		// As for --max-pages, the trace shows the token the read would have gone on with.
		ev.Stop, ev.Reason, ev.TokenAfter = true, "stop: "+limited, decision.Token
		r.res.Limit = limited
	case !decision.Stop && r.o.MaxPages > 0 && r.res.Pages >= r.o.MaxPages:
		ev.TokenAfter = decision.Token
		r.res.Limit = fmt.Sprintf("--max-pages %d", r.o.MaxPages)
		ev.Stop, ev.Reason = true, "stop: "+r.res.Limit
	default:
		ev.Stop, ev.Reason, ev.TokenAfter = decision.Stop, decision.Reason, decision.Token
	}
	if r.o.Out != nil {
		if err := r.o.Out.EndPage(); err != nil {
			return nil, false, err
		}
	}
	if r.o.Observer != nil {
		ev.URL = r.o.Client.Redactor.String(req.URL)
		r.o.Observer.Page(ev)
	}
	if derr != nil {
		return nil, false, derr
	}
	if ev.Stop {
		return nil, true, nil
	}
	return decision.Token, false, nil
}

// quoteExcerpt quotes a redacted excerpt of a body for an error message.
func quoteExcerpt(excerpt string) string {
	if excerpt == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", excerpt)
}

func (r *reader) send(ctx context.Context, req *httpx.Request) (*httpx.Response, error) {
	resp, err := r.o.Client.Do(ctx, req)
	var se *httpx.StatusError
	if errors.As(err, &se) && se.Status == http.StatusUnauthorized {
		if renewer, ok := r.o.Auth.(auth.Retrier); ok {
			renewed, rerr := renewer.Renew(ctx)
			if rerr != nil {
				return nil, rerr
			}
			if renewed {
				// Rebuild the credentials of the same request and try once more.
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

// reapply replaces the Authorization header of req after a token renewal.
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

// emit writes the records of a page that pass the filter. It stops at --max-records and then
// returns the limit's name, and whether records of the page were left out.
func (r *reader) emit(page *extract.Page, token any, first bool) (emitted int, limit string, leftOut bool, err error) {
	filter := r.s.Selector.Filter
	var vars map[string]any
	if filter != nil {
		vars = r.vars(token, first)
	}
	r.batch = r.batch[:0]
	if cap(r.batch) < len(page.Records) {
		r.batch = make([][]byte, 0, len(page.Records)) // made at the page's size, not grown
	}
	for i := range page.Records {
		rec := &page.Records[i]
		if filter != nil {
			vars["record"] = rec.Value
			v, err := filter.Eval(vars)
			if err != nil {
				return emitted, "", false, fmt.Errorf("record_filter: %w", err)
			}
			if !template.Truthy(v) {
				continue
			}
		}
		r.batch = append(r.batch, rec.Raw)
		emitted++
		r.res.Records++
		if r.o.MaxRecords > 0 && r.res.Records >= r.o.MaxRecords {
			limit = fmt.Sprintf("--max-records %d", r.o.MaxRecords)
			leftOut = i < len(page.Records)-1
			break
		}
	}
	if r.o.Out != nil && len(r.batch) > 0 {
		err = r.o.Out.Records(r.s.Name, r.batch)
	}
	clear(r.batch) // drop the references into the body
	return emitted, limit, leftOut, err
}

func (r *reader) pageInfo(page *extract.Page, resp *httpx.Response, reqURL string) paginate.Page {
	pi := paginate.Page{Count: len(page.Records), Body: page.Body, URL: reqURL,
		Headers: paginate.NewHeaders(resp.Header, reqURL)}
	if r.want.Values {
		pi.LastRecords = make([]any, len(page.Records))
		for i, rec := range page.Records {
			pi.LastRecords[i] = rec.Value
		}
	}
	return pi
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

func (r *reader) vars(token any, first bool) map[string]any {
	return map[string]any{
		"config":           r.o.Config,
		"parameters":       nonNil(r.s.Requester.Parameters),
		"next_page_token":  paginate.NextPageToken(first, token),
		"stream_slice":     map[string]any{},
		"stream_partition": map[string]any{},
		"stream_interval":  map[string]any{},
		"stream_state":     map[string]any{},
	}
}

func nonNil(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func (r *reader) fieldPath(token any, first bool) []string {
	segs := r.s.Selector.FieldPath
	if len(segs) == 0 {
		return nil
	}
	if r.literalPath != nil {
		return r.literalPath
	}
	vars := map[string]any{
		"config": r.o.Config, "parameters": nonNil(r.s.Selector.Parameters),
		"stream_slice": map[string]any{}, "stream_partition": map[string]any{},
		"stream_interval": map[string]any{}, "stream_state": map[string]any{},
		"next_page_token": paginate.NextPageToken(first, token),
	}
	out := make([]string, len(segs))
	for i, t := range segs {
		s, err := t.Render(vars)
		if err != nil {
			s = t.Source()
		}
		out[i] = s
	}
	if !slices.ContainsFunc(segs, func(t *template.Template) bool { return !t.IsLiteral() }) {
		r.literalPath = out // the same for every page
	}
	return out
}

// build assembles the request for one page.
func (r *reader) build(ctx context.Context, token any, first bool, prevURL string) (*httpx.Request, error) {
	vars := r.vars(token, first)
	b, err := request.FromRequester("data", r.s.Requester, request.NewScope(vars, r.o.Client.Redactor))
	if err != nil {
		return nil, err
	}
	if err := r.o.Auth.Apply(ctx, b); err != nil {
		return nil, err
	}
	if err := r.pag.Inject(b, token, first, prevURL); err != nil {
		return nil, err
	}
	return b.Build()
}

// Failure types of the Airbyte protocol's TRACE ERROR message.
const (
	ConfigError    = "config_error"    // the user must change the configuration or credentials
	TransientError = "transient_error" // a later attempt may pass
	SystemError    = "system_error"    // anything else
)

// FailureType classifies the error of a failed stream the way the Airbyte protocol does:
// authentication failures and testing values the authenticator cannot use are config
// errors, as is the failure_type an error handler's filter names; network failures,
// timeouts, 408, 429 and 5xx (after the retries) are transient; the rest is a system error.
func FailureType(err error) string {
	var se *httpx.StatusError
	var ne *httpx.NetError
	var ce *auth.ConfigError
	switch {
	case auth.IsAuthError(err), errors.As(err, &ce):
		return ConfigError
	case errors.As(err, &se):
		switch se.FailureType {
		case ConfigError, TransientError, SystemError:
			return se.FailureType
		}
		switch {
		case se.IsAuth():
			return ConfigError
		case se.Status == http.StatusRequestTimeout, se.Status == http.StatusTooManyRequests, se.Status >= 500:
			return TransientError
		}
	case errors.As(err, &ne):
		if ne.Timeout || !ne.Permanent {
			return TransientError
		}
	case errors.Is(err, context.DeadlineExceeded):
		return TransientError
	}
	return SystemError
}
