package transform

import (
	"fmt"
	"strconv"
	"strings"

	"connector/pkg/record"
)

// The paths of a record as the Python library dpath (which the CDK uses) walks, matches,
// creates and deletes them. A segment is a key of an object or an index of a list.

// step is one segment of a path: a key, or an index of a list of n items.
type step struct {
	key   string
	index int
	isIdx bool
	n     int
}

func (s step) text() string {
	if s.isIdx {
		return strconv.Itoa(s.index)
	}
	return s.key
}

// pathValue is a path of a record with the value there.
type pathValue struct {
	path  []step
	value any
}

// leaf reports dpath's leaf: anything but an object or a list.
func leaf(v any) bool {
	switch v.(type) {
	case *record.Object, []any:
		return false
	}
	return true
}

// walk lists every path of v as dpath.segments.walk does: the children of a node, then the
// paths under each child in turn.
func walk(v any, at []step, out []pathValue) []pathValue {
	switch x := v.(type) {
	case *record.Object:
		keys := x.Keys()
		for _, k := range keys {
			c, _ := x.Get(k)
			out = append(out, pathValue{path: with(at, step{key: k}), value: c})
		}
		for _, k := range keys {
			c, _ := x.Get(k)
			out = walk(c, with(at, step{key: k}), out)
		}
	case []any:
		for i, c := range x {
			out = append(out, pathValue{path: with(at, step{index: i, isIdx: true, n: len(x)}), value: c})
		}
		for i, c := range x {
			out = walk(c, with(at, step{index: i, isIdx: true, n: len(x)}), out)
		}
	}
	return out
}

func with(at []step, s step) []step {
	p := make([]step, len(at)+1)
	copy(p, at)
	p[len(at)] = s
	return p
}

