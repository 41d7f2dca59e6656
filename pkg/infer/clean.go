package infer

import (
	"fmt"
	"slices"

	"connector/pkg/record"
)

// The CDK tidies genson's schema before the test read reports it, and these functions do
// the same steps on the same ordered objects, so that the odd corners come out as they do
// there: an anyOf keeps its members untouched, a type list that is only "null" is
// ["null", "null"] in array items, and so on.

// clean makes every type of the schema nullable ("null" last), drops the properties that
// were only ever null, and folds an anyOf of null and one other schema into that schema. It
// walks properties and items, not the members of an anyOf, and leaves an anyOf node without
// a type.
func clean(o *record.Object) {
	if m, ok := o.Get("anyOf"); ok {
		members, _ := m.([]any)
		if len(members) == 2 && (isNullSchema(members[0]) || isNullSchema(members[1])) {
			other := members[0]
			if t, _ := members[0].(*record.Object).Get("type"); t == "null" {
				other = members[1]
			}
			oo := other.(*record.Object)
			for _, k := range oo.Keys() {
				v, _ := oo.Get(k)
				o.Set(k, v)
			}
			t, _ := o.Get("type")
			o.Set("type", []any{t, "null"})
			o.Delete("anyOf")
		} else if len(members) > 1 {
			o.Set("type", []any{"null"})
		}
	}
	if p, ok := o.Get("properties"); ok {
		if props, ok := p.(*record.Object); ok {
			for _, name := range slices.Clone(props.Keys()) {
				v, _ := props.Get(name)
				sub, isObj := v.(*record.Object)
				if !isObj {
					continue
				}
				if t, _ := sub.Get("type"); t == "null" {
					props.Delete(name)
					continue
				}
				clean(sub)
			}
		}
	}
	if items, ok := o.Get("items"); ok {
		if sub, ok := items.(*record.Object); ok {
			clean(sub)
		}
	}
	t, _ := o.Get("type")
	if list, ok := t.([]any); ok {
		list = removeNull(list)
		o.Set("type", append(list, "null"))
	} else {
		o.Set("type", []any{t, "null"})
	}
	if o.Has("anyOf") {
		o.Delete("type")
	}
}

// isNullSchema reports whether v is {"type": "null"} and nothing else.
func isNullSchema(v any) bool {
	o, ok := v.(*record.Object)
	if !ok || o.Len() != 1 {
		return false
	}
	t, _ := o.Get("type")
	return t == "null"
}

// removeNull removes the first "null" of a type list, as Python's list.remove does.
func removeNull(list []any) []any {
	if i := slices.Index(list, any("null")); i >= 0 {
		return slices.Delete(slices.Clone(list), i, i+1)
	}
	return list
}

// markRequired makes the root type "object" and marks each key path of the primary key,
// then of the cursor, as required and not nullable at every level. A path that cannot be
// marked is a problem, in the CDK's words; the others are marked all the same. A node
// without a type on the way is an error that ends the marking, as the CDK's KeyError does.
func markRequired(root *record.Object, keys ...[][]string) (problems []string, err error) {
	root.Set("type", "object")
	for _, paths := range keys {
		for _, path := range paths {
			msg, err := markPath(root, path, nil)
			if err != nil {
				return problems, err
			}
			if msg != "" {
				problems = append(problems, msg)
			}
		}
	}
	return problems, nil
}

// markPath marks path (what is left of it) as required from node o, reached through
// traveled. It returns the CDK's message when the path cannot be marked.
func markPath(o *record.Object, path, traveled []string) (string, error) {
	t, ok := o.Get("type")
	if !ok {
		return "", &KeyError{Key: "type"}
	}
	if list, isList := t.([]any); isList {
		list = removeNull(list)
		if len(list) == 1 {
			o.Set("type", list[0])
		} else {
			o.Set("type", list)
		}
	}
	if len(path) == 0 {
		return "", nil
	}
	p, ok := o.Get("properties")
	if !ok {
		return fmt.Sprintf("Path %s does not refer to an object but is `%s` and hence %s can't be marked as required.",
			pyRepr(traveled), pyRepr(o), pyRepr(path)), nil
	}
	props, _ := p.(*record.Object)
	next := path[0]
	child, ok := props.Get(next)
	if !ok {
		return fmt.Sprintf("Path %s does not have field `%s` in the schema and hence can't be marked as required.",
			pyRepr(traveled), next), nil
	}
	if t, _ := o.Get("type"); !isObjectType(t) {
		ct, ok := child.(*record.Object).Get("type")
		if !ok {
			return "", &KeyError{Key: "type"}
		}
		return fmt.Sprintf("Path %s is expected to be an object but was of type `%s`", pyRepr(traveled), pyStr(ct)), nil
	}
	if r, ok := o.Get("required"); ok && len(r.([]any)) > 0 {
		if req := r.([]any); !slices.Contains(req, any(next)) {
			o.Set("required", append(req, next))
		}
	} else {
		o.Set("required", []any{next})
	}
	return markPath(child.(*record.Object), path[1:], append(traveled, next))
}

// isObjectType reports whether a type is "object", ["null", "object"] or ["object", "null"].
func isObjectType(t any) bool {
	switch x := t.(type) {
	case string:
		return x == "object"
	case []any:
		return len(x) == 2 && (x[0] == "object" && x[1] == "null" || x[0] == "null" && x[1] == "object")
	}
	return false
}

// KeyError is the exception the CDK's inferrer raises when it looks up a key that a schema
// node lacks. It fails the whole test read, which reports "Error reading stream … : "
// followed by Error().
type KeyError struct {
	Key string
}

// Error is Python's str() of the KeyError: the key's repr.
func (e *KeyError) Error() string { return pyRepr(e.Key) }
