package yamlguard

import "gopkg.in/yaml.v3"

// Duplicate is a mapping key written a second time in the same mapping: yaml.v3 keeps both
// pairs in its node tree, where a YAML loader that builds a map keeps one value (PyYAML, and
// so the Airbyte CDK, the last).
type Duplicate struct {
	// First and Again are the key nodes of the first and of the later occurrence.
	First, Again *yaml.Node
}

// DuplicateKeys lists the keys written twice in a mapping of the tree under root, in the order
// of the later occurrences. An anchored node is walked once, where it is written; aliases
// and merge keys (`<<`) are not followed, so every finding is a pair of keys as written.
func DuplicateKeys(root *yaml.Node) []Duplicate {
	var out []Duplicate
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.MappingNode:
			var seen map[string]*yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.Kind == yaml.ScalarNode && k.Value != "<<" {
					if seen == nil {
						seen = make(map[string]*yaml.Node, len(n.Content)/2)
					}
					if first, ok := seen[k.Value]; ok {
						out = append(out, Duplicate{First: first, Again: k})
					} else {
						seen[k.Value] = k
					}
				}
				walk(n.Content[i+1])
			}
		}
	}
	if root != nil {
		walk(root)
	}
	return out
}

// KeepLast removes, in the mapping holding the duplicates d found, every pair but the last of
// each key, keeping the last value at the place of the first key: what a loader that builds
// a map makes of them. It returns the number of pairs removed.
func KeepLast(root *yaml.Node, d []Duplicate) int {
	if len(d) == 0 {
		return 0
	}
	again := make(map[*yaml.Node]bool, len(d))
	for _, x := range d {
		again[x.Again] = true
	}
	removed := 0
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		switch n.Kind {
		case yaml.DocumentNode, yaml.SequenceNode:
			for _, c := range n.Content {
				walk(c)
			}
		case yaml.MappingNode:
			dup := false
			for i := 0; i+1 < len(n.Content); i += 2 {
				dup = dup || again[n.Content[i]]
				walk(n.Content[i+1])
			}
			if !dup {
				return
			}
			at := map[string]int{}
			var kept []*yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				if k.Kind == yaml.ScalarNode && k.Value != "<<" {
					if j, ok := at[k.Value]; ok {
						kept[j], kept[j+1] = k, v
						removed++
						continue
					}
					at[k.Value] = len(kept)
				}
				kept = append(kept, k, v)
			}
			n.Content = kept
		}
	}
	walk(root)
	return removed
}
