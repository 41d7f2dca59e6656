package extract

import (
	"encoding/json"
	"strings"
	"testing"
)

// The string scan skips eight bytes at a time; a quote, a backslash or a control character
// must be found at every position of a word.
func TestSkipStringEveryAlignment(t *testing.T) {
	for _, special := range []string{`\"`, `\\`, `\n`, `\u00e9`, "\x01", "\x1f", `"`, "é"} {
		for before := range 20 {
			for after := range 10 {
				text := strings.Repeat("a", before) + special + strings.Repeat("b", after)
				body := `[{"k` + text + `":"` + text + `"}]`
				p, err := Parse([]byte(body), nil, Want{Values: true})
				valid := json.Valid([]byte(body))
				if (err == nil) != valid {
					t.Fatalf("%q: error %v, json.Valid %v", body, err, valid)
				}
				if err != nil {
					continue
				}
				var want []map[string]any
				if err := json.Unmarshal([]byte(body), &want); err != nil {
					t.Fatal(err)
				}
				got := p.Records[0].Value.(map[string]any)
				for k, v := range want[0] {
					if got[k] != v {
						t.Fatalf("%q: %q = %q, want %q", body, k, got[k], v)
					}
				}
			}
		}
	}
}
