package template

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

type undefined struct{}

// Undefined is the value of a missing key, an index out of range, or any
// access on none or undefined. It renders as "" and is falsy.
var Undefined any = undefined{}

// IsUndefined reports whether v is Undefined.
func IsUndefined(v any) bool {
	_, ok := v.(undefined)
	return ok
}

// IsEmpty reports whether v is nil, Undefined or "", the values that make a
// request option disappear.
func IsEmpty(v any) bool {
	switch x := v.(type) {
	case nil, undefined:
		return true
	case string:
		return x == ""
	}
	return false
}

// Truthy reports Python truthiness: nil, Undefined, false, 0, 0.0, "", and
// empty lists and maps are false; everything else is true.
func Truthy(v any) bool {
	if t, ok := v.(Truther); ok {
		return t.Truthy()
	}
	switch x := v.(type) {
	case nil, undefined:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int:
		return x != 0
	case int64:
		return x != 0
	case float64:
		return x != 0
	case json.Number:
		if i, k := toNumber(x); k == numInt {
			return i.i != 0
		} else if k == numFloat {
			return i.f != 0
		}
		return x != ""
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	case Mapping:
		return len(x.Keys()) > 0
	case *namespace:
		return true
	case dtime, *loopInfo:
		return true
	case duration:
		return x.months != 0 || x.d != 0
	}
	if n, k := toNumber(v); k != numNone {
		return n.i != 0 || n.f != 0
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
		return rv.Len() > 0
	case reflect.Pointer, reflect.Interface:
		return !rv.IsNil()
	}
	return true
}

// ToString renders v the way Jinja2 renders Python values: True/False/None,
// 1.0 for a float 1, "" for Undefined, lists and dicts in Python repr form,
// a json.Number as its exact text, datetimes as Python str(datetime).
func ToString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case undefined:
		return ""
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return pyFloat(x)
	case json.Number:
		return string(x)
	case dtime:
		return x.String()
	case duration:
		return x.String()
	case fmt.Stringer:
		return x.String()
	}
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

// ToInt converts an integer-like value, or a string that spells an integer
// ("100" gives 100).
func ToInt(v any) (int64, error) {
	switch x := v.(type) {
	case string:
		s := strings.TrimSpace(x)
		i, err := strconv.ParseInt(strings.ReplaceAll(s, "_", ""), 10, 64)
		if err != nil || s == "" || strings.HasPrefix(s, "_") || strings.HasSuffix(s, "_") {
			return 0, fmt.Errorf("%s is not an integer", pyRepr(x))
		}
		return i, nil
	case bool:
		return 0, fmt.Errorf("%s is not an integer", ToString(x))
	}
	n, k := toNumber(v)
	switch k {
	case numInt:
		return n.i, nil
	case numFloat:
		if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<63 {
			return int64(n.f), nil
		}
	}
	return 0, fmt.Errorf("%s is not an integer", pyRepr(v))
}

// ToBool converts a bool, or the strings "true"/"false" in any case; any
// other value by Truthy.
func ToBool(v any) (bool, error) {
	switch x := v.(type) {
	case bool:
		return x, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(x)) {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
	}
	return Truthy(v), nil
}

// Mapping lets callers pass their own map-like values, such as
// case-insensitive HTTP headers or ordered objects. Access on a Mapping
// uses Get; iteration uses Keys in their order.
type Mapping interface {
	Get(key string) (any, bool)
	Keys() []string
}

// StrByter is a Mapping that can give the text a template writes for one of its values
// without making a Go value of it: an ordered record whose values are still JSON text.
// {{ x.key }} and {{ x['key'] }} ask it first. When ok, text is ToString of what Get gives
// for key; the caller does not change it.
type StrByter interface {
	StrBytes(key string) (text []byte, ok bool)
}

// Attributes is a value with attributes of its own besides its keys, as a Python object has
// (the CDK's StreamSlice has `partition`, `cursor_slice` and `extra_fields`): `a.b` reads the
// attribute b first, then the key b; `a['b']` reads the key only.
type Attributes interface {
	Attr(name string) (any, bool)
}

// Truther is a value with its own truthiness (Python's __bool__).
type Truther interface {
	Truthy() bool
}

// number is a normalized numeric value.
type number struct {
	i int64
	f float64
}

type numKind uint8

const (
	numNone numKind = iota
	numInt
	numFloat
)

// toNumber normalizes the numeric Go types and json.Number. Bools are not
// numbers here.
func toNumber(v any) (number, numKind) {
	switch x := v.(type) {
	case int:
		return number{i: int64(x)}, numInt
	case int64:
		return number{i: x}, numInt
	case float64:
		return number{f: x}, numFloat
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return number{i: i}, numInt
		}
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return number{f: f}, numFloat
		}
		return number{}, numNone
	case int32:
		return number{i: int64(x)}, numInt
	case int16:
		return number{i: int64(x)}, numInt
	case int8:
		return number{i: int64(x)}, numInt
	case uint:
		return number{i: int64(x)}, numInt
	case uint64:
		return number{i: int64(x)}, numInt
	case uint32:
		return number{i: int64(x)}, numInt
	case uint16:
		return number{i: int64(x)}, numInt
	case uint8:
		return number{i: int64(x)}, numInt
	case float32:
		return number{f: float64(x)}, numFloat
	}
	return number{}, numNone
}

// toNumberOrBool is toNumber that also treats bools as 0/1 (Python bool is an int).
func toNumberOrBool(v any) (number, numKind) {
	if b, ok := v.(bool); ok {
		if b {
			return number{i: 1}, numInt
		}
		return number{}, numInt
	}
	return toNumber(v)
}

