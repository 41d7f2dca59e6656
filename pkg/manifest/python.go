package manifest

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// pythonHint ends the hint of every python-component diagnostic.
const pythonHint = "connector runs no Python: write the behaviour with declarative components, or run this definition with the Airbyte CDK"

// pythonClass reports whether the component mapping n runs Python code in the Airbyte CDK:
// its written type is a Custom* type, or it has a `class_name` and no type (the CDK then
// gives it the Custom type of its slot). A class_name beside another written type is ignored
// by the CDK, and here too (an unknown field). typ is the written type, class the class_name;
// either may be "".
func pythonClass(n *yaml.Node) (typ, class string, ok bool) {
	if n == nil || n.Kind != yaml.MappingNode {
		return "", "", false
	}
	hasClass := false
	for i := 0; i+1 < len(n.Content); i += 2 {
		v := n.Content[i+1]
		switch n.Content[i].Value {
		case "type":
			if isString(v) {
				typ = v.Value
			}
		case "class_name":
			hasClass = true
			if v.Kind == yaml.ScalarNode {
				class = v.Value
			}
		}
	}
	return typ, class, strings.HasPrefix(typ, "Custom") || (typ == "" && hasClass)
}

// python reports the component n at path as Python code when it is one, and says so. where
// names its slot, as in the unsupported-component messages.
func (l *loader) python(n *yaml.Node, path, where string) bool {
	typ, class, ok := pythonClass(n)
	if !ok {
		return false
	}
	msg := typ + " runs Python code"
	if typ == "" {
		msg = fmt.Sprintf("`%s` names a Python class", where)
	} else if where != "" {
		msg += " (" + where + ")"
	}
	hint := "class_name: " + class
	if class == "" {
		hint = typ + " without a class_name"
	}
	l.add(diag.Diagnostic{Code: diag.CodePython, Message: msg, Hint: hint + " — " + pythonHint,
		Line: n.Line, Column: n.Column, Path: path, Component: typ})
	return true
}

// pythonWithin reports the Python components nested in n, a value this tool does not read
// (yet): "not supported" alone would hide that part of it can never run. A Python component's
// own arguments are not searched; shared nodes are visited once.
func (l *loader) pythonWithin(n *yaml.Node, path string, seen map[*yaml.Node]bool) {
	if n == nil || seen[n] || l.full() {
		return
	}
	seen[n] = true
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if k == "$parameters" {
				continue
			}
			p := join(path, k)
			if !l.python(v, p, lastSeg(p)) {
				l.pythonWithin(v, p, seen)
			}
		}
	case yaml.SequenceNode:
		for i, v := range n.Content {
			p := fmt.Sprintf("%s[%d]", path, i)
			if !l.python(v, p, lastSeg(p)) {
				l.pythonWithin(v, p, seen)
			}
		}
	case yaml.AliasNode:
		l.pythonWithin(n.Alias, path, seen)
	}
}
