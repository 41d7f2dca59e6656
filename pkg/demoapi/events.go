package demoapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultEvents is the number of records of events and of reviews when Options.Events is
// zero: 500, one every 17h34m05s from 2024-01-01, so they fill the year 2024.
const DefaultEvents = 500

// TimeFormat is the format of updated_at and of the since / until parameters
// (%Y-%m-%dT%H:%M:%SZ).
const TimeFormat = "2006-01-02T15:04:05Z"

// The time-stamped collections do not follow the clock: event n is always at the same
// instant, so a definition with a fixed end date reads the same records every day.
var (
	firstEvent   = time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	eventSpacing = 17*time.Hour + 34*time.Minute + 5*time.Second
	reviewShift  = 3 * time.Hour // review n is 3 hours after event n
	eventKinds   = []string{"order", "refund", "restock", "price_change"}
	reviewWords  = []string{"Gripping", "Uneven", "Luminous", "Slow", "Essential", "Charming"}
)

// EventRecord is one record of the events collection, in the key order it is served.
type EventRecord struct {
	ID        int    `json:"id"`
	Kind      string `json:"kind"`
	BookID    int    `json:"book_id"`
	Quantity  int    `json:"quantity"`
	UpdatedAt string `json:"updated_at"`
}

// ReviewRecord is one record of the reviews collection, in the key order it is served.
type ReviewRecord struct {
	ID        int    `json:"id"`
	AuthorID  int    `json:"author_id"`
	Rating    int    `json:"rating"`
	Title     string `json:"title"`
	UpdatedAt string `json:"updated_at"`
}

// EventTime is the updated_at of event id (1-based): 2024-01-01T00:00:00Z plus id-1 times
// 17h34m05s.
func EventTime(id int) time.Time { return firstEvent.Add(time.Duration(id-1) * eventSpacing) }

// ReviewTime is the updated_at of review id: 3 hours after event id.
func ReviewTime(id int) time.Time { return EventTime(id).Add(reviewShift) }

// Event returns event id exactly as the API serves it.
func Event(id int) EventRecord {
	return EventRecord{
		ID:        id,
		Kind:      eventKinds[id%len(eventKinds)],
		BookID:    (id*7)%DefaultRecords + 1,
		Quantity:  1 + id%5,
		UpdatedAt: EventTime(id).Format(TimeFormat),
	}
}

// Review returns review id exactly as the API serves it. Review n is about author
// (n-1 mod 50) + 1: authors 1 to 50 have one review every 50 reviews (about every 37 days).
func Review(id int) ReviewRecord {
	return ReviewRecord{
		ID:        id,
		AuthorID:  reviewAuthor(id),
		Rating:    1 + (id*3)%5,
		Title:     fmt.Sprintf("%s, review %d", reviewWords[id%len(reviewWords)], id),
		UpdatedAt: ReviewTime(id).Format(TimeFormat),
	}
}

func reviewAuthor(id int) int { return (id-1)%50 + 1 }

// EventsBetween returns the ids of the events whose updated_at is in [since, until] (both
// inclusive; a zero time is no bound), in the order they are served.
func EventsBetween(events int, since, until time.Time) []int {
	return between(events, EventTime, since, until, func(int) bool { return true })
}

// ReviewsOf returns the ids of the reviews of author whose updated_at is in [since, until]
// (a zero time is no bound), in the order they are served.
func ReviewsOf(events, author int, since, until time.Time) []int {
	return between(events, ReviewTime, since, until, func(id int) bool { return reviewAuthor(id) == author })
}

func between(n int, at func(int) time.Time, since, until time.Time, keep func(int) bool) []int {
	var ids []int
	for id := 1; id <= n; id++ {
		t := at(id)
		if keep(id) && (since.IsZero() || !t.Before(since)) && (until.IsZero() || !t.After(until)) {
			ids = append(ids, id)
		}
	}
	return ids
}

// timedCollections are events and reviews with the instants of their records.
func timedCollections(n int) (events, reviews *collection) {
	events = &collection{name: "events", records: make([]json.RawMessage, n), stamps: make([]time.Time, n)}
	reviews = &collection{name: "reviews", records: make([]json.RawMessage, n), stamps: make([]time.Time, n)}
	for i := range n {
		events.records[i], events.stamps[i] = encode(Event(i+1)), EventTime(i+1)
		reviews.records[i], reviews.stamps[i] = encode(Review(i+1)), ReviewTime(i+1)
	}
	return events, reviews
}

// reviewsByAuthor groups the reviews by author id, in review order.
func reviewsByAuthor(reviews *collection) map[int]*collection {
	out := map[int]*collection{}
	for i, rec := range reviews.records {
		id := reviewAuthor(i + 1)
		c := out[id]
		if c == nil {
			c = &collection{name: "reviews"}
			out[id] = c
		}
		c.records = append(c.records, rec)
		c.stamps = append(c.stamps, reviews.stamps[i])
		c.ids = append(c.ids, i+1)
	}
	return out
}

// timeFilter keeps the records of a time-stamped collection whose updated_at is within the
// since and until parameters (both inclusive, each optional). Other collections ignore them.
func timeFilter(q *request, c *collection) (*collection, *apiError) {
	if c.name != "events" && c.name != "reviews" {
		return c, nil
	}
	since, err := timeParam(q, "since")
	if err != nil {
		return nil, err
	}
	until, err := timeParam(q, "until")
	if err != nil {
		return nil, err
	}
	if since.IsZero() && until.IsZero() {
		return c, nil
	}
	if !since.IsZero() && !until.IsZero() && since.After(until) {
		return nil, badRequest("since (%s) is after until (%s)", since.Format(TimeFormat), until.Format(TimeFormat))
	}
	out := &collection{name: c.name, records: []json.RawMessage{}, ids: []int{}}
	for i, t := range c.stamps {
		if (since.IsZero() || !t.Before(since)) && (until.IsZero() || !t.After(until)) {
			out.records = append(out.records, c.records[i])
			out.stamps = append(out.stamps, t)
			out.ids = append(out.ids, c.id(i))
		}
	}
	return out, nil
}

// timeParam reads a since / until parameter: absent or empty is no bound.
func timeParam(q *request, name string) (time.Time, *apiError) {
	s, ok, err := q.param(name)
	if err != nil || !ok || s == "" {
		return time.Time{}, err
	}
	t, parseErr := time.Parse(TimeFormat, strings.TrimSpace(s))
	if parseErr != nil {
		return time.Time{}, badRequest("%s must be a UTC date and time like 2024-03-01T00:00:00Z, got %s", name, strconv.Quote(s))
	}
	return t, nil
}

// childOf is the child collection of one author: books or reviews.
func (s *Server) childOf(name string, author int) *collection {
	byAuthor := s.byAuthor
	if name == "reviews" {
		byAuthor = s.reviewsByAuthor
	}
	if c := byAuthor[author]; c != nil {
		return c
	}
	return &collection{name: name}
}
