// Package values loads the testing values (the configuration a user of a connector enters,
// credentials included), applies --set overrides, checks them against the definition's
// connection specification, and writes rotated tokens back to the file atomically, keeping
// its comments, its other values and its mode.
package values

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/atomicfile"
	"connector/pkg/diag"
	"connector/pkg/yamlguard"
)

// Values are loaded testing values.
type Values struct {
	// File is the path read, or "-" for standard input.
	File string
	// Map is the testing values as plain values (map[string]any, []any, string, int64,
	// float64, bool, nil).
	Map map[string]any
	// doc is the YAML node tree of the file, kept for positions and for writing back.
	doc *yaml.Node
	// overridden are the paths set with --set (never written back to the file).
	overridden map[string]bool
	// Noun is what messages call a value ("": testing value; the Airbyte entry point's
	// config says "config value").
	Noun string
}

// Limits of a testing values file: a file beyond them is refused with a
// diagnostic, before it can take the time or the memory of the tool.
const (
	// maxFileSize is the size of the file (or of what stdin gives).
	maxFileSize = 16 << 20
	// maxEntries bounds the YAML nodes the parser builds: the separators , : - ? [ {.
	maxEntries = 250_000
	// maxNodes is the size of the values with every YAML alias expanded.
	maxNodes = 600_000
	// maxDepth is their nesting.
	maxDepth = 100
)

const limitNote = "(a limit of connector)"

// Load reads testing values from path, or from stdin when path is "-", at most
// maxFileSize bytes of them (so that a device such as /dev/zero ends at once).
func Load(path string, stdin io.Reader) (*Values, error) {
	var data []byte
	var err error
	if path == "-" {
		data, err = yamlguard.ReadAll(stdin, maxFileSize)
	} else {
		data, err = yamlguard.ReadFile(path, maxFileSize)
	}
	var tl *yamlguard.TooLargeError
	switch {
	case errors.As(err, &tl):
		return nil, diag.List{{File: displayName(path), Severity: diag.Error, Code: diag.CodeTestingValues,
			Message: fmt.Sprintf("the testing values are %s %s", err, limitNote)}}
	case err != nil && path == "-":
		return nil, fmt.Errorf("reading testing values from stdin: %w", err)
	case err != nil:
		return nil, err
	}
	return Parse(path, data)
}

// None is the testing values of a run without a testing values file: empty, to be filled by
// --set and the defaults of the specification. Rotated tokens need --testing-values-out.
func None() *Values {
	v, _ := Parse("", nil)
	return v
}

// Name is how messages name where the values come from: the file, <stdin>, or
// (no --testing-values).
func (v *Values) Name() string {
	switch v.File {
	case "-":
		return "<stdin>"
	case "":
		return "(no --testing-values)"
	}
	return v.File
}

func displayName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

// Parse reads testing values from data; file names them in messages.
func Parse(file string, data []byte) (*Values, error) {
	name := displayName(file)
	v := &Values{File: file, overridden: map[string]bool{}}
	if line, col, ok := yamlguard.CheckEntries(data, maxEntries); !ok {
		return nil, diag.List{{File: name, Line: line, Column: col, Severity: diag.Error, Code: diag.CodeYAML,
			Message: fmt.Sprintf("the testing values have more than %d YAML entries %s", maxEntries, limitNote),
			Hint:    "every `,` `:` `-` `?` `[` `{` counts one entry"}}
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, diag.List{yamlDiag(name, data, err)}
	}
	if d, ok := checkAliases(name, &doc); !ok {
		return nil, diag.List{d}
	}
	if dups := yamlguard.DuplicateKeys(&doc); len(dups) > 0 {
		var l diag.List
		for _, d := range dups {
			l.Add(diag.Diagnostic{File: name, Line: d.Again.Line, Column: d.Again.Column, Code: diag.CodeDuplicateKey,
				Message: fmt.Sprintf("duplicate key `%s` (first at line %d:%d)", d.Again.Value, d.First.Line, d.First.Column),
				Hint:    "keep one of them"})
		}
		return nil, l
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		v.Map = map[string]any{}
		v.doc = &yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.MappingNode, Tag: "!!map"}}}
		return v, nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, diag.List{{File: name, Line: root.Line, Column: root.Column, Severity: diag.Error,
			Code:    diag.CodeTestingValues,
			Message: fmt.Sprintf("testing values must be a mapping of keys to values, found %s", kindName(root)),
			Hint:    "write one `key: value` per line, e.g. `api_key: abc123`"}}
	}
	m, err := plain(root)
	if err != nil {
		return nil, diag.List{{File: name, Line: root.Line, Column: root.Column, Severity: diag.Error,
			Code: diag.CodeTestingValues, Message: err.Error()}}
	}
	v.Map = m.(map[string]any)
	v.doc = &doc
	return v, nil
}

