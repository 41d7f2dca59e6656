package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// opaqueKeys are subtrees this tool never reads as components; their "$ref"s and "type"s
// belong to JSON schemas, so they are left as written.
var opaqueKeys = map[string]bool{"schema_loader": true, "schemas": true, "metadata": true, "definitions": true}

// resolver replaces every $ref (the mapping form and the plain "#/..." string form) by the
// referenced node. Referenced nodes are shared, not copied, so they keep the positions
// where they are written; a {$ref, k: v} mapping becomes a new mapping at the position of
// the local one, holding the referenced pairs with the local keys laid over them.
//
// Sharing keeps the resolution linear in the nodes as written, but the later passes walk
// the result as if it were copied out; so each resolved node carries the size and height
// of that copy, and the resolution stops at maxNodes and maxDepth (limits.go).
type resolver struct {
	l    *loader
	root *yaml.Node
	// done memoizes the resolution of each written node (and of each new node made from
	// one, so that the extent of any resolved node can be looked up); active detects cycles.
	done   map[*yaml.Node]resolved
	active map[*yaml.Node]string
	chain  []string
}

// resolved is a node after resolution, with the number of nodes and the levels it holds
// once every shared node in it is counted each time it appears.
type resolved struct {
	out          *yaml.Node
	size, height int
}

// brokenRef stands for a reference that could not be resolved (already reported): it
// reads as absent, without a second "missing field" error.
var brokenRef = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}

var broken = resolved{out: brokenRef, size: 1}

func newResolver(l *loader, root *yaml.Node) *resolver {
	return &resolver{l: l, root: root, done: map[*yaml.Node]resolved{}, active: map[*yaml.Node]string{}}
}

// resolveRoot resolves the top level, except the opaque subtrees and `definitions`, which
// are reached only through the references that use them.
func (r *resolver) resolveRoot() *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: r.root.Tag, Line: r.root.Line, Column: r.root.Column}
	size := 1
	for i := 0; i+1 < len(r.root.Content); i += 2 {
		k, v := r.root.Content[i], r.root.Content[i+1]
		if !opaqueKeys[k.Value] {
			res := r.resolve(v, k.Value, 1)
			if size += 1 + res.size; size > maxNodes && !r.l.overLimit {
				r.fail(v, k.Value, false)
			}
			v = res.out
		}
		out.Content = append(out.Content, k, v)
	}
	return out
}

// fail reports the limit exceeded at node at and stops the resolution.
func (r *resolver) fail(at *yaml.Node, path string, deep bool) {
	if r.l.overLimit {
		return
	}
	if deep {
		r.l.tooDeep(at, path)
	} else {
		r.l.tooBig(at, path)
	}
	r.l.overLimit = true
}

// extent is the size and height of a node the resolution returned: a leaf when it is not
// a resolved node (a mapping key, a broken reference, an opaque subtree).
func (r *resolver) extent(n *yaml.Node) (size, height int) {
	if res, ok := r.done[n]; ok {
		return res.size, res.height
	}
	return 1, 0
}

// isRefString reports a plain string value that is a reference.
func isRefString(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.HasPrefix(n.Value, "#/")
}

