package paginate

import (
	"fmt"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// cursorPagination is CursorPagination: the token is what cursor_value reads from a page
// (none for the first request), until stop_condition holds or the cursor is empty.
var cursorPagination = kind{
	token: "cursor", size: "page_size",
	make: func(s *manifest.Strategy, vars map[string]any, size int64) (Strategy, error) {
		if s.CursorValue == nil {
			return nil, fmt.Errorf("CursorPagination needs a cursor_value")
		}
		return cursor{s: s, vars: vars, size: size}, nil
	},
	traits: func(s *manifest.Strategy) []string {
		t := []string{"cursor from " + describe(s.CursorValue)}
		if s.StopCondition != nil {
			t = append(t, "stop when "+describe(s.StopCondition))
		}
		return t
	},
}

// cursor is CursorPagination: the next token is what cursor_value reads from the page.
type cursor struct {
	s    *manifest.Strategy
	vars map[string]any // config and parameters
	size int64
}

func (s cursor) Initial() any          { return nil }
func (s cursor) Predictor() *Predictor { return nil }

func (s cursor) Next(token any, pg Page) (Decision, error) {
	d := Decision{Strategy: manifest.CursorPagination, Count: pg.Count, Size: s.size, Source: describe(s.s.CursorValue)}
	vars := s.cursorVars(token, pg)
	if s.s.StopCondition != nil {
		// A condition with the default false, as in the CDK (see template.InterpolateOr).
		v, err := s.s.StopCondition.InterpolateOr(vars, false)
		if err != nil {
			return Decision{}, fmt.Errorf("stop_condition: %w", err)
		}
		if template.Truthy(v) {
			d.Stop, d.Why = true, StopCondition
			return d, nil
		}
	}
	v, err := s.s.CursorValue.Interpolate(vars)
	if err != nil {
		return Decision{}, fmt.Errorf("cursor_value: %w", err)
	}
	if empty(v) {
		d.Stop, d.Why = true, NoCursor
		return d, nil
	}
	d.Token, d.Why = v, CursorFound
	return d, nil
}

func (s cursor) cursorVars(token any, pg Page) map[string]any {
	var last any = template.Undefined
	lastRecords := pg.LastRecords
	if lastRecords == nil {
		lastRecords = []any{}
	}
	if n := len(lastRecords); n > 0 {
		last = lastRecords[n-1]
	}
	headers := any(pg.Headers)
	if pg.Headers == nil {
		headers = map[string]any{}
	}
	vars := map[string]any{
		"stream_slice":     map[string]any{},
		"stream_partition": map[string]any{},
		"stream_interval":  map[string]any{},
		"stream_state":     map[string]any{},
	}
	for k, v := range pg.Vars {
		vars[k] = v
	}
	for k, v := range s.vars {
		vars[k] = v
	}
	vars["response"] = Response(pg.Body)
	vars["headers"] = headers
	vars["last_records"] = lastRecords
	vars["last_record"] = last
	vars["last_page_size"] = int64(pg.Count)
	vars["next_page_token"] = NextPageToken(false, token)
	return vars
}

// empty reports whether a cursor value means "no next page": none, undefined, "", or an
// empty list or mapping.
func empty(v any) bool {
	if template.IsEmpty(v) {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		return len(x) == 0
	case []any:
		return len(x) == 0
	case template.Mapping:
		return len(x.Keys()) == 0
	}
	return false
}

// describe names a cursor template for a description: `response.meta.next` rather than the
// whole `{{ … }}` source, when the template is one expression.
func describe(t *template.Template) string {
	s := strings.TrimSpace(t.Source())
	if strings.HasPrefix(s, "{{") && strings.HasSuffix(s, "}}") && strings.Count(s, "{{") == 1 {
		return strings.TrimSpace(s[2 : len(s)-2])
	}
	return s
}
