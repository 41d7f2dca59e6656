package dev

import (
	"fmt"
	"io"
	"strings"

	"connector/pkg/diag"
	"connector/pkg/schemacheck"
)

// Printer writes, for a terminal, what each round of a workspace found (--no-browser): the
// problems of the files, then one line per stream as its read ends — records, pages,
// warnings, and how the inferred schema differs from the declared one — and the first few
// warnings beneath.
type Printer struct {
	Out io.Writer
	// Shown is how many warnings of a stream are printed under its line (0: 3).
	Shown int

	round   int
	printed map[string]bool // stream → its result of this round is printed
}

// View prints what v adds to what was printed: nothing when it is a view of the round
// already printed and no new result came.
func (p *Printer) View(v *View) {
	if v.Round != p.round {
		if p.round != 0 {
			fmt.Fprintln(p.Out) // a blank line between rounds
		}
		p.round, p.printed = v.Round, map[string]bool{}
		p.problems(v)
	}
	if v.Broken {
		return
	}
	for _, r := range v.Results {
		if r.Round != v.Round || p.printed[r.Stream] {
			continue
		}
		p.printed[r.Stream] = true
		p.result(r)
	}
}

func (p *Printer) problems(v *View) {
	errors, warnings := 0, 0
	for _, pr := range v.Problems {
		if pr.Severity == diag.Error {
			errors++
			fmt.Fprintln(p.Out, pr.String())
		} else {
			warnings++
		}
	}
	switch {
	case v.Broken:
		fmt.Fprintf(p.Out, "%s: fix and save to read again\n", plural(errors, "error"))
	case warnings > 0:
		fmt.Fprintf(p.Out, "%s: %s (connector validate %s lists them)\n", v.Definition, plural(warnings, "warning"), v.Definition)
	}
}

func (p *Printer) result(r *Result) {
	if r.Error != "" {
		fmt.Fprintf(p.Out, "%s  FAILED: %s\n", r.Stream, r.Error)
		return
	}
	if len(r.Errors) > 0 {
		fmt.Fprintf(p.Out, "%s  FAILED after %s and %s: %s\n", r.Stream, plural(r.Records, "record"), plural(r.Pages, "page"), r.Errors[0])
		return
	}
	line := fmt.Sprintf("%s  %s, %s, %s", r.Stream, plural(r.Records, "record"), plural(r.Pages, "page"), warningsText(r.Check))
	if d := schemaDiffText(r); d != "" {
		line += "; schema: " + d
	}
	fmt.Fprintln(p.Out, line)
	shown := p.Shown
	if shown <= 0 {
		shown = 3
	}
	for i, w := range r.Check.Warnings {
		if i == shown {
			fmt.Fprintf(p.Out, "  … %d more\n", r.Check.Total()-shown)
			break
		}
		fmt.Fprintf(p.Out, "  %s\n", w)
	}
}

// warningsText is "no warnings", or their count with the count of each kind.
func warningsText(r schemacheck.Report) string {
	if r.Total() == 0 {
		return "no warnings"
	}
	var kinds []string
	for _, k := range schemacheck.Kinds {
		if n := r.Counts[k]; n > 0 {
			kinds = append(kinds, k.Count(n))
		}
	}
	return fmt.Sprintf("%s (%s)", plural(r.Total(), "warning"), strings.Join(kinds, ", "))
}

// schemaDiffText says how the inferred schema differs from the declared one: "same as
// declared", "none declared (12 fields inferred)", or the differences, the first of each
// kind named.
func schemaDiffText(r *Result) string {
	if len(r.Fields) == 0 {
		return ""
	}
	if r.Declared == nil {
		return fmt.Sprintf("none declared (%s inferred)", plural(len(r.Fields), "field"))
	}
	var parts []string
	for _, kind := range []schemacheck.Diff{schemacheck.Undeclared, schemacheck.Type, schemacheck.Unseen} {
		var names []string
		for _, f := range r.Fields {
			if f.Diff != kind {
				continue
			}
			name := f.Path
			if kind == schemacheck.Type {
				name = fmt.Sprintf("%s is %s, declared %s", f.Path, f.Inferred, f.Declared)
			}
			names = append(names, name)
		}
		if len(names) == 0 {
			continue
		}
		text := fmt.Sprintf("%d %s (%s", len(names), kind, names[0])
		if len(names) > 1 {
			text += ", …"
		}
		parts = append(parts, text+")")
	}
	if len(parts) == 0 {
		return "as declared"
	}
	return strings.Join(parts, ", ")
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
