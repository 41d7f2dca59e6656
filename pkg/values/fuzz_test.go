package values

import (
	"errors"
	"strings"
	"testing"

	"connector/pkg/diag"
)

// FuzzParse feeds arbitrary bytes to the testing values loader: it must never panic, and
// it returns either values (a mapping, usable by Get, Set and Secrets) or a positioned
// diagnostic list.
func FuzzParse(f *testing.F) {
	for _, seed := range []string{
		"base_url: https://api.example.com\napi_key: abc\n",
		"credentials:\n  client_id: x\n  refresh_token: y\nlist: [1, 2, {a: b}]\n",
		"- a\n- b\n",
		"a: &x {b: *x}\n",
		"a: [unclosed\n",
		"\ta: 1\n",
		"? [complex, key]\n: value\n",
		"a: !!binary aGVsbG8=\nb: 0x1F\nc: 1e400\nd: .nan\n",
		"",
		"---\na: 1\n---\nb: 2\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse("values.yaml", data)
		if err != nil {
			var dl diag.List
			if !errors.As(err, &dl) || len(dl) == 0 {
				t.Fatalf("error %v is not a diagnostic list", err)
			}
			if strings.Contains(err.Error(), "panic") {
				t.Fatalf("error mentions a panic: %v", err)
			}
			return
		}
		if v.Map == nil {
			t.Fatal("nil map without an error")
		}
		_ = v.Secrets(map[string]any{"properties": map[string]any{"a": map[string]any{"airbyte_secret": true}}})
		if err := v.Set("fuzz.key=1", nil); err != nil {
			// A value at fuzz that is not a mapping is a clean error.
			if strings.Contains(err.Error(), "panic") {
				t.Fatal(err)
			}
		}
		v.Get([]string{"fuzz", "key"})
	})
}
