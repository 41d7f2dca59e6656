package infer

import (
	"fmt"
	"strings"
	"unicode"

	"connector/pkg/record"
)

// pyRepr writes a schema value as Python's repr() writes it in the CDK's messages: strings
// quoted (single quotes unless the text has one and no double quote), lists in [], dicts in
// {} in their order.
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v)
	return b.String()
}

// pyStr is Python's str() of a schema value, as an f-string writes it: a string as it is,
// anything else its repr.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return pyRepr(v)
}

func writeRepr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case string:
		writeStrRepr(b, x)
	case []string:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, e)
		}
		b.WriteByte(']')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e)
		}
		b.WriteByte(']')
	case *record.Object:
		b.WriteByte('{')
		for i, k := range x.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, k)
			b.WriteString(": ")
			e, _ := x.Get(k)
			writeRepr(b, e)
		}
		b.WriteByte('}')
	default:
		fmt.Fprint(b, v)
	}
}

// writeStrRepr is repr() of a str: backslash, the quote, \n, \r and \t escaped, and every
// other character that is not printable (str.isprintable: letters, marks, numbers,
// punctuation, symbols and the space) as \xhh, \uhhhh or \Uhhhhhhhh.
func writeStrRepr(b *strings.Builder, s string) {
	q := byte('\'')
	if strings.ContainsRune(s, '\'') && !strings.ContainsRune(s, '"') {
		q = '"'
	}
	b.WriteByte(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == rune(q):
			b.WriteByte('\\')
			b.WriteByte(q)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case unicode.IsPrint(r):
			b.WriteRune(r)
		case r < 0x100:
			fmt.Fprintf(b, `\x%02x`, r)
		case r < 0x10000:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			fmt.Fprintf(b, `\U%08x`, r)
		}
	}
	b.WriteByte(q)
}
