package manifest

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/yamlguard"
)

// Limits of a definition. Within them a definition loads in bounded time and
// memory, whatever aliases, references and parameters it uses; beyond them it is refused
// with a diagnostic at the place where the limit ran out. Each is at least ten times what
// the largest definitions of the corpus need (TestLimitsAreFarAboveTheCorpus): 1.2 MiB,
// 56,738 YAML entries and 85,674 nodes as written (appfigures.yaml), 23,586 nodes through
// $ref, 36 levels, 481 template tags.
const (
	// maxFileSize is the size of a definition file.
	maxFileSize = 16 << 20
	// maxEntries bounds the node tree the YAML parser builds before any other check can
	// run: the separators , : - ? [ { of the file (each begins at most two nodes).
	maxEntries = 600_000
	// maxNodes is the size of the definition once every YAML alias and every $ref is
	// replaced by a copy of what it names, and of the $parameters inherited along the way.
	maxNodes = 1_250_000
	// maxDepth is the nesting of the definition, counting each $ref it goes through.
	maxDepth = 512
	// maxTemplateTags is the number of {{ }} and {% %} tags of the distinct templates of a
	// definition, each compiled to a program.
	maxTemplateTags = 10_000
	// maxDiagnostics is the number of problems reported for one definition (the corpus
	// has at most 60): a file with a hundred thousand mistakes gets the first ones.
	maxDiagnostics = 1000
)

// The limits of a definition's YAML, for the packages that read its text again (pkg/resolve).
const (
	MaxEntries = maxEntries
	MaxNodes   = maxNodes
	MaxDepth   = maxDepth
)

// limitNote ends the message of every limit: there is no flag to raise these.
const limitNote = "(a limit of connector)"

// checkEntries counts the YAML entries of the text before it is parsed.
func (l *loader) checkEntries() bool {
	line, col, ok := yamlguard.CheckEntries(l.src, maxEntries)
	if !ok {
		l.add(diag.Diagnostic{Code: diag.CodeYAML, Line: line, Column: col,
			Message: fmt.Sprintf("the definition has more than %d YAML entries %s", maxEntries, limitNote),
			Hint:    "every `,` `:` `-` `?` `[` `{` counts one entry"})
	}
	return ok
}

// checkAliases walks the parsed document with every alias expanded.
func (l *loader) checkAliases(doc *yaml.Node) bool {
	err := yamlguard.Check(doc, maxNodes, maxDepth, l.canceled)
	var p *yamlguard.Problem
	switch {
	case err == nil:
		return true
	case errors.Is(err, yamlguard.ErrCanceled):
		return false
	case !errors.As(err, &p):
		l.add(diag.Diagnostic{Code: diag.CodeYAML, Line: 1, Column: 1, Message: err.Error()})
		return false
	}
	var msg string
	switch p.Kind {
	case yamlguard.RecursiveAlias:
		msg = fmt.Sprintf("the alias *%s is inside the value its anchor names, so it never ends", p.Node.Value)
	case yamlguard.TooManyNodes:
		msg = fmt.Sprintf("the definition expands to more than %d nodes through YAML aliases %s", maxNodes, limitNote)
	default:
		msg = fmt.Sprintf("the definition nests more than %d levels deep %s", maxDepth, limitNote)
	}
	l.at(p.Node, "", diag.CodeYAML, msg, "")
	return false
}

// tooBig reports the $ref (or the node) at which the expanded definition passed maxNodes.
func (l *loader) tooBig(at *yaml.Node, path string) {
	l.at(at, path, diag.CodeRef, fmt.Sprintf("the definition expands to more than %d nodes through $ref and $parameters %s", maxNodes, limitNote), "")
}

// tooDeep reports the $ref (or the node) at which the definition passed maxDepth.
func (l *loader) tooDeep(at *yaml.Node, path string) {
	l.at(at, path, diag.CodeRef, fmt.Sprintf("the definition nests more than %d levels deep, counting each $ref it goes through %s", maxDepth, limitNote), "")
}
