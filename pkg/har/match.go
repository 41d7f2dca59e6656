package har

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"connector/pkg/jsondiff"
	"connector/pkg/redact"
)

// shape is what of a request a replay compares, masked: method, origin, path, query
// parameters (in any order), the headers the definition or the authenticator set, and the
// body.
type shape struct {
	method  string
	origin  string // scheme://host
	path    string
	query   []NameValue // decoded, sorted by name (values of one name keep their order)
	headers []NameValue // canonical names, sorted
	body    string
	form    bool // the body is application/x-www-form-urlencoded
}

// ignored are headers that the HTTP stack sets rather than the definition: they differ
// between runs without the connector's requests differing.
var ignored = map[string]bool{"Content-Length": true, "Accept-Encoding": true, "Host": true, "Referer": true}

// key is the part of a shape that an identical request must share: its bucket.
func (s *shape) key() string { return s.method + " " + s.origin + s.path }

func newShape(method, rawURL string, headers []NameValue, body string, hasBody bool) shape {
	s := shape{method: method}
	if u, err := url.Parse(rawURL); err == nil {
		s.origin = u.Scheme + "://" + u.Host
		s.path = u.EscapedPath()
	} else {
		s.path, _, _ = strings.Cut(rawURL, "?")
	}
	s.query = queryPairs(rawURL)
	slices.SortStableFunc(s.query, func(a, b NameValue) int { return strings.Compare(a.Name, b.Name) })
	for _, h := range headers {
		name := http.CanonicalHeaderKey(h.Name)
		if ignored[name] || name == "User-Agent" && strings.HasPrefix(h.Value, "connector/") {
			continue
		}
		s.headers = append(s.headers, NameValue{Name: name, Value: h.Value})
	}
	slices.SortStableFunc(s.headers, func(a, b NameValue) int { return strings.Compare(a.Name, b.Name) })
	if hasBody {
		s.body = body
		for _, h := range headers {
			if strings.EqualFold(h.Name, "Content-Type") && strings.HasPrefix(strings.ToLower(h.Value), "application/x-www-form-urlencoded") {
				s.form = true
			}
		}
	}
	return s
}

// recordedShape is the shape of a recorded request.
func recordedShape(r *Request) shape {
	body, has := "", r.PostData != nil
	if has {
		body = r.PostData.Text
	}
	return newShape(r.Method, r.URL, r.Headers, body, has)
}

// liveShape is the shape of a request of the replay, masked as the recording was.
func liveShape(req *http.Request, body []byte, red *redact.Redactor) shape {
	return newShape(req.Method, red.Placeholders(req.URL.String()), maskHeaders(red, req.Header),
		red.Placeholders(string(body)), body != nil)
}

// same compares a recorded text with a live one. A placeholder of the recording stands for
// whatever filled it: the same placeholder (a secret of the replay), or any text that a
// recording masked because it spelled a secret by chance.
func same(rec, live string) bool {
	if rec == live {
		return true
	}
	if !strings.Contains(rec, redact.Mask) {
		return false
	}
	return wildcard(splitPlaceholders(rec), live)
}

// splitPlaceholders splits s into literal text and placeholders, alternately, starting with
// literal text (possibly empty).
func splitPlaceholders(s string) []string {
	var parts []string
	lit := 0
	for i := 0; i < len(s); {
		j := strings.Index(s[i:], redact.Mask)
		if j < 0 {
			break
		}
		start := i + j
		end := strings.Index(s[start+len(redact.Mask):], redact.Mask)
		if end < 0 {
			break
		}
		stop := start + 2*len(redact.Mask) + end
		if _, ok := redact.PlaceholderName(s[start:stop]); !ok {
			i = start + 1
			continue
		}
		parts = append(parts, s[lit:start], s[start:stop])
		lit, i = stop, stop
	}
	return append(parts, s[lit:])
}

// wildcard matches live against parts (literal, placeholder, literal, …): each placeholder
// matches at least one byte.
func wildcard(parts []string, live string) bool {
	if !strings.HasPrefix(live, parts[0]) {
		return false
	}
	pos := len(parts[0])
	last := parts[len(parts)-1]
	for i := 2; i < len(parts)-1; i += 2 {
		lit := parts[i]
		if pos+1 > len(live) {
			return false
		}
		j := strings.Index(live[pos+1:], lit)
		if j < 0 {
			return false
		}
		pos += 1 + j + len(lit)
	}
	return len(live)-len(last) >= pos+1 && strings.HasSuffix(live, last)
}

