package manifest

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
	"connector/pkg/yamlguard"
)

// Load reads and loads the definition file at path. See Parse.
func Load(path string) (*Definition, diag.List) {
	def, diags, _ := LoadContext(context.Background(), path)
	return def, diags
}

// LoadContext is Load that stops as soon as ctx is done (Ctrl-C): then it returns ctx's
// error and no definition.
func LoadContext(ctx context.Context, path string) (*Definition, diag.List, error) {
	src, diags := ReadFile(path)
	if diags != nil {
		return nil, diags, nil
	}
	return ParseContext(ctx, path, src)
}

// ReadFile reads a definition file of at most maxFileSize bytes; a file it cannot read or
// that is too large is a diagnostic.
func ReadFile(path string) ([]byte, diag.List) {
	src, err := yamlguard.ReadFile(path, maxFileSize)
	if err == nil {
		return src, nil
	}
	var l diag.List
	msg := fmt.Sprintf("cannot read the definition: %v", err)
	var tl *yamlguard.TooLargeError
	if errors.As(err, &tl) {
		msg = fmt.Sprintf("the definition is %s %s", err, limitNote)
	}
	l.Add(diag.Diagnostic{File: path, Code: diag.CodeYAML, Message: msg})
	return nil, l
}

// Parse loads a definition from src; file names it in diagnostics. It runs the passes in
// order — decode, resolve $ref, $parameters and default types, build and validate the
// model, compile the templates, check the seed rules — and reports every problem found,
// sorted by position, each once. The definition is nil when there is any error.
func Parse(file string, src []byte) (def *Definition, diags diag.List) {
	def, diags, _ = ParseContext(context.Background(), file, src)
	return def, diags
}

// ParseContext is Parse that stops as soon as ctx is done: then it returns ctx's error.
// A definition beyond one of the limits (maxEntries, maxNodes, maxDepth) is reported at
// the place where the limit ran out, and nothing after that pass runs.
func ParseContext(ctx context.Context, file string, src []byte) (def *Definition, diags diag.List, err error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	l := &loader{file: file, src: src, seen: map[string]bool{}, ctx: ctx}
	defer func() {
		if r := recover(); r != nil {
			// A loader defect must not take the tool down: report it as a problem.
			l.add(diag.Diagnostic{Code: diag.CodeYAML, Message: fmt.Sprintf("internal error while loading the definition: %v", r)})
			def, diags, err = nil, l.finish(), nil
		}
	}()
	root := l.decode()
	if l.stopped {
		return nil, nil, ctx.Err()
	}
	if root == nil {
		return nil, l.finish(), nil
	}
	l.refs = newResolver(l, root)
	root = l.refs.resolveRoot()
	if l.stopped {
		return nil, nil, ctx.Err()
	}
	if l.overLimit {
		return nil, l.finish(), nil
	}
	def = l.buildDefinition(root)
	l.compileTemplates()
	if l.stopped {
		return nil, nil, ctx.Err()
	}
	l.checkCredentials()
	l.checkCDKVariables()
	l.checkNoParameters()
	if def != nil {
		l.checkConfigKeys(def)
		l.checkAuthenticators(def)
		l.checkStaticConflicts()
	}
	l.softenAlternatives()
	if l.stopped {
		return nil, nil, ctx.Err()
	}
	diags = l.finish()
	if diags.HasErrors() {
		return nil, diags, nil
	}
	return def, diags, nil
}

// loader holds the state of one Parse call.
type loader struct {
	// refs resolves the definition's references; kept for the schemas, which are resolved
	// only when a stream reads them.
	refs  *resolver
	file  string
	src   []byte
	lines []string
	diags diag.List
	seen  map[string]bool

	templates []*pendingTemplate
	creds     []*credential
	// cdkVars are templates that read variables the Airbyte CDK does not give them
	// (see checkCDKVariables).
	cdkVars []cdkVarCheck
	// noParameters are the ConditionalStreams conditions, which the CDK gives no parameters.
	noParameters []*pendingTemplate
	streams      []*streamAuth
	conflicts    [][]optionUse
	authCache    map[authKey]*Authenticator
	trees        map[treeKey]*Tree
	// asyncJobs is max_concurrent_async_job_count, shared by the AsyncRetriever streams.
	asyncJobs *JobLimit
	// selectives are the SelectiveAuthenticators read, with where each alternative is.
	selectives []selectiveAt
	// norm is spec.config_normalization_rules, once read.
	norm *ConfigNormalization
	// checkDyn is a CheckDynamicStream check; parentWins makes an outer $parameters entry win
	// over a nested component's own (use_parent_parameters of a dynamic stream's streams).
	checkDyn   *CheckDynamic
	parentWins bool
	// inTemplate is set while a dynamic stream's template is checked.
	inTemplate bool
	// broken are the positions of the mappings whose $ref could not be resolved (see
	// brokenAt).
	broken map[[2]int]bool

	// ctx cancels the load; ticks counts the calls to tick between two looks at it.
	ctx   context.Context
	ticks int
	// stopped is set once ctx is done: every pass returns at once.
	stopped bool
	// overLimit is set once a limit of limits.go is exceeded (and reported).
	overLimit bool
	// inherited counts the $parameters entries copied from component to component,
	// against maxNodes.
	inherited int
	// dropped counts the problems found beyond maxDiagnostics.
	dropped       int
	droppedErrors bool
}

