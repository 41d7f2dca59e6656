package cmd

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// pagedStream is one stream of the paged API: `total` records {"id":"<name>-<i>"}, or, when
// sizes is set, pages of exactly those sizes (a short page in the middle, then full pages
// again, as a misbehaving API would), and nothing after them.
type pagedStream struct {
	total int
	sizes []int
}

// page returns the ids of the records at [start, start+limit) for page index k.
func (s pagedStream) page(name string, start, limit, k int) []string {
	var ids []string
	if s.sizes != nil {
		if k < len(s.sizes) {
			for i := range s.sizes[k] {
				ids = append(ids, fmt.Sprintf("%s-%d", name, k*limit+i))
			}
		}
		return ids
	}
	for i := start; i < min(start+limit, s.total); i++ {
		ids = append(ids, fmt.Sprintf("%s-%d", name, i))
	}
	return ids
}

// pagedAPI serves each stream at /<name>, by offset&limit or page&per_page (pages from 1).
func pagedAPI(t *testing.T, streams map[string]pagedStream) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		s, ok := streams[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		limit, _ := strconv.Atoi(q.Get("limit") + q.Get("per_page"))
		start, _ := strconv.Atoi(q.Get("offset"))
		if p := q.Get("page"); p != "" {
			n, _ := strconv.Atoi(p)
			start = (n - 1) * limit
		}
		var recs []string
		for _, id := range s.page(name, start, limit, start/max(limit, 1)) {
			recs = append(recs, fmt.Sprintf(`{"id":%q,"n":12345678901234567890}`, id))
		}
		fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(recs, ","))
	})
}

// pagedDefinition reads the named streams from base with OffsetIncrement ("offset") or
// PageIncrement ("page") and the given page size; extra is added at the top level.
func pagedDefinition(t *testing.T, base, mode string, size int, names []string, extra string) string {
	t.Helper()
	var streams strings.Builder
	for _, name := range names {
		fmt.Fprintf(&streams, `  - type: DeclarativeStream
    name: %s
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: %q, path: /%s, http_method: GET}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
`, name, base, name)
		switch mode {
		case "offset":
			fmt.Fprintf(&streams, `        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: %d}
`, size)
		case "page":
			fmt.Fprintf(&streams, `        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
        pagination_strategy: {type: PageIncrement, page_size: %d, start_from_page: 1}
`, size)
		}
	}
	return writeFile(t, "def.yaml", "version: 6.5.0\ntype: DeclarativeSource\n"+extra+"streams:\n"+streams.String())
}

// wantLines is the records a sequential read must emit: the given ids of stream name.
func wantLines(name string, ids ...int) string {
	var b strings.Builder
	for _, i := range ids {
		fmt.Fprintf(&b, `{"id":"%s-%d","n":12345678901234567890}`+"\n", name, i)
	}
	return b.String()
}

func upTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

func TestPrefetchMatchesSequential(t *testing.T) {
	t.Parallel()
	const size = 3
	tests := []struct {
		name   string
		stream pagedStream
		want   string
		args   []string
	}{
		{"empty first page", pagedStream{total: 0}, "", nil},
		{"one record", pagedStream{total: 1}, wantLines("items", 0), nil},
		{"exactly full last page", pagedStream{total: 3 * size}, wantLines("items", upTo(9)...), nil},
		{"short last page", pagedStream{total: 2*size + 1}, wantLines("items", upTo(7)...), nil},
		{"fewer pages than prefetch", pagedStream{total: size + 2}, wantLines("items", upTo(5)...), nil},
		{"short page in the middle, full pages after it", pagedStream{sizes: []int{3, 2, 3, 3, 3}},
			wantLines("items", 0, 1, 2, 3, 4), nil},
		{"more records than the limit", pagedStream{sizes: []int{4, 3, 1}}, wantLines("items", 0, 1, 2, 3, 3, 4, 5, 6), nil},
		{"--max-records", pagedStream{total: 30}, wantLines("items", upTo(7)...), []string{"--max-records", "7"}},
		{"--max-pages", pagedStream{total: 30}, wantLines("items", upTo(6)...), []string{"--max-pages", "2"}},
	}
	for _, mode := range []string{"offset", "page"} {
		for _, tt := range tests {
			t.Run(mode+"/"+tt.name, func(t *testing.T) {
				t.Parallel()
				api := pagedAPI(t, map[string]pagedStream{"items": tt.stream})
				def := pagedDefinition(t, api.URL, mode, size, []string{"items"}, "")
				vals := writeFile(t, "values.yaml", "{}\n")
				seq := runCLI(t, "", append([]string{"read", def, "--testing-values", vals}, tt.args...)...)
				if seq.Code != 0 || seq.Stdout != tt.want {
					t.Fatalf("sequential read: exit %d, stdout\n%s\nwant\n%s\nstderr: %s", seq.Code, seq.Stdout, tt.want, seq.Stderr)
				}
				sequential := len(api.requests())
				for _, n := range []string{"2", "4", "16"} {
					got := runCLI(t, "", append([]string{"read", def, "--testing-values", vals, "--prefetch", n}, tt.args...)...)
					if got.Code != 0 || got.Stdout != seq.Stdout || got.Stderr != seq.Stderr {
						t.Errorf("--prefetch %s: exit %d, stdout\n%s\nstderr %q\nwant the sequential stdout\n%s\nstderr %q",
							n, got.Code, got.Stdout, got.Stderr, seq.Stdout, seq.Stderr)
					}
				}
				if sequential == 0 {
					t.Fatal("no request")
				}
			})
		}
	}
}

