package transform

import (
	"fmt"

	"connector/pkg/record"
)

// flattenFieldsKind is FlattenFields: nested objects (and lists, with flatten_lists) become
// top-level keys.
var flattenFieldsKind = kind{
	apply: func(s *step2, rec *record.Object, _ map[string]any, _ []fixedValue) error {
		flatten(rec, s.m.FlattenLists)
		return nil
	},
}

// flatten is FlattenFields: nested objects (and lists, with flatten_lists) become top-level
// keys, in the order the CDK's stack makes them.
func flatten(rec *record.Object, lists bool) {
	type item struct {
		v   any
		key string
	}
	out := &record.Object{}
	stack := []item{{rec, "_"}}
	withParent := false
	for len(stack) > 0 {
		it := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := it.v.(type) {
		case *record.Object:
			for _, k := range x.Keys() {
				v, _ := x.Get(k)
				key := k
				if _, taken := out.Get(k); taken || withParent {
					key = it.key + "." + k
				}
				stack = append(stack, item{v, key})
			}
		case []any:
			if !lists {
				out.Set(it.key, x)
				continue
			}
			for i, v := range x {
				withParent = true
				stack = append(stack, item{v, fmt.Sprintf("%s.%d", it.key, i)})
			}
		default:
			out.Set(it.key, it.v)
		}
	}
	replace(rec, out)
}

// replace makes rec hold what from holds, in from's order.
func replace(rec, from *record.Object) {
	for _, k := range append([]string{}, rec.Keys()...) {
		rec.Delete(k)
	}
	for _, k := range from.Keys() {
		v, _ := from.Get(k)
		rec.Set(k, v)
	}
}
