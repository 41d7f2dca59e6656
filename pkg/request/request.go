// Package request assembles one outgoing HTTP request from the sources that contribute to it:
// the requester's own options, the authenticator and the paginator. Each value remembers its
// source, so two sources setting the same parameter, header or body field is an error that
// names both.
package request

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"connector/pkg/httpx"
	"connector/pkg/record"
)

// Builder collects the parts of one request. The zero value is not usable; use New.
type Builder struct {
	Kind   string
	Method string
	// URL is the target without the query parameters added through SetParam (it may carry
	// its own query, which wins over added parameters only when KeepURLQuery is set).
	URL string
	// KeepURLQuery makes a key already present in URL's query win over the same key from
	// SetParam (the RequestPath rule: the next-page URL carries its own parameters).
	KeepURLQuery bool

	params  []field
	headers []field
	form    []field
	json    *record.Object
	text    *string
	// owner maps "kind\x00key" to the source that set it.
	owner map[string]string
	// Signer signs each attempt of the built request (see httpx.Signer).
	Signer httpx.Signer
	// overwriter is the source whose second value for a field replaces its first in place
	// (see Overwriting); empty outside Overwriting.
	overwriter string
}

type field struct {
	key    string
	values []string
}

// New starts a request.
func New(kind, method, rawURL string) *Builder {
	return &Builder{Kind: kind, Method: method, URL: rawURL, owner: map[string]string{}}
}

// ConflictError is two sources setting the same request option.
type ConflictError struct {
	Place, Key    string
	First, Second string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("%s %q is set by both %s and %s; remove one of them", e.Place, e.Key, e.First, e.Second)
}

// claim records source as the setter of key at place. again is true when the field is
// already set and source may replace its value (Overwriting).
func (b *Builder) claim(place, key, source string) (again bool, err error) {
	k := place + "\x00" + key
	if place == "header" {
		k = place + "\x00" + http.CanonicalHeaderKey(key)
	}
	if prev, ok := b.owner[k]; ok {
		if prev == source && source == b.overwriter {
			return true, nil
		}
		return false, &ConflictError{Place: place, Key: key, First: prev, Second: source}
	}
	b.owner[k] = source
	return false, nil
}

// Overwriting runs set with one exception to the conflict rule: a field that source sets a
// second time takes the new value and keeps its place among the fields. Setting options in
// reverse order this way gives Python's dict(ChainMap(first, ..., last)): the fields in the
// order of the last mapping's, then the new ones of the one before, and so on, each with the
// first mapping's value.
func (b *Builder) Overwriting(source string, set func() error) error {
	outer := b.overwriter
	b.overwriter = source
	defer func() { b.overwriter = outer }()
	return set()
}

// put sets key's values in fields: in place when again, else appended.
func put(fields []field, again, fold bool, key string, values []string) []field {
	if again {
		for i := range fields {
			if fields[i].key == key || fold && strings.EqualFold(fields[i].key, key) {
				fields[i].values = values
				return fields
			}
		}
	}
	return append(fields, field{key, values})
}

// SetParam adds a query parameter; several values repeat the key.
func (b *Builder) SetParam(key string, values []string, source string) error {
	again, err := b.claim("request parameter", key, source)
	if err != nil {
		return err
	}
	b.params = put(b.params, again, false, key, values)
	return nil
}

// SetHeader sets a header.
func (b *Builder) SetHeader(key, value, source string) error {
	again, err := b.claim("header", key, source)
	if err != nil {
		return err
	}
	b.headers = put(b.headers, again, true, key, []string{value})
	return nil
}

// SetForm adds a form-encoded body field.
func (b *Builder) SetForm(key string, values []string, source string) error {
	again, err := b.claim("body_data field", key, source)
	if err != nil {
		return err
	}
	b.form = put(b.form, again, false, key, values)
	return nil
}

// SetJSON sets a property of the JSON body; path has one element per level of nesting.
func (b *Builder) SetJSON(path []string, value any, source string) error {
	if len(path) == 0 {
		return fmt.Errorf("empty body_json field path from %s", source)
	}
	if _, err := b.claim("body_json field", strings.Join(path, "."), source); err != nil {
		return err
	}
	if b.json == nil {
		b.json = &record.Object{}
	}
	obj := b.json
	for _, seg := range path[:len(path)-1] {
		next, ok := obj.Get(seg)
		child, isObj := next.(*record.Object)
		if !ok || !isObj {
			child = &record.Object{}
			obj.Set(seg, child)
		}
		obj = child
	}
	obj.Set(path[len(path)-1], value)
	return nil
}

// SetText sets a plain-text body (request_body_data written as a string,
// RequestBodyPlainText): sent as is, without a Content-Type of its own, as the reference
// sends it.
func (b *Builder) SetText(body, source string) error {
	if _, err := b.claim("body", "text", source); err != nil {
		return err
	}
	b.text = &body
	return nil
}

// HeaderNames lists the headers set, in the order they were first set.
func (b *Builder) HeaderNames() []string {
	names := make([]string, len(b.headers))
	for i, h := range b.headers {
		names[i] = h.key
	}
	return names
}

// HasParam reports whether a query parameter was added.
func (b *Builder) HasParam(key string) bool {
	_, ok := b.owner["request parameter\x00"+key]
	return ok
}

