package run

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// offsetStream loads a definition of one stream "items" at base/items, OffsetIncrement
// with page_size 3 (offset and limit in the query), records under "data".
func offsetStream(t *testing.T, base string) (*Options, *manifest.Stream) {
	t.Helper()
	return loadStream(t, fmt.Sprintf(`version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /items, http_method: GET}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: 3}
`, base))
}

// loadStream loads a definition and returns the options of a read of its first stream
// (with Overlap, as `read` does) and the stream.
func loadStream(t *testing.T, def string) (*Options, *manifest.Stream) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "def.yaml")
	if err := os.WriteFile(path, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	d, diags := manifest.Load(path)
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{}}
	a, err := auth.New(d.Authenticator, auth.Env{Globals: template.Globals{Config: map[string]any{}}, Client: client, Redactor: client.Redactor, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	return &Options{Config: map[string]any{}, Auth: a, Client: client, Overlap: true}, d.Streams[0]
}

// pages serves /items: the body for each offset. It writes down the offsets requested, and
// each request in the log of events that the test's emitter writes to as well.
type pages struct {
	*httptest.Server
	mu     sync.Mutex
	asked  []string    // the offsets requested, in order
	events []string    // "request OFFSET" as each request arrives, and what the test adds
	signal chan string // receives each offset as its request arrives
	bodies map[string]string
}

func servePages(t *testing.T, bodies map[string]string) *pages {
	p := &pages{bodies: bodies, signal: make(chan string, 16)}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		off := r.URL.Query().Get("offset")
		p.mu.Lock()
		p.asked = append(p.asked, off)
		p.mu.Unlock()
		p.note("request " + off)
		p.signal <- off
		body, ok := p.bodies[off]
		if !ok {
			body = `{"data":[]}`
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *pages) offsets() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.asked...)
}

// note adds an event to the log.
func (p *pages) note(event string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.events = append(p.events, event)
}

// log returns the events so far, in order.
func (p *pages) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.events, ", ")
}

// emitter keeps the records; onPage, when set, runs before the records of each page are
// taken (page counts from 1).
type emitter struct {
	lines  []string
	pages  int
	onPage func(page int)
}

func (e *emitter) Records(stream string, recs []record.Record) error {
	e.pages++
	if e.onPage != nil {
		e.onPage(e.pages)
	}
	for _, r := range recs {
		b, err := r.AppendJSON(nil)
		if err != nil {
			return err
		}
		e.lines = append(e.lines, string(b))
	}
	return nil
}

func (e *emitter) EndPage() error { return nil }

// observer keeps the page events.
type observer struct{ pages []PageEvent }

func (o *observer) StreamStart(StreamStart) {}
func (o *observer) Page(ev PageEvent)       { o.pages = append(o.pages, ev) }
func (o *observer) StreamEnd(res Result)    {}

const fullPage = `{"data":[{"id":1},{"id":2},{"id":3}]}`

// With Overlap the request for page 2 reaches the API before the records of page 1 are
// emitted; without it, only after. The emitter of page 1 waits for that request with
// Overlap, so the order of events is fixed in both cases and compared whole once the read
// has finished.
func TestOverlapSendsTheNextRequestBeforeThePageIsEmitted(t *testing.T) {
	for _, tt := range []struct {
		overlap bool
		want    string
	}{
		{true, "request 0, request 3, emit page 1, emit page 2"},
		{false, "request 0, emit page 1, request 3, emit page 2"},
	} {
		t.Run(fmt.Sprintf("overlap=%v", tt.overlap), func(t *testing.T) {
			api := servePages(t, map[string]string{"0": fullPage, "3": `{"data":[{"id":4}]}`})
			o, s := offsetStream(t, api.URL)
			o.Overlap = tt.overlap
			out := &emitter{onPage: func(page int) {
				if page == 1 && tt.overlap {
					waitForRequest(t, api, "3")
				}
				api.note(fmt.Sprintf("emit page %d", page))
			}}
			o.Out = out
			res := Stream(context.Background(), o, s)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if got := api.log(); got != tt.want {
				t.Errorf("events: %s\nwant:   %s", got, tt.want)
			}
			if got := strings.Join(out.lines, ","); got != `{"id":1},{"id":2},{"id":3},{"id":4}` {
				t.Errorf("records %s", got)
			}
		})
	}
}

