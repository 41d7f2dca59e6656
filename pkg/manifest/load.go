package manifest

import (
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Load reads and loads the definition file at path. See Parse.
func Load(path string) (*Definition, diag.List) {
	src, err := os.ReadFile(path)
	if err != nil {
		var l diag.List
		l.Add(diag.Diagnostic{File: path, Code: diag.CodeYAML, Message: fmt.Sprintf("cannot read the definition: %v", err)})
		return nil, l
	}
	return Parse(path, src)
}

// Parse loads a definition from src; file names it in diagnostics. It runs the passes in
// order — decode, resolve $ref, $parameters and default types, build and validate the
// model, compile the templates, check the seed rules — and reports every problem found,
// sorted by position, each once. The definition is nil when there is any error.
func Parse(file string, src []byte) (def *Definition, diags diag.List) {
	l := &loader{file: file, src: src, seen: map[string]bool{}}
	defer func() {
		if r := recover(); r != nil {
			// A loader defect must not take the tool down: report it as a problem.
			l.add(diag.Diagnostic{Code: diag.CodeYAML, Message: fmt.Sprintf("internal error while loading the definition: %v", r)})
			def, diags = nil, l.finish()
		}
	}()
	root := l.decode()
	if root == nil {
		return nil, l.finish()
	}
	root = newResolver(l, root).resolveRoot()
	def = l.buildDefinition(root)
	l.compileTemplates()
	l.checkCredentials()
	if def != nil {
		l.checkAuthenticators(def)
		l.checkStaticConflicts()
	}
	diags = l.finish()
	if diags.HasErrors() {
		return nil, diags
	}
	return def, diags
}

// loader holds the state of one Parse call.
type loader struct {
	file  string
	src   []byte
	lines []string
	diags diag.List
	seen  map[string]bool

	templates []*pendingTemplate
	creds     []*credential
	streams   []*streamAuth
	conflicts [][]optionUse
	authCache map[authKey]*Authenticator
}

// add records a diagnostic once: the same code and message at the same position (a
// problem inside a shared, $ref'd component) is reported a single time.
func (l *loader) add(d diag.Diagnostic) {
	d.File = l.file
	if d.Severity == "" {
		d.Severity = diag.Error
	}
	k := fmt.Sprintf("%d:%d:%s:%s", d.Line, d.Column, d.Code, d.Message)
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.diags = append(l.diags, d)
}

// at reports a problem at the position of node n.
func (l *loader) at(n *yaml.Node, path, code, msg, hint string) {
	d := diag.Diagnostic{Code: code, Message: msg, Hint: hint, Path: path}
	if n != nil {
		d.Line, d.Column = n.Line, n.Column
	}
	l.add(d)
}

func (l *loader) finish() diag.List {
	l.diags.Sort()
	if len(l.diags) == 0 {
		return nil
	}
	return l.diags
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode parses the YAML text into a node tree and returns the root mapping.
func (l *loader) decode() *yaml.Node {
	var doc yaml.Node
	if err := yaml.Unmarshal(l.src, &doc); err != nil {
		for _, msg := range strings.Split(err.Error(), "\n") {
			msg = strings.TrimSpace(strings.TrimPrefix(msg, "yaml: unmarshal errors:"))
			if msg == "" {
				continue
			}
			d := diag.Diagnostic{Code: diag.CodeYAML, Line: 1, Column: 1, Message: msg}
			if m := yamlLine.FindStringSubmatch(msg); m != nil {
				d.Line, _ = strconv.Atoi(m[1])
				d.Message = m[2]
			} else if strings.HasPrefix(msg, "line ") {
				if i := strings.Index(msg, ": "); i > 0 {
					d.Line, _ = strconv.Atoi(msg[5:i])
					d.Message = msg[i+2:]
				}
			}
			d.Message = "invalid YAML: " + strings.TrimPrefix(d.Message, "yaml: ")
			l.add(d)
		}
		return nil
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		l.add(diag.Diagnostic{Code: diag.CodeYAML, Line: 1, Column: 1, Message: "the definition is empty"})
		return nil
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.at(root, "", diag.CodeType, fmt.Sprintf("the definition must be a mapping, not %s", kindName(root)), "")
		return nil
	}
	return root
}

// pendingTemplate is a template field found while building, compiled in its own pass.
type pendingTemplate struct {
	node  *yaml.Node
	src   string
	vars  []string
	dst   **template.Template
	path  string
	field string
	// ok is set once the template compiled.
	ok bool
}

// tmpl schedules the compilation of scalar n into *dst with the given variables.
func (l *loader) tmpl(n *yaml.Node, path, field string, vars []string, dst **template.Template) *pendingTemplate {
	p := &pendingTemplate{node: n, src: n.Value, vars: vars, dst: dst, path: path, field: field}
	l.templates = append(l.templates, p)
	return p
}

// compileTemplates compiles every template found by the build pass, reporting errors at
// the file position of the offending character.
func (l *loader) compileTemplates() {
	for _, p := range l.templates {
		t, err := template.Compile(p.src, p.vars)
		if err != nil {
			msg, hint, off := err.Error(), "", 0
			if te, ok := err.(*template.Error); ok {
				msg, hint, off = te.Msg, te.Hint, te.Offset
			}
			line, col := l.offsetPos(p.node, off)
			l.add(diag.Diagnostic{Code: diag.CodeTemplate, Line: line, Column: col, Path: p.path,
				Message: fmt.Sprintf("in `%s`: %s", p.field, msg), Hint: hint})
			continue
		}
		p.ok = true
		*p.dst = t
	}
}

// Spec is the `spec` section of a definition: the schema of the testing values and the
// declarative OAuth description.
type Spec struct {
	ConnectionSpec map[string]any
	AdvancedAuth   map[string]any
}

// LoadSpec reads only the `spec` section of a definition (with `$ref` resolved), for commands
// that need nothing else — `connector oauth` gets tokens for a connector whose streams may
// use components this tool does not run yet. Problems of the spec itself are reported;
// the rest of the definition is not checked.
func LoadSpec(path string) (*Spec, diag.List) {
	src, err := os.ReadFile(path)
	if err != nil {
		var l diag.List
		l.Add(diag.Diagnostic{File: path, Code: diag.CodeYAML, Message: fmt.Sprintf("cannot read the definition: %v", err)})
		return nil, l
	}
	l := &loader{file: path, src: src, seen: map[string]bool{}}
	root := l.decode()
	if root == nil {
		return nil, l.finish()
	}
	root = newResolver(l, root).resolveRoot()
	var kept diag.List
	for _, d := range l.diags {
		if d.Code == diag.CodeYAML || strings.HasPrefix(d.Path, "spec") {
			kept = append(kept, d)
		}
	}
	l.diags = kept
	spec := &Spec{}
	if root != nil && root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			if root.Content[i].Value == "spec" {
				spec.ConnectionSpec, spec.AdvancedAuth = l.spec(root.Content[i+1])
			}
		}
	}
	var diags diag.List
	for _, d := range l.finish() {
		if d.Code != diag.CodeUnsupported {
			diags = append(diags, d)
		}
	}
	if diags.HasErrors() {
		return nil, diags
	}
	return spec, diags
}
