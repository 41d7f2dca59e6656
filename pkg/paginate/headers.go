package paginate

import (
	"net/http"
	"net/textproto"
	"net/url"
	"sort"
	"strings"
)

// Headers is the `headers` template variable: response headers looked up without regard to
// case (`headers['x-next-cursor']` finds `X-Next-Cursor`), a header's value is its first
// value, and `headers.link` is the parsed RFC 8288 Link header keyed by relation
// (`headers.link.next.url`), with relative links resolved against the request URL.
type Headers struct {
	h    http.Header
	base *url.URL
	link map[string]any
}

// NewHeaders wraps response headers; requestURL resolves relative links.
func NewHeaders(h http.Header, requestURL string) *Headers {
	base, _ := url.Parse(requestURL)
	return &Headers{h: h, base: base}
}

// Get returns a header value, or the parsed links for "link".
func (x *Headers) Get(key string) (any, bool) {
	if strings.EqualFold(key, "link") {
		if x.link == nil {
			x.link = ParseLink(x.h.Values("Link"), x.base)
		}
		if len(x.link) == 0 {
			return nil, false
		}
		return x.link, true
	}
	vs := x.h[textproto.CanonicalMIMEHeaderKey(key)]
	if len(vs) == 0 {
		for k, v := range x.h {
			if strings.EqualFold(k, key) && len(v) > 0 {
				return v[0], true
			}
		}
		return nil, false
	}
	return vs[0], true
}

// Keys lists the header names, sorted.
func (x *Headers) Keys() []string {
	keys := make([]string, 0, len(x.h))
	for k := range x.h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// ParseLink parses Link header values (RFC 8288) into {rel: {"url": …, "rel": …, params…}}.
// A link with several relations ("next last") is listed under each. Malformed parts are
// skipped, never an error.
func ParseLink(values []string, base *url.URL) map[string]any {
	out := map[string]any{}
	for _, v := range values {
		for _, part := range splitLinks(v) {
			part = strings.TrimSpace(part)
			if !strings.HasPrefix(part, "<") {
				continue
			}
			end := strings.IndexByte(part, '>')
			if end < 0 {
				continue
			}
			target := strings.TrimSpace(part[1:end])
			if base != nil {
				if u, err := base.Parse(target); err == nil {
					target = u.String()
				}
			}
			link := map[string]any{"url": target}
			for _, param := range splitParams(part[end+1:]) {
				k, val, _ := strings.Cut(param, "=")
				k = strings.ToLower(strings.TrimSpace(k))
				if k == "" {
					continue
				}
				val = strings.TrimSpace(val)
				if len(val) >= 2 && val[0] == '"' && val[len(val)-1] == '"' {
					val = strings.ReplaceAll(val[1:len(val)-1], `\"`, `"`)
				}
				link[k] = val
			}
			rels, _ := link["rel"].(string)
			if rels == "" {
				out[target] = link
				continue
			}
			for _, rel := range strings.Fields(strings.ToLower(rels)) {
				if _, seen := out[rel]; !seen {
					out[rel] = link
				}
			}
		}
	}
	return out
}

// splitLinks splits a Link header on the commas between links, not those inside <…> or
// quoted strings. A `<` inside an unterminated <… starts a new link: the broken text before
// it becomes a part of its own, which ParseLink then skips.
func splitLinks(s string) []string {
	var parts []string
	inURL, quoted, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' && !inURL:
			quoted = !quoted
		case c == '\\' && quoted:
			i++
		case c == '<' && !quoted:
			if inURL {
				parts = append(parts, s[start:i])
				start = i
			}
			inURL = true
		case c == '>' && inURL:
			inURL = false
		case c == ',' && !quoted && !inURL:
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

// splitParams splits `; rel="next"; title="a;b"` on semicolons outside quotes.
func splitParams(s string) []string {
	var parts []string
	quoted, start := false, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '"':
			quoted = !quoted
		case '\\':
			if quoted {
				i++
			}
		case ';':
			if !quoted {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		parts = append(parts, s[start:])
	}
	return parts
}
