package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connector/pkg/paginate"
)

// jumpy is an offset strategy with state: it counts its calls (unsynchronized, so -race
// catches a call from another goroutine) and, after the page at jumpAt, leads somewhere its
// own predictor does not expect.
type jumpy struct {
	calls  int
	jumpAt int64
}

func (s *jumpy) Initial() any                   { return int64(0) }
func (s *jumpy) Predictor() *paginate.Predictor { return &paginate.Predictor{Size: 3, Offset: true} }

func (s *jumpy) Next(token any, pg paginate.Page) (paginate.Decision, error) {
	s.calls++
	n := token.(int64)
	if pg.Count < 3 {
		return paginate.Decision{Stop: true, Why: paginate.ShortPage, Count: pg.Count, Size: 3}, nil
	}
	next := n + int64(pg.Count)
	if n == s.jumpAt {
		next += 100
	}
	return paginate.Decision{Token: next, Why: paginate.FullPage, Count: pg.Count, Size: 3}, nil
}

// TestGuessesAreCheckedByTheReadLoop: requests sent ahead (counted with Overlap, assumed
// full with --prefetch) are checked against the strategy's own decision, which only the
// read loop asks for; a wrong guess is discarded and the right page requested. The records
// are those of a read that waits for every page.
func TestGuessesAreCheckedByTheReadLoop(t *testing.T) {
	for _, tt := range []struct {
		name     string
		prefetch int
		overlap  bool
	}{{"overlap", 1, true}, {"prefetch 4", 4, false}, {"prefetch 4 and overlap", 4, true}, {"one at a time", 1, false}} {
		t.Run(tt.name, func(t *testing.T) {
			api := servePages(t, map[string]string{
				"0": fullPage, "3": `{"data":[{"id":4},{"id":5},{"id":6}]}`,
				"6": `{"data":[{"id":"wrong"},{"id":"wrong"},{"id":"wrong"}]}`, "106": `{"data":[{"id":7}]}`,
			})
			o, s := offsetStream(t, api.URL)
			strategy := &jumpy{jumpAt: 3}
			o.strategy, o.Prefetch, o.Overlap = strategy, tt.prefetch, tt.overlap
			out, obs := &emitter{}, &observer{}
			o.Out, o.Observer = out, obs
			res := Stream(context.Background(), o, s)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := strings.Join(out.lines, ","); got != `{"id":1},{"id":2},{"id":3},{"id":4},{"id":5},{"id":6},{"id":7}` {
				t.Errorf("records %s", got)
			}
			if strategy.calls != 3 || res.Pages != 3 || res.Records != 7 {
				t.Errorf("strategy called %d times, result %+v", strategy.calls, res)
			}
			var used []any
			for _, ev := range obs.pages {
				switch {
				case ev.End != Discarded:
					used = append(used, ev.TokenBefore)
				case ev.Discard.Why == WrongGuess && ev.Discard.Next == int64(106):
				case ev.Discard.Why == PastTheEnd:
				default:
					t.Errorf("discarded %+v", ev)
				}
			}
			if fmt.Sprint(used) != "[0 3 106]" {
				t.Errorf("pages used %v", used)
			}
			if !tt.overlap && tt.prefetch == 1 {
				if got := strings.Join(api.offsets(), ","); got != "0,3,106" {
					t.Errorf("a read one page at a time asked for %s", got)
				}
			}
		})
	}
}

