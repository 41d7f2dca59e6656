package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/paginate"
	"connector/pkg/template"
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
// the stream on that page instead of looping; the trace event carries the error
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
      requester:
        url_base: %q
        path: /items%s
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

func TestFailureType(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want string
	}{
		{&auth.Error{Msg: "no"}, ConfigError},
		{&auth.ConfigError{Msg: "no"}, ConfigError},
		{&httpx.StatusError{Status: 403}, ConfigError},
		{&httpx.StatusError{Status: 500, FailureType: "config_error"}, ConfigError},
		{&httpx.StatusError{Status: 503}, TransientError},
		{&httpx.StatusError{Status: 429}, TransientError},
		{&httpx.StatusError{Status: 408}, TransientError},
		{&httpx.StatusError{Status: 404}, SystemError},
		{&httpx.NetError{Timeout: true}, TransientError},
		{&httpx.NetError{}, TransientError},
		// As the CDK maps requests' exceptions: ConnectionError (a host that does not
		// resolve) transient, InvalidSchema the config's; a body over --max-body is ours.
		{&httpx.NetError{Permanent: true, Err: "cannot resolve the host api.example.invalid: no such host"}, TransientError},
		{&httpx.NetError{Permanent: true, Scheme: true, Err: `unsupported URL scheme "ftp": only http and https are supported`}, ConfigError},
		{&httpx.NetError{Permanent: true, Scheme: true, Err: "redirect to file:///etc/passwd refused: only http and https URLs are followed"}, ConfigError},
		{&httpx.NetError{Permanent: true, Answered: 200, Err: "a body larger than 1 MiB"}, SystemError},
		{fmt.Errorf("wrapped: %w", context.DeadlineExceeded), TransientError},
		{errors.New("other"), SystemError},
	} {
		if got := FailureType(&StreamError{Stream: "s", Page: 1, Err: tt.err}); got != tt.want {
			t.Errorf("FailureType(%v) = %s, want %s", tt.err, got, tt.want)
		}
	}
}

// TestRecordFilterAndIgnoredResponse: the record filter sees the record and the slice's
// variables; a response the error handler ignores ends the slice with no records and a
// typed event.
func TestRecordFilterAndIgnoredResponse(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "gone" {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":1,"keep":true},{"id":2,"keep":false},{"id":3,"keep":true}],"next":"gone"}`)
	}))
	t.Cleanup(api.Close)
	def := strings.Replace(cursorDef(api.URL, `
        error_handler:
          type: DefaultErrorHandler
          response_filters:
            - {type: HttpResponseFilter, http_codes: [404], action: IGNORE}`), `extractor: {field_path: [data]}`,
		`extractor: {field_path: [data]}
        record_filter: {condition: "{{ record.keep and stream_slice == {} }}"}`, 1)
	o, s := loadStream(t, def)
	out, obs := &emitter{}, &observer{}
	o.Out, o.Observer = out, obs
	res := Stream(context.Background(), o, s)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := strings.Join(out.lines, ","); got != `{"id":1,"keep":true},{"id":3,"keep":true}` {
		t.Errorf("records %s", got)
	}
	if len(obs.pages) != 2 || obs.pages[0].Records != 3 || obs.pages[0].Emitted != 2 ||
		obs.pages[1].End != Ignored || !strings.HasPrefix(obs.pages[1].Ignored, "404 Not Found ignored") {
		t.Errorf("events %+v", obs.pages)
	}
}

// TestPageErrors: each kind of unusable body fails the page with its own message; a 204
// with no body is an empty page.
func TestPageErrors(t *testing.T) {
	for _, tt := range []struct {
		status int
		body   string
		want   string
	}{
		{200, `{"data":5}`, "answered 200, but the field path ends at a number"},
		{200, `<html>`, "answered 200 with a body that is not JSON (invalid JSON at byte 0"},
		{200, ``, "answered 200 with a body that is not JSON (empty response body): (empty body)"},
		{200, strings.Repeat("[", 600), "answered 200 with JSON nested deeper than 512 levels"},
		{204, ``, ""},
	} {
		api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(tt.status)
			fmt.Fprint(w, tt.body)
		}))
		o, s := offsetStream(t, api.URL)
		res := Stream(context.Background(), o, s)
		api.Close()
		switch {
		case tt.want == "" && (res.Err != nil || res.Pages != 1 || res.Records != 0):
			t.Errorf("%d %q: %+v", tt.status, tt.body, res)
		case tt.want != "" && (res.Err == nil || !strings.Contains(res.Err.Error(), tt.want)):
			t.Errorf("%d %q: error %v, want %q", tt.status, tt.body, res.Err, tt.want)
		}
	}
}

// TestPrefetchThatCannotApply: --prefetch says why it reads one page at a time.
func TestPrefetchThatCannotApply(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[]}`)
	}))
	t.Cleanup(api.Close)
	for def, want := range map[string]string{
		cursorDef(api.URL, ""): "items: --prefetch 4 ignored, reading one page at a time: CursorPagination takes each next page token from the previous response",
		strings.Replace(cursorDef(api.URL, ""), "paginator:", "unused:", 1):       "items: --prefetch 4 ignored, reading one page at a time: the stream does not paginate",
		strings.Replace(offsetDef(api.URL), "page_size: 3", "page_size: null", 1): "items: --prefetch 4 ignored, reading one page at a time: without a page_size the next offset depends on the previous page",
	} {
		if strings.Contains(def, "unused:") {
			def = def[:strings.Index(def, "      unused:")]
		}
		o, s := loadStream(t, def)
		var notes []string
		o.Prefetch, o.Warn = 4, func(text string) { notes = append(notes, text) }
		if res := Stream(context.Background(), o, s); res.Err != nil {
			t.Fatal(res.Err)
		}
		if len(notes) != 1 || notes[0] != want {
			t.Errorf("notes %q, want %q", notes, want)
		}
	}
}

func offsetDef(base string) string {
	return fmt.Sprintf(`version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {url_base: %q, path: /items}
      record_selector:
        extractor: {field_path: [data]}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: 3}
`, base)
}

// TestOAuthRenewsOnceOn401: a 401 on a data request of an OAuth stream fetches a new token
// and sends the same request once more with it.
func TestOAuthRenewsOnceOn401(t *testing.T) {
	var tokens int
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			tokens++
			fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3600}`, tokens)
		default:
			if r.Header.Get("Authorization") != "Bearer tok-2" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `{"data":[{"id":1}]}`)
		}
	}))
	t.Cleanup(api.Close)
	o, s := loadStream(t, fmt.Sprintf(`version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        url_base: %q
        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "%s/token"
          grant_type: client_credentials
          client_id: "{{ config.id }}"
          client_secret: "{{ config.secret }}"
      record_selector:
        extractor: {field_path: [data]}
`, api.URL, api.URL))
	cfg := map[string]any{"id": "the-id", "secret": "the-secret"}
	a, err := auth.New(s.Requester.Authenticator, auth.Env{Globals: template.Globals{Config: cfg}, Client: o.Client, Redactor: o.Client.Redactor})
	if err != nil {
		t.Fatal(err)
	}
	o.Config, o.Auth = cfg, a
	out := &emitter{}
	o.Out = out
	if res := Stream(context.Background(), o, s); res.Err != nil || tokens != 2 || len(out.lines) != 1 {
		t.Fatalf("result %+v, %d tokens, records %v", res, tokens, out.lines)
	}
}

func TestLimitString(t *testing.T) {
	if (Limit{}).String() != "" || (Limit{}).Set() || (Limit{"--max-pages", 3}).String() != "--max-pages 3" {
		t.Error("Limit words")
	}
}
