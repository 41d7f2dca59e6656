package template

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"math"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// spec describes a callable: its parameter names (after the value for a
// filter, the receiver for a method), their defaults, how many are required,
// and whether extra positional arguments are accepted.
type spec struct {
	params   []string
	defaults []any
	min      int
	variadic bool
	fn       func(args []any) (any, error)
	// ffn, set instead of fn, is a builtin that needs the evaluation's frame: one that
	// compares values or loops over items, and counts its steps.
	ffn func(fr *frame, args []any) (any, error)
	// impure is a function whose result is not its arguments' (the clock, a random source)
	// or a method that changes the value it is called on: a template calling one is not
	// Deterministic.
	impure bool
}

// impure marks s as impure.
func impure(s *spec) *spec {
	s.impure = true
	return s
}

func sp(params string, min int, fn func(args []any) (any, error), defaults ...any) *spec {
	s := &spec{min: min, fn: fn}
	if params != "" {
		s.params = strings.Split(params, ",")
	}
	if strings.HasSuffix(params, "...") {
		s.params = s.params[:len(s.params)-1]
		s.variadic = true
	}
	s.defaults = make([]any, len(s.params))
	for i := range s.defaults {
		if i >= min && i-min < len(defaults) {
			s.defaults[i] = defaults[i-min]
		}
	}
	return s
}

// spf is sp for a builtin that needs the frame.
func spf(params string, min int, fn func(fr *frame, args []any) (any, error), defaults ...any) *spec {
	s := sp(params, min, nil, defaults...)
	s.ffn = fn
	return s
}

type testSpec struct {
	nargs int
	fn    func(fr *frame, v any, args []any) (bool, error)
}

func arg(args []any, i int, def any) any {
	if i < len(args) {
		return args[i]
	}
	return def
}

func str(v any) string { return ToString(v) }

func strArg(args []any, i int, def string) string {
	if i < len(args) {
		return ToString(args[i])
	}
	return def
}

func needStr(v any, what string) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case undefined:
		return "", nil
	}
	return "", fmt.Errorf("%s expects a string, got %s", what, typeName(v))
}

func toFloat(v any) (float64, bool) {
	n, k := toNumberOrBool(v)
	if k == numNone {
		return 0, false
	}
	return n.float(k), true
}

// pyInt is Python int(): numbers truncate, strings must spell an integer.
func pyInt(v any) (any, error) {
	switch x := v.(type) {
	case string:
		i, err := ToInt(x)
		if err != nil {
			return nil, fmt.Errorf("invalid literal for int() with base 10: %s", pyRepr(x))
		}
		return i, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	}
	n, k := toNumber(v)
	switch k {
	case numInt:
		return n.i, nil
	case numFloat:
		if math.IsNaN(n.f) || math.IsInf(n.f, 0) {
			return nil, fmt.Errorf("cannot convert float %s to integer", pyFloat(n.f))
		}
		if math.Abs(n.f) >= 9.2e18 {
			return nil, errors.New("integer too large")
		}
		return int64(n.f), nil
	}
	if d, ok := v.(dtime); ok {
		return nil, fmt.Errorf("int() argument must be a string or a number, not '%s'", d.typeName())
	}
	return nil, fmt.Errorf("int() argument must be a string or a number, not '%s'", typeName(v))
}

// pyFloatOf is Python float().
func pyFloatOf(v any) (any, error) {
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		switch strings.ToLower(s) {
		case "inf", "+inf", "infinity":
			return math.Inf(1), nil
		case "-inf", "-infinity":
			return math.Inf(-1), nil
		case "nan":
			return math.NaN(), nil
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(s, "_", ""), 64)
		if err != nil || s == "" || strings.ContainsAny(s, "xXpP") {
			return nil, fmt.Errorf("could not convert string to float: %s", pyRepr(x))
		}
		return f, nil
	}
	if f, ok := toFloat(v); ok {
		return f, nil
	}
	return nil, fmt.Errorf("float() argument must be a string or a number, not '%s'", typeName(v))
}

// jinjaInt is the int filter: like int() but a failure gives the default.
func jinjaInt(v, def any, base int) any {
	if s, ok := v.(string); ok {
		s = strings.TrimSpace(s)
		if base != 10 {
			if i, err := strconv.ParseInt(s, base, 64); err == nil {
				return i
			}
			return def
		}
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return i
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) && math.Abs(f) < 9.2e18 {
			return int64(f)
		}
		return def
	}
	r, err := pyInt(v)
	if err != nil {
		return def
	}
	return r
}

