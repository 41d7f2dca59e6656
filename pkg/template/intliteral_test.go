package template

import "testing"

// Python's int() strips Unicode white space around the digits, but not U+001C–U+001F:
// int("5\x1f") raises. The error is only worded when there is one.
func TestIntLiteralSpaces(t *testing.T) {
	for s, want := range map[string]bool{"5\t": true, "\u00a05": true, "5\u2028": true, "5\u3000": true, "5\x1c": false, "5\x1f": false, "5\u200b": false} {
		_, err := intLiteral(s)
		if (err == nil) != want {
			t.Errorf("intLiteral(%q): %v, want ok=%v", s, err, want)
		}
	}
}