// TestRepeatedTokenStopsTheSlice: an API that returns the same cursor twice in a row fails
// the stream on that page (SPEC 6.5) instead of looping; the trace event carries the error
// and the repeated token.
func TestRepeatedTokenStopsTheSlice(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":1}],"next":"same"}`)
	}))
	t.Cleanup(api.Close)
	o, s := loadStream(t, cursorDef(api.URL, ""))
	obs := &observer{}
	o.Observer = obs
	res := Stream(context.Background(), o, s)
	var rep *paginate.RepeatedTokenError
	if !errors.As(res.Err, &rep) || rep.Token != "same" || res.Pages != 2 {
		t.Fatalf("result %+v", res)
	}
	if res.Err.Error() != `stream items, page 2: pagination token "same" repeated: the API returned the same next-page token twice in a row; stopping instead of looping` {
		t.Errorf("error %q", res.Err)
	}
	last := obs.pages[len(obs.pages)-1]
	if last.End != Failed || last.TokenAfter != "same" || !errors.As(last.Err, &rep) {
		t.Errorf("last event %+v", last)
	}
}

func cursorDef(base, extra string) string {
	return fmt.Sprintf(`version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {url_base: %q, path: /items%s}
      record_selector:
        extractor: {field_path: [data]}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}
`, base, extra)
}

// TestLimitsEndTheStream: --max-pages and --max-records end the stream with a typed event
// that names the limit and the token the read would have gone on with.
func TestLimitsEndTheStream(t *testing.T) {
	bodies := map[string]string{}
	for off := 0; off < 30; off += 3 {
		bodies[fmt.Sprint(off)] = fullPage
	}
	for _, tt := range []struct {
		pages, records   int
		limit            Limit
		wantPages, wantN int
	}{
		{2, 0, Limit{"--max-pages", 2}, 2, 6},
		{0, 4, Limit{"--max-records", 4}, 2, 4},
		{0, 3, Limit{"--max-records", 3}, 1, 3},
	} {
		api := servePages(t, bodies)
		o, s := offsetStream(t, api.URL)
		o.MaxPages, o.MaxRecords = tt.pages, tt.records
		obs, out := &observer{}, &emitter{}
		o.Observer, o.Out = obs, out
		res := Stream(context.Background(), o, s)
		if res.Err != nil || res.Limit != tt.limit || res.Pages != tt.wantPages || res.Records != tt.wantN || len(out.lines) != tt.wantN {
			t.Errorf("%v: result %+v, %d lines", tt.limit, res, len(out.lines))
			continue
		}
		var last PageEvent
		for _, ev := range obs.pages {
			if ev.End != Discarded {
				last = ev
			}
		}
		if last.End != Limited || last.Limit != tt.limit || last.TokenAfter != int64(3*tt.wantPages) {
			t.Errorf("%v: last event %+v", tt.limit, last)
		}
	}
}

// TestFieldPathTemplateErrorFailsThePage: a field path that cannot be rendered is an error
// naming it, never a path read as the template's text.
func TestFieldPathTemplateErrorFailsThePage(t *testing.T) {
	api := servePages(t, map[string]string{"0": fullPage})
	o, s := loadStream(t, fmt.Sprintf(`version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {url_base: %q, path: /items}
      record_selector:
        extractor: {field_path: ["{{ config.n + 1 }}"]}
`, api.URL))
	o.Config = map[string]any{"n": "x"}
	res := Stream(context.Background(), o, s)
	if res.Err == nil || !strings.HasPrefix(res.Err.Error(), "stream items, page 1: record_selector field_path: ") || len(api.offsets()) != 0 {
		t.Fatalf("result %+v, requests %v", res, api.offsets())
	}
}

// TestSliceVariables: with no partition router a stream has one slice, and its templates see
// stream_slice, stream_partition and stream_interval as empty mappings.
func TestSliceVariables(t *testing.T) {
	api := servePages(t, map[string]string{})
	o, s := loadStream(t, fmt.Sprintf(`version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        url_base: %q
        path: /items
        request_parameters:
          offset: "{{ stream_slice | length }}{{ stream_partition | length }}{{ stream_interval | length }}"
      record_selector:
        extractor: {field_path: [data]}
`, api.URL))
	if res := Stream(context.Background(), o, s); res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := api.offsets(); fmt.Sprint(got) != "[000]" {
		t.Errorf("requests %v", got)
	}
}