// testHookCheckpoint, when set by a test, runs at every look at the context.
var testHookCheckpoint func()

// tick is called by the long passes once per node or template; every 1024 calls it looks
// whether the load was canceled. It reports that the pass must stop.
func (l *loader) tick() bool {
	if l.stopped || l.overLimit {
		return true
	}
	if l.ticks++; l.ticks&1023 != 0 {
		return false
	}
	return l.canceled()
}

// canceled looks at the context now.
func (l *loader) canceled() bool {
	if testHookCheckpoint != nil {
		testHookCheckpoint()
	}
	if l.ctx != nil && l.ctx.Err() != nil {
		l.stopped = true
	}
	return l.stopped
}

// add records a diagnostic once: the same code and message at the same position (a
// problem inside a shared, $ref'd component) is reported a single time.
func (l *loader) add(d diag.Diagnostic) {
	d.File = l.file
	if d.Severity == "" {
		d.Severity = diag.Error
	}
	if l.full() {
		l.dropped++
		l.droppedErrors = l.droppedErrors || d.Severity == diag.Error
		return
	}
	if d.Code == diag.CodeMissingField && l.broken[[2]int{d.Line, d.Column}] {
		return
	}
	k := fmt.Sprintf("%d:%d:%s:%s", d.Line, d.Column, d.Code, d.Message)
	if l.seen[k] {
		return
	}
	l.seen[k] = true
	l.diags = append(l.diags, d)
}

// brokenAt notes that the $ref of mapping n could not be resolved (which is reported): the
// fields it would have given are missing, and saying so would only hide the real problem.
func (l *loader) brokenAt(n *yaml.Node) {
	if l.broken == nil {
		l.broken = map[[2]int]bool{}
	}
	l.broken[[2]int{n.Line, n.Column}] = true
}

// at reports a problem at the position of node n.
func (l *loader) at(n *yaml.Node, path, code, msg, hint string) {
	d := diag.Diagnostic{Code: code, Message: msg, Hint: hint, Path: path}
	if n != nil {
		d.Line, d.Column = n.Line, n.Column
	}
	l.add(d)
}

// full reports that maxDiagnostics problems are kept: the passes may skip the work of
// describing more.
func (l *loader) full() bool { return len(l.diags) >= maxDiagnostics }

func (l *loader) finish() diag.List {
	if l.dropped > 0 {
		sev := diag.Warning
		if l.droppedErrors {
			sev = diag.Error
		}
		l.diags = append(l.diags, diag.Diagnostic{File: l.file, Severity: sev, Code: diag.CodeYAML,
			Message: fmt.Sprintf("more than %d problems: only the first %d are reported %s", maxDiagnostics, maxDiagnostics, limitNote)})
		l.dropped = 0
	}
	l.diags.Sort()
	if len(l.diags) == 0 {
		return nil
	}
	return l.diags
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// decode parses the YAML text into a node tree and returns the root mapping. The text is
// checked against maxEntries first, the tree against maxNodes and maxDepth with every
// alias expanded.
func (l *loader) decode() *yaml.Node {
	if !l.checkEntries() {
		return nil
	}
	doc, err := l.unmarshal()
	if l.stopped {
		return nil
	}
	if line, msg, ok := yamlguard.SyntaxError(l.src, err); ok {
		l.add(diag.Diagnostic{Code: diag.CodeYAML, Line: line, Column: 1, Message: "invalid YAML: " + msg})
		return nil
	}
	if err != nil {
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
	if !l.checkAliases(doc) {
		return nil
	}
	l.checkDuplicates(doc)
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		l.at(root, "", diag.CodeType, fmt.Sprintf("the definition must be a mapping, not %s", kindName(root)), "")
		return nil
	}
	return root
}

// checkDuplicates warns about every key written twice in one mapping and keeps the last
// value, as the Airbyte CDK does (PyYAML builds a dict): a real connector has one in a
// stream schema, so it is not an error.
func (l *loader) checkDuplicates(doc *yaml.Node) {
	dups := yamlguard.DuplicateKeys(doc)
	for _, d := range dups {
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeDuplicateKey, Line: d.Again.Line, Column: d.Again.Column,
			Message: fmt.Sprintf("duplicate key `%s` (first at line %d:%d): the last one is used, as in the Airbyte CDK", d.Again.Value, d.First.Line, d.First.Column),
			Hint:    "remove one of them"})
	}
	yamlguard.KeepLast(doc, dups)
}

