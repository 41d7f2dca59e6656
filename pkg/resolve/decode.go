package resolve

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/manifest"
	"connector/pkg/yamlguard"
)

// Parse reads a manifest as the CDK receives it: JSON (the manifest server's requests) is read
// as json.loads reads it, anything else as YAML the way yaml.safe_load (PyYAML, YAML 1.1)
// reads a manifest file: `yes` and `off` are booleans, `1e3` is text, `0o17`… The top level
// must be a mapping.
func Parse(src []byte) (*Object, error) {
	if t := bytes.TrimSpace(src); len(t) > 0 && t[0] == '{' {
		if v, err := parseJSON(t); err == nil {
			return top(v)
		}
	}
	// Within the loader's limits, so that no text makes the work explode: the entries
	// before yaml.v3 builds its tree, then the tree with every alias expanded (the passes
	// copy what an alias shares).
	if line, _, ok := yamlguard.CheckEntries(src, manifest.MaxEntries); !ok {
		return nil, fmt.Errorf("line %d: the manifest has more than %d YAML entries (a limit of connector)", line, manifest.MaxEntries)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return nil, err
	}
	if doc.Kind == 0 {
		return nil, errors.New("the manifest is empty")
	}
	if err := yamlguard.Check(&doc, manifest.MaxNodes, manifest.MaxDepth, nil); err != nil {
		return nil, fmt.Errorf("the manifest is beyond a limit of connector: %w", err)
	}
	v, err := (&yamlReader{seen: map[*yaml.Node]any{}}).value(&doc)
	if err != nil {
		return nil, err
	}
	return top(v)
}

func top(v any) (*Object, error) {
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("the manifest must be a mapping, not %s", typeName(v))
	}
	return o, nil
}

// parseJSON decodes one JSON value keeping the order of keys; a key written twice keeps its
// first place and its last value, as in Python.
func parseJSON(src []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	v, err := jsonValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("text after the JSON value")
	}
	return v, nil
}

func jsonValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("the manifest nests more than %d levels deep (a limit of connector)", maxDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := NewObject()
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				o.Set(kt.(string), v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			l := &List{Items: []any{}}
			for dec.More() {
				v, err := jsonValue(dec, depth+1)
				if err != nil {
					return nil, err
				}
				l.Items = append(l.Items, v)
			}
			_, err := dec.Token()
			return l, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case json.Number:
		return jsonNumber(string(t)), nil
	default:
		return t, nil // string, bool, nil
	}
}

// jsonNumber is a JSON number as json.loads makes it: an int unless it has a fraction or an
// exponent.
func jsonNumber(s string) Number {
	if strings.ContainsAny(s, ".eE") {
		f, _ := strconv.ParseFloat(s, 64) // out of range: ±inf, as float() gives
		return floatNumber(f)
	}
	n, _ := new(big.Int).SetString(s, 10)
	return intNumber(n)
}

// yamlReader builds values from a YAML node tree as PyYAML's safe loader does. An alias is
// the very object its anchor made (PyYAML shares it); yamlguard.Check has made sure that
// none is inside the value it names.
type yamlReader struct {
	seen map[*yaml.Node]any
}

func (r *yamlReader) value(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return r.value(n.Content[0])
	case yaml.AliasNode:
		if v, ok := r.seen[n.Alias]; ok {
			return v, nil
		}
		return r.value(n.Alias)
	case yaml.ScalarNode:
		return scalar(n), nil
	case yaml.SequenceNode:
		l := &List{Items: make([]any, 0, len(n.Content))}
		r.seen[n] = l
		for _, c := range n.Content {
			v, err := r.value(c)
			if err != nil {
				return nil, err
			}
			l.Items = append(l.Items, v)
		}
		return l, nil
	case yaml.MappingNode:
		o := NewObject()
		r.seen[n] = o
		pairs, err := flatten(n)
		if err != nil {
			return nil, err
		}
		for i := 0; i+1 < len(pairs); i += 2 {
			k, err := r.value(pairs[i])
			if err != nil {
				return nil, err
			}
			v, err := r.value(pairs[i+1])
			if err != nil {
				return nil, err
			}
			o.Set(jsonKey(k), v)
		}
		return o, nil
	}
	return nil, fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

