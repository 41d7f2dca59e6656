package demoapi

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// style serves one page of a collection in one pagination style.
type style func(w http.ResponseWriter, r *http.Request, q *request, c *collection) *apiError

var styles = map[string]style{
	"offset":          offsetStyle,
	"pages":           pagesStyle(1),
	"pages-from-zero": pagesStyle(0),
	"cursor":          cursorStyle,
	"cursor-header":   cursorHeaderStyle,
	"link":            linkStyle(true),
	"link-relative":   linkStyle(false),
	"next-url":        nextURLStyle,
	"after":           afterStyle,
	"array":           arrayStyle,
	"range":           rangeStyle,
	"repeat-cursor":   repeatCursorStyle,
}

// slice returns up to n records starting at index off, never nil.
func (c *collection) slice(off, n int) []json.RawMessage {
	if off >= len(c.records) {
		return []json.RawMessage{}
	}
	end := min(off+n, len(c.records))
	return c.records[off:end]
}

type offsetMeta struct {
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
	Total  int `json:"total"`
}

type pageMeta struct {
	Page       int `json:"page"`
	PerPage    int `json:"per_page"`
	TotalPages int `json:"total_pages"`
}

type cursorMeta struct {
	NextCursor *string `json:"next_cursor"`
	HasMore    bool    `json:"has_more"`
}

type dataOnly struct {
	Data []json.RawMessage `json:"data"`
}

// offsetLimit reads offset (default 0) and limit (default 25, 1..100).
func offsetLimit(q *request) (int, int, *apiError) {
	off, err := q.intParam("offset", 0, 0, maxInt)
	if err != nil {
		return 0, 0, err
	}
	limit, err := q.limitParam("limit")
	return off, limit, err
}

func offsetStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	off, limit, err := offsetLimit(q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, struct {
		Data []json.RawMessage `json:"data"`
		Meta offsetMeta        `json:"meta"`
	}{c.slice(off, limit), offsetMeta{off, limit, len(c.records)}})
	return nil
}

func arrayStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	off, limit, err := offsetLimit(q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, c.slice(off, limit))
	return nil
}

// pageParams reads page (first page = start) and per_page, and returns the
// offset of the page.
func pageParams(q *request, start int, total int) (page, per, off int, err *apiError) {
	if page, err = q.intParam("page", start, start, maxInt); err != nil {
		return
	}
	if per, err = q.limitParam("per_page"); err != nil {
		return
	}
	off = total
	if page-start < total { // avoids overflow for huge page numbers
		off = min((page-start)*per, total)
	}
	return
}

func totalPages(total, per int) int { return (total + per - 1) / per }

func pagesStyle(start int) style {
	return func(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
		page, per, off, err := pageParams(q, start, len(c.records))
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, struct {
			Data []json.RawMessage `json:"data"`
			Meta pageMeta          `json:"meta"`
		}{c.slice(off, per), pageMeta{page, per, totalPages(len(c.records), per)}})
		return nil
	}
}

// EncodeCursor returns the opaque cursor that /cursor, /cursor-header and
// /repeat-cursor use for the record at index off of a collection.
func EncodeCursor(collection string, off int) string {
	return base64.RawURLEncoding.EncodeToString([]byte(collection + ":" + strconv.Itoa(off)))
}

// cursorPage reads cursor and limit and returns the page and the next cursor
// ("" on the last page).
func cursorPage(q *request, c *collection) ([]json.RawMessage, string, *apiError) {
	off := 0
	cur, ok, err := q.param("cursor")
	if err != nil {
		return nil, "", err
	}
	if ok && cur != "" {
		raw, decErr := base64.RawURLEncoding.DecodeString(cur)
		name, num, found := strings.Cut(string(raw), ":")
		n, convErr := strconv.Atoi(num)
		if decErr != nil || !found || name != c.name || convErr != nil || n < 0 || n > len(c.records) {
			return nil, "", badRequest("invalid cursor %q", cur)
		}
		off = n
	}
	limit, err := q.limitParam("limit")
	if err != nil {
		return nil, "", err
	}
	data := c.slice(off, limit)
	next := ""
	if end := off + len(data); end < len(c.records) {
		next = EncodeCursor(c.name, end)
	}
	return data, next, nil
}

func cursorStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	data, next, err := cursorPage(q, c)
	if err != nil {
		return err
	}
	meta := cursorMeta{HasMore: next != ""}
	if next != "" {
		meta.NextCursor = &next
	}
	writeJSON(w, http.StatusOK, struct {
		Data []json.RawMessage `json:"data"`
		Meta cursorMeta        `json:"meta"`
	}{data, meta})
	return nil
}

func cursorHeaderStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	data, next, err := cursorPage(q, c)
	if err != nil {
		return err
	}
	if next != "" {
		w.Header().Set("X-Next-Cursor", next)
	}
	writeJSON(w, http.StatusOK, dataOnly{data})
	return nil
}

