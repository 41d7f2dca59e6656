// Package diag describes problems found in input files: each one carries the file, the line and
// the column where it was written, a stable code for scripts, and an optional hint for people.
// A List of them is also an error, so a loader can report every problem at once. Duration
// words a duration for the messages a person reads (every package's messages use it).
package diag

import (
	"fmt"
	"sort"
	"strings"
)

// Severity says whether a diagnostic stops the definition from being used.
type Severity string

// The severities a Diagnostic can have.
const (
	Error   Severity = "error"
	Warning Severity = "warning"
)

// Codes of the diagnostics, as printed by `validate --format json`.
const (
	CodeYAML         = "yaml"
	CodeRef          = "ref"
	CodeUnknownField = "unknown-field"
	CodeDuplicateKey = "duplicate-key"
	CodeMissingField = "missing-field"
	CodeType         = "type"
	CodeUnsupported  = "unsupported-component"
	// CodePython marks a component that runs Python code (a Custom* type, a class_name):
	// a refusal by design, where unsupported-component is a capability still to build.
	CodePython              = "python-component"
	CodeTemplate            = "template"
	CodeOptionConflict      = "option-conflict"
	CodeCredentialLiteral   = "credential-literal"
	CodeMixedAuthenticators = "mixed-authenticators"
	CodeGrantType           = "grant-type"
	CodeTestingValues       = "testing-values"
)

// Diagnostic is one problem at one position of one file.
type Diagnostic struct {
	File      string   `json:"-"`
	Severity  Severity `json:"severity"`
	Code      string   `json:"code"`
	Message   string   `json:"message"`
	Hint      string   `json:"hint,omitempty"`
	Line      int      `json:"line"`
	Column    int      `json:"column"`
	Path      string   `json:"path,omitempty"`
	Component string   `json:"component,omitempty"`
}

// String renders the diagnostic the way compilers do: FILE:LINE:COL: error: message.
func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.File)
	if d.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", d.Line, d.Column)
	}
	fmt.Fprintf(&b, ": %s: %s", d.Severity, d.Message)
	return b.String()
}

// List is every problem found in one pass. It is an error when it holds at least one Error.
type List []Diagnostic

// Add appends a diagnostic of severity Error.
func (l *List) Add(d Diagnostic) {
	if d.Severity == "" {
		d.Severity = Error
	}
	*l = append(*l, d)
}

// HasErrors reports whether at least one diagnostic is an Error.
func (l List) HasErrors() bool {
	for _, d := range l {
		if d.Severity == Error {
			return true
		}
	}
	return false
}

// Err returns the list as an error when it holds an Error, else nil.
func (l List) Err() error {
	if l.HasErrors() {
		return l
	}
	return nil
}

// Sort orders the list by file, line and column, keeping the order of equal positions.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
}

// Error joins every diagnostic on its own line, hints indented below.
func (l List) Error() string {
	var b strings.Builder
	for i, d := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(d.String())
		if d.Hint != "" {
			b.WriteString("\n  hint: ")
			b.WriteString(d.Hint)
		}
	}
	return b.String()
}
