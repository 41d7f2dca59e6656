package template

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// getAttr is a.b: a key of a mapping, a field of a loop, namespace or datetime.
func getAttr(x any, name string) any {
	if a, ok := x.(Attributes); ok {
		if v, ok := a.Attr(name); ok {
			return v
		}
	}
	switch o := x.(type) {
	case map[string]any:
		if v, ok := o[name]; ok {
			return v
		}
		return Undefined
	case Mapping:
		if v, ok := o.Get(name); ok {
			return v
		}
		return Undefined
	case nil, undefined:
		return Undefined
	case *loopInfo:
		return o.attr(name)
	case *namespace:
		if v, ok := o.m[name]; ok {
			return v
		}
		return Undefined
	case dtime:
		return o.attr(name)
	case duration:
		return o.attr(name)
	case []any, string:
		return Undefined
	}
	if m, ok := asMap(x); ok {
		if v, ok := m[name]; ok {
			return v
		}
	}
	return Undefined
}

// getItem is a[k]: a key of a mapping or an index of a list or string
// (negative indexes count from the end); anything missing is Undefined.
func getItem(x any, k any) any {
	switch o := x.(type) {
	case map[string]any:
		key, ok := k.(string)
		if !ok {
			key = keyString(k)
		}
		if v, ok := o[key]; ok {
			return v
		}
		return Undefined
	case Mapping:
		if v, ok := o.Get(keyString(k)); ok {
			return v
		}
		return Undefined
	case []any:
		i, ok := indexOf(k, len(o))
		if !ok {
			if s, isStr := k.(string); isStr {
				return getAttr(x, s)
			}
			return Undefined
		}
		return o[i]
	case string:
		if isASCII(o) {
			i, ok := indexOf(k, len(o))
			if !ok {
				return Undefined
			}
			return o[i : i+1]
		}
		r := []rune(o)
		i, ok := indexOf(k, len(r))
		if !ok {
			return Undefined
		}
		return string(r[i])
	case nil, undefined:
		return Undefined
	}
	if s, ok := k.(string); ok {
		return getAttr(x, s)
	}
	if l, ok := asList(x); ok {
		return getItem(l, k)
	}
	return Undefined
}

func keyString(k any) string {
	if s, ok := k.(string); ok {
		return s
	}
	return ToString(k)
}

