package demoapi

import (
	"encoding/json"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The first records of the books collection, exactly as served.
const (
	book1   = `{"id":1,"global_id":12345678901234567890,"title":"The Crimson Garden, vol. 1","author":{"id":4,"name":"Emeka Silva"},"price":6.36,"in_stock":true,"tags":["space","poetry"],"published":"2020-01-02","blurb":"<html>Salt & \"pepper\" vol. 1</html>"}`
	book2   = `{"id":2,"global_id":12345678901234567891,"title":"The Paper Lighthouse, vol. 2","author":{"id":7,"name":"Hana Okafor"},"price":7.73,"in_stock":true,"tags":["history","mystery"],"published":"2020-01-03","blurb":"<html>Salt & \"pepper\" vol. 2</html>"}`
	book3   = `{"id":3,"global_id":12345678901234567892,"title":"The Hidden Archive, vol. 3","author":{"id":10,"name":"Bea Tanaka"},"price":9.10,"in_stock":false,"tags":["poetry","fiction"],"published":"2020-01-04","blurb":"<html>Salt & \"pepper\" vol. 3</html>"}`
	author1 = `{"id":1,"name":"Bea Lindqvist","country":"SE","active":true,"rating":4.1,"address":{"city":"Uppsala","postcode":"10037"}}`
)

func TestRecordsAreByteExact(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	e.get("/v1/public/books?limit=2").want(t, 200,
		`{"data":[`+book1+`,`+book2+`],"meta":{"offset":0,"limit":2,"total":3}}`+"\n")
	e.get("/v1/public/authors?limit=1").want(t, 200,
		`{"data":[`+author1+`],"meta":{"offset":0,"limit":1,"total":3}}`+"\n")
	if got := len(book1); got < 200 || got > 300 {
		t.Errorf("book record is %d bytes, want 200..300", got)
	}
}

func TestDefaultRecordCount(t *testing.T) {
	e := newEnv(t, Options{})
	var page struct {
		Data []json.RawMessage
		Meta struct{ Offset, Limit, Total int }
	}
	e.get("/v1/public/books").decode(t, &page)
	if len(page.Data) != DefaultLimit || page.Meta.Total != DefaultRecords || page.Meta.Limit != DefaultLimit {
		t.Fatalf("got %d records, meta %+v", len(page.Data), page.Meta)
	}
}

// Exact bodies and headers of small pages in every style (3 records).
func TestPageBodies(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	base := e.ts.URL
	tests := []struct {
		name, url, body string
		header          map[string]string
	}{
		{"offset last page", "/v1/public/books/offset?offset=2&limit=2",
			`{"data":[` + book3 + `],"meta":{"offset":2,"limit":2,"total":3}}`, nil},
		{"offset past the end", "/v1/public/books?offset=9",
			`{"data":[],"meta":{"offset":9,"limit":25,"total":3}}`, nil},
		{"pages from one", "/v1/public/books/pages?page=2&per_page=2",
			`{"data":[` + book3 + `],"meta":{"page":2,"per_page":2,"total_pages":2}}`, nil},
		{"pages from zero", "/v1/public/books/pages-from-zero?page=0&per_page=2",
			`{"data":[` + book1 + `,` + book2 + `],"meta":{"page":0,"per_page":2,"total_pages":2}}`, nil},
		{"cursor first", "/v1/public/books/cursor?limit=2",
			`{"data":[` + book1 + `,` + book2 + `],"meta":{"next_cursor":"Ym9va3M6Mg","has_more":true}}`, nil},
		{"cursor last", "/v1/public/books/cursor?limit=2&cursor=Ym9va3M6Mg",
			`{"data":[` + book3 + `],"meta":{"next_cursor":null,"has_more":false}}`, nil},
		{"cursor header first", "/v1/public/books/cursor-header?limit=2",
			`{"data":[` + book1 + `,` + book2 + `]}`, map[string]string{"X-Next-Cursor": "Ym9va3M6Mg"}},
		{"cursor header last", "/v1/public/books/cursor-header?limit=2&cursor=Ym9va3M6Mg",
			`{"data":[` + book3 + `]}`, map[string]string{"X-Next-Cursor": ""}},
		{"link absolute", "/v1/public/books/link?per_page=2",
			`[` + book1 + `,` + book2 + `]`, map[string]string{"Link": `<` + base + `/v1/public/books/link?page=2&per_page=2>; rel="next", <` + base + `/v1/public/books/link?page=2&per_page=2>; rel="last"`}},
		{"link relative last", "/v1/public/books/link-relative?page=2&per_page=2",
			`[` + book3 + `]`, map[string]string{"Link": `</v1/public/books/link-relative?page=2&per_page=2>; rel="last"`}},
		{"next url", "/v1/public/books/next-url?limit=2",
			`{"data":[` + book1 + `,` + book2 + `],"next":"` + base + `/v1/public/books/next-url?offset=2&limit=2"}`, nil},
		{"next url last", "/v1/public/books/next-url?limit=2&offset=2",
			`{"data":[` + book3 + `],"next":null}`, nil},
		{"after first", "/v1/public/books/after?limit=2",
			`{"object":"list","data":[` + book1 + `,` + book2 + `],"has_more":true}`, nil},
		{"after last", "/v1/public/books/after?limit=2&starting_after=2",
			`{"object":"list","data":[` + book3 + `],"has_more":false}`, nil},
		{"array", "/v1/public/books/array?offset=1&limit=1", `[` + book2 + `]`, nil},
		{"range", "/v1/public/books/range?range=1,2", `{"data":[` + book2 + `,` + book3 + `]}`, nil},
		{"range default", "/v1/public/authors/range", `{"data":[` + author1 + `,` + authorJSON(2) + `,` + authorJSON(3) + `]}`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.get(tt.url)
			r.want(t, 200, tt.body+"\n")
			for k, v := range tt.header {
				if got := r.header.Get(k); got != v {
					t.Errorf("header %s = %q, want %q", k, got, v)
				}
			}
			if ct := r.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
		})
	}
}