// get is the value at a path (ok false when the path is not there).
func get(v any, path []step) (any, bool) {
	for _, s := range path {
		switch x := v.(type) {
		case *record.Object:
			if s.isIdx {
				var ok bool
				if v, ok = x.Get(strconv.Itoa(s.index)); !ok {
					return nil, false
				}
				continue
			}
			var ok bool
			if v, ok = x.Get(s.key); !ok {
				return nil, false
			}
		case []any:
			i, ok := s.index, s.isIdx
			if !ok {
				n, err := strconv.Atoi(s.key)
				if err != nil {
					return nil, false
				}
				i = n
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

// match reports whether a path matches a glob, as dpath.segments.match does: segment by
// segment with fnmatch, "**" standing for any number of segments (at least one less). An
// index matches a number as dpath's ListIndex does: -1 is the last item.
func match(path []step, glob []string) bool {
	g := glob
	for i, s := range glob {
		if s != "**" {
			continue
		}
		switch {
		case len(path) >= len(glob):
			stars := make([]string, len(path)-len(glob)+1)
			for j := range stars {
				stars[j] = "*"
			}
			g = append(append(append([]string{}, glob[:i]...), stars...), glob[i+1:]...)
		case len(path) == len(glob)-1:
			g = append(append([]string{}, glob[:i]...), glob[i+1:]...)
		}
		break
	}
	if len(path) != len(g) {
		return false
	}
	for i, s := range path {
		if s.isIdx {
			if n, err := strconv.Atoi(strings.TrimSpace(g[i])); err == nil && (n == s.index || n < 0 && s.n+n == s.index) {
				continue
			}
		}
		if !fnmatch(s.text(), g[i]) {
			return false
		}
	}
	return true
}

// fnmatch is Python's fnmatch.fnmatchcase: * any run, ? one character, [seq] and [!seq]
// sets; no escapes.
func fnmatch(name, pat string) bool {
	n, p := []rune(name), []rune(pat)
	return fnmatchAt(n, p)
}

func fnmatchAt(n, p []rune) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			if len(p) == 0 {
				return true
			}
			for i := 0; i <= len(n); i++ {
				if fnmatchAt(n[i:], p) {
					return true
				}
			}
			return false
		case '?':
			if len(n) == 0 {
				return false
			}
			n, p = n[1:], p[1:]
		case '[':
			end := classEnd(p)
			if end < 0 {
				// An unclosed bracket is a plain character.
				if len(n) == 0 || n[0] != '[' {
					return false
				}
				n, p = n[1:], p[1:]
				continue
			}
			if len(n) == 0 || !inClass(n[0], p[1:end]) {
				return false
			}
			n, p = n[1:], p[end+1:]
		default:
			if len(n) == 0 || n[0] != p[0] {
				return false
			}
			n, p = n[1:], p[1:]
		}
	}
	return len(n) == 0
}

// classEnd is the index of the ] that closes the set opening p, or -1.
func classEnd(p []rune) int {
	i := 1
	if i < len(p) && p[i] == '!' {
		i++
	}
	if i < len(p) && p[i] == ']' {
		i++
	}
	for ; i < len(p); i++ {
		if p[i] == ']' {
			return i
		}
	}
	return -1
}

func inClass(c rune, set []rune) bool {
	neg := len(set) > 0 && set[0] == '!'
	if neg {
		set = set[1:]
	}
	found := false
	for i := 0; i < len(set); i++ {
		if i+2 < len(set) && set[i+1] == '-' {
			if set[i] <= c && c <= set[i+2] {
				found = true
			}
			i += 2
			continue
		}
		if set[i] == c {
			found = true
		}
	}
	return found != neg
}

// deleteMatching deletes what dpath.delete(record, glob, afilter) deletes: every path that
// matches the glob, or, with a filter, every leaf the filter accepts wherever it is (dpath
// then ignores the glob). A list item that is not the last becomes null, so that the items
// after it keep their places. It reports how many were deleted.
func deleteMatching(rec *record.Object, glob []string, filter func(any) (bool, error)) (int, error) {
	if filter == nil && literalGlob(glob) {
		return deleteLiteral(rec, glob), nil
	}
	deleted := 0
	for _, pv := range walk(rec, nil, nil) {
		if _, ok := get(rec, pv.path); !ok {
			continue
		}
		selected := false
		if filter != nil {
			if leaf(pv.value) {
				ok, err := filter(pv.value)
				if err != nil {
					return deleted, err
				}
				selected = ok
			}
		} else {
			selected = match(pv.path, glob)
		}
		if !selected {
			continue
		}
		parentVal, _ := get(rec, pv.path[:len(pv.path)-1])
		last := pv.path[len(pv.path)-1]
		switch p := parentVal.(type) {
		case *record.Object:
			p.Delete(last.text())
		case []any:
			if last.index == len(p)-1 {
				setAt(rec, pv.path[:len(pv.path)-1], p[:len(p)-1])
			} else {
				p[last.index] = nil
			}
		}
		deleted++
	}
	return deleted, nil
}

// literalGlob reports a glob without wildcards: it matches one path at most.
func literalGlob(glob []string) bool {
	if len(glob) == 0 {
		return false
	}
	for _, g := range glob {
		for i := 0; i < len(g); i++ {
			if c := g[i]; c == '*' || c == '?' || c == '[' {
				return false
			}
		}
	}
	return true
}

// deleteLiteral deletes the one path a glob without wildcards names, as deleteMatching
// would, without walking the record.
func deleteLiteral(rec *record.Object, glob []string) int {
	var parent any = rec
	for _, g := range glob[:len(glob)-1] {
		next, ok := child(parent, g)
		if !ok {
			return 0
		}
		parent = next
	}
	last := glob[len(glob)-1]
	switch p := parent.(type) {
	case *record.Object:
		if !p.Delete(last) {
			return 0
		}
		return 1
	case []any:
		i, err := strconv.Atoi(strings.TrimSpace(last))
		if err == nil && i < 0 {
			i += len(p) // dpath's list indices count from the end too
		}
		if err != nil || i < 0 || i >= len(p) {
			return 0
		}
		if i != len(p)-1 {
			p[i] = nil
			return 1
		}
		// The last item goes: the list is one shorter where its parent holds it.
		setAtKeys(rec, glob[:len(glob)-1], p[:i])
		return 1
	}
	return 0
}

// child is the value under one glob segment taken literally: a key, or a list index.
func child(v any, seg string) (any, bool) {
	switch x := v.(type) {
	case *record.Object:
		return x.Get(seg)
	case []any:
		i, err := strconv.Atoi(strings.TrimSpace(seg))
		if err == nil && i < 0 {
			i += len(x)
		}
		if err != nil || i < 0 || i >= len(x) {
			return nil, false
		}
		return x[i], true
	}
	return nil, false
}

// setAtKeys replaces the value at a path given as literal segments.
func setAtKeys(rec *record.Object, path []string, v any) {
	if len(path) == 0 {
		return
	}
	var parent any = rec
	for _, g := range path[:len(path)-1] {
		next, ok := child(parent, g)
		if !ok {
			return
		}
		parent = next
	}
	last := path[len(path)-1]
	switch p := parent.(type) {
	case *record.Object:
		p.Set(last, v)
	case []any:
		i, err := strconv.Atoi(strings.TrimSpace(last))
		if err == nil && i < 0 {
			i += len(p)
		}
		if err == nil && i >= 0 && i < len(p) {
			p[i] = v
		}
	}
}

// setAt replaces the value at an existing path.
func setAt(rec *record.Object, path []step, v any) {
	if len(path) == 0 {
		return
	}
	parent, _ := get(rec, path[:len(path)-1])
	last := path[len(path)-1]
	switch p := parent.(type) {
	case *record.Object:
		p.Set(last.text(), v)
	case []any:
		p[last.index] = v
	}
}

// isDecimal is Python's str.isdecimal for ASCII digits (what a path segment holds).
func isDecimal(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// newPath sets value at path as dpath.new does: missing objects are created (a list when
// the next segment is a number), lists are extended with nulls to reach an index. A value
// that is not an object or a list on the way is an error, as in dpath.
func newPath(rec *record.Object, path []string, value any) error {
	var cur any = rec
	// put replaces the container being walked into, in its parent (a list that grew).
	put := func(any) {}
	for i, seg := range path {
		last := i == len(path)-1
		var next any
		switch c := cur.(type) {
		case *record.Object:
			if last {
				c.Set(seg, value)
				return nil
			}
			v, ok := c.Get(seg)
			if !ok {
				v = newContainer(path[i+1])
				c.Set(seg, v)
			}
			key := seg
			put = func(v any) { c.Set(key, v) }
			next = v
		case []any:
			if !isDecimal(seg) {
				return fmt.Errorf("%q is not an index of the list at %s", seg, strings.Join(path[:i], "."))
			}
			idx, _ := strconv.Atoi(seg)
			grown := idx >= len(c)
			for len(c) <= idx {
				c = append(c, nil)
			}
			put(c)
			if last {
				c[idx] = value
				return nil
			}
			if grown {
				c[idx] = newContainer(path[i+1])
			}
			list := c
			put = func(v any) { list[idx] = v }
			next = c[idx]
		}
		if leaf(next) {
			return fmt.Errorf("%s holds %s, not an object or a list", strings.Join(path[:i+1], "."), kindOf(next))
		}
		cur = next
	}
	return nil
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func newContainer(next string) any {
	if isDecimal(next) {
		return []any{}
	}
	return &record.Object{}
}
