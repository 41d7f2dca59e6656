// Package initvalues writes a starter testing values file from a definition's
// spec.connection_specification: every property with its title, description and type as a
// comment, defaults and fixed (const) values filled in, required values marked and left
// empty, secrets left empty, the alternatives of a oneOf shown (the first one filled, the
// others commented out), nested objects and list items laid out.
//
// The file is YAML that the testing values loader reads back. Its active lines are exactly
// the required values, the defaults and the fixed values; an optional value without a
// default is a commented-out line, so the file means what the specification's defaults
// mean until the user uncomments something. A commented-out block is the block as it would
// be written, with "# " put in front of each line at the block's indentation, so removing
// that prefix from every line of it gives valid YAML again.
package initvalues

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"connector/pkg/record"
)

// Options name what the header of the file refers to.
type Options struct {
	// Definition is the definition's path as the user gave it.
	Definition string
	// File is the file being written ("" when it goes to stdout).
	File string
}

// Result says what the file leaves to the user.
type Result struct {
	// Required are the dotted paths of the required values written empty, in file order
	// (secrets included).
	Required []string
	// Secrets are the dotted paths of the secret values written empty, in file order.
	Secrets []string
}

// ErrNoProperties is returned by Generate for a specification that declares no property:
// the file then holds only its header.
var ErrNoProperties = errors.New("spec.connection_specification declares no properties")

// width is where comments are wrapped.
const width = 100

// maxDepth bounds the nesting followed: a specification deeper than that is shown down to
// it (a recursive one would otherwise never end).
const maxDepth = 32

// Generate writes the starter testing values for spec, spec.connection_specification as
// the manifest loader keeps it (objects as *record.Object in the order written, numbers as
// json.Number). A specification without properties gives the header alone and
// ErrNoProperties beside it.
func Generate(spec any, opts Options) ([]byte, Result, error) {
	root, ok := spec.(*record.Object)
	if !ok {
		return nil, Result{}, fmt.Errorf("spec.connection_specification must be a mapping (a JSON schema), not %s", kindOf(spec))
	}
	g := &generator{}
	body := g.objectBody(schema{root}, 0, nil, true)
	var out strings.Builder
	for _, l := range g.header(schema{root}, opts) {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	out.WriteByte('\n')
	var err error
	if len(body) == 0 {
		err = ErrNoProperties
		out.WriteString("# (the specification declares no properties)\n")
	}
	for _, l := range body {
		out.WriteString(l)
		out.WriteByte('\n')
	}
	return []byte(out.String()), g.res, err
}

// generator builds the lines of the file and records what it leaves empty.
type generator struct {
	res Result
}

func (g *generator) header(root schema, opts Options) []string {
	file := opts.File
	if file == "" {
		file = "FILE"
	}
	what := "Testing values for " + opts.Definition
	if t := root.str("title"); t != "" {
		what += " (" + t + ")"
	}
	lines := []string{
		"# " + what,
		"# from its spec.connection_specification, written by `connector init-values`.",
	}
	lines = append(lines,
		"# Lines that are not comments are the required values, the defaults and the fixed values.",
		"# A commented-out line is an optional value: remove its \"# \" to set it.")
	if len(g.res.Required) > 0 {
		lines = append(lines, wrap("", "Required, to fill in: "+strings.Join(g.res.Required, ", ")+".")...)
	}
	if len(g.res.Secrets) > 0 {
		note := "Secrets are left empty: write them here and keep this file private, or pass them at run time"
		// --set reaches keys of mappings, not list items.
		if i := slices.IndexFunc(g.res.Secrets, func(p string) bool { return !strings.Contains(p, "[") }); i >= 0 {
			note += fmt.Sprintf(", e.g. --set %s=\"$%s\"", g.res.Secrets[i], envName(g.res.Secrets[i]))
		}
		lines = append(lines, wrap("", note+".")...)
	}
	lines = append(lines,
		"# Then check them against the API:",
		"#   connector check "+opts.Definition+" --testing-values "+file)
	return lines
}

// objectBody lays out the properties of an object schema (and the alternatives of its
// oneOf) at indent. live is false inside a commented-out block: nothing there is to fill.
func (g *generator) objectBody(s schema, indent int, path []string, live bool) []string {
	if len(path) > maxDepth {
		return []string{pad(indent) + "# (nested deeper than this: see the specification)"}
	}
	var lines []string
	written := map[string]bool{}
	required := s.required()
	for i, p := range s.properties() {
		if indent == 0 && i > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, g.property(p.name, p.schema, required[p.name], indent, child(path, p.name), live)...)
		written[p.name] = true
	}
	// Required names that no property describes still need a value.
	for _, name := range s.requiredList() {
		if written[name] {
			continue
		}
		if indent == 0 && len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, g.property(name, schema{&record.Object{}}, true, indent, child(path, name), live)...)
		written[name] = true
	}
	if alts := s.alternatives(); len(alts) > 0 && s.objectAlternatives() {
		if indent == 0 && len(lines) > 0 {
			lines = append(lines, "")
		}
		lines = append(lines, g.alternatives(s, alts, indent, path, live, written)...)
	}
	return lines
}

