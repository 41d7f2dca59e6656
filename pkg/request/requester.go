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
	if err := eachOption(q.BodyJSON, scope, "request_body_json", func(k string, v any) error {
		return b.SetJSON([]string{k}, v, src)
	}); err != nil {
		return nil, err
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

// JoinURL joins url_base and path with exactly one slash; a path that is a full URL is used
// as is, and a query string on url_base stays at the end.
func JoinURL(base, path string) string {
	if path == "" {
		return base
	}
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		return path
	}
	query := ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i:]
	}
	return strings.TrimRight(base, "/") + "/" + strings.TrimLeft(path, "/") + query
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
	switch t.Kind {
	case manifest.KindScalar:
		return t.Scalar, nil
	case manifest.KindTemplate:
		v, err := scope.Eval(t.Template)
		if err != nil {
			return nil, err
		}
		if template.IsUndefined(v) {
			return nil, nil
		}
		return jsonValue(v), nil
	case manifest.KindList:
		out := make([]any, 0, len(t.Items))
		for _, it := range t.Items {
			v, err := RenderTree(it, scope)
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
			v, err := RenderTree(e.Value, scope)
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