// unmarshal parses the text into a node tree. A big text (up to maxEntries entries takes
// the parser most of a second) is parsed on a goroutine of its own, so that a canceled
// load returns at once; the parse left behind ends by itself.
func (l *loader) unmarshal() (*yaml.Node, error) {
	doc := &yaml.Node{}
	if len(l.src) < 1<<20 || l.ctx == nil {
		return doc, yaml.Unmarshal(l.src, doc)
	}
	done := make(chan error, 1)
	go func() { done <- yaml.Unmarshal(l.src, doc) }()
	select {
	case err := <-done:
		return doc, err
	case <-l.ctx.Done():
		l.stopped = true
		return nil, l.ctx.Err()
	}
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
	if l.inTemplate {
		vars = append(append([]string{}, vars...), "components_values")
	}
	p := &pendingTemplate{node: n, src: n.Value, vars: vars, dst: dst, path: path, field: field}
	l.templates = append(l.templates, p)
	return p
}

// compileTemplates compiles every template found by the build pass, reporting errors at
// the file position of the offending character.
func (l *loader) compileTemplates() {
	tags, distinct := 0, map[string]bool{}
	for _, p := range l.templates {
		if l.tick() {
			return
		}
		if !distinct[p.src] {
			distinct[p.src] = true
			if tags += strings.Count(p.src, "{{") + strings.Count(p.src, "{%"); tags > maxTemplateTags {
				l.at(p.node, p.path, diag.CodeTemplate, fmt.Sprintf("the definition has more than %d template tags %s", maxTemplateTags, limitNote), "")
				l.overLimit = true
				return
			}
		}
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
	// Ordered is connection_specification as written, for what shows its properties in
	// the definition's order (connector init-values): objects as *record.Object, numbers
	// as json.Number; nil when absent.
	Ordered any
}

// LoadSpec reads only the `spec` section of a definition (with `$ref` resolved), for commands
// that need nothing else — `connector oauth` gets tokens for a connector whose streams may
// use components this tool does not run yet. Problems of the spec itself are reported;
// the rest of the definition is not checked.
func LoadSpec(path string) (*Spec, diag.List) {
	src, diags := ReadFile(path)
	if diags != nil {
		return nil, diags
	}
	l := &loader{file: path, src: src, seen: map[string]bool{}}
	root := l.decode()
	if root == nil {
		return nil, l.finish()
	}
	l.refs = newResolver(l, root)
	root = l.refs.resolveRoot()
	if l.overLimit {
		return nil, l.finish()
	}
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
				d := &Definition{}
				spec.ConnectionSpec, spec.AdvancedAuth = l.spec(root.Content[i+1], d)
				spec.Ordered = d.SpecJSON.ConnectionSpec
			}
		}
	}
	var out diag.List
	for _, d := range l.finish() {
		if d.Code != diag.CodeUnsupported && d.Code != diag.CodePython {
			out = append(out, d)
		}
	}
	if out.HasErrors() {
		return nil, out
	}
	return spec, out
}

// cdkVarCheck is a template and the variables the Airbyte CDK gives it.
type cdkVarCheck struct {
	p    *pendingTemplate
	vars []string
}

// cdkOnly notes that p (nil: no template) should read only vars to run on the Airbyte CDK.
func (l *loader) cdkOnly(p *pendingTemplate, vars []string) {
	if p != nil {
		l.cdkVars = append(l.cdkVars, cdkVarCheck{p: p, vars: vars})
	}
}

// checkCDKVariables warns about a template that reads a variable connector gives it but
// the Airbyte CDK 7 does not: the definition runs here and fails on the platform ("Jinja
// macro has undeclared variables").
func (l *loader) checkCDKVariables() {
	for _, c := range l.cdkVars {
		t := *c.p.dst
		if !c.p.ok || t == nil {
			continue
		}
		var extra []string
		for _, v := range cursorVars {
			if !slices.Contains(c.vars, v) && t.Reads(v) {
				extra = append(extra, "`"+v+"`")
			}
		}
		if len(extra) == 0 {
			continue
		}
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeTemplate, Line: c.p.node.Line, Column: c.p.node.Column, Path: c.p.path,
			Message: fmt.Sprintf("`%s` reads %s, which the Airbyte CDK 7 does not give it (it fails there with \"Jinja macro has undeclared variables\"); connector does", c.p.field, strings.Join(extra, ", ")),
			Hint:    "to run on the Airbyte platform too, use only " + strings.Join(c.vars, ", ") + " (e.g. `response` or `last_record` instead of `last_records`)"})
	}
}
