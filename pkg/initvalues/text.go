package initvalues

// Text of the file: YAML values on one line, and comments wrapped to the width.

import (
	"encoding/json"
	"html"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/record"
)

// inline writes a value as YAML on one line: scalars as the loader reads them back (text
// that would read as another type is quoted), lists and mappings in flow style.
func inline(v any) string {
	b, err := yaml.Marshal(node(v))
	if err != nil {
		return "null"
	}
	return strings.TrimSuffix(string(b), "\n")
}

// inlineList writes values for a comment: a, b, c.
func inlineList(vs []any) string {
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = inline(v)
	}
	return strings.Join(parts, ", ")
}

// keyText writes a mapping key.
func keyText(k string) string { return inline(k) }

// node is the YAML node of a value of the specification.
func node(v any) *yaml.Node {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null"}
	case bool:
		if x {
			return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "true"}
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: "false"}
	case json.Number:
		tag := "!!int"
		if strings.ContainsAny(string(x), ".eE") {
			tag = "!!float"
		}
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: string(x)}
	case string:
		n := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x}
		if strings.ContainsAny(x, "\n\r") {
			n.Style = yaml.DoubleQuotedStyle // a block scalar would take more lines
		}
		return n
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, e := range x {
			n.Content = append(n.Content, node(e))
		}
		return n
	case *record.Object:
		n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle}
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			n.Content = append(n.Content, node(k), node(e))
		}
		return n
	}
	b, _ := json.Marshal(v)
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(b)}
}

var (
	anchorTag = regexp.MustCompile(`(?is)<a\s[^>]*href\s*=\s*["']([^"']*)["'][^>]*>(.*?)</a\s*>`)
	blockTag  = regexp.MustCompile(`(?i)<(br|/?p|/?div|/?li|/?ul|/?ol|/?h[1-6])\b[^>]*>`)
	anyTag    = regexp.MustCompile(`(?s)<[a-zA-Z/!][^>]*>`)
)

// cleanText makes a description fit a comment: HTML links become "text (url)", line and
// block tags a space, other tags go, entities are decoded and all whitespace becomes single
// spaces.
func cleanText(s string) string {
	s = anchorTag.ReplaceAllStringFunc(s, func(m string) string {
		parts := anchorTag.FindStringSubmatch(m)
		url, text := parts[1], strings.TrimSpace(anyTag.ReplaceAllString(parts[2], ""))
		if text == "" || text == url {
			return url
		}
		return text + " (" + url + ")"
	})
	s = blockTag.ReplaceAllString(s, " ")
	s = anyTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	return strings.Join(strings.Fields(s), " ")
}

// wrap writes text as comment lines starting with prefix + "# ", at most width columns
// long unless a single word is longer.
func wrap(prefix, text string) []string {
	words := strings.Fields(text)
	if len(words) == 0 {
		return nil
	}
	var lines []string
	line := prefix + "#"
	for _, w := range words {
		if len(line)+1+len(w) > width && len(line) > len(prefix)+1 {
			lines = append(lines, line)
			line = prefix + "#"
		}
		line += " " + w
	}
	return append(lines, line)
}