func indexOf(k any, n int) (int, bool) {
	var i int64
	switch x := k.(type) {
	case bool:
		return 0, false
	default:
		num, kind := toNumber(x)
		if kind != numInt {
			return 0, false
		}
		i = num.i
	}
	if i < 0 {
		i += int64(n)
	}
	if i < 0 || i >= int64(n) {
		return 0, false
	}
	return int(i), true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// sliceIndices mirrors Python's slice.indices.
func sliceIndices(n int, lo, hi, step any) (start, stop, st int, err error) {
	st = 1
	if step != nil && !IsUndefined(step) {
		s, k := toNumberOrBool(step)
		if k != numInt {
			return 0, 0, 0, errors.New("slice indices must be integers or None")
		}
		if s.i == 0 {
			return 0, 0, 0, errors.New("slice step cannot be zero")
		}
		st = clampInt(s.i)
	}
	get := func(v any, def int) (int, error) {
		if v == nil || IsUndefined(v) {
			return def, nil
		}
		x, k := toNumberOrBool(v)
		if k != numInt {
			return 0, errors.New("slice indices must be integers or None")
		}
		i := clampInt(x.i)
		if i < 0 {
			i += n
			if i < 0 {
				if st < 0 {
					i = -1
				} else {
					i = 0
				}
			}
		} else if i >= n {
			if st < 0 {
				i = n - 1
			} else {
				i = n
			}
		}
		return i, nil
	}
	if st > 0 {
		start, err = get(lo, 0)
		if err == nil {
			stop, err = get(hi, n)
		}
	} else {
		start, err = get(lo, n-1)
		if err == nil {
			stop, err = get(hi, -1)
		}
	}
	return
}

func clampInt(i int64) int {
	if i > math.MaxInt32 {
		return math.MaxInt32
	}
	if i < math.MinInt32 {
		return math.MinInt32
	}
	return int(i)
}

// getSlice is a[lo:hi:step] on lists and strings.
func getSlice(x, lo, hi, step any) (any, error) {
	switch o := x.(type) {
	case string:
		if isASCII(o) {
			start, stop, st, err := sliceIndices(len(o), lo, hi, step)
			if err != nil {
				return nil, err
			}
			if st == 1 {
				if start >= stop {
					return "", nil
				}
				return o[start:stop], nil
			}
			var b strings.Builder
			for i := start; (st > 0 && i < stop) || (st < 0 && i > stop); i += st {
				b.WriteByte(o[i])
			}
			return b.String(), nil
		}
		r := []rune(o)
		start, stop, st, err := sliceIndices(len(r), lo, hi, step)
		if err != nil {
			return nil, err
		}
		var out []rune
		for i := start; (st > 0 && i < stop) || (st < 0 && i > stop); i += st {
			out = append(out, r[i])
		}
		return string(out), nil
	case nil, undefined:
		return Undefined, nil
	}
	l, ok := asList(x)
	if !ok {
		return Undefined, nil
	}
	start, stop, st, err := sliceIndices(len(l), lo, hi, step)
	if err != nil {
		return nil, err
	}
	out := []any{}
	for i := start; (st > 0 && i < stop) || (st < 0 && i > stop); i += st {
		out = append(out, l[i])
	}
	return out, nil
}

// iterate returns the elements a for loop or a filter walks over: list
// items, mapping keys (sorted for plain maps, Keys order for a Mapping),
// characters of a string. None and Undefined iterate as empty.
func iterate(v any) ([]any, error) {
	switch x := v.(type) {
	case []any:
		return x, nil
	case nil, undefined:
		return nil, nil
	case string:
		n, err := runes(x)
		if err != nil {
			return nil, err
		}
		out := make([]any, 0, n)
		for _, r := range x {
			out = append(out, string(r))
		}
		return out, nil
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	case Mapping:
		keys := x.Keys()
		out := make([]any, len(keys))
		for i, k := range keys {
			out[i] = k
		}
		return out, nil
	}
	if l, ok := asList(v); ok {
		return l, nil
	}
	if m, ok := asMap(v); ok {
		return iterate(m)
	}
	return nil, fmt.Errorf("'%s' object is not iterable", typeName(v))
}

// length is Python len().
func length(v any) (int, error) {
	switch x := v.(type) {
	case string:
		return utf8.RuneCountInString(x), nil
	case []any:
		return len(x), nil
	case map[string]any:
		return len(x), nil
	case Mapping:
		return len(x.Keys()), nil
	case undefined:
		return 0, nil
	}
	if l, ok := asList(v); ok {
		return len(l), nil
	}
	if m, ok := asMap(v); ok {
		return len(m), nil
	}
	return 0, fmt.Errorf("object of type '%s' has no len()", typeName(v))
}

// equal is Python ==.
// equal is Python a == b. It counts one step per element compared and stops (false, with
// the limit recorded in fr) beyond maxSteps or maxNesting levels.
func (fr *frame) equal(a, b any, depth int) bool {
	if depth > maxNesting {
		fr.fail(errNesting)
		return false
	}
	if !fr.spend(1) {
		return false
	}
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case nil:
		return b == nil
	case undefined:
		return IsUndefined(b)
	case dtime:
		y, ok := b.(dtime)
		return ok && x.kind == y.kind && x.t.Equal(y.t)
	case duration:
		y, ok := b.(duration)
		return ok && x == y
	}
	if n1, k1 := toNumberOrBool(a); k1 != numNone {
		n2, k2 := toNumberOrBool(b)
		if k2 == numNone {
			return false
		}
		if k1 == numInt && k2 == numInt {
			return n1.i == n2.i
		}
		return n1.float(k1) == n2.float(k2)
	}
	if l1, ok := asList(a); ok {
		l2, ok := asList(b)
		if !ok || len(l1) != len(l2) {
			return false
		}
		if sameBacking(l1, l2) {
			return true
		}
		for i := range l1 {
			if !fr.equal(l1[i], l2[i], depth+1) {
				return false
			}
		}
		return true
	}
	m1, ok1 := mapView(a)
	m2, ok2 := mapView(b)
	if ok1 && ok2 {
		k1, k2 := m1.Keys(), m2.Keys()
		if len(k1) != len(k2) || !fr.spend(len(k1)) {
			return false
		}
		for _, k := range k1 {
			v2, ok := m2.Get(k)
			if !ok {
				return false
			}
			v1, _ := m1.Get(k)
			if !fr.equal(v1, v2, depth+1) {
				return false
			}
		}
		return true
	}
	return false
}

type plainMap map[string]any

