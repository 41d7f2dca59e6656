package transform

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"connector/pkg/record"
	"connector/pkg/template"
)

// orderedLiteral reads the Python repr of a dict or a list (what a template rendering a
// mapping gives) keeping the order of the dict's keys, which Python keeps and a Go map
// would lose. ok is false for anything it does not read; the caller then falls back on
// template.LiteralEval.
func orderedLiteral(text string) (any, bool) {
	p := &pyParser{s: strings.TrimSpace(text)}
	v, err := p.value(0)
	if err != nil || p.skipSpace() < len(p.s) {
		return nil, false
	}
	return v, true
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) skipSpace() int {
	for p.i < len(p.s) && strings.ContainsRune(" \t\n\r", rune(p.s[p.i])) {
		p.i++
	}
	return p.i
}

var errNotLiteral = fmt.Errorf("not a literal")

func (p *pyParser) value(depth int) (any, error) {
	if depth > 512 {
		return nil, errNotLiteral
	}
	p.skipSpace()
	if p.i >= len(p.s) {
		return nil, errNotLiteral
	}
	switch c := p.s[p.i]; {
	case c == '{':
		p.i++
		o := &record.Object{}
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == '}' {
				p.i++
				return o, nil
			}
			k, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			if p.i >= len(p.s) || p.s[p.i] != ':' {
				return nil, errNotLiteral
			}
			p.i++
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			key, ok := k.(string)
			if !ok {
				key = template.ToString(k)
			}
			o.Set(key, v)
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
		}
	case c == '[' || c == '(':
		end := byte(']')
		if c == '(' {
			end = ')'
		}
		p.i++
		l := []any{}
		for {
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == end {
				p.i++
				return l, nil
			}
			v, err := p.value(depth + 1)
			if err != nil {
				return nil, err
			}
			l = append(l, v)
			p.skipSpace()
			if p.i < len(p.s) && p.s[p.i] == ',' {
				p.i++
			}
		}
	case c == '\'' || c == '"':
		return p.str(c)
	case strings.HasPrefix(p.s[p.i:], "True"):
		p.i += 4
		return true, nil
	case strings.HasPrefix(p.s[p.i:], "False"):
		p.i += 5
		return false, nil
	case strings.HasPrefix(p.s[p.i:], "None"):
		p.i += 4
		return nil, nil
	case c == '-' || c == '+' || c >= '0' && c <= '9' || c == '.':
		start := p.i
		p.i++
		for p.i < len(p.s) && strings.ContainsRune("0123456789.eE+-_", rune(p.s[p.i])) {
			p.i++
		}
		text := strings.ReplaceAll(p.s[start:p.i], "_", "")
		if i, err := strconv.ParseInt(text, 10, 64); err == nil {
			return i, nil
		}
		if _, err := strconv.ParseFloat(text, 64); err == nil {
			if !strings.ContainsAny(text, ".eE") {
				return json.Number(strings.TrimPrefix(text, "+")), nil // a big integer
			}
			f, _ := strconv.ParseFloat(text, 64)
			return f, nil
		}
	}
	return nil, errNotLiteral
}

// str reads a quoted Python string with its escapes.
func (p *pyParser) str(q byte) (string, error) {
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == q:
			p.i++
			return b.String(), nil
		case c == '\\' && p.i+1 < len(p.s):
			e := p.s[p.i+1]
			p.i += 2
			switch e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			case 'x', 'u', 'U':
				n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
				if p.i+n > len(p.s) {
					return "", errNotLiteral
				}
				r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					return "", errNotLiteral
				}
				b.WriteRune(rune(r))
				p.i += n
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
		default:
			b.WriteByte(c)
			p.i++
		}
	}
	return "", errNotLiteral
}