func TestPrefetchRequestsAheadAndTracesDiscardedPages(t *testing.T) {
	t.Parallel()
	api := pagedAPI(t, map[string]pagedStream{"items": {total: 7}})
	def := pagedDefinition(t, api.URL, "offset", 3, []string{"items"}, "")
	vals := writeFile(t, "values.yaml", "{}\n")
	res := runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--prefetch", "5", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	// Up to five pages are requested ahead of the page being read (offsets 0 to 12 at
	// first). The third page (1 record) ends the stream; the pages requested beyond it (from
	// offset 9 on: how many depends on how fast the API answers) are discarded: cancelled,
	// or answered and not emitted.
	var urls []string
	for _, r := range api.requests() {
		urls = append(urls, r.URL)
	}
	for _, want := range []string{"/items?offset=0&limit=3", "/items?offset=3&limit=3", "/items?offset=6&limit=3"} {
		if !contains(urls, want) {
			t.Errorf("requests %q lack %s", urls, want)
		}
	}
	var pages, discarded []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		if !strings.Contains(line, `"event":"page"`) {
			continue
		}
		if strings.Contains(line, `"decision":"discarded"`) {
			discarded = append(discarded, line)
		} else {
			pages = append(pages, line)
		}
	}
	if len(pages) != 3 || !strings.Contains(pages[2], `"decision":"stop"`) || !strings.Contains(pages[2], `"token_before":6`) {
		t.Errorf("pages used:\n%s", strings.Join(pages, "\n"))
	}
	if len(discarded) < 2 || len(discarded) > 6 {
		t.Fatalf("discarded pages:\n%s", strings.Join(discarded, "\n"))
	}
	for i, d := range discarded {
		if !strings.Contains(d, fmt.Sprintf(`"page":%d,`, 4+i)) || !strings.Contains(d, fmt.Sprintf(`"token_before":%d}`, 9+3*i)) ||
			!strings.Contains(d, `"reason":"discarded: sent ahead, past the last page, `) || !strings.Contains(d, `"emitted":0,`) {
			t.Errorf("discarded page %d: %s", i, d)
		}
	}
	if !strings.Contains(res.Stdout, `{"event":"stream_end","pages":3,"records":7,"stream":"items"}`) {
		t.Errorf("stream end:\n%s", res.Stdout)
	}
}

func TestPrefetchFallsBackForCursorPagination(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `{"data":[{"id":1}],"next":"b"}`)
			return
		}
		fmt.Fprint(w, `{"data":[{"id":2}],"next":null}`)
	})
	def := writeFile(t, "def.yaml", `version: 6.5.0
streams:
  - name: items
    retriever:
      requester: {url_base: "`+api.URL+`", path: /items}
      record_selector: {extractor: {field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: cursor}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}"}
`)
	vals := writeFile(t, "values.yaml", "{}\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--prefetch", "4")
	if res.Code != 0 || res.Stdout != "{\"id\":1}\n{\"id\":2}\n" {
		t.Fatalf("exit %d, stdout %q, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	want := "note: items: --prefetch 4 ignored, reading one page at a time: CursorPagination takes each next page token from the previous response\n"
	if res.Stderr != want {
		t.Errorf("stderr %q, want %q", res.Stderr, want)
	}
}

func TestPrefetchFlagMustBePositive(t *testing.T) {
	t.Parallel()
	res := runCLI(t, "", "read", "def.yaml", "--testing-values", "v.yaml", "--prefetch", "0")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--prefetch must be 1 (one page at a time) or more") {
		t.Errorf("exit %d, stderr %s", res.Code, res.Stderr)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
