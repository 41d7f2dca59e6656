package yamlguard

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestSyntaxErrorIsOnTheOffendingLine(t *testing.T) {
	long := "streams:\n" + strings.Repeat("  - name: a\n    path: /a\n", 500)
	tests := []struct {
		name, src string
		line      int
		msg       string
	}{
		{"a key indented one space less than its mapping", "a:\n  b:\n    c: 1\n    d: 2\n   e: 3\n", 5, "did not find expected key"},
		{"a key indented one space more", "a:\n  b:\n    c: 1\n     d: 2\n", 4, "mapping values are not allowed in this context"},
		{"far below the start of its block", long + "   - name: b\n", 1002, "did not find expected '-' indicator"},
		{"an item indented less than the list", "a:\n  - x\n  - y\n - z\n", 4, "did not find expected key"},
		{"an unclosed flow sequence: the line that opens it", "a: 1\nb: [x, y\nc: 2\n", 2, "did not find expected ',' or ']'"},
		{"a tab", "a:\n\t- b\n", 2, "found character that cannot start any token"},
		{"an error on the first line", "[a\n", 1, "did not find expected ',' or ']'"},
		{"no newline at the end", "a: 1\n b: 2", 2, "mapping values are not allowed in this context"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var doc yaml.Node
			err := yaml.Unmarshal([]byte(tt.src), &doc)
			line, msg, ok := SyntaxError([]byte(tt.src), err)
			if !ok || line != tt.line || msg != tt.msg {
				t.Errorf("yaml.v3 says %q; got line %d %q (%v), want line %d %q", err, line, msg, ok, tt.line, tt.msg)
			}
		})
	}
	if _, _, ok := SyntaxError([]byte("a: 1"), nil); ok {
		t.Error("no error: ok")
	}
}
