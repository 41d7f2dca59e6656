package paginate

import (
	"fmt"

	"connector/pkg/manifest"
)

// offsetIncrement is OffsetIncrement: the token is the offset of the page's first record,
// 0 first, then advanced by the number of records of each page.
var offsetIncrement = kind{
	token: "offset", size: "limit", firstToken: true,
	make: func(s *manifest.Strategy, _ map[string]any, size int64) (Strategy, error) {
		return increment{typ: s.Type, initial: int64(0), p: Predictor{Size: size, Offset: true}}, nil
	},
	traits: func(*manifest.Strategy) []string { return nil },
}

// pageIncrement is PageIncrement: the token is the page number, start_from_page first, then
// one more for each page.
var pageIncrement = kind{
	token: "page", size: "page_size", firstToken: true,
	make: func(s *manifest.Strategy, _ map[string]any, size int64) (Strategy, error) {
		return increment{typ: s.Type, initial: int64(s.StartFromPage), p: Predictor{Size: size}}, nil
	},
	traits: func(s *manifest.Strategy) []string { return []string{fmt.Sprintf("first page %d", s.StartFromPage)} },
}

// increment is OffsetIncrement and PageIncrement: the next token follows from the count.
type increment struct {
	typ     string
	initial any
	p       Predictor
}

func (s increment) Initial() any          { return s.initial }
func (s increment) Predictor() *Predictor { p := s.p; return &p }

func (s increment) Next(token any, pg Page) (Decision, error) {
	d := Decision{Strategy: s.typ, Count: pg.Count, Size: s.p.Size}
	next, more := s.p.After(token, pg.Count)
	switch {
	case more && s.p.Size > 0:
		d.Token, d.Why = next, FullPage
	case more:
		d.Token, d.Why = next, NonEmptyPage
	case s.p.Size > 0:
		d.Stop, d.Why = true, ShortPage
	default:
		d.Stop, d.Why = true, EmptyPage
	}
	return d, nil
}
