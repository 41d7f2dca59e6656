package run

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"connector/pkg/record"
)

// A data feed (is_data_feed: newest records first) ends at the page whose last record is
// older than the state, as in the CDK: a page-by-page read never asks for the page after it,
// and neither may a read that sends its next request while a page is handled. The emitter of
// page 2 (the one that ends the feed) waits for a request for page 3: with such an early
// request it comes at once; without, the wait runs out and page 2 ends the read.
func TestDataFeedSendsNoRequestPastItsEnd(t *testing.T) {
	pages := map[string]string{
		"1": `{"data":[{"id":5,"created":"2024-01-05T00:00:00Z"},{"id":4,"created":"2024-01-04T00:00:00Z"}]}`,
		"2": `{"data":[{"id":3,"created":"2024-01-03T12:00:00Z"},{"id":2,"created":"2024-01-02T00:00:00Z"}]}`,
		"3": `{"data":[{"id":1,"created":"2024-01-01T00:00:00Z"}]}`,
	}
	var mu sync.Mutex
	var asked []string
	third := make(chan struct{}, 1)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("page")
		mu.Lock()
		asked = append(asked, page)
		mu.Unlock()
		if page == "3" {
			select {
			case third <- struct{}{}:
			default:
			}
		}
		fmt.Fprint(w, pages[page])
	}))
	t.Cleanup(api.Close)
	o, s := loadStream(t, fmt.Sprintf(`version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: activity
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /activity, http_method: GET}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: created
      datetime_format: "%%Y-%%m-%%dT%%H:%%M:%%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-10T00:00:00Z"
      is_data_feed: true
`, api.URL))
	in, err := record.Decode([]byte(`{"created":"2024-01-03T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	o.StateOf = func(string) *record.Object { return in.(*record.Object) }
	out := &emitter{onPage: func(page int) {
		if page == 2 {
			select {
			case <-third:
			case <-time.After(300 * time.Millisecond):
			}
		}
	}}
	o.Out = out
	res := Stream(context.Background(), o, s)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(asked) != "[1 2]" {
		t.Errorf("pages requested %v, want [1 2]", asked)
	}
}
