package har

import (
	"encoding/json"
	"strings"
	"testing"
)

// appendString writes JSON that decodes to the string given (invalid UTF-8 as U+FFFD).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain ascii text of some length", `"quoted" \back\slash`, "tab\tnew\nline\r\x00\x1f",
		"é ü 🔑 \u2028", "bad \xff\xfe utf-8", strings.Repeat("abcdefg\"", 9), "<html>&amp;</html>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := appendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("appendString(%q) = %s: %v", s, out, err)
		}
		// strings.Map turns each byte of invalid UTF-8 into U+FFFD, as appendString does.
		if want := strings.Map(func(r rune) rune { return r }, s); back != want {
			t.Fatalf("appendString(%q) decodes to %q", s, back)
		}
		if strings.Contains(string(out), `\u003c`) {
			t.Fatalf("HTML escaped: %s", out)
		}
	})
}
