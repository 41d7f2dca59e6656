package request

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// FromRequester starts a request from a requester's URL and options, rendered in scope. It is
// used for data requests and for session logins.
func FromRequester(kind string, q *manifest.Requester, scope *Scope) (*Builder, error) {
	u, err := requestURL(q, scope)
	if err != nil {
		return nil, err
	}
	method := q.Method
	if method == "" {
		method = http.MethodGet
	}
	b := New(kind, method, u)
	const src = "the requester"
	if err := eachOption(q.Params, scope, "request_parameters", func(k string, v any) error {
		return b.SetParam(k, stringValues(v), src)
	}); err != nil {
		return nil, err
	}
	if err := eachOption(q.Headers, scope, "request_headers", func(k string, v any) error {
		return b.SetHeader(k, template.ToString(v), src)
	}); err != nil {
		return nil, err
	}
	if err := bodyData(q.BodyData, scope, b, src); err != nil {
		return nil, err
	}
	if q.BodyJSON != nil {
		v, err := RenderBodyJSON(q.BodyJSON, scope)
		if err != nil {
			return nil, fmt.Errorf("request_body_json: %w", err)
		}
		if err := eachValue(v, "request_body_json", func(k string, v any) error {
			return b.SetJSON([]string{k}, v, src)
		}); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// bodyData adds request_body_data: a mapping gives form fields, a string that renders to
// text (RequestBodyPlainText) the plain-text body.
func bodyData(t *manifest.Tree, scope *Scope, b *Builder, src string) error {
	if t == nil {
		return nil
	}
	v, err := RenderTree(t, scope)
	if err != nil {
		return fmt.Errorf("request_body_data: %w", err)
	}
	switch v.(type) {
	case *record.Object, map[string]any, nil:
	default:
		if template.IsEmpty(v) {
			return nil
		}
		return b.SetText(template.ToString(v), src)
	}
	return eachValue(v, "request_body_data", func(k string, v any) error {
		return b.SetForm(k, stringValues(v), src)
	})
}

func stringValues(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, 0, len(l))
		for _, e := range l {
			out = append(out, template.ToString(e))
		}
		return out
	}
	return []string{template.ToString(v)}
}

func requestURL(q *manifest.Requester, scope *Scope) (string, error) {
	render := func(t *template.Template, field string) (string, error) {
		if t == nil {
			return "", nil
		}
		s, err := scope.Render(t)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		return strings.TrimSpace(s), nil
	}
	base, err := render(q.URLBase, "url_base")
	if err != nil {
		return "", err
	}
	path, err := render(q.Path, "path")
	if err != nil {
		return "", err
	}
	if base == "" {
		full, err := render(q.URL, "url")
		if err != nil {
			return "", err
		}
		if full == "" {
			return "", errors.New("the requester has no url_base or url (or it renders empty: check the testing values)")
		}
		base = full
	}
	return JoinURL(base, path), nil
}

// JoinURL joins url_base and path as the CDK's HttpRequester does: the path without its
// leading slashes, resolved against url_base with a trailing slash by the rules of Python's
// urljoin (RFC 3986 resolution, "." and ".." segments resolved, empty segments dropped, a
// path with a scheme of its own taken as it is). An empty path leaves url_base as it is.
// One difference, ours: a query string on url_base stays on the URL (the CDK's join drops it
// with the base's last segment).
func JoinURL(base, path string) string {
	path = strings.TrimLeft(path, "/")
	if path == "" {
		return base
	}
	query := ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i+1:]
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	joined := urljoin(base, path)
	switch {
	case query == "":
		return joined
	case strings.Contains(joined, "?"):
		return joined + "&" + query
	}
	return joined + "?" + query
}

// urljoin resolves ref, a reference without a leading slash, against base, an absolute URL
// whose path ends with a slash, as Python 3's urllib.parse.urljoin does.
func urljoin(base, ref string) string {
	if scheme, rest, ok := splitScheme(ref); ok {
		bscheme, _, _ := splitScheme(base)
		if !strings.EqualFold(scheme, bscheme) || strings.HasPrefix(rest, "//") {
			return ref // another scheme, or a network location of its own
		}
		ref = rest
	}
	// base = scheme://netloc/path[?query][#fragment]
	origin, bpath := base, "/"
	if i := strings.Index(base, "://"); i >= 0 {
		if j := strings.IndexAny(base[i+3:], "/?#"); j >= 0 {
			origin, bpath = base[:i+3+j], base[i+3+j:]
		} else {
			origin, bpath = base, ""
		}
	}
	if j := strings.IndexAny(bpath, "?#"); j >= 0 {
		bpath = bpath[:j]
	}
	rpath, tail := ref, ""
	if j := strings.IndexAny(ref, "?#"); j >= 0 {
		rpath, tail = ref[:j], ref[j:]
	}
	if rpath == "" {
		return origin + bpath + tail
	}
	baseParts := strings.Split(bpath, "/")
	if baseParts[len(baseParts)-1] != "" {
		baseParts = baseParts[:len(baseParts)-1] // the last segment is not a folder
	}
	segments := append(baseParts, strings.Split(rpath, "/")...)
	kept := segments[:1]
	for _, s := range segments[1 : len(segments)-1] {
		if s != "" {
			kept = append(kept, s)
		}
	}
	segments = append(kept, segments[len(segments)-1])
	var resolved []string
	for _, s := range segments {
		switch s {
		case "..":
			if len(resolved) > 0 {
				resolved = resolved[:len(resolved)-1]
			}
		case ".":
		default:
			resolved = append(resolved, s)
		}
	}
	if last := segments[len(segments)-1]; last == "." || last == ".." {
		resolved = append(resolved, "")
	}
	p := strings.Join(resolved, "/")
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // urlunparse's slash between a network location and its path
	}
	return origin + p + tail
}

