package demoapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

const maxBody = 1 << 20

// request is a data request with its body decoded once, so authentication
// and pagination can both read it.
type request struct {
	query  url.Values
	form   url.Values     // POST application/x-www-form-urlencoded body, else nil
	json   map[string]any // POST application/json body object, else nil
	header http.Header
}

func readRequest(r *http.Request) (*request, *apiError) {
	q := &request{query: r.URL.Query(), header: r.Header}
	if r.Body == nil {
		return q, nil
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return nil, badRequest("reading body: %v", err)
	}
	if len(body) > maxBody {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, code: "too_large", message: "body over 1 MiB"}
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return q, nil
	}
	switch mediaType(r) {
	case "application/json":
		obj, err := decodeObject(body)
		if err != nil {
			return nil, badRequest("body is not a JSON object: %v", err)
		}
		q.json = obj
	case "application/x-www-form-urlencoded":
		form, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, badRequest("body is not form-encoded: %v", err)
		}
		q.form = form
	default:
		return nil, &apiError{status: http.StatusUnsupportedMediaType, code: "unsupported_media_type",
			message: "send the body as application/json or application/x-www-form-urlencoded"}
	}
	return q, nil
}

func mediaType(r *http.Request) string {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		return ""
	}
	return mt
}

func decodeObject(body []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil {
		return nil, err
	}
	if obj == nil {
		return nil, fmt.Errorf("null")
	}
	return obj, nil
}

// paramHeaders names the header that may carry each pagination parameter (and the books
// filter author_id).
var paramHeaders = map[string]string{
	"offset":         "X-Offset",
	"limit":          "X-Limit",
	"page":           "X-Page",
	"per_page":       "X-Per-Page",
	"cursor":         "X-Cursor",
	"starting_after": "X-Starting-After",
	"range":          "X-Range",
	"author_id":      "X-Author-Id",
	"since":          "X-Since",
	"until":          "X-Until",
}

// param finds a pagination parameter in the query string, the POST body
// (form field or top-level JSON property) or its X- header. Sources that
// disagree are a 400, so a client that injects a value twice is caught.
func (q *request) param(name string) (string, bool, *apiError) {
	found := map[string]string{} // source → value
	if vs, ok := q.query[name]; ok {
		for _, v := range vs[1:] {
			if v != vs[0] {
				return "", false, badRequest("query parameter %s repeated with different values", name)
			}
		}
		found["query"] = vs[0]
	}
	if vs, ok := q.form[name]; ok {
		found["form body"] = vs[0]
	}
	if v, ok := q.json[name]; ok {
		s, ok := scalar(v)
		if !ok {
			return "", false, badRequest("JSON body property %s must be a string or a number", name)
		}
		found["JSON body"] = s
	}
	if h := paramHeaders[name]; h != "" {
		if vs := q.header.Values(h); len(vs) > 0 {
			found["header "+h] = vs[0]
		}
	}
	var value, first string
	sources := make([]string, 0, len(found))
	for src := range found {
		sources = append(sources, src)
	}
	sort.Strings(sources)
	for i, src := range sources {
		if i == 0 {
			value, first = found[src], src
			continue
		}
		if found[src] != value {
			return "", false, badRequest("conflicting values for %s: %s=%q, %s=%q", name, first, value, src, found[src])
		}
	}
	return value, len(found) > 0, nil
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case string:
		return v, true
	case json.Number:
		return v.String(), true
	case bool:
		return strconv.FormatBool(v), true
	}
	return "", false
}

// intParam reads an integer parameter in [lo, hi], def when absent.
func (q *request) intParam(name string, def, lo, hi int) (int, *apiError) {
	s, ok, err := q.param(name)
	if err != nil {
		return 0, err
	}
	if !ok {
		return def, nil
	}
	n, convErr := strconv.Atoi(strings.TrimSpace(s))
	if convErr != nil || n < lo || n > hi {
		if hi == maxInt {
			return 0, badRequest("%s must be an integer >= %d, got %q", name, lo, s)
		}
		return 0, badRequest("%s must be an integer from %d to %d, got %q", name, lo, hi, s)
	}
	return n, nil
}

const maxInt = int(^uint(0) >> 1)

// limitParam reads a page size parameter (limit or per_page).
func (q *request) limitParam(name string) (int, *apiError) {
	return q.intParam(name, DefaultLimit, 1, MaxLimit)
}

// jsonString returns the string at path in the JSON body.
func (q *request) jsonString(path ...string) (string, bool) {
	var cur any = q.json
	if q.json == nil {
		return "", false
	}
	for _, k := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		cur, ok = m[k]
		if !ok {
			return "", false
		}
	}
	s, ok := cur.(string)
	return s, ok
}

// admit lets a request into an area: its method one of methods (any when none is given),
// its body readable, its credentials those check accepts. A refusal is written, and ok is
// false.
func (s *Server) admit(w *recorder, r *http.Request, check areaCheck, methods ...string) (q *request, ok bool) {
	if len(methods) > 0 && !slices.Contains(methods, r.Method) {
		w.Header().Set("Allow", strings.Join(methods, ", "))
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use "+strings.Join(methods, " or "))
		return nil, false
	}
	q, err := readRequest(r)
	if err != nil {
		err.write(w)
		return nil, false
	}
	if err := check(s, r, q); err != nil {
		err.write(w)
		return nil, false
	}
	return q, true
}
