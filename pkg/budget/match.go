package budget

import (
	"net/http"
	"net/url"
	"strings"

	"connector/pkg/manifest"
)

// target is a request as the matchers see it (the CDK's view of a prepared request).
type target struct {
	method string
	base   string // scheme://netloc
	path   string // escaped, without a trailing slash
	query  url.Values
	header http.Header
}

func newTarget(method, raw string, header http.Header) (*target, bool) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, false
	}
	netloc := u.Host
	if u.User != nil {
		netloc = u.User.String() + "@" + netloc
	}
	q, _ := url.ParseQuery(u.RawQuery)
	return &target{
		method: strings.ToUpper(method),
		base:   u.Scheme + "://" + netloc,
		path:   strings.TrimRight(u.EscapedPath(), "/"),
		query:  q,
		header: header,
	}, true
}

// matches is HttpRequestRegexMatcher: every field the matcher sets holds for t.
func matches(m *manifest.RequestMatcher, t *target) bool {
	if m.Method != "" && m.Method != t.method {
		return false
	}
	if m.URLBase != "" && m.URLBase != t.base {
		return false
	}
	if m.PathPattern != nil && !m.PathPattern.MatchString(t.path) {
		return false
	}
	for k, v := range m.Params {
		// Python's dict(parse_qsl(query)): the last value of a key, blank values left out.
		vs := t.query[k]
		last := ""
		for _, x := range vs {
			if x != "" {
				last = x
			}
		}
		if last == "" || last != v {
			return false
		}
	}
	for k, v := range m.Headers {
		if got, ok := headerValue(t.header, k); !ok || got != v {
			return false
		}
	}
	return true
}

// headerValue is the first value of the header name, whatever the case it is written in.
func headerValue(h http.Header, name string) (string, bool) {
	for k, vs := range h {
		if strings.EqualFold(k, name) && len(vs) > 0 {
			return vs[0], true
		}
	}
	return "", false
}

// Matches reports whether m, an HttpRequestRegexMatcher, selects the request of this method,
// URL and headers, as the CDK's matcher decides. Other components classify requests with it
// too (the quota pools of a RateLimitedMultipleTokenAuthenticator).
func Matches(m *manifest.RequestMatcher, method, rawURL string, header http.Header) bool {
	t, ok := newTarget(method, rawURL, header)
	return ok && matches(m, t)
}
