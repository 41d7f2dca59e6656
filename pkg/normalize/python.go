package normalize

import (
	"encoding/json"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"connector/pkg/record"
)

// pynum is a JSON number as the CDK holds it after orjson: an integer that fits 64 bits
// (signed or unsigned) is a Python int, anything else a float.
type pynum struct {
	isFloat bool
	s       string // the integer's spelling (isFloat false)
	f       float64
}

func number(v any) (pynum, bool) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if !strings.ContainsAny(s, ".eE") {
			if _, err := strconv.ParseInt(s, 10, 64); err == nil {
				return pynum{s: s}, true
			}
			if _, err := strconv.ParseUint(s, 10, 64); err == nil {
				return pynum{s: s}, true
			}
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !isRange(err) {
			return pynum{}, false
		}
		return pynum{isFloat: true, f: f}, true
	case int:
		return pynum{s: strconv.Itoa(x)}, true
	case int64:
		return pynum{s: strconv.FormatInt(x, 10)}, true
	case float64:
		return pynum{isFloat: true, f: x}, true
	}
	return pynum{}, false
}

func isRange(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func (n pynum) float() float64 {
	if n.isFloat {
		return n.f
	}
	f, _ := strconv.ParseFloat(n.s, 64)
	return f
}

func (n pynum) isZero() bool {
	if n.isFloat {
		return n.f == 0
	}
	return strings.TrimLeft(n.s, "-0") == ""
}

// intText is str() of a Python int: "-0" is 0.
func (n pynum) intText() string {
	if n.isZero() {
		return "0"
	}
	return n.s
}

// floatValue is a new float as the CDK writes it (orjson): NaN and infinities are null.
func floatValue(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return json.Number(orjsonFloat(f))
}

// truncate is int() of a float: towards zero, exact; false for NaN and infinities.
func truncate(f float64) (string, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	i, _ := big.NewFloat(f).Int(nil)
	return i.String(), true
}

// shortest gives the shortest digits that read back as f (> 0) and the position of the
// decimal point: f = 0.digits × 10^decpt.
func shortest(f float64) (string, int) {
	s := strconv.FormatFloat(f, 'e', -1, 64) // d.ddde±XX
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	return strings.Replace(mant, ".", "", 1), e + 1
}

// orjsonFloat spells a finite float as orjson (ryu) writes it: 12.0, 0.00001, 1e16,
// 1.5e-7.
func orjsonFloat(f float64) string {
	var b strings.Builder
	if math.Signbit(f) {
		b.WriteByte('-')
		f = -f
	}
	if f == 0 {
		b.WriteString("0.0")
		return b.String()
	}
	d, kk := shortest(f)
	n := len(d)
	switch {
	case kk >= n && kk <= 16:
		b.WriteString(d)
		b.WriteString(strings.Repeat("0", kk-n))
		b.WriteString(".0")
	case kk > 0 && kk <= 16:
		b.WriteString(d[:kk])
		b.WriteByte('.')
		b.WriteString(d[kk:])
	case kk > -5 && kk <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -kk))
		b.WriteString(d)
	default:
		b.WriteString(d[:1])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(d[1:])
		}
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(kk - 1))
	}
	return b.String()
}

// pyFloatRepr is Python's repr of a float: 1.0, 0.0001, 1e-05, 1e+16, inf, nan.
func pyFloatRepr(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	}
	var b strings.Builder
	if math.Signbit(f) {
		b.WriteByte('-')
		f = -f
	}
	if f == 0 {
		b.WriteString("0.0")
		return b.String()
	}
	d, decpt := shortest(f)
	n := len(d)
	switch {
	case decpt > -4 && decpt <= 0:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -decpt))
		b.WriteString(d)
	case decpt > 0 && decpt <= 16:
		if decpt >= n {
			b.WriteString(d)
			b.WriteString(strings.Repeat("0", decpt-n))
			b.WriteString(".0")
		} else {
			b.WriteString(d[:decpt])
			b.WriteByte('.')
			b.WriteString(d[decpt:])
		}
	default:
		b.WriteString(d[:1])
		if n > 1 {
			b.WriteByte('.')
			b.WriteString(d[1:])
		}
		e := decpt - 1
		b.WriteByte('e')
		if e < 0 {
			b.WriteByte('-')
			e = -e
		} else {
			b.WriteByte('+')
		}
		if e < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(e))
	}
	return b.String()
}

// pyStr is Python's str(v) of a decoded JSON value: True, None, 12, 1.0, {'a': 1}.
func pyStr(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(appendRepr(nil, v))
}

// appendRepr appends Python's repr of v (str of a container is the repr of its items).
func appendRepr(b []byte, v any) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "None"...)
	case bool:
		if x {
			return append(b, "True"...)
		}
		return append(b, "False"...)
	case string:
		return appendStrRepr(b, x)
	case *record.Object:
		b = append(b, '{')
		for i, k := range x.Keys() {
			if i > 0 {
				b = append(b, ", "...)
			}
			e, _ := x.Get(k)
			b = appendStrRepr(b, k)
			b = append(b, ": "...)
			b = appendRepr(b, e)
		}
		return append(b, '}')
	case map[string]any:
		o := &record.Object{}
		for _, k := range sortedKeys(x) {
			o.Set(k, x[k])
		}
		return appendRepr(b, o)
	case []any:
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = appendRepr(b, e)
		}
		return append(b, ']')
	}
	if n, ok := number(v); ok {
		if n.isFloat {
			return append(b, pyFloatRepr(n.f)...)
		}
		return append(b, n.intText()...)
	}
	raw, _ := record.Marshal(v)
	return append(b, raw...)
}

