package manifest

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"connector/pkg/typo"
)

// kindName names the YAML type of n for messages: "a string", "a mapping", ...
func kindName(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return kindName(n.Alias)
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!int", "!!float":
			return "a number"
		case "!!bool":
			return "a boolean"
		case "!!null":
			return "null"
		}
		return "a string"
	}
	return "a document"
}

// isNull reports an absent value: no node, or an explicit null.
func isNull(n *yaml.Node) bool {
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// isEmpty reports a value that $parameters may fill: absent, null, "", [] or {}.
func isEmpty(n *yaml.Node) bool {
	if isNull(n) {
		return true
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return n.Value == "" && n.Tag == "!!str"
	case yaml.MappingNode, yaml.SequenceNode:
		return len(n.Content) == 0
	}
	return false
}

func isString(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!str" }

// toValue converts a node to a plain JSON-compatible value: map[string]any, []any,
// string, int, float64, bool or nil.
func toValue(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return toValue(n.Alias)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			m[n.Content[i].Value] = toValue(n.Content[i+1])
		}
		return m
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = toValue(c)
		}
		return s
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!str", "":
			return n.Value
		case "!!null":
			return nil
		case "!!int":
			if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
				return int(i)
			}
		case "!!bool":
			if b, err := strconv.ParseBool(n.Value); err == nil {
				return b
			}
		case "!!float":
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
				return f
			}
		}
		var v any
		if err := n.Decode(&v); err == nil {
			if i, ok := v.(int64); ok {
				return int(i)
			}
			return v
		}
		return n.Value
	}
	return nil
}

// suggest returns the candidate closest to s by edit distance when it is close enough to
// be a likely typo, else "".
func suggest(s string, candidates []string) string {
	best, bestD := "", -1
	for _, c := range candidates {
		d := typo.Distance(s, c)
		if bestD < 0 || d < bestD {
			best, bestD = c, d
		}
	}
	if bestD < 0 || bestD > closeEnough(s) {
		return ""
	}
	return best
}

// closeEnough is the largest edit distance that still reads as a typo of a word of s's size.
func closeEnough(s string) int {
	if n := len(s) / 4; n > 2 {
		return n
	}
	return 2
}