// Build returns the request to send. A body with both form fields and JSON properties is an
// error.
func (b *Builder) Build() (*httpx.Request, error) {
	u, err := url.Parse(requoteURL(b.URL))
	if err != nil {
		return nil, fmt.Errorf("invalid URL %q: %w", b.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, fmt.Errorf("invalid URL %q: no scheme (write http:// or https://)", b.URL)
		}
		return nil, fmt.Errorf("invalid URL %q: unsupported scheme %q (only http and https)", b.URL, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid URL %q: no host", b.URL)
	}
	if len(b.params) > 0 {
		existing := u.Query()
		var extra []string
		for _, p := range b.params {
			if b.KeepURLQuery && existing.Has(p.key) {
				continue
			}
			for _, v := range p.values {
				extra = append(extra, url.QueryEscape(p.key)+"="+url.QueryEscape(v))
			}
		}
		if len(extra) > 0 {
			if u.RawQuery != "" {
				u.RawQuery += "&"
			}
			u.RawQuery += strings.Join(extra, "&")
		}
	}
	req := &httpx.Request{Kind: b.Kind, Method: b.Method, URL: u.String(), Header: http.Header{}, Signer: b.Signer}
	for _, h := range b.headers {
		req.Header.Set(h.key, h.values[0])
		if strings.Contains(b.owner["header\x00"+http.CanonicalHeaderKey(h.key)], "authenticator") {
			if req.Secret == nil {
				req.Secret = map[string]bool{}
			}
			req.Secret[http.CanonicalHeaderKey(h.key)] = true
		}
	}
	switch {
	case b.text != nil && (len(b.form) > 0 || b.json != nil):
		return nil, fmt.Errorf("the request has a plain-text body and body fields from %s; a body is either text, form-encoded or JSON", b.otherBody())
	case b.text != nil:
		req.Body = []byte(*b.text)
	case len(b.form) > 0 && b.json != nil:
		return nil, fmt.Errorf("the request has both body_data fields (%s) and body_json properties (%s); a body is either form-encoded or JSON",
			b.formKeys(), strings.Join(b.json.Keys(), ", "))
	case len(b.form) > 0:
		var parts []string
		for _, f := range b.form {
			for _, v := range f.values {
				parts = append(parts, url.QueryEscape(f.key)+"="+url.QueryEscape(v))
			}
		}
		req.Body = []byte(strings.Join(parts, "&"))
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
	case b.json != nil:
		body, err := record.Marshal(b.json)
		if err != nil {
			return nil, err
		}
		req.Body = body
		if req.Header.Get("Content-Type") == "" {
			req.Header.Set("Content-Type", "application/json")
		}
	}
	return req, nil
}

// otherBody names the sources of the form fields and JSON properties next to a text body.
func (b *Builder) otherBody() string {
	var keys []string
	for _, f := range b.form {
		keys = append(keys, f.key+" ("+b.owner["body_data field\x00"+f.key]+")")
	}
	if b.json != nil {
		for _, k := range b.json.Keys() {
			keys = append(keys, k+" ("+b.owner["body_json field\x00"+k]+")")
		}
	}
	return strings.Join(keys, ", ")
}

func (b *Builder) formKeys() string {
	keys := make([]string, len(b.form))
	for i, f := range b.form {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}

// requoteURL writes the path and query of an absolute URL as Python's requests sends them
// (requote), the rest as it is.
func requoteURL(u string) string {
	i := strings.Index(u, "://")
	if i < 0 {
		return u
	}
	j := strings.IndexAny(u[i+3:], "/?#")
	if j < 0 {
		return u
	}
	head, rest := u[:i+3+j], u[i+3+j:]
	fragment := ""
	if k := strings.IndexByte(rest, '#'); k >= 0 {
		rest, fragment = rest[:k], rest[k:]
	}
	path, query, hasQuery := strings.Cut(rest, "?")
	out := head + requote(path, false)
	if hasQuery {
		out += "?" + requote(query, true)
	}
	return out + fragment
}

// requote writes a path (or, with query, a query string) as Python's requests sends it: the
// URL parser under it (urllib3) escapes every byte that is neither a letter, a digit nor one
// of -._~!$&'()*+,;=:@/ (and ? in a query), upper-casing the hex of the %XX already there,
// or escaping every % as %25 when one is not followed by two hex digits; then requests'
// requote_uri decodes the %XX of a letter, a digit or one of -._~.
func requote(s string, query bool) string {
	safe := "-._~!$&'()*+,;=:@/"
	if query {
		safe += "?"
	}
	alnum := func(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' }
	hex := func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F' }
	valid := func(i int) bool { return i+2 < len(s) && hex(s[i+1]) && hex(s[i+2]) }
	plain, encoded := true, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' {
			plain = false
			encoded = encoded && valid(i)
		} else if !alnum(c) && strings.IndexByte(safe, c) < 0 {
			plain = false
		}
	}
	if plain {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && encoded:
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			if u := byte(v); alnum(u) || strings.IndexByte("-._~", u) >= 0 {
				b.WriteByte(u)
			} else {
				b.WriteString(strings.ToUpper(s[i : i+3]))
			}
			i += 2
		case alnum(c) || c != '%' && strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}
