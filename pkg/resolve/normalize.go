package resolve

import (
	"errors"
	"fmt"
	"sort"
	"strings"
)

// linkable are the fields the CDK's component schema marks `linkable`: a value found twice
// or more in them is moved to definitions.linked and referenced from where it was.
var linkable = map[string]bool{
	"authenticator": true, "error_handler": true, "file_uploader": true, "paginator": true,
	"request_body": true, "request_headers": true, "request_parameters": true,
	"transformations": true, "url_base": true,
}

// errNormalize abandons the normalization: the manifest is kept as it was.
var errNormalize = errors.New("normalization failed")

// normalize shares what the streams repeat, as the CDK's ManifestNormalizer does when the
// Builder asks for it (__should_normalize), on a copy of m; when a step fails, m is
// returned as it was. The steps:
//   - definitions keeps only its `linked` mapping (made when absent);
//   - every value of a linkable field outside definitions is collected, nested values
//     first, and grouped by its content (a mapping by itself, any other value with its key);
//   - groups of two or more, the largest first, are moved: the first occurrence's value
//     goes to definitions.linked.<type of its component>.<its key>, and each occurrence's
//     component gets {"$ref": "#/definitions/linked/<type>/<key>"} under that key;
//   - a parent stream of a SubstreamPartitionRouter equal to a stream of `streams` becomes
//     {"$ref": "#/streams/<index>"};
//   - the entries of definitions and schemas that no $ref names are dropped, and each of
//     them when it is left empty.
func normalize(m *Object) *Object {
	n := deepCopy(m).(*Object)
	if err := dedupe(n); err != nil {
		return m
	}
	return n
}

// occurrence is one value of a linkable field: the path to it, its component, its value.
type occurrence struct {
	path   []string
	parent *Object
	value  any
}

func dedupe(n *Object) error {
	defs, err := linkedDefinitions(n)
	if err != nil {
		return err
	}
	groups, order := map[string][]occurrence{}, []string(nil)
	add := func(hash string, o occurrence) {
		if _, ok := groups[hash]; !ok {
			order = append(order, hash)
		}
		groups[hash] = append(groups[hash], o)
	}
	var collect func(obj any, path []string)
	collect = func(obj any, path []string) {
		o, ok := obj.(*Object)
		if !ok {
			return
		}
		for _, k := range o.keys {
			if k == "definitions" {
				continue
			}
			here := append(path[:len(path):len(path)], k)
			switch v := o.vals[k].(type) {
			case *Object:
				collect(v, here)
				if linkable[k] {
					add(canonical(v), occurrence{here, o, v})
				}
			case string, Number, bool:
				if linkable[k] {
					pair := NewObject()
					pair.Set(k, v)
					add(canonical(pair), occurrence{here, o, v})
				}
			case *List:
				for i, item := range v.Items {
					collect(item, append(here[:len(here):len(here)], fmt.Sprint(i)))
				}
			}
		}
	}
	collect(n, nil)
	var dups []string
	for _, h := range order {
		if len(groups[h]) >= 2 {
			dups = append(dups, h)
		}
	}
	sort.SliceStable(dups, func(i, j int) bool { return len(groups[dups[i]]) > len(groups[dups[j]]) })
	linked := defs.Value("linked").(*Object)
	for _, h := range dups {
		occ := groups[h]
		first := occ[0]
		typ, ok := first.parent.Get("type")
		if !ok {
			return errNormalize
		}
		typeKey, ok := typ.(string)
		if !ok {
			return errNormalize // not a key the CDK can make
		}
		key := first.path[len(first.path)-1]
		already := false
		if t, ok := linked.Value(typeKey).(*Object); ok && t.Has(key) {
			already = true
		}
		if !already {
			if !linked.Has(typeKey) {
				linked.Set(typeKey, NewObject())
			}
			t, ok := linked.Value(typeKey).(*Object)
			if !ok {
				return errNormalize
			}
			if !t.Has(key) {
				t.Set(key, first.value)
			}
		}
		for _, o := range occ {
			if already && !equal(o.value, linked.Value(typeKey).(*Object).Value(key)) {
				continue
			}
			ref := NewObject()
			ref.Set(refKey, "#/definitions/linked/"+typeKey+"/"+key)
			o.parent.Set(key, ref)
		}
	}
	if err := parentStreamRefs(n); err != nil {
		return err
	}
	return dropUnreferenced(n)
}