// regexCache holds the compiled patterns of the process, shared by its runs: a compiled
// pattern never changes. regexCached counts them, so that patterns that come from the data
// (a different one per record) cannot grow it without end.
var (
	regexCache  sync.Map // pattern → *regexp.Regexp
	regexCached atomic.Int64
)

const maxRegexCached = 1000

// compileRegex translates the common Python syntax to RE2 and caches it.
func compileRegex(pattern string) (*regexp.Regexp, error) {
	if r, ok := regexCache.Load(pattern); ok {
		return r.(*regexp.Regexp), nil
	}
	p := strings.ReplaceAll(pattern, "(?P<", "(?P<")
	r, err := regexp.Compile(p)
	if err != nil {
		return nil, fmt.Errorf("invalid regular expression %s: %v", pyRepr(pattern), err)
	}
	if regexCached.Load() < maxRegexCached {
		if _, loaded := regexCache.LoadOrStore(pattern, r); !loaded {
			regexCached.Add(1)
		}
	}
	return r, nil
}

var pyGroupRef = regexp.MustCompile(`\\(\d+)|\\g<(\w+)>`)

func pyReplacement(repl string) string {
	repl = strings.ReplaceAll(repl, "$", "$$")
	return pyGroupRef.ReplaceAllString(repl, "$${$1$2}")
}

// quote is Python urllib.parse.quote with the given safe characters.
func quote(s, safe string, plus bool) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	// A result beyond maxValue is cut short there: the caller refuses it anyway.
	for i := 0; i < len(s) && b.Len() <= maxValue; i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-' || c == '~':
			b.WriteByte(c)
		case c == ' ' && plus:
			b.WriteByte('+')
		case c < utf8.RuneSelf && strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		}
	}
	return b.String()
}