// refOf returns the $ref value node of a mapping, or nil.
func refOf(n *yaml.Node) (key, val *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "$ref" {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// resolve resolves n, found at path, depth levels and references below the top.
func (r *resolver) resolve(n *yaml.Node, path string, depth int) resolved {
	if n == nil {
		return resolved{}
	}
	if r == nil {
		// A stream built from a dynamic stream's template: its references are resolved.
		return resolved{out: n, size: 1}
	}
	if n.Kind == yaml.ScalarNode && !isRefString(n) {
		return resolved{out: n, size: 1}
	}
	if res, ok := r.done[n]; ok {
		return res
	}
	if r.l.tick() {
		return broken
	}
	if depth > maxDepth {
		r.fail(n, path, true)
		return broken
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return r.resolve(n.Alias, path, depth)
	}
	if _, ok := r.active[n]; ok {
		// A node that contains itself through references: reported by follow.
		return resolved{out: n, size: 1}
	}
	r.active[n] = ""
	defer delete(r.active, n)
	var res resolved
	switch {
	case isRefString(n):
		res = r.follow(n, n.Value, path, depth)
	case n.Kind == yaml.MappingNode:
		if _, ref := refOf(n); ref != nil {
			res = r.overlay(n, ref, path, depth)
		} else {
			res = r.mapping(n, path, depth)
		}
	case n.Kind == yaml.SequenceNode:
		res = r.sequence(n, path, depth)
	default:
		res = resolved{out: n, size: 1}
	}
	if r.l.overLimit || r.l.stopped {
		return broken
	}
	r.done[n] = res
	return res
}

// made records a node built by the resolution, so that its extent can be looked up, and
// checks it against the limits; at is where to report it.
func (r *resolver) made(res resolved, at *yaml.Node, path string) resolved {
	switch {
	case res.size > maxNodes:
		r.fail(at, path, false)
		return broken
	case res.height > maxDepth:
		r.fail(at, path, true)
		return broken
	}
	if res.out != brokenRef {
		r.done[res.out] = res
	}
	return res
}

func (r *resolver) mapping(n *yaml.Node, path string, depth int) resolved {
	var content []*yaml.Node
	changed, merged := false, false
	size, height := 1, 0
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && (v.Kind == yaml.AliasNode || v.Kind == yaml.MappingNode) {
			// A YAML merge key: the merged mapping's pairs, then this mapping's own.
			m := r.resolve(v, path, depth+1).out
			if m != nil && m.Kind == yaml.MappingNode {
				content = append(m.Content[:len(m.Content):len(m.Content)], content...)
			}
			changed, merged = true, true
			continue
		}
		rv := v
		switch {
		case v.Kind == yaml.ScalarNode && !isRefString(v):
			// A plain value (most of them): nothing to resolve, no path to make.
			size += 2
			height = max(height, 1)
		case !opaqueKeys[k.Value]:
			res := r.resolve(v, join(path, k.Value), depth+1)
			rv = res.out
			size += 1 + res.size
			height = max(height, res.height+1)
			if size > maxNodes {
				r.fail(v, join(path, k.Value), false)
				return broken
			}
		default:
			size += 2
		}
		if rv != v {
			changed = true
		}
		content = append(content, k, rv)
	}
	if !changed {
		return resolved{out: n, size: size, height: height}
	}
	out := *n
	out.Content = dedupeKeys(content)
	if merged {
		size, height = r.pairsExtent(out.Content)
	}
	return r.made(resolved{out: &out, size: size, height: height}, n, path)
}

// pairsExtent is the extent of a mapping with the given resolved pairs.
func (r *resolver) pairsExtent(pairs []*yaml.Node) (size, height int) {
	size = 1
	for i := 1; i < len(pairs); i += 2 {
		s, h := r.extent(pairs[i])
		size += 1 + s
		height = max(height, h+1)
	}
	return size, height
}

// dedupeKeys keeps the last value of a key written twice (after a merge or an overlay), at
// the place of its first occurrence.
func dedupeKeys(content []*yaml.Node) []*yaml.Node {
	idx := map[string]int{}
	var out []*yaml.Node
	for i := 0; i+1 < len(content); i += 2 {
		k := content[i].Value
		if j, ok := idx[k]; ok {
			out[j], out[j+1] = content[i], content[i+1]
			continue
		}
		idx[k] = len(out)
		out = append(out, content[i], content[i+1])
	}
	return out
}

func (r *resolver) sequence(n *yaml.Node, path string, depth int) resolved {
	var content []*yaml.Node
	changed := false
	size, height := 1, 0
	for i, v := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		res := r.resolve(v, p, depth+1)
		size += res.size
		height = max(height, res.height+1)
		if size > maxNodes {
			r.fail(v, p, false)
			return broken
		}
		if res.out != v {
			changed = true
		}
		content = append(content, res.out)
	}
	if !changed {
		return resolved{out: n, size: size, height: height}
	}
	out := *n
	out.Content = content
	return r.made(resolved{out: &out, size: size, height: height}, n, path)
}