// differences lists what differs between a recorded request and a live one, in the words of
// a replay failure: "query offset=200, recorded offset=300". Each comes with a weight: the
// nearest recorded request is the one whose differences weigh least.
func differences(rec, live *shape) ([]string, int) {
	var out []string
	weight := 0
	add := func(w int, format string, args ...any) {
		out = append(out, fmt.Sprintf(format, args...))
		weight += w
	}
	if rec.method != live.method {
		add(1000, "method %s, recorded %s", live.method, rec.method)
	}
	if rec.origin != live.origin {
		add(500, "host %s, recorded %s", live.origin, rec.origin)
	}
	if !same(rec.path, live.path) {
		add(100, "path %s, recorded %s", live.path, rec.path)
	}
	for _, d := range pairDiffs(rec.query, live.query, "query", "=") {
		add(1, "%s", d)
	}
	for _, d := range pairDiffs(rec.headers, live.headers, "header", ": ") {
		add(1, "%s", d)
	}
	if d, ok := bodyDiff(rec, live); !ok {
		add(5, "%s", d)
	}
	return out, weight
}

// equal reports whether a live request is the recorded one.
func equal(rec, live *shape) bool {
	if rec.method != live.method || rec.origin != live.origin || !same(rec.path, live.path) ||
		len(rec.query) != len(live.query) || len(rec.headers) != len(live.headers) {
		return false
	}
	if len(pairDiffs(rec.query, live.query, "", "")) > 0 || len(pairDiffs(rec.headers, live.headers, "", "")) > 0 {
		return false
	}
	_, ok := bodyDiff(rec, live)
	return ok
}

// exact reports whether a live request is the recorded one with no placeholder standing
// for other text.
func exact(rec, live *shape) bool {
	return rec.method == live.method && rec.origin == live.origin && rec.path == live.path &&
		rec.body == live.body && slices.Equal(rec.query, live.query) && slices.Equal(rec.headers, live.headers)
}

// pairDiffs compares two lists of name/value pairs sorted by name: query parameters or
// headers (what names them in the message), sep between name and value.
func pairDiffs(rec, live []NameValue, what, sep string) []string {
	var out []string
	names := map[string]bool{}
	var order []string
	for _, p := range append(slices.Clone(live), rec...) {
		if !names[p.Name] {
			names[p.Name] = true
			order = append(order, p.Name)
		}
	}
	slices.Sort(order)
	for _, name := range order {
		rv, lv := valuesOf(rec, name), valuesOf(live, name)
		switch {
		case len(lv) == 0:
			out = append(out, fmt.Sprintf("%s %s missing, recorded %s%s%s", what, name, name, sep, strings.Join(rv, ",")))
		case len(rv) == 0:
			out = append(out, fmt.Sprintf("%s %s%s%s not recorded", what, name, sep, strings.Join(lv, ",")))
		case !sameList(rv, lv):
			out = append(out, fmt.Sprintf("%s %s%s%s, recorded %s%s%s", what, name, sep, strings.Join(lv, ","), name, sep, strings.Join(rv, ",")))
		}
	}
	return out
}

func valuesOf(pairs []NameValue, name string) []string {
	var out []string
	for _, p := range pairs {
		if p.Name == name {
			out = append(out, p.Value)
		}
	}
	return out
}

func sameList(rec, live []string) bool {
	if len(rec) != len(live) {
		return false
	}
	for i := range rec {
		if !same(rec[i], live[i]) {
			return false
		}
	}
	return true
}

// bodyDiff compares the bodies; when they differ it says how: the first difference of two
// JSON bodies by its path, of two forms by field, else the text around the first byte that
// differs.
func bodyDiff(rec, live *shape) (string, bool) {
	if same(rec.body, live.body) {
		return "", true
	}
	if rec.form && live.form {
		diffs := pairDiffs(sortedPairs(rec.body), sortedPairs(live.body), "form field", "=")
		if len(diffs) == 0 {
			return "", true
		}
		return strings.Join(diffs, ", "), false
	}
	if d, err := jsondiff.First([]byte(live.body), []byte(rec.body), same); err == nil {
		if d == nil {
			return "", true
		}
		return "body " + d.Format("recorded"), false
	}
	return "body " + excerptDiff(live.body, rec.body), false
}

func sortedPairs(form string) []NameValue {
	pairs := queryPairs("?" + form)
	slices.SortStableFunc(pairs, func(a, b NameValue) int { return strings.Compare(a.Name, b.Name) })
	return pairs
}

// excerptDiff shows two texts from a little before their first different byte.
func excerptDiff(live, rec string) string {
	i := 0
	for i < len(live) && i < len(rec) && live[i] == rec[i] {
		i++
	}
	from := max(i-20, 0)
	show := func(s string) string {
		if from >= len(s) {
			return `""`
		}
		s = s[from:]
		more := ""
		if len(s) > 60 {
			s, more = s[:60], "…"
		}
		prefix := ""
		if from > 0 {
			prefix = "…"
		}
		return fmt.Sprintf("%s%q%s", prefix, s, more)
	}
	if live == "" {
		return "empty, recorded " + show(rec)
	}
	if rec == "" {
		return show(live) + ", recorded empty"
	}
	return fmt.Sprintf("%s, recorded %s", show(live), show(rec))
}