// repeatCursorStyle is deliberately broken: its next_cursor always points to
// the second page, so a client that follows it gets the same cursor again.
func repeatCursorStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	data, _, err := cursorPage(q, c)
	if err != nil {
		return err
	}
	limit, _ := q.limitParam("limit")
	next := EncodeCursor(c.name, min(limit, len(c.records)))
	writeJSON(w, http.StatusOK, struct {
		Data []json.RawMessage `json:"data"`
		Meta cursorMeta        `json:"meta"`
	}{data, cursorMeta{NextCursor: &next, HasMore: true}})
	return nil
}

// baseURL is scheme://host of the request, for absolute links.
func baseURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host
}

func linkStyle(absolute bool) style {
	return func(w http.ResponseWriter, r *http.Request, q *request, c *collection) *apiError {
		page, per, off, err := pageParams(q, 1, len(c.records))
		if err != nil {
			return err
		}
		prefix := r.URL.Path
		if absolute {
			prefix = baseURL(r) + prefix
		}
		link := func(p int, rel string) string {
			return fmt.Sprintf(`<%s?page=%d&per_page=%d>; rel="%s"`, prefix, p, per, rel)
		}
		last := max(totalPages(len(c.records), per), 1)
		links := []string{}
		if page < last {
			links = append(links, link(page+1, "next"))
		}
		links = append(links, link(last, "last"))
		w.Header().Set("Link", strings.Join(links, ", "))
		writeJSON(w, http.StatusOK, c.slice(off, per))
		return nil
	}
}

func nextURLStyle(w http.ResponseWriter, r *http.Request, q *request, c *collection) *apiError {
	off, limit, err := offsetLimit(q)
	if err != nil {
		return err
	}
	data := c.slice(off, limit)
	var next *string
	if end := off + len(data); end < len(c.records) {
		u := fmt.Sprintf("%s%s?offset=%d&limit=%d", baseURL(r), r.URL.Path, end, limit)
		next = &u
	}
	writeJSON(w, http.StatusOK, struct {
		Data []json.RawMessage `json:"data"`
		Next *string           `json:"next"`
	}{data, next})
	return nil
}

func afterStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	after := 0
	s, ok, err := q.param("starting_after")
	if err != nil {
		return err
	}
	if ok && s != "" {
		n, convErr := strconv.Atoi(s)
		next, found := c.after(n)
		if convErr != nil || !found {
			return badRequest("starting_after must be the id of a record, got %q", s)
		}
		after = next
	}
	limit, err := q.limitParam("limit")
	if err != nil {
		return err
	}
	data := c.slice(after, limit)
	writeJSON(w, http.StatusOK, struct {
		Object  string            `json:"object"`
		Data    []json.RawMessage `json:"data"`
		HasMore bool              `json:"has_more"`
	}{"list", data, after+len(data) < len(c.records)})
	return nil
}

// rangeStyle reads range=<offset>,<limit> (default "0,25"): one parameter
// carrying both values, for custom injection through templates.
func rangeStyle(w http.ResponseWriter, _ *http.Request, q *request, c *collection) *apiError {
	off, limit := 0, DefaultLimit
	s, ok, err := q.param("range")
	if err != nil {
		return err
	}
	if ok {
		a, b, found := strings.Cut(s, ",")
		o, errA := strconv.Atoi(strings.TrimSpace(a))
		l, errB := strconv.Atoi(strings.TrimSpace(b))
		if !found || errA != nil || errB != nil || o < 0 || l < 1 || l > MaxLimit {
			return badRequest("range must be <offset>,<limit> with limit from 1 to %d, got %q", MaxLimit, s)
		}
		off, limit = o, l
	}
	writeJSON(w, http.StatusOK, dataOnly{c.slice(off, limit)})
	return nil
}

// errorHelpers serves /v1/errors/...: fixed failures for client tests. No auth.
func (s *Server) errorHelpers(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/v1/errors/")
	q := r.URL.Query()
	if ra := q.Get("retry_after"); ra != "" {
		w.Header().Set("Retry-After", ra)
	}
	switch {
	case strings.HasPrefix(rest, "status/"):
		code, err := strconv.Atoi(strings.TrimPrefix(rest, "status/"))
		if err != nil || code < 200 || code > 599 {
			writeError(w, http.StatusNotFound, "not_found", "use /v1/errors/status/{200..599}")
			return
		}
		writeError(w, code, "demo_status", fmt.Sprintf("status %d as requested", code))
	case rest == "not-json":
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><body>this is not JSON</body></html>\n"))
	case rest == "flaky":
		failures, _ := strconv.Atoi(q.Get("failures"))
		status, err := strconv.Atoi(q.Get("status"))
		if err != nil || status < 400 || status > 599 {
			status = http.StatusServiceUnavailable
		}
		key := q.Get("key")
		s.mu.Lock()
		n := s.flaky[key]
		if n < failures {
			s.flaky[key] = n + 1
		}
		s.mu.Unlock()
		if n < failures {
			writeError(w, status, "flaky", fmt.Sprintf("failure %d of %d for key %q", n+1, failures, key))
			return
		}
		w.Header().Del("Retry-After")
		writeJSON(w, http.StatusOK, dataOnly{s.collections["books"].slice(0, 1)})
	default:
		writeError(w, http.StatusNotFound, "not_found", "unknown error helper "+quote(rest))
	}
}
