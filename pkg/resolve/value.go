package resolve

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
)

// The values of a manifest tree are what the CDK's Python holds after json.loads or
// yaml.safe_load: nil, bool, string, Number, *List and *Object. Objects and lists are
// pointers because the CDK's passes share and change them in place (a list handed from
// $parameters into a field is the same list in both), and the result depends on that.

// Object is a JSON object that keeps its keys in insertion order, as a Python dict does:
// setting an existing key keeps its place, deleting and setting again moves it to the end.
type Object struct {
	keys []string
	vals map[string]any
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Keys returns the keys in order; the slice must not be changed.
func (o *Object) Keys() []string { return o.keys }

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// Get returns the value of key.
func (o *Object) Get(key string) (any, bool) {
	v, ok := o.vals[key]
	return v, ok
}

// Value is Get without the presence flag (nil when absent, as dict.get).
func (o *Object) Value(key string) any { return o.vals[key] }

// Has reports whether key is present.
func (o *Object) Has(key string) bool {
	_, ok := o.vals[key]
	return ok
}

// Set sets key, in place when present, else at the end.
func (o *Object) Set(key string, v any) {
	if _, ok := o.vals[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.vals[key] = v
}

// Pop removes key and returns its value.
func (o *Object) Pop(key string) (any, bool) {
	v, ok := o.vals[key]
	if !ok {
		return nil, false
	}
	delete(o.vals, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i:i], o.keys[i+1:]...)
			break
		}
	}
	return v, true
}

// shallow is a new object with the same pairs ({**o} in Python).
func (o *Object) shallow() *Object {
	c := &Object{keys: append([]string(nil), o.keys...), vals: make(map[string]any, len(o.vals))}
	for k, v := range o.vals {
		c.vals[k] = v
	}
	return c
}

// List is a JSON array, shared by reference as a Python list is.
type List struct{ Items []any }

// Number is a number as Python holds it: an int of any size or a float, kept as the text
// Python writes for it (int: decimal digits; float: repr), so that equal values have equal
// text and the output reads as the CDK's.
type Number struct {
	Text  string
	Float bool
}

// intNumber makes a Number of an integer given in decimal.
func intNumber(n *big.Int) Number { return Number{Text: n.String()} }

// floatNumber makes a Number of a float.
func floatNumber(f float64) Number { return Number{Text: pyFloat(f), Float: true} }

// isZero reports a number Python finds false.
func (n Number) isZero() bool {
	if !n.Float {
		return strings.TrimLeft(strings.TrimPrefix(n.Text, "-"), "0") == ""
	}
	f, _ := strconv.ParseFloat(n.Text, 64)
	return f == 0
}

// pyFloat writes f as Python's repr does: the shortest digits that read back as f, in fixed
// notation between 1e-4 and 1e16 (with ".0" when whole), else in exponent notation with a
// signed exponent of at least two digits.
func pyFloat(f float64) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, exp, _ := strings.Cut(s, "e")
	e, _ := strconv.Atoi(exp)
	digits := strings.Replace(mant, ".", "", 1)
	var out string
	if e >= -4 && e < 16 {
		switch {
		case e < 0:
			out = "0." + strings.Repeat("0", -e-1) + digits
		case e+1 >= len(digits):
			out = digits + strings.Repeat("0", e+1-len(digits)) + ".0"
		default:
			out = digits[:e+1] + "." + digits[e+1:]
		}
	} else {
		m := digits[:1]
		if len(digits) > 1 {
			m += "." + digits[1:]
		}
		sign := "+"
		if e < 0 {
			sign, e = "-", -e
		}
		out = m + "e" + sign + leftPad(strconv.Itoa(e), 2)
	}
	if neg {
		out = "-" + out
	}
	return out
}

func leftPad(s string, n int) string {
	if len(s) < n {
		return strings.Repeat("0", n-len(s)) + s
	}
	return s
}

// truthy is Python's truth of a value.
func truthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case Number:
		return !x.isZero()
	case *List:
		return len(x.Items) > 0
	case *Object:
		return x.Len() > 0
	}
	return true
}

// deepCopy copies v as copy.deepcopy does: an object or list met twice in v is copied once,
// so that the copy shares what the original shared.
func deepCopy(v any) any { return (&copier{done: map[any]any{}}).copy(v) }

// copier is one deep copy; each object and list it makes is spent from b, when set.
type copier struct {
	done map[any]any
	b    *budget
}

func (c *copier) copy(v any) any {
	switch x := v.(type) {
	case *Object:
		if done, ok := c.done[x]; ok {
			return done
		}
		if c.b != nil {
			c.b.left--
		}
		o := &Object{keys: append([]string(nil), x.keys...), vals: make(map[string]any, len(x.vals))}
		c.done[x] = o
		for k, e := range x.vals {
			o.vals[k] = c.copy(e)
		}
		return o
	case *List:
		if done, ok := c.done[x]; ok {
			return done
		}
		if c.b != nil {
			c.b.left--
		}
		l := &List{Items: make([]any, len(x.Items))}
		c.done[x] = l
		for i, e := range x.Items {
			l.Items[i] = c.copy(e)
		}
		return l
	}
	return v
}

// equal is Python's == on two values: numbers (and booleans, which Python counts as 1 and 0)
// compare by value, objects by their pairs whatever the order, lists item by item.
func equal(a, b any) bool {
	if na, ok := numeric(a); ok {
		nb, ok := numeric(b)
		return ok && na.Cmp(nb) == 0
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case string:
		y, ok := b.(string)
		return ok && x == y
	case *List:
		y, ok := b.(*List)
		if !ok || len(x.Items) != len(y.Items) {
			return false
		}
		for i := range x.Items {
			if !equal(x.Items[i], y.Items[i]) {
				return false
			}
		}
		return true
	case *Object:
		y, ok := b.(*Object)
		if !ok || x.Len() != y.Len() {
			return false
		}
		for _, k := range x.keys {
			w, ok := y.vals[k]
			if !ok || !equal(x.vals[k], w) {
				return false
			}
		}
		return true
	}
	return false
}

// numeric is the value of a number or a bool, for equal.
func numeric(v any) (*big.Rat, bool) {
	switch x := v.(type) {
	case bool:
		if x {
			return big.NewRat(1, 1), true
		}
		return new(big.Rat), true
	case Number:
		if x.Float {
			f, err := strconv.ParseFloat(x.Text, 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, false
			}
			return new(big.Rat).SetFloat64(f), true
		}
		r, ok := new(big.Rat).SetString(x.Text)
		return r, ok
	}
	return nil, false
}

// pyStr is Python's str() of a value, for the places where the CDK formats one into a
// string (a component type in a field identifier, a manifest version).
func pyStr(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case string:
		return x
	case Number:
		return x.Text
	}
	return "<" + typeName(v) + ">"
}

// typeName is the Python type name of a value, as Python's messages say it.
func typeName(v any) string {
	switch x := v.(type) {
	case nil:
		return "NoneType"
	case bool:
		return "bool"
	case string:
		return "str"
	case Number:
		if x.Float {
			return "float"
		}
		return "int"
	case *List:
		return "list"
	case *Object:
		return "dict"
	}
	return "object"
}

var (
	inf = math.Inf(1)
	nan = math.NaN()
)

// cdkErrorf is an error worded as the CDK words it, capital letter and final period
// included: the manifest server's answers carry these words as they are.
func cdkErrorf(format string, args ...any) error {
	return &cdkError{fmt.Sprintf(format, args...)}
}

type cdkError struct{ msg string }

func (e *cdkError) Error() string { return e.msg }
