package run

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// A stream whose extractor is a ResponseToFileExtractor keeps each body on disk while it
// is decoded: the records are those of the CSV text, plain or gzipped; an attempt cut short
// or failed is dropped and the body of the next one read; a paginator sees each page's
// records; the body limit holds.

// csvAPI serves /export?page=N: the CSV text of pages[N] (page "" when no page is asked
// for), gzipped when the query says gzip=true. The first request for a path+query in cut
// is answered with half its body, then the connection is cut; one in fail answers 500 the
// first time.
type csvAPI struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func serveCSV(t *testing.T, pages map[string]string, cut, fail string) *csvAPI {
	t.Helper()
	a := &csvAPI{}
	done := map[string]bool{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.URL.RequestURI()
		a.mu.Lock()
		a.got = append(a.got, "GET "+key)
		first := !done[key]
		done[key] = true
		a.mu.Unlock()
		body := []byte(pages[r.URL.Query().Get("page")])
		if r.URL.Query().Get("gzip") == "true" {
			var b bytes.Buffer
			z := gzip.NewWriter(&b)
			z.Write(body)
			z.Close()
			body = b.Bytes()
		}
		switch {
		case first && key == fail:
			http.Error(w, "try again", http.StatusInternalServerError)
		case first && key == cut:
			w.Header().Set("Content-Length", fmt.Sprint(len(body)))
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		default:
			w.Write(body)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *csvAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// csvDef is a stream "export" at base/export with a ResponseToFileExtractor, the query
// parameters given, and the paginator given (YAML at column 6, "" for none).
func csvDef(base, params, paginator string) string {
	return fmt.Sprintf(`version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: export
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /export, http_method: GET, request_parameters: {%s}}
      record_selector: {type: RecordSelector, extractor: {type: ResponseToFileExtractor}}
%s`, base, params, paginator)
}

const authorsCSV = "id,name,born\n1,Ada,1815\n2,\"Brontë, Emily\",NA\n\n3,Cao,\n"

var authorsRecords = []string{
	`{"id":"1","name":"Ada","born":"1815"}`,
	`{"id":"2","name":"Brontë, Emily","born":null}`,
	`{"id":"3","name":"Cao","born":null}`,
}

func TestSpooledBody(t *testing.T) {
	for _, tt := range []struct{ name, params, cut, fail string }{
		{"plain", "", "", ""},
		{"gzipped", "gzip: 'true'", "", ""},
		{"cut short, then whole", "", "/export", ""},
		{"gzipped, cut short, then whole", "gzip: 'true'", "/export?gzip=true", ""},
		{"a 500, then whole", "", "", "/export"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			api := serveCSV(t, map[string]string{"": authorsCSV}, tt.cut, tt.fail)
			o, s := loadStream(t, csvDef(api.URL, tt.params, ""))
			o.Client.Sleep = func(context.Context, time.Duration) error { return nil }
			out := &emitter{}
			o.Out = out
			res := Stream(t.Context(), o, s)
			checkResult(t, res, 1, 1, 3, "")
			checkLines(t, "records", out.lines, authorsRecords)
			want := []string{"GET /export"}
			if tt.params != "" {
				want = []string{"GET /export?gzip=true"}
			}
			if tt.cut != "" || tt.fail != "" {
				want = append(want, want[0])
			}
			checkLines(t, "requests", api.requests(), want)
		})
	}
}

// A paginated export: the page number goes in the query, each page's records are
// spooled and decoded in turn, and a page with fewer records than the page size ends it.
func TestSpooledPages(t *testing.T) {
	api := serveCSV(t, map[string]string{
		"1": "id\n1\n2\n",
		"2": "id\n3\n",
	}, "", "")
	o, s := loadStream(t, csvDef(api.URL, "", `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
`))
	out := &emitter{}
	o.Out = out
	res := Stream(t.Context(), o, s)
	checkResult(t, res, 1, 2, 3, "")
	checkLines(t, "records", out.lines, []string{`{"id":"1"}`, `{"id":"2"}`, `{"id":"3"}`})
	checkLines(t, "requests", api.requests(), []string{"GET /export?page=1", "GET /export?page=2"})
}

// A body past the limit fails the page at once, unretried.
func TestSpooledBodyLimit(t *testing.T) {
	api := serveCSV(t, map[string]string{"": "id\n" + strings.Repeat("1234567\n", 200)}, "", "")
	o, s := loadStream(t, csvDef(api.URL, "", ""))
	o.Client.MaxBody = 1024
	res := Stream(t.Context(), o, s)
	checkResult(t, res, 1, 0, 0, "stream export, page 1: GET "+api.URL+"/export answered 200 with a body larger than 1 KiB (--max-body raises the limit)")
	checkLines(t, "requests", api.requests(), []string{"GET /export"})
}
