// Package paginate decides, page after page, whether there is a next page and which token asks
// for it, and puts the token and the page size into the next request. It does no I/O: the
// read loop hands it what a page looked like and gets a Decision back.
package paginate

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// Page is what the paginator learns from one response.
type Page struct {
	// Count is the number of records extracted, before any record filter.
	Count int
	// Body is the decoded response body (nil when no template needs it).
	Body any
	// Headers is the `headers` template variable (see Headers).
	Headers template.Mapping
	// LastRecords are the decoded records of the page (nil when no template needs them).
	LastRecords []any
	// URL is the URL the page was requested from (to resolve relative next-page URLs).
	URL string
}

// Decision is what happens after a page.
type Decision struct {
	Stop bool
	// Token is the next page token (when not Stop), or the offending token when Next also
	// returns a *RepeatedTokenError.
	Token any
	// Reason says why, in plain words: "next: offset=200 (100 records ≥ limit 100)",
	// "stop: 37 records < limit 100", "stop: no value at response.meta.next_cursor".
	Reason string
}

// RepeatedTokenError is the guard against an API that returns the same token again.
type RepeatedTokenError struct {
	Token string
}

func (e *RepeatedTokenError) Error() string {
	return fmt.Sprintf("pagination token %q repeated: the API returned the same next-page token twice in a row; stopping instead of looping", e.Token)
}

// Paginator runs one stream's pagination. It is created per stream read and is not safe for
// concurrent use.
type Paginator struct {
	m        *manifest.Paginator
	vars     map[string]any // config and parameters
	pageSize int64
	hasSize  bool
	tokenOpt *request.Option
	sizeOpt  *request.Option
	last     string // the previous token, for the repeat guard
	hasLast  bool
}

// New prepares the pagination of a stream. m nil means NoPagination. config is the testing
// values.
func New(m *manifest.Paginator, config map[string]any) (*Paginator, error) {
	p := &Paginator{m: m}
	if m == nil {
		return p, nil
	}
	params := m.Parameters
	if params == nil {
		params = map[string]any{}
	}
	p.vars = map[string]any{"config": config, "parameters": params}
	if s := m.Strategy; s != nil && s.Type == manifest.CursorPagination && s.CursorValue == nil {
		return nil, fmt.Errorf("CursorPagination needs a cursor_value")
	}
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
			p.pageSize, p.hasSize = n, true
		}
	}
	var err error
	if p.tokenOpt, err = request.NewOption(m.PageTokenOption, p.vars); err != nil {
		return nil, fmt.Errorf("page_token_option: %w", err)
	}
	if p.sizeOpt, err = request.NewOption(m.PageSizeOption, p.vars); err != nil {
		return nil, fmt.Errorf("page_size_option: %w", err)
	}
	return p, nil
}

// Enabled reports whether the stream paginates at all.
func (p *Paginator) Enabled() bool { return p.m != nil && p.m.Strategy != nil }

func (p *Paginator) strategy() string {
	if !p.Enabled() {
		return ""
	}
	return p.m.Strategy.Type
}

