package template

import (
	"encoding/json"
	"errors"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"connector/pkg/record"
)

// errNotLiteral is text that Python's ast.literal_eval refuses.
var errNotLiteral = errors.New("not a Python literal")

// LiteralEval reads text as Python's ast.literal_eval does, as the CDK reads an interpolated
// string: numbers (int64, or json.Number past 64 bits; float64), strings, True, False,
// None, lists and tuples ([]any), and dicts (*record.Object, keys in the order written).
// Anything else — a name, an expression such as 2024-01-05 or 1 + 1, a set, a complex
// number — is an error: the CDK then keeps the text.
func LiteralEval(text string) (any, error) {
	p := &pyParser{s: text}
	p.space()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	if p.space(); p.i < len(p.s) {
		return nil, errNotLiteral
	}
	return v, nil
}

// LiteralText is str() of what the CDK's InterpolatedString.eval gives for a rendered
// text: the text read as a Python literal when it is one ("\"2026-09-27\"" is 2026-09-27,
// 1e3 is 1000.0), else the text as it is. MinMaxDatetime parses that.
func LiteralText(text string) string {
	v, err := LiteralEval(text)
	if err != nil {
		return text
	}
	return ToString(v)
}

type pyParser struct {
	s string
	i int
}

func (p *pyParser) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r', '\f', '\v':
			p.i++
		default:
			return
		}
	}
}

func (p *pyParser) peek() byte {
	if p.i < len(p.s) {
		return p.s[p.i]
	}
	return 0
}

func (p *pyParser) value(depth int) (any, error) {
	if depth > 200 {
		return nil, errNotLiteral
	}
	p.space()
	switch c := p.peek(); {
	case c == '{':
		return p.dict(depth)
	case c == '[':
		p.i++
		return p.items(']', depth)
	case c == '(':
		p.i++
		return p.paren(depth)
	case c == '\'' || c == '"':
		return p.strings()
	case c == '-' || c == '+':
		// literal_eval takes one sign before a number.
		p.i++
		p.space()
		n, err := p.number()
		if err != nil {
			return nil, err
		}
		if c == '+' {
			return n, nil
		}
		return negate(n), nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case isNameStart(c):
		start := p.i
		for p.i < len(p.s) && isNameChar(p.s[p.i]) {
			p.i++
		}
		switch p.s[start:p.i] {
		case "True":
			return true, nil
		case "False":
			return false, nil
		case "None":
			return nil, nil
		}
	}
	return nil, errNotLiteral
}

func isNameStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= utf8.RuneSelf
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

// dict reads {key: value, …}; a set ({1, 2}) is refused.
func (p *pyParser) dict(depth int) (any, error) {
	p.i++
	o := &record.Object{}
	for {
		p.space()
		if p.peek() == '}' {
			p.i++
			return o, nil
		}
		k, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		p.space()
		if p.peek() != ':' {
			return nil, errNotLiteral // a set, or not a literal
		}
		p.i++
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		key, ok := k.(string)
		if !ok {
			if _, isList := k.([]any); isList || k == nil {
				// Python allows tuples and None as keys; JSON has no such key.
				return nil, errNotLiteral
			}
			key = ToString(k)
		}
		o.Set(key, v)
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case '}':
		default:
			return nil, errNotLiteral
		}
	}
}

