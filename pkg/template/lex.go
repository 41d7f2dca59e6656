package template

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

type tokKind uint8

const (
	tEOF        tokKind = iota
	tData               // text outside tags
	tVarBegin           // {{
	tVarEnd             // }}
	tBlockBegin         // {%
	tBlockEnd           // %}
	tName               // identifier or keyword
	tString             // string literal, val is the decoded text
	tInt                // integer literal
	tFloat              // float literal
	tOp                 // operator or punctuation
)

type token struct {
	kind tokKind
	val  string
	pos  int
}

// lexer splits a template into data and tag tokens, lexing the expressions
// inside tags; an end delimiter counts only outside brackets, like Jinja.
type lexer struct {
	src       string
	toks      []token
	stripNext bool
}

func lex(src string) ([]token, error) {
	l := &lexer{src: src}
	pos := 0
	for pos < len(src) {
		i := indexTagStart(src, pos)
		if i < 0 {
			l.data(src[pos:], pos, false)
			break
		}
		lstrip := i+2 < len(src) && src[i+2] == '-'
		l.data(src[pos:i], pos, lstrip)
		inner := i + 2
		if lstrip {
			inner++
		}
		switch src[i+1] {
		case '#':
			end := strings.Index(src[inner:], "#}")
			if end < 0 {
				return nil, &Error{Offset: i, Msg: "unclosed comment `{#`"}
			}
			end += inner
			l.stripNext = end > inner && src[end-1] == '-'
			pos = end + 2
		case '{':
			l.toks = append(l.toks, token{kind: tVarBegin, pos: i})
			p, err := l.expr(inner, "}}", tVarEnd, i)
			if err != nil {
				return nil, err
			}
			pos = p
		case '%':
			start := len(l.toks)
			l.toks = append(l.toks, token{kind: tBlockBegin, pos: i})
			p, err := l.expr(inner, "%}", tBlockEnd, i)
			if err != nil {
				return nil, err
			}
			pos = p
			if len(l.toks)-start == 3 && l.toks[start+1].kind == tName && l.toks[start+1].val == "raw" {
				l.toks = l.toks[:start]
				p, err := l.raw(pos, i)
				if err != nil {
					return nil, err
				}
				pos = p
			}
		}
	}
	l.toks = append(l.toks, token{kind: tEOF, pos: len(src)})
	return l.toks, nil
}

func indexTagStart(src string, from int) int {
	for i := from; i+1 < len(src); i++ {
		if src[i] == '{' && (src[i+1] == '{' || src[i+1] == '%' || src[i+1] == '#') {
			return i
		}
	}
	return -1
}

func (l *lexer) data(s string, pos int, rstrip bool) {
	if l.stripNext {
		t := strings.TrimLeft(s, " \t\r\n")
		pos += len(s) - len(t)
		s = t
		l.stripNext = false
	}
	if rstrip {
		s = strings.TrimRight(s, " \t\r\n")
	}
	if s != "" {
		l.toks = append(l.toks, token{kind: tData, val: s, pos: pos})
	}
}

