package demoapi

import (
	"fmt"
	"strings"
	"testing"
)

// books is the JSON list of the given books, as served.
func books(ids ...int) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, string(encode(Book(id))))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

// Author 4 wrote books 1, 51, 101, 151 and 201 (book n's author is (3n mod 50) + 1).
func TestBooksOf(t *testing.T) {
	if got := fmt.Sprint(BooksOf(DefaultRecords, 4)); got != "[1 51 101 151 201]" {
		t.Errorf("BooksOf(250, 4) = %s", got)
	}
	if got := BooksOf(DefaultRecords, 60); got != nil {
		t.Errorf("BooksOf(250, 60) = %v, want none", got)
	}
	for author := 1; author <= 50; author++ {
		if n := len(BooksOf(DefaultRecords, author)); n != 5 {
			t.Errorf("author %d has %d books, want 5", author, n)
		}
	}
}

// The books of one author, as a child collection in the path or filtered by author_id
// (query, JSON body or header), paginated in every style.
func TestAuthorBooks(t *testing.T) {
	e := newEnv(t, Options{})
	firstTwo := `{"data":` + books(1, 51) + `,"meta":{"offset":0,"limit":2,"total":5}}` + "\n"
	e.get("/v1/public/authors/4/books?limit=2").want(t, 200, firstTwo)
	e.get("/v1/public/authors/4/books/offset?limit=2").want(t, 200, firstTwo)
	e.get("/v1/public/books?author_id=4&limit=2").want(t, 200, firstTwo)
	e.do(req{url: "/v1/public/books?limit=2", header: map[string]string{"X-Author-Id": "4"}}).want(t, 200, firstTwo)
	e.do(req{method: "POST", url: "/v1/public/books", header: map[string]string{"Content-Type": jsonType},
		body: `{"author_id": 4, "limit": 2}`}).want(t, 200, firstTwo)
	e.get("/v1/public/authors/4/books?offset=4&limit=2").want(t, 200,
		`{"data":`+books(201)+`,"meta":{"offset":4,"limit":2,"total":5}}`+"\n")
	e.get("/v1/public/authors/4/books/pages?page=3&per_page=2").want(t, 200,
		`{"data":`+books(201)+`,"meta":{"page":3,"per_page":2,"total_pages":3}}`+"\n")
	next := EncodeCursor("books", 2)
	e.get("/v1/public/authors/4/books/cursor?limit=2").want(t, 200,
		`{"data":`+books(1, 51)+`,"meta":{"next_cursor":"`+next+`","has_more":true}}`+"\n")
	e.get("/v1/public/authors/4/books/cursor?limit=3&cursor="+next).want(t, 200,
		`{"data":`+books(101, 151, 201)+`,"meta":{"next_cursor":null,"has_more":false}}`+"\n")
	e.get("/v1/public/authors/4/books/after?limit=2&starting_after=51").want(t, 200,
		`{"object":"list","data":`+books(101, 151)+`,"has_more":true}`+"\n")
	e.get("/v1/public/authors/4/books/after?starting_after=2").want(t, 400,
		`{"error":"bad_request","message":"starting_after must be the id of a record, got \"2\""}`+"\n")
	e.get("/v1/public/authors/4/books/array?limit=1&offset=1").want(t, 200, books(51)+"\n")
	// An author without books, one that does not exist, a malformed path.
	e.get("/v1/public/authors/60/books").want(t, 200, `{"data":[],"meta":{"offset":0,"limit":25,"total":0}}`+"\n")
	e.get("/v1/public/authors/251/books").want(t, 404, `{"error":"not_found","message":"no author 251 (authors are 1 to 250)"}`+"\n")
	e.get("/v1/public/books?author_id=0").want(t, 400, `{"error":"bad_request","message":"author_id must be an integer >= 1, got \"0\""}`+"\n")
	e.get("/v1/public/authors/4/books?author_id=4").want(t, 400, `{"error":"bad_request","message":"author_id given twice: in the path and as a parameter"}`+"\n")
	e.get("/v1/public/authors/x/books").want(t, 404, `{"error":"not_found","message":"expected /v1/{area}/authors/{id}/books[/{pagination}] with a numeric id, got \"x\""}`+"\n")
	e.get("/v1/public/authors/4/books/offset/more").wantStatus(t, 404)
	// The area's authentication holds for the child collection too.
	e.get("/v1/bearer/authors/4/books").wantStatus(t, 401)
	e.do(req{url: "/v1/bearer/authors/4/books?limit=1", header: map[string]string{"Authorization": "Bearer " + DemoBearerToken}}).want(t, 200,
		`{"data":`+books(1)+`,"meta":{"offset":0,"limit":1,"total":5}}`+"\n")
	if got := e.srv.Stats().DataRequests; got != 13 {
		t.Errorf("%d data requests answered 200, want 13", got)
	}
}