// flatten returns the pairs of a mapping with its merge keys (<<) expanded as PyYAML does:
// the merged pairs first (of a list of mappings, the last mapping's first), then the
// mapping's own pairs; a later pair of the same key wins when the dict is built.
func flatten(n *yaml.Node) ([]*yaml.Node, error) {
	var merged, own []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !(k.Kind == yaml.ScalarNode && k.Value == "<<" && k.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) == 0) {
			own = append(own, k, v)
			continue
		}
		for v.Kind == yaml.AliasNode {
			v = v.Alias
		}
		switch v.Kind {
		case yaml.MappingNode:
			p, err := flatten(v)
			if err != nil {
				return nil, err
			}
			merged = append(merged, p...)
		case yaml.SequenceNode:
			var subs [][]*yaml.Node
			for _, s := range v.Content {
				for s.Kind == yaml.AliasNode {
					s = s.Alias
				}
				if s.Kind != yaml.MappingNode {
					return nil, fmt.Errorf("line %d: a merge key takes mappings", s.Line)
				}
				p, err := flatten(s)
				if err != nil {
					return nil, err
				}
				subs = append(subs, p)
			}
			for i := len(subs) - 1; i >= 0; i-- {
				merged = append(merged, subs[i]...)
			}
		default:
			return nil, fmt.Errorf("line %d: a merge key takes a mapping or a list of mappings", v.Line)
		}
	}
	return append(merged, own...), nil
}

// jsonKey is the text json.dumps writes for a dict key.
func jsonKey(k any) string {
	switch x := k.(type) {
	case string:
		return x
	case bool:
		if x {
			return "true"
		}
		return "false"
	case nil:
		return "null"
	case Number:
		return x.Text
	}
	return fmt.Sprint(k)
}

// The implicit types of plain scalars in PyYAML (YAML 1.1).
var (
	yamlBool  = regexp.MustCompile(`^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$`)
	yamlInt   = regexp.MustCompile(`^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$`)
	yamlFloat = regexp.MustCompile(`^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$`)
	yamlNull  = regexp.MustCompile(`^(?:~|null|Null|NULL|)$`)
)

// scalar is the value of a scalar node: a quoted or block scalar is text; a plain one takes
// the type its text matches, as PyYAML resolves it. A timestamp stays text (PyYAML makes a
// date, which the manifest server never receives: its manifests are JSON).
func scalar(n *yaml.Node) any {
	s := n.Value
	if n.Style&yaml.TaggedStyle != 0 {
		switch n.Tag {
		case "!!str":
			return s
		case "!!null":
			return nil
		}
	}
	if n.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return s
	}
	switch {
	case yamlBool.MatchString(s):
		switch s[0] {
		case 'y', 'Y', 't', 'T':
			return true
		case 'o', 'O':
			return s[1] == 'n' || s[1] == 'N'
		}
		return false
	case yamlNull.MatchString(s):
		return nil
	case yamlInt.MatchString(s):
		if v, ok := yamlIntValue(s); ok {
			return v
		}
	case yamlFloat.MatchString(s):
		if v, ok := yamlFloatValue(s); ok {
			return v
		}
	}
	return s
}

func yamlIntValue(s string) (Number, bool) {
	s = strings.ReplaceAll(s, "_", "")
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	n := new(big.Int)
	ok := true
	switch {
	case s == "0":
	case strings.HasPrefix(s, "0b"):
		_, ok = n.SetString(s[2:], 2)
	case strings.HasPrefix(s, "0x"):
		_, ok = n.SetString(s[2:], 16)
	case strings.HasPrefix(s, "0"):
		_, ok = n.SetString(s, 8)
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.Atoi(part)
			if err != nil {
				return Number{}, false
			}
			n.Mul(n, big.NewInt(60))
			n.Add(n, big.NewInt(int64(d)))
		}
	default:
		_, ok = n.SetString(s, 10)
	}
	if !ok {
		return Number{}, false
	}
	if neg {
		n.Neg(n)
	}
	return intNumber(n), true
}

func yamlFloatValue(s string) (Number, bool) {
	s = strings.ToLower(strings.ReplaceAll(s, "_", ""))
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimLeft(s, "+-")
	var f float64
	switch {
	case s == ".inf":
		f = inf
	case s == ".nan":
		return floatNumber(nan), true
	case strings.Contains(s, ":"):
		for _, part := range strings.Split(s, ":") {
			d, err := strconv.ParseFloat(part, 64)
			if err != nil {
				return Number{}, false
			}
			f = f*60 + d
		}
	default:
		var err error
		if f, err = strconv.ParseFloat(s, 64); err != nil && !errors.Is(err, strconv.ErrRange) {
			return Number{}, false
		}
	}
	if neg {
		f = -f
	}
	return floatNumber(f), true
}