// raw copies text verbatim up to {% endraw %}.
func (l *lexer) raw(pos, tagPos int) (int, error) {
	for p := pos; ; {
		i := strings.Index(l.src[p:], "{%")
		if i < 0 {
			return 0, &Error{Offset: tagPos, Msg: "unclosed `{% raw %}`: missing `{% endraw %}`"}
		}
		i += p
		j := i + 2
		lstrip := j < len(l.src) && l.src[j] == '-'
		if lstrip {
			j++
		}
		for j < len(l.src) && isSpace(l.src[j]) {
			j++
		}
		if strings.HasPrefix(l.src[j:], "endraw") {
			k := j + len("endraw")
			for k < len(l.src) && isSpace(l.src[k]) {
				k++
			}
			rs := strings.HasPrefix(l.src[k:], "-%}")
			if rs || strings.HasPrefix(l.src[k:], "%}") {
				l.data(l.src[pos:i], pos, lstrip)
				if rs {
					k++
				}
				l.stripNext = rs
				return k + 2, nil
			}
		}
		p = i + 2
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

var operators3 = []string{"//", "**", "==", "!=", "<=", ">="}

func (l *lexer) expr(p int, end string, endKind tokKind, tagPos int) (int, error) {
	src := l.src
	depth := 0
	for {
		for p < len(src) && isSpace(src[p]) {
			p++
		}
		if p >= len(src) {
			open := "{{"
			if endKind == tBlockEnd {
				open = "{%"
			}
			return 0, &Error{Offset: tagPos, Msg: "unclosed tag `" + open + "`: missing `" + end + "`"}
		}
		if depth == 0 {
			if strings.HasPrefix(src[p:], "-"+end) {
				l.toks = append(l.toks, token{kind: endKind, pos: p})
				l.stripNext = true
				return p + 3, nil
			}
			if strings.HasPrefix(src[p:], end) {
				l.toks = append(l.toks, token{kind: endKind, pos: p})
				return p + 2, nil
			}
		}
		c := src[p]
		switch {
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			s := p
			for p < len(src) && (src[p] == '_' || src[p] >= 'a' && src[p] <= 'z' || src[p] >= 'A' && src[p] <= 'Z' || src[p] >= '0' && src[p] <= '9') {
				p++
			}
			l.toks = append(l.toks, token{kind: tName, val: src[s:p], pos: s})
		case c >= '0' && c <= '9':
			afterDot := len(l.toks) > 0 && l.toks[len(l.toks)-1].kind == tOp && l.toks[len(l.toks)-1].val == "."
			np, kind, err := lexNumber(src, p, afterDot)
			if err != nil {
				return 0, err
			}
			l.toks = append(l.toks, token{kind: kind, val: strings.ReplaceAll(src[p:np], "_", ""), pos: p})
			p = np
		case c == '\'' || c == '"':
			s, np, err := lexString(src, p)
			if err != nil {
				return 0, err
			}
			l.toks = append(l.toks, token{kind: tString, val: s, pos: p})
			p = np
		default:
			op := ""
			for _, o := range operators3 {
				if strings.HasPrefix(src[p:], o) {
					op = o
					break
				}
			}
			if op == "" {
				if !strings.ContainsRune("+-*/%~<>=()[]{},.:|", rune(c)) {
					r, _ := utf8.DecodeRuneInString(src[p:])
					return 0, &Error{Offset: p, Msg: "unexpected character " + strconv.QuoteRune(r)}
				}
				op = string(c)
			}
			switch op {
			case "(", "[", "{":
				depth++
			case ")", "]", "}":
				if depth > 0 {
					depth--
				}
			}
			l.toks = append(l.toks, token{kind: tOp, val: op, pos: p})
			p += len(op)
		}
	}
}

func lexNumber(src string, p int, intOnly bool) (int, tokKind, error) {
	digits := func(p int) int {
		for p < len(src) && (src[p] >= '0' && src[p] <= '9' || src[p] == '_' && p+1 < len(src) && src[p+1] >= '0' && src[p+1] <= '9') {
			p++
		}
		return p
	}
	q := digits(p)
	if intOnly {
		return q, tInt, nil
	}
	kind := tInt
	if q+1 < len(src) && src[q] == '.' && src[q+1] >= '0' && src[q+1] <= '9' {
		q = digits(q + 1)
		kind = tFloat
	}
	if q < len(src) && (src[q] == 'e' || src[q] == 'E') {
		r := q + 1
		if r < len(src) && (src[r] == '+' || src[r] == '-') {
			r++
		}
		if r < len(src) && src[r] >= '0' && src[r] <= '9' {
			q = digits(r)
			kind = tFloat
		}
	}
	return q, kind, nil
}

// lexString decodes a quoted literal with Python escapes.
func lexString(src string, p int) (string, int, error) {
	q := src[p]
	var b strings.Builder
	i := p + 1
	for i < len(src) {
		c := src[i]
		if c == q {
			return b.String(), i + 1, nil
		}
		if c != '\\' || i+1 >= len(src) {
			b.WriteByte(c)
			i++
			continue
		}
		e := src[i+1]
		i += 2
		switch e {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case '\n':
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := i - 1
			for j < len(src) && j < i+2 && src[j] >= '0' && src[j] <= '7' {
				j++
			}
			n, _ := strconv.ParseUint(src[i-1:j], 8, 32)
			b.WriteRune(rune(n))
			i = j
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if i+n > len(src) {
				return "", 0, &Error{Offset: i - 2, Msg: "truncated \\" + string(e) + " escape in string"}
			}
			v, err := strconv.ParseUint(src[i:i+n], 16, 32)
			if err != nil || v > utf8.MaxRune {
				return "", 0, &Error{Offset: i - 2, Msg: "invalid \\" + string(e) + " escape in string"}
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", 0, &Error{Offset: p, Msg: "unterminated string literal"}
}
