package run

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"connector/pkg/manifest"
)

// trackingCtx is a context that is never cancelled and counts the contexts derived from it
// that are still live: the context package registers a child through AfterFunc and calls the
// stop function it returns when the child is cancelled.
type trackingCtx struct {
	done chan struct{}
	mu   sync.Mutex
	live int
}

func (c *trackingCtx) Deadline() (time.Time, bool) { return time.Time{}, false }
func (c *trackingCtx) Done() <-chan struct{}       { return c.done }
func (c *trackingCtx) Err() error                  { return nil }
func (c *trackingCtx) Value(any) any               { return nil }

func (c *trackingCtx) AfterFunc(func()) func() bool {
	c.mu.Lock()
	c.live++
	c.mu.Unlock()
	var once sync.Once
	return func() bool {
		stopped := false
		once.Do(func() {
			c.mu.Lock()
			c.live--
			c.mu.Unlock()
			stopped = true
		})
		return stopped
	}
}

func (c *trackingCtx) children() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

// Every context a read derives for its requests is cancelled once it is done with: a
// 200-page cursor read (one fetcher per page) and a 200-page offset read with overlap (one
// fetcher for many pages) leave none live behind them.
func TestReadLeavesNoContextLive(t *testing.T) {
	const pages = 200
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		if v := r.URL.Query().Get("cursor"); v != "" {
			n, _ = strconv.Atoi(v)
		}
		if v := r.URL.Query().Get("offset"); v != "" {
			off, _ := strconv.Atoi(v)
			n = off / 3
		}
		next := `"` + strconv.Itoa(n+1) + `"`
		if n+1 == pages {
			next = "null"
		}
		records := `[{"id":1},{"id":2},{"id":3}]`
		if n+1 == pages {
			records = `[{"id":1}]`
		}
		fmt.Fprintf(w, `{"data":%s,"next":%s}`, records, next)
	}))
	t.Cleanup(api.Close)
	cursor := fmt.Sprintf(`version: 6.5.0
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
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ response.next is none }}"}
`, api.URL)
	for _, tt := range []struct {
		name string
		load func() (*Options, *manifest.Stream)
	}{
		{"cursor", func() (*Options, *manifest.Stream) { return loadStream(t, cursor) }},
		{"offset with overlap", func() (*Options, *manifest.Stream) { return offsetStream(t, api.URL) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o, s := tt.load()
			out := &emitter{}
			o.Out = out
			ctx := &trackingCtx{done: make(chan struct{})}
			res := Stream(ctx, o, s)
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			if res.Pages != pages {
				t.Fatalf("%d pages read, want %d", res.Pages, pages)
			}
			if n := ctx.children(); n != 0 {
				t.Errorf("%d contexts derived from the read's context are still live after it, want 0", n)
			}
		})
	}
}