func (m plainMap) Get(k string) (any, bool) { v, ok := m[k]; return v, ok }
func (m plainMap) Keys() []string           { return slices.Sorted(maps.Keys(m)) }

// mapView presents any mapping as a Mapping.
func mapView(v any) (Mapping, bool) {
	switch x := v.(type) {
	case Mapping:
		return x, true
	case map[string]any:
		return plainMap(x), true
	}
	if m, ok := asMap(v); ok {
		return plainMap(m), true
	}
	return nil, false
}

// compare orders a and b like Python's <, or fails for unorderable types.
func (fr *frame) compare(a, b any, op string, depth int) (int, error) {
	if depth > maxNesting {
		fr.fail(errNesting)
		return 0, fr.err
	}
	if !fr.spend(1) {
		return 0, fr.err
	}
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), nil
		}
	case dtime:
		if y, ok := b.(dtime); ok {
			if (x.kind == dtDate) != (y.kind == dtDate) || (x.kind == dtNaive) != (y.kind == dtNaive) {
				break
			}
			return x.t.Compare(y.t), nil
		}
	case duration:
		if y, ok := b.(duration); ok {
			return cmpInt(x.approx(), y.approx()), nil
		}
	}
	if n1, k1 := toNumberOrBool(a); k1 != numNone {
		if n2, k2 := toNumberOrBool(b); k2 != numNone {
			if k1 == numInt && k2 == numInt {
				return cmpInt(n1.i, n2.i), nil
			}
			f1, f2 := n1.float(k1), n2.float(k2)
			switch {
			case f1 < f2:
				return -1, nil
			case f1 > f2:
				return 1, nil
			}
			return 0, nil
		}
	}
	if l1, ok := asList(a); ok {
		if l2, ok := asList(b); ok {
			for i := 0; i < len(l1) && i < len(l2); i++ {
				if fr.equal(l1[i], l2[i], depth+1) {
					continue
				}
				if fr.err != nil {
					return 0, fr.err
				}
				return fr.compare(l1[i], l2[i], op, depth+1)
			}
			return cmpInt(int64(len(l1)), int64(len(l2))), nil
		}
	}
	if IsUndefined(a) || IsUndefined(b) {
		// Jinja's undefined refuses to be ordered: UndefinedError, not TypeError.
		return 0, undefinedErrorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
	}
	return 0, typeErrorf("'%s' not supported between instances of '%s' and '%s'", op, typeName(a), typeName(b))
}

