package template

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func FuzzCompileEval(f *testing.F) {
	for _, s := range []string{
		"{{ config['api_key'] }}", "{{ response.meta.next }}", "{{ response.has_more is false }}",
		"{{ next_page_token['next_page_token'] or '0' }},100", "{{ last_records[-1]['id'] }}",
		"{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%d') }}",
		"{% if config.sandbox %}a{% elif x %}b{% else %}c{% endif %}",
		"{% for k, v in config.items() %}{{ loop.index }}{{ k }}{% endfor %}",
		"{% set x = [1, 2][::-1] %}{{ x | join(',') }}", "{% raw %}{{ x }}{% endraw %}", "a {#- c -#} b",
		"{{ '{}'.format(1) ~ 'a' * 3 }}", "{{ 2 ** 62 * 4 // -3 % 7 }}", "{{ {{config.x}} | urlEncoder }}",
		"{{ record.stats | selectattr('a', 'equalto', 1) | map(attribute='b') | first | default(0) }}",
		"{{ format_datetime('2024-01-02', '%s') | int * 1000 }}", "{{ 'a-b'.split('-')[1:] }}",
	} {
		f.Add(s)
	}
	vars := map[string]any{
		"config":          map[string]any{"api_key": "k", "sandbox": true, "x": []any{1, "a"}, "n": json.Number("12345678901234567890")},
		"response":        map[string]any{"meta": map[string]any{"next": "c"}, "has_more": false},
		"next_page_token": nil,
		"last_records":    []any{map[string]any{"id": 1}},
		"record":          map[string]any{"stats": []any{map[string]any{"a": 1, "b": 2}}},
	}
	f.Fuzz(func(t *testing.T, src string) {
		tp, err := Compile(src, allVars)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Compile error is %T, not *Error", err)
			}
			if strings.HasPrefix(e.Msg, "internal error") || strings.HasPrefix(e.Msg, "cannot compile expression") {
				t.Fatalf("%q: %s", src, e.Msg)
			}
			if e.Offset < 0 || e.Offset > len(src) {
				t.Fatalf("offset %d outside source of length %d", e.Offset, len(src))
			}
			return
		}
		v, err := tp.Eval(vars)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Eval error is %T, not *Error", err)
			}
			if strings.HasPrefix(e.Msg, "internal error") || strings.Contains(e.Msg, "runtime error") {
				t.Fatalf("%q: %s", src, e.Msg)
			}
			return
		}
		_ = ToString(v)
	})
}
