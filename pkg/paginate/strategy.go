package paginate

import (
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// Strategy decides, page after page, which token asks for the next page. It keeps no state
// between calls, so the read loop deciding on pages and a goroutine sending the requests it
// can predict (see Predictor) never share anything that changes.
type Strategy interface {
	// Initial is the token of the first request of a slice.
	Initial() any
	// Next decides after a page that was requested with token.
	Next(token any, pg Page) (Decision, error)
	// Predictor says how the next token follows from the number of records of a page, for
	// strategies where it does; nil otherwise.
	Predictor() *Predictor
}

// Predictor tells the next token from a page's record count alone. It is a plain value,
// safe to use from any goroutine.
type Predictor struct {
	// Size is the page size: a page with fewer records is the last. With Size 0, a page with
	// records continues and an empty one is the last.
	Size int64
	// Offset: the next token is token + count (OffsetIncrement); otherwise token + 1
	// (PageIncrement).
	Offset bool
}

// After returns the token of the page after one requested with token that held count
// records, and false when that page was the last.
func (p Predictor) After(token any, count int) (next any, more bool) {
	if p.Size > 0 && int64(count) < p.Size || p.Size == 0 && count == 0 {
		return nil, false
	}
	n, _ := template.ToInt(token)
	if p.Offset {
		return n + int64(count), true
	}
	return n + 1, true
}

// Speculate returns the token of the page after one requested with token assuming that
// page is full: what a read sends ahead of time (--prefetch). It needs a page size.
func (p Predictor) Speculate(token any) (any, bool) {
	if p.Size <= 0 {
		return nil, false
	}
	return p.After(token, int(p.Size))
}

// kind is a pagination strategy of the definition format with everything this package knows
// of it: how it is made, the words for its token and its page size, and what a description
// says of it. Each kind is in its own file (offset.go, page.go, cursor.go) and is registered
// in kinds by one line; its fields and their checks are the definition format's, in
// pkg/manifest (the Strategy model and the loader's strategy).
type kind struct {
	// token and size name the token and the page size in descriptions ("offset", "limit").
	token, size string
	// firstToken says the first request of a slice may carry a token (inject_on_first_request);
	// a cursor has none yet.
	firstToken bool
	// make builds the strategy from its model, the config and $parameters (vars), and the page
	// size (0: none set).
	make func(s *manifest.Strategy, vars map[string]any, size int64) (Strategy, error)
	// traits are what a description says of s besides its type and page size, in order.
	traits func(s *manifest.Strategy) []string
}

// kinds are the pagination strategies, by their type in definitions.
var kinds = map[string]kind{
	manifest.OffsetIncrement:  offsetIncrement,
	manifest.PageIncrement:    pageIncrement,
	manifest.CursorPagination: cursorPagination,
}

// Words are the words a strategy's decisions are said with: its token ("offset", "page",
// "cursor") and its page size ("limit", "page_size").
func Words(strategy string) (token, size string) {
	k, ok := kinds[strategy]
	if !ok {
		return "token", "page_size"
	}
	return k.token, k.size
}