func authorJSON(id int) string { return string(encode(Author(id))) }

// linkNext extracts the rel="next" target of a Link header.
var linkNext = regexp.MustCompile(`<([^>]*)>; rel="next"`)

// Every style walked as a client would walk it: all records once, in order,
// then a stop. The walks start without page parameters where the style allows.
func TestPaginationTerminates(t *testing.T) {
	const n = 53
	e := newEnv(t, Options{Records: n})
	type page struct {
		ids  []int
		next string // next URL, "" to stop
	}
	ids := func(t *testing.T, raw []json.RawMessage) []int {
		out := make([]int, len(raw))
		for i, r := range raw {
			var rec struct{ ID int }
			if err := json.Unmarshal(r, &rec); err != nil {
				t.Fatal(err)
			}
			out[i] = rec.ID
		}
		return out
	}
	// withParam returns the request URL with one query parameter set.
	withParam := func(u, k, v string) string {
		p, _ := url.Parse(u)
		q := p.Query()
		q.Set(k, v)
		p.RawQuery = q.Encode()
		return p.String()
	}
	tests := []struct {
		name     string
		start    string
		requests int
		step     func(t *testing.T, u string, r response) page
	}{
		{"offset", "/v1/public/books?limit=10", 6, func(t *testing.T, u string, r response) page {
			var b struct {
				Data []json.RawMessage
				Meta offsetMeta
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if len(b.Data) >= b.Meta.Limit {
				p.next = withParam(u, "offset", strconv.Itoa(b.Meta.Offset+len(b.Data)))
			}
			return p
		}},
		{"pages", "/v1/public/books/pages?per_page=10", 6, func(t *testing.T, u string, r response) page {
			var b struct {
				Data []json.RawMessage
				Meta pageMeta
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if len(b.Data) >= b.Meta.PerPage {
				p.next = withParam(u, "page", strconv.Itoa(b.Meta.Page+1))
			}
			return p
		}},
		{"pages from zero", "/v1/public/books/pages-from-zero?per_page=53", 2, func(t *testing.T, u string, r response) page {
			var b struct {
				Data []json.RawMessage
				Meta pageMeta
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if len(b.Data) >= b.Meta.PerPage {
				p.next = withParam(u, "page", strconv.Itoa(b.Meta.Page+1))
			}
			return p
		}},
		{"cursor", "/v1/public/books/cursor?limit=20", 3, func(t *testing.T, u string, r response) page {
			var b struct {
				Data []json.RawMessage
				Meta cursorMeta
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if b.Meta.NextCursor != nil {
				p.next = withParam(u, "cursor", *b.Meta.NextCursor)
			}
			return p
		}},
		{"cursor header", "/v1/public/books/cursor-header", 3, func(t *testing.T, u string, r response) page {
			var b dataOnly
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if c := r.header.Get("X-Next-Cursor"); c != "" {
				p.next = withParam(u, "cursor", c)
			}
			return p
		}},
		{"link", "/v1/public/books/link?per_page=50", 2, func(t *testing.T, u string, r response) page {
			var b []json.RawMessage
			r.decode(t, &b)
			p := page{ids: ids(t, b)}
			if m := linkNext.FindStringSubmatch(r.header.Get("Link")); m != nil {
				p.next = m[1]
			}
			return p
		}},
		{"link relative", "/v1/public/books/link-relative", 3, func(t *testing.T, u string, r response) page {
			var b []json.RawMessage
			r.decode(t, &b)
			p := page{ids: ids(t, b)}
			if m := linkNext.FindStringSubmatch(r.header.Get("Link")); m != nil {
				p.next = m[1] // a path: resolved against the server below
			}
			return p
		}},
		{"next url", "/v1/public/books/next-url?limit=100", 1, func(t *testing.T, u string, r response) page {
			var b struct {
				Data []json.RawMessage
				Next *string
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if b.Next != nil {
				p.next = *b.Next
			}
			return p
		}},
		{"after", "/v1/public/books/after?limit=13", 5, func(t *testing.T, u string, r response) page {
			var b struct {
				Data    []json.RawMessage
				HasMore bool `json:"has_more"`
			}
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if b.HasMore {
				p.next = withParam(u, "starting_after", strconv.Itoa(p.ids[len(p.ids)-1]))
			}
			return p
		}},
		{"range", "/v1/public/books/range?range=0,25", 3, func(t *testing.T, u string, r response) page {
			var b dataOnly
			r.decode(t, &b)
			p := page{ids: ids(t, b.Data)}
			if len(b.Data) >= 25 { // ids are 1-based, so the last id is the next offset
				p.next = withParam(u, "range", strconv.Itoa(p.ids[len(p.ids)-1])+",25")
			}
			return p
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []int
			u, requests := tt.start, 0
			for u != "" {
				if requests++; requests > 100 {
					t.Fatal("no termination after 100 requests")
				}
				r := e.get(u)
				r.wantStatus(t, 200)
				if strings.HasPrefix(u, "/") {
					u = e.ts.URL + u
				}
				p := tt.step(t, u, r)
				got = append(got, p.ids...)
				u = p.next
			}
			if requests != tt.requests {
				t.Errorf("%d requests, want %d", requests, tt.requests)
			}
			if len(got) != n {
				t.Fatalf("got %d records, want %d: %v", len(got), n, got)
			}
			for i, id := range got {
				if id != i+1 {
					t.Fatalf("record %d has id %d: %v", i, id, got)
				}
			}
		})
	}
}

// Pagination parameters are accepted from the query, the POST body (JSON or
// form) and X- headers; sources that disagree are refused.
func TestParameterSources(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	want := `{"data":[` + book2 + `],"meta":{"offset":1,"limit":1,"total":3}}` + "\n"
	e.do(req{url: "/v1/public/books", header: map[string]string{"X-Offset": "1", "X-Limit": "1"}}).want(t, 200, want)
	e.do(req{method: "POST", url: "/v1/public/books", header: map[string]string{"Content-Type": jsonType},
		body: `{"offset": 1, "limit": "1"}`}).want(t, 200, want)
	e.do(req{method: "POST", url: "/v1/public/books?offset=1", header: map[string]string{"Content-Type": formType},
		body: `limit=1&offset=1`}).want(t, 200, want)
	e.do(req{url: "/v1/public/books/pages?per_page=1", header: map[string]string{"X-Page": "2"}}).want(t, 200,
		`{"data":[`+book2+`],"meta":{"page":2,"per_page":1,"total_pages":3}}`+"\n")

	e.do(req{url: "/v1/public/books?offset=1", header: map[string]string{"X-Offset": "2"}}).want(t, 400,
		`{"error":"bad_request","message":"conflicting values for offset: header X-Offset=\"2\", query=\"1\""}`+"\n")
	e.get("/v1/public/books?offset=1&offset=2").want(t, 400,
		`{"error":"bad_request","message":"query parameter offset repeated with different values"}`+"\n")
}

func TestBadParameters(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	tests := []struct{ url, message string }{
		{"/v1/public/books?limit=101", `limit must be an integer from 1 to 100, got \"101\"`},
		{"/v1/public/books?limit=0", `limit must be an integer from 1 to 100, got \"0\"`},
		{"/v1/public/books?offset=-1", `offset must be an integer >= 0, got \"-1\"`},
		{"/v1/public/books/pages?page=0", `page must be an integer >= 1, got \"0\"`},
		{"/v1/public/books/cursor?cursor=nope", `invalid cursor \"nope\"`},
		{"/v1/public/authors/cursor?cursor=Ym9va3M6Mg", `invalid cursor \"Ym9va3M6Mg\"`},
		{"/v1/public/books/after?starting_after=4", `starting_after must be the id of a record, got \"4\"`},
		{"/v1/public/books/range?range=5", `range must be <offset>,<limit> with limit from 1 to 100, got \"5\"`},
	}
	for _, tt := range tests {
		e.get(tt.url).want(t, 400, `{"error":"bad_request","message":"`+tt.message+`"}`+"\n")
	}
	e.get("/v1/public/books/sideways").want(t, 404, `{"error":"not_found","message":"unknown pagination style \"sideways\""}`+"\n")
	e.get("/v1/public/films").want(t, 404, `{"error":"not_found","message":"unknown collection \"films\""}`+"\n")
	e.do(req{method: "DELETE", url: "/v1/public/books"}).wantStatus(t, 405)
	e.do(req{method: "POST", url: "/v1/public/books", header: map[string]string{"Content-Type": "text/plain"}, body: "hi"}).wantStatus(t, 415)
	e.do(req{method: "POST", url: "/v1/public/books", header: map[string]string{"Content-Type": jsonType}, body: "[1]"}).wantStatus(t, 400)
}

// repeat-cursor hands out the same cursor forever, for client loop guards.
func TestRepeatCursor(t *testing.T) {
	e := newEnv(t, Options{Records: 10})
	var cursors []string
	u := "/v1/public/books/repeat-cursor?limit=2"
	for range 3 {
		var b struct{ Meta cursorMeta }
		e.get(u).decode(t, &b)
		cursors = append(cursors, *b.Meta.NextCursor)
		u = "/v1/public/books/repeat-cursor?limit=2&cursor=" + *b.Meta.NextCursor
	}
	if cursors[0] != cursors[1] || cursors[1] != cursors[2] {
		t.Fatalf("cursors differ: %v", cursors)
	}
}

func TestErrorHelpers(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	r := e.get("/v1/errors/status/503?retry_after=2")
	r.want(t, 503, `{"error":"demo_status","message":"status 503 as requested"}`+"\n")
	if r.header.Get("Retry-After") != "2" {
		t.Errorf("Retry-After %q", r.header.Get("Retry-After"))
	}
	r = e.get("/v1/errors/not-json")
	r.want(t, 200, "<html><body>this is not JSON</body></html>\n")
	for i := 1; i <= 2; i++ {
		e.get("/v1/errors/flaky?key=a&failures=2&status=429").want(t, 429,
			`{"error":"flaky","message":"failure `+strconv.Itoa(i)+` of 2 for key \"a\""}`+"\n")
	}
	e.get("/v1/errors/flaky?key=a&failures=2&status=429").want(t, 200, `{"data":[`+book1+`]}`+"\n")
	e.get("/v1/errors/flaky?key=b&failures=1").wantStatus(t, 503)
}