func (n number) float(k numKind) float64 {
	if k == numInt {
		return float64(n.i)
	}
	return n.f
}

// pyFloat formats a float like Python's repr.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	if f == 0 {
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64)
	mant, expS, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(expS)
	if exp < -4 || exp >= 16 {
		sign := "+"
		if exp < 0 {
			sign = "-"
			exp = -exp
		}
		e := strconv.Itoa(exp)
		if len(e) < 2 {
			e = "0" + e
		}
		return mant + "e" + sign + e
	}
	s = strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

// PyRepr is Python's repr() of a plain value: 'text' for a string, [1, 'a'] for a list.
func PyRepr(v any) string { return pyRepr(v) }

// pyRepr renders v like Python's repr().
func pyRepr(v any) string {
	var b strings.Builder
	writeRepr(&b, v, 0)
	return b.String()
}

func writeRepr(b *strings.Builder, v any, depth int) {
	if depth > 100 {
		b.WriteString("...")
		return
	}
	if b.Len() > maxValue {
		// Too large to be of use: whoever uses the text finds it above maxValue.
		return
	}
	switch x := v.(type) {
	case string:
		writeStrRepr(b, x)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writeRepr(b, e, depth+1)
		}
		b.WriteByte(']')
	case map[string]any:
		b.WriteByte('{')
		for i, k := range slices.Sorted(maps.Keys(x)) {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, k)
			b.WriteString(": ")
			writeRepr(b, x[k], depth+1)
		}
		b.WriteByte('}')
	case Mapping:
		b.WriteByte('{')
		for i, k := range x.Keys() {
			if i > 0 {
				b.WriteString(", ")
			}
			writeStrRepr(b, k)
			b.WriteString(": ")
			e, _ := x.Get(k)
			writeRepr(b, e, depth+1)
		}
		b.WriteByte('}')
	case *namespace:
		b.WriteString("<Namespace ")
		writeRepr(b, x.m, depth+1)
		b.WriteString(">")
	case *loopInfo:
		b.WriteString("<LoopContext>")
	case undefined, nil, bool, int, int64, float64, json.Number:
		b.WriteString(ToString(x))
	case dtime:
		b.WriteString(x.repr())
	case duration:
		b.WriteString(x.repr())
	default:
		if l, ok := asList(v); ok {
			writeRepr(b, l, depth)
			return
		}
		if m, ok := asMap(v); ok {
			writeRepr(b, m, depth)
			return
		}
		if n, k := toNumber(v); k == numInt {
			b.WriteString(strconv.FormatInt(n.i, 10))
		} else if k == numFloat {
			b.WriteString(pyFloat(n.f))
		} else {
			fmt.Fprint(b, v)
		}
	}
}

// writeStrRepr is repr() of a str: backslash, the quote, \n, \r and \t escaped, and every
// other character Python's str.isprintable refuses (control and format characters, line and
// paragraph separators, unassigned code points; the space is printable) as \xhh, \uhhhh or
// \Uhhhhhhhh. Go's unicode.IsPrint is that set.
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

// asList converts list-like values ([]any, other slices) to []any.
func asList(v any) ([]any, bool) {
	switch x := v.(type) {
	case []any:
		return x, true
	case []string:
		l := make([]any, len(x))
		for i, s := range x {
			l[i] = s
		}
		return l, true
	case string, nil, undefined:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.Array {
		if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() == reflect.Uint8 {
			return nil, false
		}
		l := make([]any, rv.Len())
		for i := range l {
			l[i] = rv.Index(i).Interface()
		}
		return l, true
	}
	return nil, false
}

// asMap converts map-like values with string keys (but not Mapping) to map[string]any.
func asMap(v any) (map[string]any, bool) {
	switch x := v.(type) {
	case map[string]any:
		return x, true
	case *namespace:
		return x.m, true
	case nil, undefined, string, []any:
		return nil, false
	}
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Map && rv.Type().Key().Kind() == reflect.String {
		m := make(map[string]any, rv.Len())
		it := rv.MapRange()
		for it.Next() {
			m[it.Key().String()] = it.Value().Interface()
		}
		return m, true
	}
	return nil, false
}

// typeName names v's type the way Python would.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case undefined:
		return "Undefined"
	case bool:
		return "bool"
	case string:
		return "str"
	case dtime:
		return x.typeName()
	case duration:
		return "timedelta"
	case *loopInfo:
		return "LoopContext"
	case *namespace:
		return "Namespace"
	case templateRef:
		return "TemplateReference"
	case Mapping:
		return "dict"
	}
	if _, k := toNumber(v); k == numInt {
		return "int"
	} else if k == numFloat {
		return "float"
	}
	if _, ok := asList(v); ok {
		return "list"
	}
	if _, ok := asMap(v); ok {
		return "dict"
	}
	return fmt.Sprintf("%T", v)
}

// Numeric returns a number's value as text, equal for numbers Python finds equal (1, 1.0
// and json.Number("1") all give "1"); false for a value that is not a number.
func Numeric(v any) (string, bool) {
	n, k := toNumber(v)
	switch k {
	case numInt:
		return strconv.FormatInt(n.i, 10), true
	case numFloat:
		if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<63 {
			return strconv.FormatInt(int64(n.f), 10), true
		}
		return strconv.FormatFloat(n.f, 'g', -1, 64), true
	}
	return "", false
}
