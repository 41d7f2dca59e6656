package manifest

import (
	"encoding/json"
	"sort"
	"strconv"

	"gopkg.in/yaml.v3"

	"connector/pkg/template"
)

// deepCopy copies a node tree; aliases are replaced by copies of what they point at.
func deepCopy(n *yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		return deepCopy(n.Alias)
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, x := range n.Content {
		c.Content[i] = deepCopy(x)
	}
	return &c
}

// setKey sets key of mapping m to v, adding the key when it is absent.
func setKey(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key, Line: v.Line, Column: v.Column}, v)
}

// setPath sets every existing place at path in n to v, as dpath.set does: a key that is
// absent is not made. It returns how many places were set.
func setPath(n *yaml.Node, path []string, v *yaml.Node) int {
	if len(path) == 0 || n == nil {
		return 0
	}
	seg, rest := path[0], path[1:]
	count := 0
	at := func(parent *yaml.Node, i int) {
		if len(rest) == 0 {
			parent.Content[i] = deepCopy(v)
			count++
			return
		}
		count += setPath(parent.Content[i], rest, v)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if seg == "*" || n.Content[i].Value == seg {
				at(n, i+1)
			}
		}
	case yaml.SequenceNode:
		if seg == "*" {
			for i := range n.Content {
				at(n, i)
			}
			break
		}
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) {
			at(n, i)
		}
	}
	return count
}

// newPath makes path in n, as dpath.new does: missing keys of mappings become mappings, and
// the last one takes v. A path through a list index it lacks, or through a scalar, is left.
func newPath(n *yaml.Node, path []string, v *yaml.Node) {
	for i, seg := range path {
		last := i == len(path)-1
		switch n.Kind {
		case yaml.MappingNode:
			next := mapGet(n, seg)
			if last {
				setKey(n, seg, deepCopy(v))
				return
			}
			if next == nil || next.Kind == yaml.ScalarNode {
				next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: v.Line, Column: v.Column}
				setKey(n, seg, next)
			}
			n = next
		case yaml.SequenceNode:
			j, err := strconv.Atoi(seg)
			if err != nil || j < 0 || j >= len(n.Content) {
				return
			}
			if last {
				n.Content[j] = deepCopy(v)
				return
			}
			n = n.Content[j]
		default:
			return
		}
	}
}

// valueNode is a template's value as a node of the definition, at pos.
func valueNode(v any, p Pos) *yaml.Node {
	n := &yaml.Node{Kind: yaml.ScalarNode, Line: p.Line, Column: p.Column}
	switch x := v.(type) {
	case nil:
		n.Tag, n.Value = "!!null", "null"
	case string:
		n.Tag, n.Value = "!!str", x
	case bool:
		n.Tag, n.Value = "!!bool", strconv.FormatBool(x)
	case int:
		n.Tag, n.Value = "!!int", strconv.Itoa(x)
	case int64:
		n.Tag, n.Value = "!!int", strconv.FormatInt(x, 10)
	case float64:
		n.Tag, n.Value = "!!float", strconv.FormatFloat(x, 'g', -1, 64)
	case json.Number:
		n.Tag, n.Value = "!!int", string(x)
		if _, err := strconv.ParseInt(string(x), 10, 64); err != nil {
			n.Tag = "!!float"
		}
	case []any:
		n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		for _, e := range x {
			n.Content = append(n.Content, valueNode(e, p))
		}
	case map[string]any:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: p.Line, Column: p.Column}, valueNode(x[k], p))
		}
	case interface {
		Keys() []string
		Get(string) (any, bool)
	}:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: k, Line: p.Line, Column: p.Column}, valueNode(e, p))
		}
	default:
		if template.IsUndefined(v) {
			n.Tag, n.Value = "!!null", "null"
			break
		}
		n.Tag, n.Value = "!!str", template.ToString(v)
	}
	return n
}