func yamlDiag(file string, src []byte, err error) diag.Diagnostic {
	if line, msg, ok := yamlguard.SyntaxError(src, err); ok {
		return diag.Diagnostic{File: file, Line: line, Column: 1, Severity: diag.Error, Code: diag.CodeYAML,
			Message: "invalid YAML: " + msg}
	}
	msg := err.Error()
	line := 0
	// yaml.v3 says "yaml: line 3: mapping values are not allowed in this context".
	if rest, ok := strings.CutPrefix(msg, "yaml: line "); ok {
		if n, tail, ok := strings.Cut(rest, ":"); ok {
			if l, err := strconv.Atoi(n); err == nil {
				line = l
				msg = strings.TrimSpace(tail)
			}
		}
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	return diag.Diagnostic{File: file, Line: line, Column: 1, Severity: diag.Error, Code: diag.CodeYAML,
		Message: "invalid YAML: " + msg}
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("the scalar %q", n.Value)
	}
	return "something else"
}

// checkAliases applies maxNodes and maxDepth to the document with every alias expanded.
func checkAliases(name string, doc *yaml.Node) (diag.Diagnostic, bool) {
	err := yamlguard.Check(doc, maxNodes, maxDepth, nil)
	var p *yamlguard.Problem
	if err == nil || !errors.As(err, &p) {
		return diag.Diagnostic{}, true
	}
	d := diag.Diagnostic{File: name, Line: p.Node.Line, Column: p.Node.Column, Severity: diag.Error, Code: diag.CodeYAML}
	switch p.Kind {
	case yamlguard.RecursiveAlias:
		d.Message = fmt.Sprintf("the alias *%s is inside the value its anchor names, so it never ends", p.Node.Value)
	case yamlguard.TooManyNodes:
		d.Message = fmt.Sprintf("the testing values expand to more than %d nodes through YAML aliases %s", maxNodes, limitNote)
	default:
		d.Message = fmt.Sprintf("the testing values nest more than %d levels deep %s", maxDepth, limitNote)
	}
	return d, false
}

// plain converts a YAML node to plain values; aliases are followed. The document was
// checked by checkAliases; the budget here only keeps a defect from being a crash.
func plain(n *yaml.Node) (any, error) {
	budget := maxPlainNodes
	return plainAt(n, 0, &budget)
}

// Limits of plain, a little above those of checkAliases.
const (
	maxPlainDepth = maxDepth + 2
	maxPlainNodes = maxNodes + 2
)

func plainAt(n *yaml.Node, depth int, budget *int) (any, error) {
	*budget--
	if depth > maxPlainDepth || *budget < 0 {
		return nil, fmt.Errorf("line %d: the testing values nest too deeply or expand too much (a recursive YAML alias?)", n.Line)
	}
	switch n.Kind {
	case yaml.AliasNode:
		return plainAt(n.Alias, depth+1, budget)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Tag == "!!merge" {
				continue
			}
			val, err := plainAt(n.Content[i+1], depth+1, budget)
			if err != nil {
				return nil, err
			}
			m[k.Value] = val
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			val, err := plainAt(c, depth+1, budget)
			if err != nil {
				return nil, err
			}
			l = append(l, val)
		}
		return l, nil
	case yaml.ScalarNode:
		return scalar(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, err
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			var f float64
			if ferr := n.Decode(&f); ferr != nil {
				return nil, err
			}
			return f, nil
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return n.Value, nil
		}
		return f, nil
	}
	return n.Value, nil
}

func setPath(m map[string]any, path []string, val any) error {
	for i, seg := range path[:len(path)-1] {
		next, ok := m[seg]
		if !ok || next == nil {
			child := map[string]any{}
			m[seg] = child
			m = child
			continue
		}
		child, ok := next.(map[string]any)
		if !ok {
			return fmt.Errorf("%s is not a mapping", strings.Join(path[:i+1], "."))
		}
		m = child
	}
	m[path[len(path)-1]] = val
	return nil
}

