package manifest

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// offsetPos maps a byte offset inside the decoded value of scalar n to the line and column
// of that character in the file. It walks the raw text from the scalar's start, matching
// decoded bytes to written ones, so quotes, escapes, folded lines and block-scalar
// indentation are skipped over.
func (l *loader) offsetPos(n *yaml.Node, off int) (line, col int) {
	if l.lines == nil {
		l.lines = strings.SplitAfter(string(l.src), "\n")
	}
	li := n.Line - 1
	if li < 0 || li >= len(l.lines) {
		return n.Line, n.Column
	}
	bi := byteIndex(l.lines[li], n.Column-1)
	quoted := n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0
	double := n.Style&yaml.DoubleQuotedStyle != 0
	switch {
	case n.Style&(yaml.LiteralStyle|yaml.FoldedStyle) != 0:
		li, bi = li+1, 0
	case quoted && bi < len(l.lines[li]) && (l.lines[li][bi] == '"' || l.lines[li][bi] == '\''):
		bi++
	}
	val := n.Value
	at := func() (int, int) { return li + 1, utf8.RuneCountInString(l.lines[li][:bi]) + 1 }
	j := 0
	for li < len(l.lines) {
		raw := l.lines[li]
		if bi >= len(raw) {
			li, bi = li+1, 0
			continue
		}
		if j >= off || j >= len(val) {
			return at()
		}
		ch := raw[bi]
		if double && ch == '\\' && bi+1 < len(raw) {
			if j == off {
				return at()
			}
			skip, adv := escapeWidth(raw[bi+1:])
			bi += skip
			j += adv
			continue
		}
		if ch == val[j] {
			j++
		}
		bi++
	}
	return n.Line, n.Column
}

// escapeWidth returns how many raw bytes a double-quoted escape (after its backslash) takes
// and how many decoded bytes it yields.
func escapeWidth(rest string) (raw, decoded int) {
	hex := func(n int) (int, int) {
		if len(rest) < 1+n {
			return 1 + len(rest), 1
		}
		v, err := strconv.ParseUint(rest[1:1+n], 16, 32)
		if err != nil {
			return 2, 1
		}
		return 1 + 1 + n, utf8.RuneLen(rune(v))
	}
	switch rest[0] {
	case 'x':
		return hex(2)
	case 'u':
		return hex(4)
	case 'U':
		return hex(8)
	case '\n', '\r':
		return 2, 0
	}
	return 2, 1
}

// byteIndex converts a 0-based rune column of s into a byte index.
func byteIndex(s string, col int) int {
	i := 0
	for n := 0; n < col && i < len(s); n++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		i += w
	}
	return i
}
