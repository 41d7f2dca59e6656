// Package paginate decides, page after page, whether there is a next page and which token asks
// for it, and puts the token and the page size into the next request. It does no I/O: the
// read loop hands it what a page looked like and gets a Decision back.
package paginate

import (
	"fmt"
	"net/url"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// Page is what the paginator learns from one response.
type Page struct {
	// Count is the number of records extracted, before any record filter.
	Count int
	// Body is the decoded response body (nil when no template needs it). Templates see
	// Response(Body) as `response`.
	Body any
	// Headers is the `headers` template variable (see Headers).
	Headers template.Mapping
	// LastRecords are the decoded records of the page (nil when no template needs them).
	LastRecords []any
	// URL is the URL the page was requested from (to resolve relative next-page URLs).
	URL string
	// Vars are the variables of the page's slice (stream_slice, stream_partition,
	// stream_interval, stream_state), for the cursor's templates.
	Vars map[string]any
}

// Decision is what happens after a page.
type Decision struct {
	Stop bool
	// Token is the next page token (when not Stop).
	Token any
	// Why is the rule that decided; Count, Size and Source are what it looked at.
	Why Why
	// Strategy is the strategy's type (OffsetIncrement, PageIncrement, CursorPagination);
	// "" for NoPagination.
	Strategy string
	// Count is the number of records of the page; Size the page size ("limit"), 0 when
	// none is set.
	Count int
	Size  int64
	// Source is the cursor_value expression a cursor came from ("response.meta.next").
	Source string
}

// Why is the rule behind a Decision.
type Why int

const (
	// NotPaginated: the stream has no pagination; one page is the whole slice.
	NotPaginated Why = iota
	// FullPage: as many records as the page size (or more): there is a next page.
	FullPage
	// ShortPage: fewer records than the page size: this was the last page.
	ShortPage
	// NonEmptyPage: no page size is set and the page had records: there is a next page.
	NonEmptyPage
	// EmptyPage: no page size is set and the page was empty: it was the last.
	EmptyPage
	// CursorFound: cursor_value gave the next cursor.
	CursorFound
	// NoCursor: cursor_value gave nothing (none, undefined, "", [] or {}).
	NoCursor
	// StopCondition: the stop_condition was true.
	StopCondition
	// DataFeedEnd: the page's last record is out of the incremental read's range
	// (is_data_feed): the feed holds nothing newer.
	DataFeedEnd
)

// RepeatedTokenError is the guard against an API that returns the same token again.
type RepeatedTokenError struct {
	Token string
}

func (e *RepeatedTokenError) Error() string {
	return fmt.Sprintf("pagination token %q repeated: the API returned the same next-page token twice in a row; stopping instead of looping", e.Token)
}

// Paginator is one stream's pagination: its strategy, and where the token and the page size
// go in a request. It does not change once made and is safe for concurrent use.
type Paginator struct {
	m        *manifest.Paginator
	strategy Strategy       // nil: NoPagination
	kind     kind           // the strategy's kind
	vars     map[string]any // config, parameters and the run's clock
	pageSize int64          // 0: none set
	tokenOpt *request.Option
	sizeOpt  *request.Option
}

// New prepares the pagination of a stream. m nil means NoPagination. g are the run's
// testing values and clock.
func New(m *manifest.Paginator, g template.Globals) (*Paginator, error) {
	p := &Paginator{m: m}
	if m == nil {
		return p, nil
	}
	p.vars = g.Vars(m.Parameters)
	if s := m.Strategy; s != nil && s.PageSize != nil {
		v, err := s.PageSize.Eval(p.vars)
		if err != nil {
			return nil, fmt.Errorf("page_size: %w", err)
		}
		if !template.IsEmpty(v) {
			n, err := template.ToInt(v)
			if err != nil {
				return nil, fmt.Errorf("page_size %q is not an integer: %w", template.ToString(v), err)
			}
			if n <= 0 {
				return nil, fmt.Errorf("page_size must be positive, got %d", n)
			}
			p.pageSize = n
		}
	}
	var err error
	if p.tokenOpt, err = request.NewOption(m.PageTokenOption, p.vars); err != nil {
		return nil, fmt.Errorf("page_token_option: %w", err)
	}
	if p.sizeOpt, err = request.NewOption(m.PageSizeOption, p.vars); err != nil {
		return nil, fmt.Errorf("page_size_option: %w", err)
	}
	if s := m.Strategy; s != nil {
		k, ok := kinds[s.Type]
		if !ok {
			return nil, fmt.Errorf("unknown pagination strategy %q", s.Type)
		}
		p.kind = k
		if p.strategy, err = k.make(s, p.vars, p.pageSize); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Enabled reports whether the stream paginates at all.
func (p *Paginator) Enabled() bool { return p.strategy != nil }

// Strategy is the stream's pagination strategy; nil for NoPagination.
func (p *Paginator) Strategy() Strategy { return p.strategy }

// Initial is the token of the first request: offset 0, the start page, or none for a cursor.
// Whether it is sent depends on inject_on_first_request (see Inject).
func (p *Paginator) Initial() any {
	if p.strategy == nil {
		return nil
	}
	return p.strategy.Initial()
}

// Predictor is the strategy's predictor, or nil.
func (p *Paginator) Predictor() *Predictor {
	if p.strategy == nil {
		return nil
	}
	return p.strategy.Predictor()
}

// Next decides after a page that was requested with token.
func (p *Paginator) Next(token any, pg Page) (Decision, error) {
	if p.strategy == nil {
		return Decision{Stop: true, Why: NotPaginated, Count: pg.Count}, nil
	}
	return p.strategy.Next(token, pg)
}

// NextPageToken is the value of the `next_page_token` template variable for a request that
// carries token: none on the first request, then {"next_page_token": token}.
func NextPageToken(first bool, token any) any {
	if first || token == nil {
		return nil
	}
	return map[string]any{"next_page_token": token}
}

const source = "the paginator"

// Inject adds the page token and the page size to a request. first says that this is the
// stream's first request. For a RequestPath token, the builder's URL is replaced by the
// token resolved against prevURL.
func (p *Paginator) Inject(b *request.Builder, token any, first bool, prevURL string) error {
	if !p.Enabled() {
		return nil
	}
	// The token first, then the page size, as the CDK's DefaultPaginator orders them; where
	// both name one place, the page size overwrites the token there (validate warns).
	size := p.sizeOpt != nil && p.pageSize > 0
	if !size || !p.sizeOpt.SameTarget(p.tokenOpt) {
		if err := p.injectToken(b, token, first, prevURL); err != nil {
			return err
		}
	}
	if size {
		return p.sizeOpt.Inject(b, p.pageSize, source)
	}
	return nil
}

func (p *Paginator) injectToken(b *request.Builder, token any, first bool, prevURL string) error {
	if p.tokenOpt == nil || token == nil {
		return nil
	}
	if first && (!p.m.Strategy.InjectOnFirstRequest || !p.kind.firstToken) {
		return nil
	}
	if p.tokenOpt.Place == manifest.InjectPath {
		next, err := resolve(prevURL, template.ToString(token))
		if err != nil {
			return err
		}
		b.URL = next
		b.KeepURLQuery = true
		return nil
	}
	return p.tokenOpt.Inject(b, token, source)
}

func resolve(prev, next string) (string, error) {
	nu, err := url.Parse(next)
	if err != nil {
		return "", fmt.Errorf("next-page URL %q is not a URL: %w", next, err)
	}
	if nu.IsAbs() {
		return nu.String(), nil
	}
	pu, err := url.Parse(prev)
	if err != nil {
		return "", fmt.Errorf("previous URL %q: %w", prev, err)
	}
	return pu.ResolveReference(nu).String(), nil
}

// Describe summarises the pagination of a stream for traces, saying where each value goes:
//
//	OffsetIncrement limit 100; offset → query parameter "offset"; limit → query parameter "limit"
func (p *Paginator) Describe() string {
	if !p.Enabled() {
		return "NoPagination"
	}
	s, k := p.m.Strategy, p.kind
	head := s.Type
	if p.pageSize > 0 {
		head += fmt.Sprintf(" %s %d", k.size, p.pageSize)
	}
	for _, t := range k.traits(s) {
		head += ", " + t
	}
	if !s.InjectOnFirstRequest && k.firstToken {
		head += fmt.Sprintf(", no %s on the first request", k.token)
	}
	parts := []string{head}
	if p.tokenOpt == nil {
		parts = append(parts, k.token+" → only through next_page_token in the requester's templates")
	} else {
		parts = append(parts, k.token+" → "+p.tokenOpt.String())
	}
	if p.pageSize > 0 {
		if p.sizeOpt == nil {
			parts = append(parts, k.size+" not sent (no page_size_option)")
		} else {
			parts = append(parts, k.size+" → "+p.sizeOpt.String())
		}
	}
	return strings.Join(parts, "; ")
}

// Summary says a paginator in a few words, for a list of streams, pageSize as the page size
// reads (a rendered template, "" when none is set): `OffsetIncrement, page size 100`,
// `CursorPagination, cursor from response.next, stop when not response.more`.
func Summary(m *manifest.Paginator, pageSize string) string {
	s := m.Strategy
	parts := []string{s.Type}
	if pageSize != "" {
		parts = append(parts, "page size "+pageSize)
	}
	if k, ok := kinds[s.Type]; ok {
		parts = append(parts, k.traits(s)...)
	}
	return strings.Join(parts, ", ")
}

// PageSize returns the page size and whether one is set.
func (p *Paginator) PageSize() (int64, bool) { return p.pageSize, p.pageSize > 0 }

// WithStrategy returns a copy of p that decides with s instead of its own strategy (for
// tests, and for strategies that are not in the definition format).
func (p *Paginator) WithStrategy(s Strategy) *Paginator {
	c := *p
	c.strategy = s
	return &c
}

// Response is what pagination templates see as `response` for a decoded body: what the
// CDK's decoder yields first. For a top-level array that is its first element,
// or an empty mapping when the array is empty, so that `response.get("num", {})` works on
// an array body; any other body is itself.
func Response(body any) any {
	l, ok := body.([]any)
	if !ok {
		return body
	}
	if len(l) == 0 {
		return map[string]any{}
	}
	return l[0]
}