// splitScheme splits "scheme:rest" when ref starts with a URL scheme (a letter, then
// letters, digits, "+", "-" or ".").
func splitScheme(ref string) (scheme, rest string, ok bool) {
	i := strings.IndexByte(ref, ':')
	if i <= 0 {
		return "", ref, false
	}
	for k, c := range ref[:i] {
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		if !letter && (k == 0 || !(c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.')) {
			return "", ref, false
		}
	}
	return ref[:i], ref[i+1:], true
}

// eachOption renders a request option tree and calls set for each top-level entry whose value
// is not empty.
func eachOption(t *manifest.Tree, scope *Scope, field string, set func(k string, v any) error) error {
	if t == nil {
		return nil
	}
	v, err := RenderTree(t, scope)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	return eachValue(v, field, set)
}

// eachValue calls set for each top-level entry of a rendered request option.
func eachValue(v any, field string, set func(k string, v any) error) error {
	switch m := v.(type) {
	case *record.Object:
		for _, k := range m.Keys() {
			val, _ := m.Get(k)
			if err := set(k, val); err != nil {
				return err
			}
		}
	case map[string]any:
		obj := jsonValue(m).(*record.Object)
		for _, k := range obj.Keys() {
			val, _ := obj.Get(k)
			if err := set(k, val); err != nil {
				return err
			}
		}
	case nil:
	default:
		if template.IsEmpty(v) {
			return nil
		}
		return fmt.Errorf("%s must be a mapping, got %s", field, template.ToString(v))
	}
	return nil
}

// RenderTree renders a request option tree: mappings become ordered objects, entries whose
// value renders empty (none, undefined or "") are dropped, and values are plain JSON values.
func RenderTree(t *manifest.Tree, scope *Scope) (any, error) {
	return renderTree(t, scope, false)
}

// RenderBodyJSON renders request_body_json as the CDK does: as RenderTree, and then every text
// a value gives is read as a Python literal when it is one, as the CDK's nested-mapping
// interpolation reads each of its strings: "[1]" is a list, '[ "ITEM" ]' too, "123" a number,
// "True" true; "open" and "2024-01-05" stay text.
func RenderBodyJSON(t *manifest.Tree, scope *Scope) (any, error) {
	return renderTree(t, scope, true)
}

func renderTree(t *manifest.Tree, scope *Scope, literals bool) (any, error) {
	switch t.Kind {
	case manifest.KindScalar:
		return t.Scalar, nil
	case manifest.KindTemplate:
		v, err := scope.Eval(t.Template)
		if template.Class(err) == template.ClassUndefined {
			// The CDK's mappings have no default: an undefined value used as a number gives
			// None, which is dropped like any empty value.
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if template.IsUndefined(v) {
			return nil, nil
		}
		if text, ok := v.(string); ok && literals {
			if lv, err := template.LiteralEval(text); err == nil {
				v = lv
			}
		}
		return jsonValue(v), nil
	case manifest.KindList:
		out := make([]any, 0, len(t.Items))
		for _, it := range t.Items {
			v, err := renderTree(it, scope, literals)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case manifest.KindMap:
		obj := &record.Object{}
		for _, e := range t.Entries {
			k, err := scope.Render(e.Key)
			if err != nil {
				return nil, err
			}
			v, err := renderTree(e.Value, scope, literals)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", k, err)
			}
			if template.IsEmpty(v) || k == "" {
				continue
			}
			obj.Set(k, v)
		}
		return obj, nil
	}
	return nil, fmt.Errorf("unknown tree kind %d", t.Kind)
}

// jsonValue turns a template value into a value record.Marshal can write.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, bool, string, int, int64, float64:
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonValue(e)
		}
		return out
	case map[string]any:
		obj := &record.Object{}
		for _, k := range slices.Sorted(maps.Keys(x)) {
			obj.Set(k, jsonValue(x[k]))
		}
		return obj
	case *record.Object:
		return x
	case template.Mapping:
		obj := &record.Object{}
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			obj.Set(k, jsonValue(e))
		}
		return obj
	case json.Number:
		return x
	}
	if template.IsUndefined(v) {
		return nil
	}
	return template.ToString(v)
}