// alternatives lays out a oneOf (or anyOf) of objects: one alternative written (the one
// the default of s stands for, else the first), each other commented out after it.
func (g *generator) alternatives(s schema, alts []schema, indent int, path []string, live bool, written map[string]bool) []string {
	key := discriminator(alts)
	first, _ := s.defaultKind(alts)
	first = max(first, 0)
	order := []int{first}
	for i := range alts {
		if i != first {
			order = append(order, i)
		}
	}
	var lines []string
	for _, i := range order {
		alt := alts[i]
		head := fmt.Sprintf("kind %d of %d", i+1, len(alts))
		if i != first {
			head = "or " + head
		}
		if key != "" {
			v, _ := alt.fixed(key)
			head += " (" + key + ": " + inline(v) + ")"
		}
		if i != first {
			head += fmt.Sprintf(", in place of kind %d", first+1)
		}
		if t := strings.TrimRight(alt.str("title"), ".:"); t != "" {
			head += ": " + t
		}
		if d := cleanText(alt.str("description")); d != "" {
			head += ". " + d
		}
		lines = append(lines, wrap(pad(indent), head)...)
		body := g.objectBody(alt.without(written), indent, path, live && i == first)
		if i == first {
			lines = append(lines, body...)
			continue
		}
		lines = append(lines, commentOut(body, indent)...)
	}
	return lines
}

// property lays out one property: its comment, then its value, commented out when it is
// optional and has no default.
func (g *generator) property(name string, s schema, required bool, indent int, path []string, live bool) []string {
	lines := g.doc(name, s, required, indent, path)
	key := pad(indent) + keyText(name) + ":"
	dotted := dottedPath(path)
	if v, ok := s.constant(); ok {
		return append(lines, key+" "+inline(v))
	}
	if s.isSecret() {
		if required && !s.has("default") {
			g.leftEmpty(dotted, true, live)
			return append(lines, key)
		}
		return append(lines, pad(indent)+"# "+keyText(name)+":")
	}
	alts := s.alternatives()
	objectKinds := len(alts) > 0 && s.objectAlternatives()
	// active is a value laid out in lines that are not comments: a required one, or one
	// whose default stands for one of its kinds without being a value of it.
	active := required
	if v, ok := s.get("default"); ok {
		kind, asValue := 0, true
		if objectKinds {
			kind, asValue = s.defaultKind(alts)
		}
		if asValue {
			return append(lines, key+" "+inline(v))
		}
		active = active || kind >= 0
	}
	switch {
	case len(s.properties()) > 0 || objectKinds:
		body := g.objectBody(s, indent+2, path, live && active)
		value := []string{key}
		if !hasValue(body) {
			// Comments alone would make the value null: an empty object it is.
			value = []string{key + " {}", pad(indent+2) + "# every property is optional: to set one, remove the {} above and uncomment it"}
		}
		value = append(value, body...)
		if active {
			return append(lines, value...)
		}
		return append(lines, commentOut(value, indent)...)
	case s.itemsAreObjects():
		// One item, to fill in when the list is required.
		items, _ := s.sub("items")
		value := append([]string{key}, listItem(g.objectBody(items, indent+4, child(path, "[0]"), live && required), indent+2)...)
		if required {
			return append(lines, value...)
		}
		return append(lines, commentOut(value, indent)...)
	}
	if required {
		g.leftEmpty(dotted, false, live)
		return append(lines, key)
	}
	if v, ok := s.sample(); ok {
		return append(lines, pad(indent)+"# "+keyText(name)+": "+inline(v))
	}
	return append(lines, pad(indent)+"# "+keyText(name)+":")
}

// leftEmpty records a value the user has to give, when its line is not commented out.
func (g *generator) leftEmpty(path string, secret, live bool) {
	if !live {
		return
	}
	g.res.Required = append(g.res.Required, path)
	if secret {
		g.res.Secrets = append(g.res.Secrets, path)
	}
}

// doc is the comment above a property: its title and description, then what kind of value
// it takes.
func (g *generator) doc(name string, s schema, required bool, indent int, path []string) []string {
	prefix := pad(indent)
	var lines []string
	title, desc := strings.TrimRight(s.str("title"), ".:"), cleanText(s.str("description"))
	switch {
	case title != "" && desc != "" && !strings.EqualFold(strings.TrimRight(desc, "."), title):
		lines = append(lines, wrap(prefix, title+": "+desc)...)
	case title != "":
		lines = append(lines, wrap(prefix, title)...)
	case desc != "":
		lines = append(lines, wrap(prefix, desc)...)
	}
	lines = append(lines, wrap(prefix, facts(s, required))...)
	if s.isSecret() {
		note := "left empty: write it here, or pass it at run time with --set " + dottedPath(path) + "=…"
		switch {
		case slices.ContainsFunc(path, func(p string) bool { return strings.HasPrefix(p, "[") }):
			note = "left empty: write it here"
		case s.has("default"):
			note = "left out, so its default applies: write it here to change it"
		}
		lines = append(lines, wrap(prefix, note)...)
	}
	return lines
}