// overlay resolves {$ref: target, k: v}: the target mapping with the local keys over it.
func (r *resolver) overlay(n, ref *yaml.Node, path string, depth int) resolved {
	if ref.Kind != yaml.ScalarNode || !strings.HasPrefix(ref.Value, "#/") {
		r.l.at(ref, path, diag.CodeRef, fmt.Sprintf("`$ref` must be a string like \"#/definitions/name\", not %s", kindName(ref)), "")
		return broken
	}
	target := r.follow(ref, ref.Value, path, depth+1)
	if len(n.Content) == 2 {
		return target // only the $ref: the referenced node itself, with its positions
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	if target.out == brokenRef {
		r.l.brokenAt(n)
	}
	if target.out.Kind == yaml.MappingNode {
		out.Content = append(out.Content, target.out.Content...)
	} else if target.out != brokenRef {
		r.l.at(ref, path, diag.CodeRef, fmt.Sprintf("reference `%s` is %s, so local keys cannot be laid over it", ref.Value, kindName(target.out)), "")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "$ref" {
			continue
		}
		if !opaqueKeys[k.Value] {
			v = r.resolve(v, join(path, k.Value), depth+1).out
		}
		out.Content = append(out.Content, k, v)
	}
	out.Content = dedupeKeys(out.Content)
	size, height := r.pairsExtent(out.Content)
	return r.made(resolved{out: out, size: size, height: height}, ref, path)
}

// follow finds the node a reference points to and resolves it. at is the node that
// holds the reference, for the position of errors.
func (r *resolver) follow(at *yaml.Node, ref, path string, depth int) resolved {
	for _, c := range r.chain {
		if c == ref {
			cycle := append(append([]string{}, r.chain[indexOf(r.chain, ref):]...), ref)
			r.l.at(at, path, diag.CodeRef, "reference cycle: "+strings.Join(cycle, " → "), "")
			return broken
		}
	}
	r.chain = append(r.chain, ref)
	defer func() { r.chain = r.chain[:len(r.chain)-1] }()

	cur := r.root
	segs := strings.Split(strings.TrimPrefix(ref, "#/"), "/")
	for i, seg := range segs {
		seg = strings.ReplaceAll(strings.ReplaceAll(seg, "~1", "/"), "~0", "~")
		if cur.Kind == yaml.AliasNode && cur.Alias != nil {
			cur = cur.Alias
		}
		if i > 0 && (isRefString(cur) || hasRef(cur)) {
			cur = r.resolve(cur, path, depth+1).out
			if cur == brokenRef {
				return broken
			}
		}
		var next *yaml.Node
		switch cur.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(cur.Content); j += 2 {
				if cur.Content[j].Value == seg {
					next = cur.Content[j+1]
				}
			}
		case yaml.SequenceNode:
			if idx, err := strconv.Atoi(seg); err == nil && idx >= 0 && idx < len(cur.Content) {
				next = cur.Content[idx]
			}
		}
		if next == nil {
			hint := ""
			if cur.Kind == yaml.MappingNode {
				var keys []string
				for j := 0; j+1 < len(cur.Content); j += 2 {
					keys = append(keys, cur.Content[j].Value)
				}
				if s := suggest(seg, keys); s != "" {
					hint = fmt.Sprintf("did you mean `#/%s`?", strings.Join(append(append([]string{}, segs[:i]...), s), "/"))
				}
			}
			r.l.at(at, path, diag.CodeRef, fmt.Sprintf("reference `%s` not found", ref), hint)
			return broken
		}
		cur = next
	}
	return r.resolve(cur, path, depth+1)
}

func hasRef(n *yaml.Node) bool { _, v := refOf(n); return v != nil }

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return 0
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