// Get returns the value at a path.
func (v *Values) Get(path []string) (any, bool) {
	var cur any = v.Map
	for _, seg := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[seg]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

// Validate checks the values against a connection specification (a JSON schema, draft-07).
// Every problem is reported, naming the key, at the key's position in the file when it is
// there. A specification that is not a valid JSON schema is a plain error.
func (v *Values) Validate(spec map[string]any) error {
	if spec == nil {
		return nil
	}
	sch, err := compileSchema(spec)
	if err != nil {
		return fmt.Errorf("spec.connection_specification is not a valid JSON schema: %w", err)
	}
	failures := sch.validate(v.Map)
	if len(failures) == 0 {
		return nil
	}
	list := make(diag.List, 0, len(failures))
	for _, f := range failures {
		list.Add(v.diagnose(f))
	}
	list.Sort()
	return list
}

// diagnose turns a failure into a diagnostic at the position of the value (or, for a key
// that is missing, of the object that lacks it; for an unexpected key, of that key).
func (v *Values) diagnose(f failure) diag.Diagnostic {
	d := v.diagAt(f.path)
	if f.key != "" {
		if n := v.node(child(f.path, f.key)); n != nil {
			d.Line, d.Column = n.Line, n.Column
		}
	}
	d.Message = f.text(v.Noun)
	d.Hint = f.hint
	if f.missing != "" {
		d.Hint = fmt.Sprintf("add `%s: …` to the testing values, or pass --set %s=…", f.missing, strings.Join(child(f.path, f.missing), "."))
	}
	return d
}

func (v *Values) diagAt(path []string) diag.Diagnostic {
	d := diag.Diagnostic{File: v.Name(), Severity: diag.Error, Code: diag.CodeTestingValues, Path: strings.Join(path, ".")}
	if n := v.node(path); n != nil {
		d.Line, d.Column = n.Line, n.Column
	}
	return d
}

// node finds the YAML value node at path (nil when it is not in the file).
func (v *Values) node(path []string) *yaml.Node {
	if v.doc == nil || len(v.doc.Content) == 0 {
		return nil
	}
	n := v.doc.Content[0]
	for _, seg := range path {
		switch n.Kind {
		case yaml.MappingNode:
			var next *yaml.Node
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == seg {
					next = n.Content[i+1]
				}
			}
			if next == nil {
				return nil
			}
			n = next
		case yaml.SequenceNode:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(n.Content) {
				return nil
			}
			n = n.Content[i]
		default:
			return nil
		}
	}
	return n
}

// Secrets returns the testing values whose property in the specification is marked
// `airbyte_secret: true` (searched through properties, oneOf/anyOf/allOf branches and
// array items).
func (v *Values) Secrets(spec map[string]any) []string {
	var out []string
	var walk func(schema any, val any)
	walk = func(schema any, val any) {
		s, ok := schema.(map[string]any)
		if !ok || val == nil {
			return
		}
		if secret, _ := s["airbyte_secret"].(bool); secret {
			collectStrings(val, &out)
			return
		}
		if props, ok := s["properties"].(map[string]any); ok {
			if m, ok := val.(map[string]any); ok {
				keys := make([]string, 0, len(props))
				for k := range props {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					if e, ok := m[k]; ok {
						walk(props[k], e)
					}
				}
			}
		}
		for _, key := range []string{"oneOf", "anyOf", "allOf"} {
			if branches, ok := s[key].([]any); ok {
				for _, b := range branches {
					walk(b, val)
				}
			}
		}
		if items, ok := s["items"]; ok {
			if l, ok := val.([]any); ok {
				for _, e := range l {
					walk(items, e)
				}
			}
		}
	}
	walk(spec, v.Map)
	return out
}

func collectStrings(v any, out *[]string) {
	switch x := v.(type) {
	case string:
		if x != "" {
			*out = append(*out, x)
		}
	case map[string]any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case []any:
		for _, e := range x {
			collectStrings(e, out)
		}
	case nil:
	default:
		*out = append(*out, fmt.Sprint(x))
	}
}

// Update sets values at paths (dotted keys) in Map only: nothing is written (a replay, whose
// tokens are placeholders).
func (v *Values) Update(updates map[string]any) error {
	keys := make([]string, 0, len(updates))
	for k := range updates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := setPath(v.Map, strings.Split(k, "."), updates[k]); err != nil {
			return err
		}
	}
	return nil
}

// WriteBack sets values at paths in the file's YAML tree and writes it to path atomically
// (a temporary file in the same folder, then a rename), keeping comments, the other values
// and the file's mode. Paths set with --set are skipped: they did not come from the file.
func (v *Values) WriteBack(path string, updates map[string]any) error {
	if v.doc == nil {
		return errors.New("no testing values document to write")
	}
	keys := make([]string, 0, len(updates))
	for k := range updates {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := setPath(v.Map, strings.Split(k, "."), updates[k]); err != nil {
			return err
		}
		if v.overridden[k] {
			continue
		}
		if err := setNode(v.doc.Content[0], strings.Split(k, "."), updates[k]); err != nil {
			return fmt.Errorf("%s: %w", k, err)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(v.doc); err != nil {
		return err
	}
	return atomicfile.Write(path, buf.Bytes())
}

func setNode(n *yaml.Node, path []string, val any) error {
	for i, seg := range path {
		if n.Kind != yaml.MappingNode {
			return fmt.Errorf("%s is not a mapping", strings.Join(path[:i], "."))
		}
		var next *yaml.Node
		for j := 0; j+1 < len(n.Content); j += 2 {
			if n.Content[j].Value == seg {
				next = n.Content[j+1]
			}
		}
		last := i == len(path)-1
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}, next)
		}
		if last {
			var fresh yaml.Node
			if err := fresh.Encode(val); err != nil {
				return err
			}
			fresh.HeadComment, fresh.LineComment, fresh.FootComment = next.HeadComment, next.LineComment, next.FootComment
			*next = fresh
			return nil
		}
		n = next
	}
	return nil
}