// linkedDefinitions empties definitions but for its `linked` mapping and returns it.
func linkedDefinitions(n *Object) (*Object, error) {
	if !n.Has("definitions") {
		n.Set("definitions", NewObject())
	}
	defs, ok := n.Value("definitions").(*Object)
	if !ok {
		return nil, errNormalize
	}
	if !defs.Has("linked") {
		defs.Set("linked", NewObject())
	}
	for _, k := range append([]string(nil), defs.keys...) {
		if k != "linked" {
			defs.Pop(k)
		}
	}
	if _, ok := defs.Value("linked").(*Object); !ok {
		return nil, errNormalize
	}
	return defs, nil
}

// parentStreamRefs replaces each parent stream equal to a stream of `streams` by a reference
// to it (the last equal stream's index).
func parentStreamRefs(n *Object) error {
	var streams []any
	if v, ok := n.Get("streams"); ok {
		l, ok := v.(*List)
		if !ok {
			return errNormalize
		}
		streams = l.Items
	}
	index := map[string]int{}
	for i, s := range streams {
		index[canonical(s)] = i
	}
	for _, s := range streams {
		so, ok := s.(*Object)
		if !ok {
			return errNormalize
		}
		retriever := so.Value("retriever")
		if !truthy(retriever) {
			continue
		}
		ro, ok := retriever.(*Object)
		if !ok {
			return errNormalize
		}
		var routers []any
		switch pr := ro.Value("partition_router").(type) {
		case *List:
			routers = pr.Items
		default:
			if truthy(pr) {
				routers = []any{pr}
			}
		}
		for _, r := range routers {
			router, ok := r.(*Object)
			if !ok || router.Value("type") != "SubstreamPartitionRouter" {
				continue
			}
			var items []any
			switch configs := router.Value("parent_stream_configs").(type) {
			case *List:
				items = configs.Items
			case *Object, string:
				// Python iterates its keys or characters: none is a mapping.
			default:
				if router.Has("parent_stream_configs") {
					return errNormalize
				}
			}
			for _, c := range items {
				pc, ok := c.(*Object)
				if !ok {
					continue
				}
				parent, ok := pc.Value("stream").(*Object)
				if !ok {
					continue
				}
				if i, ok := index[canonical(parent)]; ok {
					ref := NewObject()
					ref.Set(refKey, fmt.Sprintf("#/streams/%d", i))
					pc.Set("stream", ref)
				}
			}
		}
	}
	return nil
}

// dropUnreferenced drops the entries of definitions and schemas that no $ref names.
func dropUnreferenced(n *Object) error {
	var refsFound []string
	var find func(o *Object)
	find = func(o *Object) {
		for _, k := range o.keys {
			switch v := o.vals[k].(type) {
			case string:
				if k == refKey {
					refsFound = append(refsFound, v[min(2, len(v)):])
				}
			case *Object:
				find(v)
			case *List:
				for _, item := range v.Items {
					if io, ok := item.(*Object); ok {
						find(io)
					}
				}
			}
		}
	}
	find(n)
	for _, section := range []string{"definitions", "schemas"} {
		v, ok := n.Get(section)
		if !ok {
			continue
		}
		s, ok := v.(*Object)
		if !ok {
			return errNormalize
		}
		for _, k := range append([]string(nil), s.keys...) {
			prefix := section + "/" + k
			used := false
			for _, r := range refsFound {
				if strings.HasPrefix(r, prefix) {
					used = true
					break
				}
			}
			if !used {
				s.Pop(k)
			}
		}
		if s.Len() == 0 {
			n.Pop(section)
		}
	}
	return nil
}