// waitForRequest returns once the request for offset has arrived. The time limit only keeps
// a broken read from hanging the test run; the order of events is what the test checks.
func waitForRequest(t *testing.T, api *pages, offset string) {
	t.Helper()
	limit := time.NewTimer(time.Minute)
	defer limit.Stop()
	for {
		select {
		case off := <-api.signal:
			if off == offset {
				return
			}
		case <-limit.C:
			t.Errorf("no request for offset %s arrived while the page before it waited to be emitted; requests: %v", offset, api.offsets())
			return
		}
	}
}

// A full page that is not JSON has had its next request sent already: the read fails on
// the page, emits nothing, and reports the request sent ahead as discarded.
func TestOverlapDiscardsTheRequestAfterAnInvalidPage(t *testing.T) {
	api := servePages(t, map[string]string{"0": `{"data":[{"id":1},{"id":tru},{"id":3}]}`, "3": `{"data":[{"id":4}]}`})
	o, s := offsetStream(t, api.URL)
	out, obs := &emitter{}, &observer{}
	o.Out, o.Observer = out, obs
	res := Stream(context.Background(), o, s)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "stream items, page 1: GET ") ||
		!strings.Contains(res.Err.Error(), "with a body that is not JSON") {
		t.Fatalf("error %v", res.Err)
	}
	if len(out.lines) != 0 {
		t.Errorf("emitted %q", out.lines)
	}
	if len(obs.pages) != 1 {
		t.Fatalf("page events %+v", obs.pages)
	}
	ev := obs.pages[0]
	if ev.End != Discarded || ev.Number != 2 || ev.TokenBefore != int64(3) || ev.Discard.Why != AfterFailure {
		t.Errorf("event %+v", ev)
	}
}

// Requests go out as fast as pages are counted, not as fast as they are validated: when
// the first page fails, the requests sent beyond it (at least the next one, at most two)
// are discarded in page order, and nothing is emitted.
func TestOverlapDiscardsEveryRequestSentBeyondAFailedPage(t *testing.T) {
	bodies := map[string]string{"0": `{"data":[{"id":1},{"id":2},{"id":3,}]}`}
	for off := 3; off < 30; off += 3 {
		bodies[fmt.Sprint(off)] = fullPage
	}
	api := servePages(t, bodies)
	o, s := offsetStream(t, api.URL)
	out, obs := &emitter{}, &observer{}
	o.Out, o.Observer = out, obs
	res := Stream(context.Background(), o, s)
	if res.Err == nil || len(out.lines) != 0 {
		t.Fatalf("error %v, emitted %q", res.Err, out.lines)
	}
	if len(obs.pages) == 0 || len(obs.pages) > 2 {
		t.Fatalf("%d page events, want 1 to 2: %+v", len(obs.pages), obs.pages)
	}
	for i, ev := range obs.pages {
		if ev.End != Discarded || ev.Number != 2+i || ev.TokenBefore != int64(3+3*i) || ev.Discard.Why != AfterFailure {
			t.Errorf("event %d: %+v", i, ev)
		}
	}
}

// A page with the records key twice keeps the last list, as Python's json does; Count
// does not say which list that is without reading the rest of the object, so the read
// waits for the page: nothing is sent ahead, nothing is discarded, and page 2 is asked for
// only after page 1 is emitted.
func TestOverlapWaitsForAPageWithTheRecordsKeyTwice(t *testing.T) {
	api := servePages(t, map[string]string{
		"0": `{"data":[{"id":"first"}],"data":[{"id":1},{"id":2},{"id":3}]}`,
		"3": `{"data":[{"id":4}]}`,
	})
	o, s := offsetStream(t, api.URL)
	obs := &observer{}
	out := &emitter{onPage: func(page int) { api.note(fmt.Sprintf("emit page %d", page)) }}
	o.Out, o.Observer = out, obs
	res := Stream(context.Background(), o, s)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := strings.Join(out.lines, ","); got != `{"id":1},{"id":2},{"id":3},{"id":4}` {
		t.Errorf("records %s", got)
	}
	if got, want := api.log(), "request 0, emit page 1, request 3, emit page 2"; got != want {
		t.Errorf("events: %s\nwant:   %s", got, want)
	}
	for _, ev := range obs.pages {
		if ev.End == Discarded {
			t.Errorf("discarded %+v", ev)
		}
	}
	if len(obs.pages) != 2 || res.Records != 4 || res.Pages != 2 {
		t.Errorf("page events %+v, result %+v", obs.pages, res)
	}
}