// items reads the items of a list or a tuple up to end.
func (p *pyParser) items(end byte, depth int) ([]any, error) {
	l := []any{}
	for {
		p.space()
		if p.peek() == end {
			p.i++
			return l, nil
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		l = append(l, v)
		p.space()
		switch p.peek() {
		case ',':
			p.i++
		case end:
		default:
			return nil, errNotLiteral
		}
	}
}

// paren reads a tuple, or a value in parentheses.
func (p *pyParser) paren(depth int) (any, error) {
	p.space()
	if p.peek() == ')' {
		p.i++
		return []any{}, nil
	}
	v, err := p.value(depth + 1)
	if err != nil {
		return nil, err
	}
	p.space()
	switch p.peek() {
	case ')':
		p.i++
		return v, nil
	case ',':
		p.i++
		rest, err := p.items(')', depth)
		if err != nil {
			return nil, err
		}
		return append([]any{v}, rest...), nil
	}
	return nil, errNotLiteral
}

// strings reads one or more adjacent string literals ('a' "b" is "ab").
func (p *pyParser) strings() (any, error) {
	var b strings.Builder
	for {
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		b.WriteString(s)
		p.space()
		if c := p.peek(); c != '\'' && c != '"' {
			return b.String(), nil
		}
	}
}

// str reads a quoted string with Python's escapes ('…', "…", and their triple forms).
func (p *pyParser) str() (string, error) {
	q := p.s[p.i]
	quote := string(q)
	if strings.HasPrefix(p.s[p.i:], strings.Repeat(quote, 3)) {
		quote = strings.Repeat(quote, 3)
	}
	p.i += len(quote)
	var b strings.Builder
	for p.i < len(p.s) {
		if strings.HasPrefix(p.s[p.i:], quote) {
			p.i += len(quote)
			return b.String(), nil
		}
		c := p.s[p.i]
		if c == '\n' && len(quote) == 1 {
			return "", errNotLiteral
		}
		if c != '\\' {
			b.WriteByte(c)
			p.i++
			continue
		}
		if p.i+1 >= len(p.s) {
			return "", errNotLiteral
		}
		e := p.s[p.i+1]
		p.i += 2
		switch e {
		case '\n':
		case '\\', '\'', '"':
			b.WriteByte(e)
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'a':
			b.WriteByte('\a')
		case 'b':
			b.WriteByte('\b')
		case 'f':
			b.WriteByte('\f')
		case 'v':
			b.WriteByte('\v')
		case 'x', 'u', 'U':
			n := map[byte]int{'x': 2, 'u': 4, 'U': 8}[e]
			if p.i+n > len(p.s) {
				return "", errNotLiteral
			}
			r, err := strconv.ParseUint(p.s[p.i:p.i+n], 16, 32)
			if err != nil || r > utf8.MaxRune {
				return "", errNotLiteral
			}
			b.WriteRune(rune(r))
			p.i += n
		case '0', '1', '2', '3', '4', '5', '6', '7':
			j := p.i - 1
			for j < len(p.s) && j < p.i+2 && p.s[j] >= '0' && p.s[j] <= '7' {
				j++
			}
			r, _ := strconv.ParseUint(p.s[p.i-1:j], 8, 32)
			b.WriteRune(rune(r))
			p.i = j
		default:
			b.WriteByte('\\')
			b.WriteByte(e)
		}
	}
	return "", errNotLiteral
}

// number reads a Python int or float literal (no sign): 12, 1_000, 0x1f, 0o7, 0b1, 00,
// 1.5, 1., .5, 1e5; 007 and a complex number (1j) are refused.
func (p *pyParser) number() (any, error) {
	start := p.i
	for p.i < len(p.s) && (isNameChar(p.s[p.i]) || p.s[p.i] == '.' ||
		(p.s[p.i] == '+' || p.s[p.i] == '-') && p.i > start && (p.s[p.i-1] == 'e' || p.s[p.i-1] == 'E')) {
		p.i++
	}
	text := p.s[start:p.i]
	if text == "" {
		return nil, errNotLiteral
	}
	lower := strings.ToLower(text)
	for _, base := range []struct {
		prefix string
		base   int
	}{{"0x", 16}, {"0o", 8}, {"0b", 2}} {
		if strings.HasPrefix(lower, base.prefix) {
			return bigInt(strings.TrimPrefix(lower[2:], "_"), base.base)
		}
	}
	if !underscoresOK(text) {
		return nil, errNotLiteral
	}
	plain := strings.ReplaceAll(text, "_", "")
	if strings.ContainsAny(plain, ".eE") {
		if strings.HasSuffix(strings.ToLower(plain), "j") {
			return nil, errNotLiteral
		}
		for _, c := range plain {
			if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
				return nil, errNotLiteral
			}
		}
		f, err := strconv.ParseFloat(plain, 64)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) && errors.Is(ne.Err, strconv.ErrRange) {
				return f, nil // inf, or 0 for a tiny value, as Python reads it
			}
			return nil, errNotLiteral
		}
		return f, nil
	}
	if len(plain) > 1 && plain[0] == '0' && strings.Trim(plain, "0") != "" {
		return nil, errNotLiteral // 007: leading zeros are a syntax error
	}
	return bigInt(plain, 10)
}

// underscoresOK reports single underscores between digits only.
func underscoresOK(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '_' {
			continue
		}
		if i == 0 || i == len(s)-1 || !isDigitByte(s[i-1]) || !isDigitByte(s[i+1]) {
			return false
		}
	}
	return true
}

func isDigitByte(c byte) bool { return c >= '0' && c <= '9' }

// bigInt reads digits in base: int64 when it fits, else json.Number in decimal.
func bigInt(digits string, base int) (any, error) {
	if digits == "" || !underscoresOK(digits) && base == 10 {
		return nil, errNotLiteral
	}
	digits = strings.ReplaceAll(digits, "_", "")
	if i, err := strconv.ParseInt(digits, base, 64); err == nil {
		return i, nil
	}
	n, ok := new(big.Int).SetString(digits, base)
	if !ok {
		return nil, errNotLiteral
	}
	return json.Number(n.String()), nil
}

// negate is -n for what number returns.
func negate(n any) any {
	switch x := n.(type) {
	case int64:
		if x == -x && x != 0 { // math.MinInt64 has no int64 negation
			return json.Number("9223372036854775808")
		}
		return -x
	case float64:
		return -x
	case json.Number:
		if strings.HasPrefix(string(x), "-") {
			return json.Number(string(x)[1:])
		}
		if string(x) == "9223372036854775808" {
			return int64(-9223372036854775808)
		}
		return json.Number("-" + string(x))
	}
	return n
}