// Initial is the token of the first request: offset 0, the start page, or none for a cursor.
// Whether it is sent depends on inject_on_first_request (see Inject).
func (p *Paginator) Initial() any {
	switch p.strategy() {
	case manifest.OffsetIncrement:
		return int64(0)
	case manifest.PageIncrement:
		return int64(p.m.Strategy.StartFromPage)
	}
	return nil
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
	if p.sizeOpt != nil && p.hasSize {
		if err := p.sizeOpt.Inject(b, p.pageSize, source); err != nil {
			return err
		}
	}
	if p.tokenOpt == nil || token == nil {
		return nil
	}
	if first && (!p.m.Strategy.InjectOnFirstRequest || p.strategy() == manifest.CursorPagination) {
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

// Next decides after a page that was requested with token.
func (p *Paginator) Next(token any, pg Page) (Decision, error) {
	switch p.strategy() {
	case "":
		return Decision{Stop: true, Reason: "stop: no pagination"}, nil
	case manifest.OffsetIncrement:
		offset, _ := template.ToInt(token)
		if !p.hasSize {
			if pg.Count == 0 {
				return Decision{Stop: true, Reason: "stop: empty page (no limit set)"}, nil
			}
			next := offset + int64(pg.Count)
			return Decision{Token: next, Reason: fmt.Sprintf("next: offset=%d (%s, no limit set)", next, records(pg.Count))}, nil
		}
		if int64(pg.Count) < p.pageSize {
			return Decision{Stop: true, Reason: fmt.Sprintf("stop: %s < limit %d", records(pg.Count), p.pageSize)}, nil
		}
		next := offset + int64(pg.Count)
		return Decision{Token: next, Reason: fmt.Sprintf("next: offset=%d (%s ≥ limit %d)", next, records(pg.Count), p.pageSize)}, nil
	case manifest.PageIncrement:
		page, _ := template.ToInt(token)
		if !p.hasSize {
			if pg.Count == 0 {
				return Decision{Stop: true, Reason: "stop: empty page (no page size set)"}, nil
			}
			return Decision{Token: page + 1, Reason: fmt.Sprintf("next: page=%d (%s, no page size set)", page+1, records(pg.Count))}, nil
		}
		if int64(pg.Count) < p.pageSize {
			return Decision{Stop: true, Reason: fmt.Sprintf("stop: %s < page size %d", records(pg.Count), p.pageSize)}, nil
		}
		return Decision{Token: page + 1, Reason: fmt.Sprintf("next: page=%d (%s ≥ page size %d)", page+1, records(pg.Count), p.pageSize)}, nil
	case manifest.CursorPagination:
		return p.cursor(token, pg)
	}
	return Decision{}, fmt.Errorf("unknown pagination strategy %q", p.strategy())
}

// records says "1 record", "37 records".
func records(n int) string {
	if n == 1 {
		return "1 record"
	}
	return strconv.Itoa(n) + " records"
}

func (p *Paginator) cursor(token any, pg Page) (Decision, error) {
	s := p.m.Strategy
	vars := p.cursorVars(token, pg)
	if s.StopCondition != nil {
		v, err := s.StopCondition.Eval(vars)
		if err != nil {
			return Decision{}, fmt.Errorf("stop_condition: %w", err)
		}
		if template.Truthy(v) {
			return Decision{Stop: true, Reason: "stop: stop_condition true"}, nil
		}
	}
	v, err := s.CursorValue.Eval(vars)
	if err != nil {
		return Decision{}, fmt.Errorf("cursor_value: %w", err)
	}
	if empty(v) {
		return Decision{Stop: true, Reason: "stop: no value at " + describe(s.CursorValue)}, nil
	}
	text := template.ToString(v)
	if p.hasLast && text == p.last {
		// The token is kept in the decision so that a trace can show what came back.
		return Decision{Stop: true, Token: v, Reason: "error: pagination token " + strconv.Quote(text) + " repeated"},
			&RepeatedTokenError{Token: text}
	}
	p.last, p.hasLast = text, true
	return Decision{Token: v, Reason: "next: cursor=" + strconv.Quote(text) + " from " + describe(s.CursorValue)}, nil
}

// empty reports whether a cursor value means "no next page": none, undefined, "", or an
// empty list or mapping.
func empty(v any) bool {
	if template.IsEmpty(v) {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case template.Mapping:
		return len(x.Keys()) == 0
	}
	return false
}

// describe names a cursor template for a stop reason: `response.meta.next` rather than the
// whole `{{ … }}` source.
func describe(t *template.Template) string {
	s := t.Source()
	if len(s) > 4 && s[:2] == "{{" && s[len(s)-2:] == "}}" {
		return strings.TrimSpace(s[2 : len(s)-2])
	}
	return s
}

func (p *Paginator) cursorVars(token any, pg Page) map[string]any {
	var last any = template.Undefined
	lastRecords := pg.LastRecords
	if lastRecords == nil {
		lastRecords = []any{}
	}
	if n := len(lastRecords); n > 0 {
		last = lastRecords[n-1]
	}
	headers := any(pg.Headers)
	if pg.Headers == nil {
		headers = map[string]any{}
	}
	body := pg.Body
	return map[string]any{
		"config":           p.vars["config"],
		"parameters":       p.vars["parameters"],
		"response":         body,
		"headers":          headers,
		"last_records":     lastRecords,
		"last_record":      last,
		"last_page_size":   int64(pg.Count),
		"next_page_token":  NextPageToken(false, token),
		"stream_slice":     map[string]any{},
		"stream_partition": map[string]any{},
		"stream_interval":  map[string]any{},
		"stream_state":     map[string]any{},
	}
}

// Describe summarises the pagination of a stream for traces, saying where each value goes:
//
//	OffsetIncrement limit 100; offset → query parameter "offset"; limit → query parameter "limit"
func (p *Paginator) Describe() string {
	if !p.Enabled() {
		return "NoPagination"
	}
	s := p.m.Strategy
	var tokenWord, sizeWord string
	switch s.Type {
	case manifest.OffsetIncrement:
		tokenWord, sizeWord = "offset", "limit"
	case manifest.PageIncrement:
		tokenWord, sizeWord = "page", "page_size"
	default:
		tokenWord, sizeWord = "cursor", "page_size"
	}
	head := s.Type
	if p.hasSize {
		head += fmt.Sprintf(" %s %d", sizeWord, p.pageSize)
	}
	switch s.Type {
	case manifest.PageIncrement:
		head += fmt.Sprintf(", first page %d", s.StartFromPage)
	case manifest.CursorPagination:
		head += ", cursor from " + describe(s.CursorValue)
		if s.StopCondition != nil {
			head += ", stop when " + describe(s.StopCondition)
		}
	}
	if !s.InjectOnFirstRequest && s.Type != manifest.CursorPagination {
		head += fmt.Sprintf(", no %s on the first request", tokenWord)
	}
	parts := []string{head}
	if p.tokenOpt == nil {
		parts = append(parts, tokenWord+" → only through next_page_token in the requester's templates")
	} else {
		parts = append(parts, tokenWord+" → "+p.tokenOpt.String())
	}
	if p.hasSize {
		if p.sizeOpt == nil {
			parts = append(parts, sizeWord+" not sent (no page_size_option)")
		} else {
			parts = append(parts, sizeWord+" → "+p.sizeOpt.String())
		}
	}
	return strings.Join(parts, "; ")
}

// PageSize returns the page size and whether one is set.
func (p *Paginator) PageSize() (int64, bool) { return p.pageSize, p.hasSize }
