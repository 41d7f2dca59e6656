package demoapi

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// events and reviews are the JSON lists of the given records, as served.
func events(ids ...int) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, string(encode(Event(id))))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func reviews(ids ...int) string {
	var parts []string
	for _, id := range ids {
		parts = append(parts, string(encode(Review(id))))
	}
	return "[" + strings.Join(parts, ",") + "]"
}

func at(s string) time.Time {
	t, err := time.Parse(TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

// The records are fixed instants, whatever the clock: 500 events fill 2024.
func TestEventRecords(t *testing.T) {
	const first = `{"id":1,"kind":"refund","book_id":8,"quantity":2,"updated_at":"2024-01-01T00:00:00Z"}`
	if got := string(encode(Event(1))); got != first {
		t.Errorf("event 1 = %s\nwant %s", got, first)
	}
	const last = `{"id":500,"kind":"order","book_id":1,"quantity":1,"updated_at":"2024-12-31T06:27:35Z"}`
	if got := string(encode(Event(500))); got != last {
		t.Errorf("event 500 = %s\nwant %s", got, last)
	}
	const review = `{"id":54,"author_id":4,"rating":3,"title":"Gripping, review 54","updated_at":"2024-02-08T22:06:25Z"}`
	if got := string(encode(Review(54))); got != review {
		t.Errorf("review 54 = %s\nwant %s", got, review)
	}
	if got := fmt.Sprint(EventsBetween(DefaultEvents, at("2024-01-01T17:34:05Z"), at("2024-01-03T00:00:00Z"))); got != "[2 3]" {
		t.Errorf("EventsBetween = %s", got)
	}
	if got := len(EventsBetween(DefaultEvents, at("2024-01-01T00:00:00Z"), at("2024-12-31T23:59:59Z"))); got != DefaultEvents {
		t.Errorf("%d events in 2024, want all %d", got, DefaultEvents)
	}
	if got := fmt.Sprint(ReviewsOf(DefaultEvents, 4, time.Time{}, at("2024-06-30T23:59:59Z"))); got != "[4 54 104 154 204]" {
		t.Errorf("ReviewsOf(4, until June) = %s", got)
	}
	if got := len(ReviewsOf(DefaultEvents, 50, time.Time{}, time.Time{})); got != 10 {
		t.Errorf("author 50 has %d reviews, want 10", got)
	}
}

// since and until keep the records whose updated_at is within them, both inclusive, then
// the page is cut as in any other collection.
func TestEventsSinceUntil(t *testing.T) {
	e := newEnv(t, Options{})
	e.get("/v1/public/events?limit=2").want(t, 200,
		`{"data":`+events(1, 2)+`,"meta":{"offset":0,"limit":2,"total":500}}`+"\n")
	// Event 2 is at 2024-01-01T17:34:05Z, event 3 at 2024-01-02T11:08:10Z, event 4 at 2024-01-03T04:42:15Z.
	e.get("/v1/public/events?since=2024-01-01T17:34:05Z&until=2024-01-03T04:42:15Z").want(t, 200,
		`{"data":`+events(2, 3, 4)+`,"meta":{"offset":0,"limit":25,"total":3}}`+"\n")
	e.get("/v1/public/events?since=2024-01-01T17:34:06Z&until=2024-01-03T04:42:14Z").want(t, 200,
		`{"data":`+events(3)+`,"meta":{"offset":0,"limit":25,"total":1}}`+"\n")
	e.get("/v1/public/events?since=2024-12-30T12:53:30Z").want(t, 200,
		`{"data":`+events(499, 500)+`,"meta":{"offset":0,"limit":25,"total":2}}`+"\n")
	e.get("/v1/public/events?until=2024-01-01T00:00:00Z").want(t, 200,
		`{"data":`+events(1)+`,"meta":{"offset":0,"limit":25,"total":1}}`+"\n")
	e.get("/v1/public/events?since=2025-01-01T00:00:00Z").want(t, 200,
		`{"data":[],"meta":{"offset":0,"limit":25,"total":0}}`+"\n")
	e.get("/v1/public/events?since=&until=").want(t, 200,
		`{"data":`+events(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25)+`,"meta":{"offset":0,"limit":25,"total":500}}`+"\n")
	// Within the window, every pagination style; the window goes in a header or a body too.
	window := "since=2024-01-01T17:34:05Z&until=2024-01-03T04:42:15Z"
	e.get("/v1/public/events?offset=2&limit=2&"+window).want(t, 200,
		`{"data":`+events(4)+`,"meta":{"offset":2,"limit":2,"total":3}}`+"\n")
	e.get("/v1/public/events/pages?page=2&per_page=2&"+window).want(t, 200,
		`{"data":`+events(4)+`,"meta":{"page":2,"per_page":2,"total_pages":2}}`+"\n")
	e.get("/v1/public/events/after?limit=1&starting_after=2&"+window).want(t, 200,
		`{"object":"list","data":`+events(3)+`,"has_more":true}`+"\n")
	e.get("/v1/public/events/cursor?limit=2&"+window).want(t, 200,
		`{"data":`+events(2, 3)+`,"meta":{"next_cursor":"`+EncodeCursor("events", 2)+`","has_more":true}}`+"\n")
	e.do(req{url: "/v1/public/events?limit=1", header: map[string]string{"X-Since": "2024-12-31T00:00:00Z"}}).want(t, 200,
		`{"data":`+events(500)+`,"meta":{"offset":0,"limit":1,"total":1}}`+"\n")
	e.do(req{method: "POST", url: "/v1/public/events", header: map[string]string{"Content-Type": jsonType},
		body: `{"since": "2024-12-31T00:00:00Z", "until": "2024-12-31T06:27:35Z"}`}).want(t, 200,
		`{"data":`+events(500)+`,"meta":{"offset":0,"limit":25,"total":1}}`+"\n")
	// Books and authors have no updated_at: the parameters are ignored there, as before.
	e.get("/v1/public/books?limit=1&since=2030-01-01T00:00:00Z").want(t, 200,
		`{"data":`+books(1)+`,"meta":{"offset":0,"limit":1,"total":250}}`+"\n")
	if got := e.srv.Stats().DataRequests; got != 14 {
		t.Errorf("%d data requests answered 200, want 14", got)
	}
}

func TestEventsBadWindow(t *testing.T) {
	e := newEnv(t, Options{})
	tests := []struct{ url, message string }{
		{"/v1/public/events?since=2024-03-01", `since must be a UTC date and time like 2024-03-01T00:00:00Z, got \"2024-03-01\"`},
		{"/v1/public/events?until=2024-03-01T00:00:00%2B02:00", `until must be a UTC date and time like 2024-03-01T00:00:00Z, got \"2024-03-01T00:00:00+02:00\"`},
		{"/v1/public/events?since=2024-03-02T00:00:00Z&until=2024-03-01T00:00:00Z", `since (2024-03-02T00:00:00Z) is after until (2024-03-01T00:00:00Z)`},
		{"/v1/public/authors/4/reviews?since=yesterday", `since must be a UTC date and time like 2024-03-01T00:00:00Z, got \"yesterday\"`},
	}
	for _, tt := range tests {
		e.get(tt.url).want(t, 400, `{"error":"bad_request","message":"`+tt.message+`"}`+"\n")
	}
	e.do(req{url: "/v1/public/events?since=2024-03-01T00:00:00Z", header: map[string]string{"X-Since": "2024-03-02T00:00:00Z"}}).want(t, 400,
		`{"error":"bad_request","message":"conflicting values for since: header X-Since=\"2024-03-02T00:00:00Z\", query=\"2024-03-01T00:00:00Z\""}`+"\n")
}

// The reviews of one author, a child collection for a substream, filtered by time.
func TestAuthorReviews(t *testing.T) {
	e := newEnv(t, Options{})
	// Author 4's reviews: 4, 54, 104, … (review n's author is (n-1 mod 50) + 1).
	e.get("/v1/public/authors/4/reviews?limit=2").want(t, 200,
		`{"data":`+reviews(4, 54)+`,"meta":{"offset":0,"limit":2,"total":10}}`+"\n")
	e.get("/v1/public/reviews?author_id=4&limit=2").want(t, 200,
		`{"data":`+reviews(4, 54)+`,"meta":{"offset":0,"limit":2,"total":10}}`+"\n")
	// Review 54 is at 2024-02-08T22:06:25Z, review 104 at 2024-03-16T12:30:35Z.
	e.get("/v1/public/authors/4/reviews?since=2024-02-01T00:00:00Z&until=2024-02-29T23:59:59Z").want(t, 200,
		`{"data":`+reviews(54)+`,"meta":{"offset":0,"limit":25,"total":1}}`+"\n")
	e.get("/v1/public/authors/4/reviews?since=2024-02-08T22:06:25Z&until=2024-03-16T12:30:35Z").want(t, 200,
		`{"data":`+reviews(54, 104)+`,"meta":{"offset":0,"limit":25,"total":2}}`+"\n")
	e.get("/v1/public/authors/4/reviews/after?starting_after=54&limit=1&since=2024-02-01T00:00:00Z").want(t, 200,
		`{"object":"list","data":`+reviews(104)+`,"has_more":true}`+"\n")
	e.get("/v1/public/authors/4/reviews?since=2024-02-10T00:00:00Z&until=2024-03-01T00:00:00Z").want(t, 200,
		`{"data":[],"meta":{"offset":0,"limit":25,"total":0}}`+"\n")
	e.get("/v1/public/authors/60/reviews").want(t, 200, `{"data":[],"meta":{"offset":0,"limit":25,"total":0}}`+"\n")
	e.get("/v1/public/authors/251/reviews").want(t, 404, `{"error":"not_found","message":"no author 251 (authors are 1 to 250)"}`+"\n")
	e.get("/v1/public/authors/x/reviews").want(t, 404, `{"error":"not_found","message":"expected /v1/{area}/authors/{id}/reviews[/{pagination}] with a numeric id, got \"x\""}`+"\n")
	e.get("/v1/bearer/authors/4/reviews").wantStatus(t, 401)
}

// Options.Events sets the size of events and reviews; the instants stay where they are.
func TestEventsOption(t *testing.T) {
	e := newEnv(t, Options{Events: 3})
	e.get("/v1/public/events?since=2024-01-02T00:00:00Z").want(t, 200,
		`{"data":`+events(3)+`,"meta":{"offset":0,"limit":25,"total":1}}`+"\n")
	e.get("/v1/public/reviews").want(t, 200,
		`{"data":`+reviews(1, 2, 3)+`,"meta":{"offset":0,"limit":25,"total":3}}`+"\n")
}
