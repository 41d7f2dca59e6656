package template

import (
	"math"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The builtins below can make a large value out of small arguments; each computes the size
// of its result before building it, so that a value beyond maxValue or maxItems is refused
// instead of allocated.

// joinStrings joins the items of l, converted by conv, with sep.
func joinStrings(l []any, sep string, conv func(any) string) (any, error) {
	parts := make([]string, len(l))
	size := int64(0)
	for i, e := range l {
		parts[i] = conv(e)
		size += int64(len(parts[i]))
		if i > 0 {
			size += int64(len(sep))
		}
		if err := fitString(size); err != nil {
			return nil, err
		}
	}
	return strings.Join(parts, sep), nil
}

// replace is str.replace: at most n replacements when n ≥ 0.
func replace(s, old, repl string, n int64) (any, error) {
	count := int64(strings.Count(s, old))
	if n >= 0 && n < count {
		count = n
	}
	if err := fitString(int64(len(s)) + count*(int64(len(repl))-int64(len(old)))); err != nil {
		return nil, err
	}
	return strings.Replace(s, old, repl, int(max(min(n, math.MaxInt32), -1))), nil
}

// regexReplace is re.sub with a replacement template (in Go's $1 form). The result is at
// most the subject, plus the template once per match, plus the subject again for each
// group the template refers to (matches do not overlap).
func regexReplace(re *regexp.Regexp, s, repl string) (any, error) {
	matches := int64(0)
	re.ReplaceAllStringFunc(s, func(string) string { matches++; return "" })
	refs := int64(strings.Count(repl, "$"))
	bound := int64(len(s)) + matches*int64(len(repl)) + refs*int64(len(s))
	if err := fitString(bound); err != nil {
		return nil, err
	}
	return re.ReplaceAllString(s, repl), nil
}

// hashKey is the set key of a value that Python hashes by value: strings, numbers (1,
// 1.0 and True are one key, as in Python) and None. Other values are not hashed.
func hashKey(v any) (any, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case nil:
		return struct{}{}, true
	}
	n, k := toNumberOrBool(v)
	switch k {
	case numInt:
		return n.i, true
	case numFloat:
		if n.f == math.Trunc(n.f) && math.Abs(n.f) < 1<<62 {
			return int64(n.f), true
		}
		return n.f, true
	}
	return nil, false
}

// sum is Python's sum(items, start): lists and strings are concatenated in one pass (a
// sum of n lists costs n, not n²), anything else is added item by item.
func sum(start any, items []any) (any, error) {
	total := start
	for i := 0; i < len(items); i++ {
		if s, ok := total.(string); ok {
			if end := runOf(items, i, func(v any) bool { _, ok := v.(string); return ok }); end > i {
				parts := []any{s}
				parts = append(parts, items[i:end]...)
				joined, err := joinStrings(parts, "", str)
				if err != nil {
					return nil, err
				}
				total, i = joined, end-1
				continue
			}
		}
		if l, ok := asList(total); ok {
			if end := runOf(items, i, func(v any) bool { _, ok := asList(v); return ok }); end > i {
				n := int64(len(l))
				for _, e := range items[i:end] {
					m, _ := asList(e)
					if n += int64(len(m)); fitItems(n) != nil {
						return nil, errItems
					}
				}
				out := make([]any, 0, n)
				out = append(out, l...)
				for _, e := range items[i:end] {
					m, _ := asList(e)
					out = append(out, m...)
				}
				total, i = out, end-1
				continue
			}
		}
		var err error
		if total, err = add(total, items[i]); err != nil {
			return nil, err
		}
	}
	return total, nil
}

// runOf returns the end of the run of items from i on that satisfy ok.
func runOf(items []any, i int, ok func(any) bool) int {
	for i < len(items) && ok(items[i]) {
		i++
	}
	return i
}

// runes counts the characters of s, refusing more than maxItems (a list of one string
// per character costs 32 bytes each).
func runes(s string) (int, error) {
	if len(s) <= maxItems {
		return utf8.RuneCountInString(s), nil
	}
	n := utf8.RuneCountInString(s)
	if n > maxItems {
		return 0, errItems
	}
	return n, nil
}