func cmpInt(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// contains is Python `a in b`.
func (fr *frame) contains(b, a any) (bool, error) {
	switch c := b.(type) {
	case string:
		s, ok := a.(string)
		if !ok {
			return false, fmt.Errorf("'in <string>' requires string as left operand, not %s", typeName(a))
		}
		return strings.Contains(c, s), nil
	case []any:
		for _, e := range c {
			if fr.equal(e, a, 0) {
				return true, nil
			}
		}
		return false, fr.err
	case map[string]any:
		s, ok := a.(string)
		if !ok {
			return false, nil
		}
		_, found := c[s]
		return found, nil
	case Mapping:
		s, ok := a.(string)
		if !ok {
			return false, nil
		}
		_, found := c.Get(s)
		return found, nil
	case nil, undefined:
		return false, nil
	}
	if l, ok := asList(b); ok {
		return fr.contains(l, a)
	}
	if m, ok := asMap(b); ok {
		return fr.contains(m, a)
	}
	return false, fmt.Errorf("argument of type '%s' is not iterable", typeName(b))
}

func arithErr(op string, a, b any) error {
	if IsUndefined(a) || IsUndefined(b) {
		return undefinedErrorf("unsupported operand for %s: a value is undefined", op)
	}
	return typeErrorf("unsupported operand type(s) for %s: '%s' and '%s'", op, typeName(a), typeName(b))
}

func intResult(i int64) any { return i }

// add is Python a + b.
func add(a, b any) (any, error) {
	switch x := a.(type) {
	case string:
		if y, ok := b.(string); ok {
			if err := fitString(int64(len(x)) + int64(len(y))); err != nil {
				return nil, err
			}
			return x + y, nil
		}
	case dtime:
		if y, ok := b.(duration); ok {
			return x.add(y, 1), nil
		}
	case duration:
		switch y := b.(type) {
		case dtime:
			return y.add(x, 1), nil
		case duration:
			return duration{months: x.months + y.months, d: x.d + y.d}, nil
		}
	}
	if n1, k1 := toNumberOrBool(a); k1 != numNone {
		if n2, k2 := toNumberOrBool(b); k2 != numNone {
			if k1 == numInt && k2 == numInt {
				s := n1.i + n2.i
				if (s > n1.i) == (n2.i > 0) {
					return intResult(s), nil
				}
			}
			return n1.float(k1) + n2.float(k2), nil
		}
	}
	if l1, ok := asList(a); ok {
		if l2, ok := asList(b); ok {
			if err := fitItems(int64(len(l1)) + int64(len(l2))); err != nil {
				return nil, err
			}
			out := make([]any, 0, len(l1)+len(l2))
			return append(append(out, l1...), l2...), nil
		}
	}
	return nil, arithErr("+", a, b)
}

// sub is Python a - b.
func sub(a, b any) (any, error) {
	switch x := a.(type) {
	case dtime:
		switch y := b.(type) {
		case duration:
			return x.add(y, -1), nil
		case dtime:
			if (x.kind == dtNaive) != (y.kind == dtNaive) {
				return nil, errors.New("can't subtract offset-naive and offset-aware datetimes")
			}
			return duration{d: x.t.Sub(y.t)}, nil
		}
	case duration:
		if y, ok := b.(duration); ok {
			return duration{months: x.months - y.months, d: x.d - y.d}, nil
		}
	}
	if n1, k1 := toNumberOrBool(a); k1 != numNone {
		if n2, k2 := toNumberOrBool(b); k2 != numNone {
			if k1 == numInt && k2 == numInt {
				s := n1.i - n2.i
				if (s < n1.i) == (n2.i > 0) {
					return intResult(s), nil
				}
			}
			return n1.float(k1) - n2.float(k2), nil
		}
	}
	return nil, arithErr("-", a, b)
}

// mul is Python a * b, including string and list repetition.
func mul(a, b any) (any, error) {
	if s, ok := a.(string); ok {
		return repeatStr(s, b, a)
	}
	if s, ok := b.(string); ok {
		return repeatStr(s, a, b)
	}
	if d, ok := a.(duration); ok {
		if n, k := toNumber(b); k == numInt {
			return duration{months: d.months * int(n.i), d: d.d * timeDuration(n.i)}, nil
		}
	}
	if n1, k1 := toNumberOrBool(a); k1 != numNone {
		if n2, k2 := toNumberOrBool(b); k2 != numNone {
			if k1 == numInt && k2 == numInt {
				p := n1.i * n2.i
				if n1.i == 0 || (p/n1.i == n2.i && !(n1.i == -1 && n2.i == math.MinInt64)) {
					return intResult(p), nil
				}
			}
			return n1.float(k1) * n2.float(k2), nil
		}
	}
	if l, ok := asList(a); ok {
		if n, k := toNumber(b); k == numInt {
			if n.i <= 0 || len(l) == 0 {
				return []any{}, nil
			}
			size, ok := mulOK(n.i, int64(len(l)))
			if !ok || fitItems(size) != nil {
				return nil, errItems
			}
			out := make([]any, 0, size)
			for i := int64(0); i < n.i; i++ {
				out = append(out, l...)
			}
			return out, nil
		}
	}
	return nil, arithErr("*", a, b)
}

func repeatStr(s string, n any, orig any) (any, error) {
	c, k := toNumberOrBool(n)
	if k != numInt {
		return nil, arithErr("*", orig, n)
	}
	if c.i <= 0 || s == "" {
		return "", nil
	}
	size, ok := mulOK(c.i, int64(len(s)))
	if !ok || fitString(size) != nil {
		return nil, errValue
	}
	return strings.Repeat(s, int(c.i)), nil
}

// div is Python true division a / b.
func div(a, b any) (any, error) {
	n1, k1 := toNumberOrBool(a)
	n2, k2 := toNumberOrBool(b)
	if k1 == numNone || k2 == numNone {
		return nil, arithErr("/", a, b)
	}
	d := n2.float(k2)
	if d == 0 {
		return nil, errors.New("division by zero")
	}
	return n1.float(k1) / d, nil
}

// floorDiv is Python a // b.
func floorDiv(a, b any) (any, error) {
	n1, k1 := toNumberOrBool(a)
	n2, k2 := toNumberOrBool(b)
	if k1 == numNone || k2 == numNone {
		return nil, arithErr("//", a, b)
	}
	if k1 == numInt && k2 == numInt {
		if n2.i == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		if n2.i == -1 {
			return intResult(-n1.i), nil
		}
		q := n1.i / n2.i
		if (n1.i%n2.i != 0) && ((n1.i < 0) != (n2.i < 0)) {
			q--
		}
		return intResult(q), nil
	}
	d := n2.float(k2)
	if d == 0 {
		return nil, errors.New("float floor division by zero")
	}
	return math.Floor(n1.float(k1) / d), nil
}

// mod is Python a % b for numbers (the sign follows the divisor).
func mod(a, b any) (any, error) {
	n1, k1 := toNumberOrBool(a)
	n2, k2 := toNumberOrBool(b)
	if k1 == numNone || k2 == numNone {
		return nil, arithErr("%", a, b)
	}
	if k1 == numInt && k2 == numInt {
		if n2.i == 0 {
			return nil, errors.New("integer division or modulo by zero")
		}
		if n2.i == -1 {
			return int64(0), nil
		}
		r := n1.i % n2.i
		if r != 0 && (r < 0) != (n2.i < 0) {
			r += n2.i
		}
		return intResult(r), nil
	}
	d := n2.float(k2)
	if d == 0 {
		return nil, errors.New("float modulo")
	}
	r := math.Mod(n1.float(k1), d)
	if r != 0 && (r < 0) != (d < 0) {
		r += d
	}
	return r, nil
}

// pow is Python a ** b.
func pow(a, b any) (any, error) {
	n1, k1 := toNumberOrBool(a)
	n2, k2 := toNumberOrBool(b)
	if k1 == numNone || k2 == numNone {
		return nil, arithErr("**", a, b)
	}
	if k1 == numInt && k2 == numInt && n2.i >= 0 {
		if r, ok := ipow(n1.i, n2.i); ok {
			return intResult(r), nil
		}
	}
	f1, f2 := n1.float(k1), n2.float(k2)
	if f1 == 0 && f2 < 0 {
		return nil, errors.New("zero cannot be raised to a negative power")
	}
	return math.Pow(f1, f2), nil
}

// neg is Python unary minus.
func neg(a any) (any, error) {
	if d, ok := a.(duration); ok {
		return duration{months: -d.months, d: -d.d}, nil
	}
	n, k := toNumberOrBool(a)
	switch k {
	case numInt:
		if n.i == math.MinInt64 {
			return -float64(n.i), nil
		}
		return intResult(-n.i), nil
	case numFloat:
		return -n.f, nil
	}
	return nil, unaryErr("-", a)
}

// pos is Python unary plus.
func pos(a any) (any, error) {
	n, k := toNumberOrBool(a)
	switch k {
	case numInt:
		return intResult(n.i), nil
	case numFloat:
		return n.f, nil
	}
	if d, ok := a.(duration); ok {
		return d, nil
	}
	return nil, unaryErr("+", a)
}

// sortValues sorts a list in place with Python ordering, by key(item) when key is set;
// each key is computed once, its bytes counted as work.
func (fr *frame) sortValues(l []any, key func(any) any, reverse bool) error {
	type keyed struct{ k, v any }
	items := make([]keyed, len(l))
	for i, v := range l {
		k := v
		if key != nil {
			k = key(v)
		}
		if s, ok := k.(string); ok && !fr.charge(len(s)) {
			return fr.err
		}
		items[i] = keyed{k, v}
	}
	var err error
	sort.SliceStable(items, func(i, j int) bool {
		if err != nil {
			return false
		}
		c, e := fr.compare(items[i].k, items[j].k, "<", 0)
		if e != nil && err == nil {
			err = e
		}
		if reverse {
			return c > 0
		}
		return c < 0
	})
	for i := range items {
		l[i] = items[i].v
	}
	return err
}

func mulOK(a, b int64) (int64, bool) {
	if a == 0 || b == 0 {
		return 0, true
	}
	p := a * b
	if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
		return 0, false
	}
	return p, true
}

func ipow(b, e int64) (int64, bool) {
	r := int64(1)
	ok := true
	for e > 0 {
		if e&1 == 1 {
			if r, ok = mulOK(r, b); !ok {
				return 0, false
			}
		}
		e >>= 1
		if e > 0 {
			if b, ok = mulOK(b, b); !ok {
				return 0, false
			}
		}
	}
	return r, true
}

// unaryErr is the failure of unary + or - on a value that is not a number.
func unaryErr(op string, a any) error {
	if IsUndefined(a) {
		return undefinedErrorf("bad operand type for unary %s: 'Undefined'", op)
	}
	return typeErrorf("bad operand type for unary %s: '%s'", op, typeName(a))
}
