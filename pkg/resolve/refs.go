package resolve

import (
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"
)

// refKey is the key of a mapping that is laid over the mapping it names.
const refKey = "$ref"

// configValueKeys hold connector config values, not components: their strings that start with
// "#/" are not references, and they are copied as written.
var configValueKeys = map[string]bool{"config_overrides": true}

// refs replaces every reference of a manifest as the CDK's ManifestReferenceResolver does.
// Unlike the loader, which follows references only where a component is read, it resolves
// every string that starts with "#/" anywhere, `definitions`, `schemas` and JSON schemas
// included, and every mapping with a `$ref` key: the referenced mapping's pairs first, the
// mapping's own pairs over them (in place) and after them. A reference to something other
// than a mapping stands for the whole mapping, its own pairs dropped. Every resolved value
// is a new copy.
type refs struct {
	root    *Object
	visited map[string]bool
	b       *budget
}

func (r *refs) eval(node any, depth int) (any, error) {
	if err := r.b.spend(depth); err != nil {
		return nil, err
	}
	switch x := node.(type) {
	case *Object:
		out := NewObject()
		for _, k := range x.keys {
			if k == refKey {
				continue
			}
			v := x.vals[k]
			if configValueKeys[k] {
				out.Set(k, deepCopy(v))
				continue
			}
			ev, err := r.eval(v, depth+1)
			if err != nil {
				return nil, err
			}
			out.Set(k, ev)
		}
		ref, ok := x.vals[refKey]
		if !ok {
			return out, nil
		}
		target, err := r.eval(ref, depth+1)
		if err != nil {
			return nil, err
		}
		t, ok := target.(*Object)
		if !ok {
			return target, nil
		}
		for _, k := range out.keys {
			t.Set(k, out.vals[k])
		}
		return t, nil
	case *List:
		out := &List{Items: make([]any, len(x.Items))}
		for i, item := range x.Items {
			v, err := r.eval(item, depth+1)
			if err != nil {
				return nil, err
			}
			out.Items[i] = v
		}
		return out, nil
	case string:
		if !strings.HasPrefix(x, "#/") {
			return x, nil
		}
		if r.visited[x] {
			return nil, cdkErrorf("Circular reference found: %s", x)
		}
		r.visited[x] = true
		defer delete(r.visited, x)
		target, err := r.lookup(x)
		if err != nil {
			return nil, err
		}
		return r.eval(target, depth+1)
	}
	return node, nil
}

// lookup finds the value a reference names in the manifest as written. A path is ambiguous
// (a key may hold "/"), so at each level the whole rest of the path is tried as a key first,
// then its first segment, which indexes a list when it reads as an integer.
func (r *refs) lookup(ref string) (any, error) {
	path := strings.TrimPrefix(ref, "#/")
	if i := strings.IndexByte(path, '\n'); i >= 0 {
		path = path[:i] // the CDK's pattern stops at the end of the line
	}
	undefined := cdkErrorf("Undefined reference %s from %s", ref, path)
	var node any = r.root
	for rest := path; rest != ""; {
		if o, ok := node.(*Object); ok {
			if v, ok := o.Get(rest); ok {
				return v, nil
			}
		}
		head, tail, _ := strings.Cut(rest, "/")
		rest = tail
		next, found, err := subscript(node, head)
		if err != nil {
			return nil, err
		}
		if !found {
			return nil, undefined
		}
		node = next
	}
	return node, nil
}

// pyIndex is what Python's int() accepts as a decimal integer.
var pyIndex = regexp.MustCompile(`^[+-]?[0-9]+(?:_[0-9]+)*$`)

// subscript is node[seg] in Python, seg an int when it reads as one: found is false where
// Python raises KeyError or IndexError (an undefined reference), err where it raises a
// TypeError, which the CDK does not catch.
func subscript(node any, seg string) (v any, found bool, err error) {
	idx, isInt := 0, false
	if s := strings.TrimSpace(seg); pyIndex.MatchString(s) {
		n, _ := new(big.Int).SetString(strings.ReplaceAll(s, "_", ""), 10)
		isInt = true
		if n.IsInt64() && n.Int64() > -1<<31 && n.Int64() < 1<<31 {
			idx = int(n.Int64())
		} else {
			idx = 1 << 31 // out of range of any list
		}
	}
	switch x := node.(type) {
	case *Object:
		if isInt {
			return nil, false, nil // the keys are text: an int is never one
		}
		v, ok := x.Get(seg)
		return v, ok, nil
	case *List:
		if !isInt {
			return nil, false, fmt.Errorf("list indices must be integers or slices, not str")
		}
		if idx < 0 {
			idx += len(x.Items)
		}
		if idx < 0 || idx >= len(x.Items) {
			return nil, false, nil
		}
		return x.Items[idx], true, nil
	case string:
		if !isInt {
			return nil, false, fmt.Errorf("string indices must be integers, not 'str'")
		}
		n := utf8.RuneCountInString(x)
		if idx < 0 {
			idx += n
		}
		if idx < 0 || idx >= n {
			return nil, false, nil
		}
		return string([]rune(x)[idx]), true, nil
	}
	return nil, false, fmt.Errorf("'%s' object is not subscriptable", typeName(node))
}

// budget bounds the work of a resolution: the references and $parameters of a manifest can
// make it exponentially larger than its text, and the loader checks only the parts it reads.
type budget struct {
	left, max int
}

func newBudget(steps int) *budget { return &budget{left: steps, max: steps} }

// Limits of a resolution: at least ten times what the largest corpus definition needs
// (stripe.yaml: 479,446 values resolved or copied), and twice the loader's depth.
const (
	maxSteps = 5_000_000
	maxDepth = 1024
)

// copy is deepCopy with every object and list made spent from the budget.
func (b *budget) copy(v any, depth int) (any, error) {
	out := (&copier{done: map[any]any{}, b: b}).copy(v)
	if err := b.spend(depth); err != nil {
		return nil, err
	}
	return out, nil
}

func (b *budget) spend(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("the manifest nests more than %d levels deep once its references are resolved (a limit of connector)", maxDepth)
	}
	if b.left--; b.left < 0 {
		return fmt.Errorf("the manifest expands to more than %d values through $ref and $parameters (a limit of connector)", b.max)
	}
	return nil
}