// appendStrRepr is Python's repr of a str: single quotes unless the text has a single
// quote and no double one; \\, \t, \n, \r, and \x.., \u...., \U........ for what is not
// printable.
func appendStrRepr(b []byte, s string) []byte {
	q := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		q = '"'
	}
	b = append(b, q)
	for _, r := range s {
		switch {
		case r == rune(q) || r == '\\':
			b = append(b, '\\', byte(r))
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < 0x20 || r == 0x7f:
			b = append(b, `\x`...)
			b = appendHex(b, uint32(r), 2)
		case r < 0x7f || unicode.IsPrint(r):
			b = utf8.AppendRune(b, r)
		case r <= 0xff:
			b = append(b, `\x`...)
			b = appendHex(b, uint32(r), 2)
		case r <= 0xffff:
			b = append(b, `\u`...)
			b = appendHex(b, uint32(r), 4)
		default:
			b = append(b, `\U`...)
			b = appendHex(b, uint32(r), 8)
		}
	}
	return append(b, q)
}

func appendHex(b []byte, v uint32, width int) []byte {
	const hex = "0123456789abcdef"
	for i := width - 1; i >= 0; i-- {
		b = append(b, hex[(v>>(4*uint(i)))&0xf])
	}
	return b
}

// pyStrip is str.strip(): Unicode white space and the separators U+001C…U+001F.
func pyStrip(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f })
}

// asciiNumber is the text int() and float() read: white space trimmed, Unicode decimal
// digits as ASCII ones; false when another non-ASCII character is left.
func asciiNumber(s string) (string, bool) {
	s = strings.TrimFunc(s, unicode.IsSpace)
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return s, true
	}
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case r < utf8.RuneSelf:
			b = append(b, byte(r))
		case unicode.IsDigit(r):
			b = append(b, '0'+byte(digitValue(r)))
		default:
			return "", false
		}
	}
	return string(b), true
}

// digitValue is the value of a Unicode decimal digit: Nd digits come in runs of ten from
// zero.
func digitValue(r rune) int {
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) / int(rg.Stride) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) / int(rg.Stride) % 10
		}
	}
	return 0
}

// digitRun reads digits with single underscores between them from s[i:]; it returns the
// digits without underscores and the index after them (i itself when there is none).
func digitRun(s string, i int) (string, int) {
	start := i
	var b []byte
	for i < len(s) {
		c := s[i]
		if c >= '0' && c <= '9' {
			b = append(b, c)
			i++
			continue
		}
		if c == '_' && i > start && i+1 < len(s) && s[i+1] >= '0' && s[i+1] <= '9' {
			i++
			continue
		}
		break
	}
	return string(b), i
}

// pyInt is int(s) for a string: its digits, canonical; false when Python raises.
func pyInt(s string) (string, bool) {
	s, ok := asciiNumber(s)
	if !ok || s == "" {
		return "", false
	}
	i := 0
	neg := false
	if s[0] == '+' || s[0] == '-' {
		neg = s[0] == '-'
		i++
	}
	digits, end := digitRun(s, i)
	if digits == "" || end != len(s) {
		return "", false
	}
	digits = strings.TrimLeft(digits, "0")
	if digits == "" {
		return "0", true
	}
	if neg {
		return "-" + digits, true
	}
	return digits, true
}

// pyFloat is float(s) for a string; false when Python raises.
func pyFloat(s string) (float64, bool) {
	s, ok := asciiNumber(s)
	if !ok || s == "" {
		return 0, false
	}
	i := 0
	sign := ""
	if s[0] == '+' || s[0] == '-' {
		sign = s[:1]
		i++
	}
	switch strings.ToLower(s[i:]) {
	case "inf", "infinity":
		if sign == "-" {
			return math.Inf(-1), true
		}
		return math.Inf(1), true
	case "nan":
		return math.NaN(), true
	}
	var b strings.Builder
	b.WriteString(sign)
	whole, i := digitRun(s, i)
	b.WriteString(whole)
	frac := ""
	if i < len(s) && s[i] == '.' {
		frac, i = digitRun(s, i+1)
		b.WriteByte('.')
		b.WriteString(frac)
	}
	if whole == "" && frac == "" {
		return 0, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		b.WriteByte('e')
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			b.WriteByte(s[i])
			i++
		}
		var exp string
		if exp, i = digitRun(s, i); exp == "" {
			return 0, false
		}
		b.WriteString(exp)
	}
	if i != len(s) {
		return 0, false
	}
	f, err := strconv.ParseFloat(b.String(), 64)
	if err != nil && !isRange(err) {
		return 0, false
	}
	return f, true
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Str is Python's str() of a decoded JSON value, as the CDK turns a value into text: a
// string as it is, True, None, 12, 1e+20, {'a': 1}.
func Str(v any) string { return pyStr(v) }