// facts says what a property takes: `string, required; default x; one of: a, b; …`.
func facts(s schema, required bool) string {
	head := s.typeText()
	need := "optional"
	if required {
		need = "required"
	}
	if head == "" {
		head = need
	} else {
		head += ", " + need
	}
	if s.isSecret() {
		head += ", secret (airbyte_secret)"
	}
	parts := []string{head}
	if v, ok := s.constant(); ok {
		parts = append(parts, "always "+inline(v))
	} else if enum := s.list("enum"); len(enum) > 0 {
		parts = append(parts, "one of: "+inlineList(enum))
	}
	if v, ok := s.get("default"); ok {
		text := "default " + inline(v)
		if alts := s.alternatives(); len(alts) > 0 && s.objectAlternatives() {
			if kind, asValue := s.defaultKind(alts); !asValue && kind >= 0 {
				text = fmt.Sprintf("default kind %d (the specification gives the schema of that kind as the default)", kind+1)
			}
		}
		parts = append(parts, text)
	}
	if items, ok := s.sub("items"); ok {
		if enum := items.list("enum"); len(enum) > 0 {
			parts = append(parts, "each one of: "+inlineList(enum))
		}
	}
	if alts := s.alternatives(); len(alts) > 0 {
		if s.objectAlternatives() {
			n := fmt.Sprintf("one of %d kinds", len(alts))
			if key := discriminator(alts); key != "" {
				var vals []any
				for _, a := range alts {
					v, _ := a.fixed(key)
					vals = append(vals, v)
				}
				n += ", chosen by " + key + ": " + inlineList(vals)
			}
			parts = append(parts, n)
		}
	}
	parts = append(parts, bounds(s)...)
	if hint := formatHint(s); hint != "" {
		parts = append(parts, hint)
	}
	if ex := s.examples(); len(ex) > 0 {
		if len(ex) > 3 {
			ex = ex[:3]
		}
		parts = append(parts, "e.g. "+inlineList(ex))
	}
	if b, _ := s.get("airbyte_hidden"); b == true {
		parts = append(parts, "hidden in the Airbyte UI")
	}
	return strings.Join(parts, "; ")
}

// bounds lists the numeric, length and size limits of a property.
func bounds(s schema) []string {
	var out []string
	for _, b := range []struct{ kw, text string }{
		{"minimum", "at least %s"}, {"exclusiveMinimum", "more than %s"},
		{"maximum", "at most %s"}, {"exclusiveMaximum", "less than %s"},
		{"minLength", "at least %s characters"}, {"maxLength", "at most %s characters"},
		{"minItems", "at least %s"}, {"maxItems", "at most %s"},
	} {
		v, ok := s.get(b.kw)
		if _, isBool := v.(bool); !ok || isBool {
			continue
		}
		text := inline(v)
		if strings.HasSuffix(b.kw, "Items") {
			text += " item"
			if text != "1 item" {
				text += "s"
			}
		}
		out = append(out, fmt.Sprintf(b.text, text))
	}
	if v, _ := s.get("uniqueItems"); v == true {
		out = append(out, "no repeated items")
	}
	return out
}

// hasValue reports whether lines hold a line that is not a comment.
func hasValue(lines []string) bool {
	for _, l := range lines {
		if t := strings.TrimSpace(l); t != "" && !strings.HasPrefix(t, "#") {
			return true
		}
	}
	return false
}

// listItem turns the lines of a mapping written at indent+2 into one item of a list at
// indent: its first key gets the "- ", and the comments above that key move out to the
// dash.
func listItem(lines []string, indent int) []string {
	out := append([]string(nil), lines...)
	for i, l := range out {
		t := strings.TrimSpace(l)
		if t == "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			out[i] = pad(indent) + t
			continue
		}
		out[i] = pad(indent) + "- " + t
		return out
	}
	return append(out, pad(indent)+"- {}")
}

// commentOut puts "# " in front of every line at column indent (the block's own
// indentation), so that removing it gives the block back.
func commentOut(lines []string, indent int) []string {
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		cut := min(indent, len(l)-len(strings.TrimLeft(l, " ")))
		out = append(out, pad(indent)+"# "+pad(indent-cut)+l[cut:])
	}
	return out
}

func pad(n int) string { return strings.Repeat(" ", n) }

// dottedPath writes a path as --set takes it, list items as [0]: reports[0].name.
func dottedPath(path []string) string {
	var b strings.Builder
	for i, p := range path {
		if i > 0 && !strings.HasPrefix(p, "[") {
			b.WriteByte('.')
		}
		b.WriteString(p)
	}
	return b.String()
}

// child is path with one more key, in a slice of its own.
func child(path []string, key string) []string {
	return append(path[:len(path):len(path)], key)
}

// envName is the environment variable the header's --set example reads: the last key in
// upper case.
func envName(path string) string {
	name := path[strings.LastIndex(path, ".")+1:]
	var b strings.Builder
	for _, r := range strings.ToUpper(name) {
		if r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "nothing"
	case []any:
		return "a list"
	case string, json.Number, bool:
		return "a scalar"
	}
	return fmt.Sprintf("%T", v)
}