// toJSON is json.dumps with sort_keys, Python separators, and Jinja's
// escaping of <, >, & and ' for tojson.
func toJSON(v any, htmlSafe bool) (string, error) {
	var b strings.Builder
	if err := writeJSON(&b, v, 0); err != nil {
		return "", err
	}
	s := b.String()
	if htmlSafe {
		s = strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`, "'", `\u0027`).Replace(s)
	}
	return s, nil
}

func writeJSON(b *strings.Builder, v any, depth int) error {
	if depth > 100 {
		return errors.New("value too deeply nested for JSON")
	}
	if b.Len() > maxValue {
		return errValue
	}
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case undefined:
		return typeErrorf("object of type Undefined is not JSON serializable")
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case string:
		WritePyJSONString(b, x)
	case json.Number:
		b.WriteString(string(x))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(pyFloat(x))
		}
	case dtime, duration:
		return typeErrorf("object of type %s is not JSON serializable", typeName(v))
	default:
		if n, k := toNumber(v); k == numInt {
			b.WriteString(strconv.FormatInt(n.i, 10))
			return nil
		} else if k == numFloat {
			return writeJSON(b, n.f, depth)
		}
		if l, ok := asList(v); ok {
			b.WriteByte('[')
			for i, e := range l {
				if i > 0 {
					b.WriteString(", ")
				}
				if err := writeJSON(b, e, depth+1); err != nil {
					return err
				}
			}
			b.WriteByte(']')
			return nil
		}
		if m, ok := mapView(v); ok {
			keys := m.Keys()
			if _, isPlain := m.(plainMap); !isPlain {
				keys = append([]string(nil), keys...)
				sort.Strings(keys)
			}
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteString(", ")
				}
				WritePyJSONString(b, k)
				b.WriteString(": ")
				e, _ := m.Get(k)
				if err := writeJSON(b, e, depth+1); err != nil {
					return err
				}
			}
			b.WriteByte('}')
			return nil
		}
		return typeErrorf("object of type %s is not JSON serializable", typeName(v))
	}
	return nil
}

// WritePyJSONString writes s as a JSON string the way Python's json.dumps does with
// ensure_ascii: printable ASCII as is, the short escapes, anything else as \u escapes
// (UTF-16 pairs beyond the BMP).
func WritePyJSONString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		default:
			if r < 0x20 || r > 0x7e {
				if r > 0xffff {
					r1, r2 := utf16Pair(r)
					fmt.Fprintf(b, `\u%04x\u%04x`, r1, r2)
				} else {
					fmt.Fprintf(b, `\u%04x`, r)
				}
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

func utf16Pair(r rune) (rune, rune) {
	r -= 0x10000
	return 0xd800 + (r>>10)&0x3ff, 0xdc00 + r&0x3ff
}

// fromJSON decodes JSON keeping numbers exact; a text of more than maxItems values is
// refused before it is decoded.
func fromJSON(s string) (any, error) {
	n := 0
	for _, c := range []string{",", "[", "{", ":"} {
		n += strings.Count(s, c)
	}
	if fitItems(int64(n)) != nil {
		return nil, errItems
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("invalid JSON: %v", err)
	}
	if d.More() {
		return nil, errors.New("invalid JSON: extra data")
	}
	return v, nil
}

func hasher(name string) (hash.Hash, error) {
	switch strings.ToLower(name) {
	case "md5":
		return md5.New(), nil
	case "sha1":
		return sha1.New(), nil
	case "sha224":
		return sha256.New224(), nil
	case "sha256":
		return sha256.New(), nil
	case "sha384":
		return sha512.New384(), nil
	case "sha512":
		return sha512.New(), nil
	}
	return nil, fmt.Errorf("no hashing function named %s", name)
}

func asDtime(v any) (dtime, bool) {
	switch x := v.(type) {
	case dtime:
		return x, true
	case time.Time:
		return fromGoTime(x), true
	}
	return dtime{}, false
}

func camelToSnake(s string) string {
	var out []rune
	r := []rune(s)
	for i, c := range r {
		if i > 0 && unicode.IsUpper(c) {
			prev := r[i-1]
			nextLower := i+1 < len(r) && unicode.IsLower(r[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				out = append(out, '_')
			}
		}
		out = append(out, unicode.ToLower(c))
	}
	return string(out)
}

func uuid4() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

func pyTitle(s string) string {
	var b strings.Builder
	prevLetter := false
	for _, r := range s {
		if unicode.IsLetter(r) {
			if prevLetter {
				b.WriteRune(unicode.ToLower(r))
			} else {
				b.WriteRune(unicode.ToUpper(r))
			}
			prevLetter = true
		} else {
			b.WriteRune(r)
			prevLetter = false
		}
	}
	return b.String()
}

func pyCapitalize(s string) string {
	if s == "" {
		return s
	}
	r, n := utf8.DecodeRuneInString(s)
	return string(unicode.ToUpper(r)) + strings.ToLower(s[n:])
}

func pyStrip(s string, args []any, fn func(string, string) string, def func(string) string) string {
	if len(args) > 0 && args[0] != nil && !IsUndefined(args[0]) {
		return fn(s, ToString(args[0]))
	}
	return def(s)
}

// pySplit is str.split(sep=None, maxsplit=-1).
func pySplit(s string, sep any, maxsplit int64) ([]any, error) {
	var parts []string
	if sep == nil || IsUndefined(sep) {
		pieces := int64(fieldCount(s))
		if maxsplit >= 0 && maxsplit+1 < pieces {
			pieces = maxsplit + 1
		}
		if fitItems(pieces) != nil {
			return nil, errItems
		}
		if maxsplit < 0 {
			parts = strings.Fields(s)
		} else {
			rest := strings.TrimLeftFunc(s, unicode.IsSpace)
			for rest != "" {
				if int64(len(parts)) == maxsplit {
					parts = append(parts, rest)
					break
				}
				i := strings.IndexFunc(rest, unicode.IsSpace)
				if i < 0 {
					parts = append(parts, rest)
					break
				}
				parts = append(parts, rest[:i])
				rest = strings.TrimLeftFunc(rest[i:], unicode.IsSpace)
			}
		}
	} else {
		sp := ToString(sep)
		if sp == "" {
			return nil, errors.New("empty separator")
		}
		pieces := int64(strings.Count(s, sp)) + 1
		if maxsplit >= 0 {
			pieces = min(pieces, maxsplit+1)
		}
		if fitItems(pieces) != nil {
			return nil, errItems
		}
		if maxsplit < 0 {
			parts = strings.Split(s, sp)
		} else {
			parts = strings.SplitN(s, sp, int(min(maxsplit+1, 1<<30)))
		}
	}
	out := make([]any, len(parts))
	for i, p := range parts {
		out[i] = p
	}
	return out, nil
}

// pyFormat is str.format with {}, {0}, {name}, attribute/index access and
// simple format specs.
func pyFormat(f string, args []any, kwargs map[string]any) (string, error) {
	var b strings.Builder
	auto := 0
	for i := 0; i < len(f); i++ {
		c := f[i]
		if c == '}' {
			if i+1 < len(f) && f[i+1] == '}' {
				i++
			}
			b.WriteByte('}')
			continue
		}
		if c != '{' {
			b.WriteByte(c)
			continue
		}
		if i+1 < len(f) && f[i+1] == '{' {
			b.WriteByte('{')
			i++
			continue
		}
		end := strings.IndexByte(f[i:], '}')
		if end < 0 {
			return "", errors.New("single '{' encountered in format string")
		}
		field := f[i+1 : i+end]
		i += end
		fspec := ""
		if k := strings.IndexByte(field, ':'); k >= 0 {
			field, fspec = field[:k], field[k+1:]
		}
		conv := ""
		if k := strings.IndexByte(field, '!'); k >= 0 {
			field, conv = field[:k], field[k+1:]
		}
		name := field
		rest := ""
		if k := strings.IndexAny(field, ".["); k >= 0 {
			name, rest = field[:k], field[k:]
		}
		var v any
		switch {
		case name == "":
			if auto >= len(args) {
				return "", errors.New("replacement index out of range for positional args")
			}
			v = args[auto]
			auto++
		case isDigits(name):
			n, _ := strconv.Atoi(name)
			if n >= len(args) {
				return "", fmt.Errorf("replacement index %d out of range for positional args", n)
			}
			v = args[n]
		default:
			var ok bool
			if v, ok = kwargs[name]; !ok {
				return "", fmt.Errorf("KeyError: %s", pyRepr(name))
			}
		}
		for rest != "" {
			if rest[0] == '.' {
				k := strings.IndexAny(rest[1:], ".[")
				if k < 0 {
					k = len(rest) - 1
				}
				v = getAttr(v, rest[1:k+1])
				rest = rest[k+1:]
			} else {
				k := strings.IndexByte(rest, ']')
				if k < 0 {
					return "", errors.New("missing ']' in format string")
				}
				key := rest[1:k]
				if n, err := strconv.Atoi(key); err == nil {
					v = getItem(v, int64(n))
				} else {
					v = getItem(v, key)
				}
				rest = rest[k+1:]
			}
		}
		s := ToString(v)
		if conv == "r" {
			s = pyRepr(v)
		}
		s, err := applySpec(v, s, fspec)
		if err != nil {
			return "", err
		}
		b.WriteString(s)
		if b.Len() > maxValue {
			return "", errValue
		}
	}
	return b.String(), nil
}

var specRe = regexp.MustCompile(`^(?:(.)?([<>^=]))?([+\- ])?(0)?(\d+)?(,)?(?:\.(\d+))?([sdfeEgGxXob%])?$`)

func applySpec(v any, s, fspec string) (string, error) {
	if fspec == "" {
		return s, nil
	}
	m := specRe.FindStringSubmatch(fspec)
	if m == nil {
		return "", fmt.Errorf("invalid format specifier %s", pyRepr(fspec))
	}
	fill, align, zero, width, prec, typ := m[1], m[2], m[4], m[5], m[7], m[8]
	if d, ok := asDtime(v); ok && typ == "" {
		return strftime(d, fspec), nil
	}
	if typ != "" && typ != "s" {
		f, ok := toFloat(v)
		if !ok {
			return "", fmt.Errorf("unknown format code '%s' for object of type '%s'", typ, typeName(v))
		}
		p := 6
		if prec != "" {
			p, _ = strconv.Atoi(prec)
			// Like the width, a precision is at most 1000 (a value of a billion digits
			// is no use and would not fit the limits).
			p = min(p, 1000)
		}
		switch typ {
		case "d":
			s = strconv.FormatInt(int64(f), 10)
		case "f":
			s = strconv.FormatFloat(f, 'f', p, 64)
		case "e", "E":
			s = strconv.FormatFloat(f, typ[0], p, 64)
		case "g", "G":
			s = strconv.FormatFloat(f, typ[0], p, 64)
		case "x":
			s = strconv.FormatInt(int64(f), 16)
		case "X":
			s = strings.ToUpper(strconv.FormatInt(int64(f), 16))
		case "o":
			s = strconv.FormatInt(int64(f), 8)
		case "b":
			s = strconv.FormatInt(int64(f), 2)
		case "%":
			s = strconv.FormatFloat(f*100, 'f', p, 64) + "%"
		}
	} else if prec != "" {
		p, _ := strconv.Atoi(prec)
		if r := []rune(s); len(r) > p {
			s = string(r[:p])
		}
	}
	w, _ := strconv.Atoi(width)
	if w > 1000 {
		w = 1000
	}
	n := utf8.RuneCountInString(s)
	if n >= w {
		return s, nil
	}
	if fill == "" {
		fill = " "
		if zero != "" {
			fill = "0"
		}
	}
	if align == "" {
		align = "<"
		if typ != "" && typ != "s" {
			align = ">"
		}
	}
	pad := strings.Repeat(fill, w-n)
	switch align {
	case ">", "=":
		return pad + s, nil
	case "^":
		l := (w - n) / 2
		return strings.Repeat(fill, l) + s + strings.Repeat(fill, w-n-l), nil
	}
	return s + pad, nil
}

// pyRound rounds half to even like Python's round().
func pyRound(v any, nd any) (any, error) {
	n, k := toNumberOrBool(v)
	if k == numNone {
		return nil, fmt.Errorf("type %s doesn't define __round__ method", typeName(v))
	}
	if nd == nil || IsUndefined(nd) {
		if k == numInt {
			return n.i, nil
		}
		if math.IsNaN(n.f) || math.IsInf(n.f, 0) || math.Abs(n.f) >= 9.2e18 {
			return nil, errors.New("cannot convert float to integer")
		}
		return int64(math.RoundToEven(n.f)), nil
	}
	d, dk := toNumber(nd)
	if dk != numInt {
		return nil, errors.New("round() ndigits must be an integer")
	}
	if k == numInt {
		if d.i >= 0 {
			return n.i, nil
		}
		p := math.Pow(10, float64(-d.i))
		return int64(math.RoundToEven(float64(n.i)/p) * p), nil
	}
	if d.i > 300 || d.i < -300 {
		return n.f, nil
	}
	p := math.Pow(10, float64(d.i))
	r := math.RoundToEven(n.f*p) / p
	if s, err := strconv.ParseFloat(strconv.FormatFloat(n.f, 'f', int(max(d.i, 0)), 64), 64); err == nil && d.i >= 0 {
		r = s
	}
	return r, nil
}

func jinjaRound(v any, precision int64, method string) (any, error) {
	f, ok := toFloat(v)
	if !ok {
		return nil, fmt.Errorf("round filter expects a number, got %s", typeName(v))
	}
	if precision > 300 || precision < -300 {
		return f, nil
	}
	p := math.Pow(10, float64(precision))
	switch method {
	case "common":
		r, err := pyRound(f, precision)
		if err != nil {
			return nil, err
		}
		if x, ok := r.(float64); ok {
			// Jinja's "common" rounds half away from zero.
			if y := math.Round(f*p) / p; math.Abs(y-x) > 0 {
				return y, nil
			}
			return x, nil
		}
		return r, nil
	case "ceil":
		return math.Ceil(f*p) / p, nil
	case "floor":
		return math.Floor(f*p) / p, nil
	}
	return nil, errors.New("method must be common, ceil or floor")
}

func (fr *frame) minMax(args []any, wantMax bool, name string) (any, error) {
	items := args
	if len(args) == 1 {
		l, err := iterate(args[0])
		if err != nil {
			return nil, err
		}
		items = l
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s() arg is an empty sequence", name)
	}
	best := items[0]
	for _, v := range items[1:] {
		op := "<"
		if wantMax {
			op = ">"
		}
		c, err := fr.compare(v, best, op, 0)
		if err != nil {
			return nil, err
		}
		if (wantMax && c > 0) || (!wantMax && c < 0) {
			best = v
		}
	}
	return best, nil
}

func pyRange(args []any) (any, error) {
	var nums [3]int64
	for i, a := range args {
		n, k := toNumberOrBool(a)
		if k != numInt {
			return nil, fmt.Errorf("'%s' object cannot be interpreted as an integer", typeName(a))
		}
		nums[i] = n.i
	}
	start, stop, step := int64(0), nums[0], int64(1)
	if len(args) >= 2 {
		start, stop = nums[0], nums[1]
	}
	if len(args) == 3 {
		step = nums[2]
	}
	if step == 0 {
		return nil, errors.New("range() arg 3 must not be zero")
	}
	out := []any{}
	for i := start; (step > 0 && i < stop) || (step < 0 && i > stop); i += step {
		if len(out) >= 100000 {
			return nil, errors.New("range() too large")
		}
		out = append(out, i)
	}
	return out, nil
}

func listOf(v any) ([]any, error) {
	l, err := iterate(v)
	if err != nil {
		return nil, err
	}
	return append([]any{}, l...), nil
}

func itemsOf(v any) ([]any, error) {
	m, ok := mapView(v)
	if !ok {
		if v == nil || IsUndefined(v) {
			return []any{}, nil
		}
		return nil, fmt.Errorf("'%s' object has no attribute 'items'", typeName(v))
	}
	keys := m.Keys()
	out := make([]any, len(keys))
	for i, k := range keys {
		e, _ := m.Get(k)
		out[i] = []any{k, e}
	}
	return out, nil
}

// attrPath reads a dotted attribute such as "a.b" or "a.0".
func attrPath(v any, path string) any {
	for _, part := range strings.Split(path, ".") {
		if n, err := strconv.Atoi(part); err == nil {
			v = getItem(v, int64(n))
		} else {
			v = getItem(v, part)
		}
	}
	return v
}

func runTest(fr *frame, name string, v any, args []any) (bool, error) {
	t, ok := tests[name]
	if !ok {
		return false, fmt.Errorf("no test named %s", pyRepr(name))
	}
	if len(args) < t.nargs {
		return false, fmt.Errorf("test %s needs %d argument(s), got %d", pyRepr(name), t.nargs, len(args))
	}
	return t.fn(fr, v, args)
}

func selectItems(fr *frame, v any, args []any, attr bool, keep bool) (any, error) {
	l, err := iterate(v)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for _, e := range l {
		x := e
		rest := args
		if attr {
			if len(args) == 0 {
				return nil, errors.New("missing parameter for attribute name")
			}
			x = attrPath(e, ToString(args[0]))
			rest = args[1:]
		}
		var ok bool
		if !fr.spend(1) {
			return nil, fr.err
		}
		if len(rest) == 0 {
			ok = Truthy(x)
		} else {
			ok, err = runTest(fr, ToString(rest[0]), x, rest[1:])
			if err != nil {
				return nil, err
			}
		}
		if ok == keep {
			out = append(out, e)
		}
	}
	return out, nil
}

func b64decode(s string) (string, error) {
	s = strings.TrimSpace(s)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil {
			return string(b), nil
		}
	}
	return "", errors.New("invalid base64 input")
}

// urlencodeValue is Jinja's urlencode. A result beyond maxValue is cut short just past
// it: the caller refuses it anyway.
func urlencodeValue(v any) string {
	var b strings.Builder
	pair := func(k, e any) {
		if b.Len() > 0 {
			b.WriteByte('&')
		}
		b.WriteString(quote(ToString(k), "", true))
		b.WriteByte('=')
		b.WriteString(quote(ToString(e), "", true))
	}
	if m, ok := mapView(v); ok {
		for _, k := range m.Keys() {
			if b.Len() > maxValue {
				break
			}
			e, _ := m.Get(k)
			pair(k, e)
		}
		return b.String()
	}
	if l, ok := asList(v); ok {
		for _, e := range l {
			if b.Len() > maxValue {
				break
			}
			if p, ok := asList(e); ok && len(p) == 2 {
				pair(p[0], p[1])
			}
		}
		return b.String()
	}
	return quote(ToString(v), "/", false)
}

func (fr *frame) dictsort(v any, caseSensitive bool, by string, reverse bool) (any, error) {
	items, err := itemsOf(v)
	if err != nil {
		return nil, err
	}
	idx := 0
	if by == "value" {
		idx = 1
	}
	err = fr.sortValues(items, func(p any) any {
		x := p.([]any)[idx]
		if s, ok := x.(string); ok && !caseSensitive {
			return strings.ToLower(s)
		}
		return x
	}, reverse)
	return items, err
}

var _ = url.QueryEscape

// fieldCount counts the whitespace-separated fields of s without building them.
func fieldCount(s string) int {
	n, in := 0, false
	for _, r := range s {
		space := unicode.IsSpace(r)
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
