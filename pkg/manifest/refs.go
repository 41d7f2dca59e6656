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
type resolver struct {
	l    *loader
	root *yaml.Node
	// done memoizes the resolution of each written node; active detects cycles.
	done   map[*yaml.Node]*yaml.Node
	active map[*yaml.Node]string
	chain  []string
}

// brokenRef stands for a reference that could not be resolved (already reported): it
// reads as absent, without a second "missing field" error.
var brokenRef = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: ""}

func newResolver(l *loader, root *yaml.Node) *resolver {
	return &resolver{l: l, root: root, done: map[*yaml.Node]*yaml.Node{}, active: map[*yaml.Node]string{}}
}

// resolveRoot resolves the top level, except the opaque subtrees and `definitions`, which
// are reached only through the references that use them.
func (r *resolver) resolveRoot() *yaml.Node {
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: r.root.Tag, Line: r.root.Line, Column: r.root.Column}
	for i := 0; i+1 < len(r.root.Content); i += 2 {
		k, v := r.root.Content[i], r.root.Content[i+1]
		if !opaqueKeys[k.Value] {
			v = r.resolve(v, k.Value)
		}
		out.Content = append(out.Content, k, v)
	}
	return out
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

func (r *resolver) resolve(n *yaml.Node, path string) *yaml.Node {
	if n == nil {
		return nil
	}
	if out, ok := r.done[n]; ok {
		return out
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return r.resolve(n.Alias, path)
	}
	if _, ok := r.active[n]; ok {
		// A node that contains itself through references: reported by follow.
		return n
	}
	r.active[n] = ""
	defer delete(r.active, n)
	var out *yaml.Node
	switch {
	case isRefString(n):
		out = r.follow(n, n.Value, path)
	case n.Kind == yaml.MappingNode:
		if _, ref := refOf(n); ref != nil {
			out = r.overlay(n, ref, path)
		} else {
			out = r.mapping(n, path)
		}
	case n.Kind == yaml.SequenceNode:
		out = r.sequence(n, path)
	default:
		out = n
	}
	r.done[n] = out
	return out
}

func (r *resolver) mapping(n *yaml.Node, path string) *yaml.Node {
	var content []*yaml.Node
	changed := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "<<" && (v.Kind == yaml.AliasNode || v.Kind == yaml.MappingNode) {
			// A YAML merge key: the merged mapping's pairs, then this mapping's own.
			m := r.resolve(v, path)
			if m != nil && m.Kind == yaml.MappingNode {
				content = append(m.Content[:len(m.Content):len(m.Content)], content...)
			}
			changed = true
			continue
		}
		rv := v
		if !opaqueKeys[k.Value] {
			rv = r.resolve(v, join(path, k.Value))
		}
		if rv != v {
			changed = true
		}
		content = append(content, k, rv)
	}
	if !changed {
		return n
	}
	out := *n
	out.Content = dedupeKeys(content)
	return &out
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

func (r *resolver) sequence(n *yaml.Node, path string) *yaml.Node {
	var content []*yaml.Node
	changed := false
	for i, v := range n.Content {
		rv := r.resolve(v, fmt.Sprintf("%s[%d]", path, i))
		if rv != v {
			changed = true
		}
		content = append(content, rv)
	}
	if !changed {
		return n
	}
	out := *n
	out.Content = content
	return &out
}

// overlay resolves {$ref: target, k: v}: the target mapping with the local keys over it.
func (r *resolver) overlay(n, ref *yaml.Node, path string) *yaml.Node {
	if ref.Kind != yaml.ScalarNode || !strings.HasPrefix(ref.Value, "#/") {
		r.l.at(ref, path, diag.CodeRef, fmt.Sprintf("`$ref` must be a string like \"#/definitions/name\", not %s", kindName(ref)), "")
		return brokenRef
	}
	target := r.follow(ref, ref.Value, path)
	if len(n.Content) == 2 {
		return target // only the $ref: the referenced node itself, with its positions
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: n.Line, Column: n.Column}
	if target.Kind == yaml.MappingNode {
		out.Content = append(out.Content, target.Content...)
	} else if target != brokenRef {
		r.l.at(ref, path, diag.CodeRef, fmt.Sprintf("reference `%s` is %s, so local keys cannot be laid over it", ref.Value, kindName(target)), "")
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Value == "$ref" {
			continue
		}
		if !opaqueKeys[k.Value] {
			v = r.resolve(v, join(path, k.Value))
		}
		out.Content = append(out.Content, k, v)
	}
	out.Content = dedupeKeys(out.Content)
	return out
}

// follow finds the node a reference points to and resolves it. at is the node that
// holds the reference, for the position of errors.
func (r *resolver) follow(at *yaml.Node, ref, path string) *yaml.Node {
	for _, c := range r.chain {
		if c == ref {
			cycle := append(append([]string{}, r.chain[indexOf(r.chain, ref):]...), ref)
			r.l.at(at, path, diag.CodeRef, "reference cycle: "+strings.Join(cycle, " → "), "")
			return brokenRef
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
			cur = r.resolve(cur, path)
			if cur == brokenRef {
				return brokenRef
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
			return brokenRef
		}
		cur = next
	}
	return r.resolve(cur, path)
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
