package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/manifest"
)

type validateOptions struct {
	io     *ioStreams
	files  []string
	format string
}

func newCmdValidate(io *ioStreams, runF func(*validateOptions) error) *cobra.Command {
	opts := &validateOptions{io: io}
	c := &cobra.Command{
		Use:   "validate DEF...",
		Short: "Check definitions and report every problem with its position",
		Long: `validate loads each definition, resolves $ref and $parameters, compiles every template and
checks every component, then reports all problems at once as FILE:LINE:COL: error: message
(with a hint where one helps) followed by a one-line summary. It needs no testing values and
makes no request.

Text diagnostics go to stderr. With --format json, one JSON object per definition goes to stdout:
{"file", "valid", "diagnostics": [{"severity", "code", "message", "hint", "line", "column",
"path", "component"}]}.

Exit code 0 when every definition is valid, 3 when one is not, 2 when a file cannot be read.`,
		Example: `  connector validate definitions/*.yaml
  connector validate def.yaml --format json | jq '.diagnostics[].message'`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("validate needs at least one definition file\nRun 'connector validate --help' for usage.")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.files = args
			if runF != nil {
				return runF(opts)
			}
			return validateRun(c.Context(), opts)
		},
	}
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json"}, "output format: text (diagnostics on stderr) or json (reports on stdout)")
	return c
}

type validateReport struct {
	File        string            `json:"file"`
	Valid       bool              `json:"valid"`
	Diagnostics []diag.Diagnostic `json:"diagnostics"`
}

func validateRun(ctx context.Context, opts *validateOptions) error {
	invalid, unreadable := 0, 0
	enc := json.NewEncoder(opts.io.Out)
	enc.SetEscapeHTML(false)
	for _, file := range opts.files {
		if _, err := os.Stat(file); err != nil {
			unreadable++
			opts.io.printError(fmt.Errorf("cannot read definition: %v", pathError(err)))
			continue
		}
		_, diags, err := manifest.LoadContext(ctx, file)
		if err != nil {
			return err
		}
		diags.Sort()
		valid := !diags.HasErrors()
		if !valid {
			invalid++
		}
		if opts.format == "json" {
			if diags == nil {
				diags = diag.List{}
			}
			if err := enc.Encode(validateReport{File: file, Valid: valid, Diagnostics: diags}); err != nil {
				return err
			}
			continue
		}
		printDiagnostics(opts.io, opts.io.Err, diags)
		opts.io.summary(file, diags)
	}
	switch {
	case unreadable > 0:
		return &silentError{code: exitUsage}
	case invalid > 0:
		return &silentError{code: exitInvalid}
	}
	return nil
}

// printDiagnostics writes diagnostics the way compilers do, hints indented below.
func printDiagnostics(s *ioStreams, w io.Writer, diags diag.List) {
	bold := s.paint(true, color.Bold)
	red := s.paint(true, color.FgRed, color.Bold)
	yellow := s.paint(true, color.FgYellow, color.Bold)
	cyan := s.paint(true, color.FgCyan)
	for _, d := range diags {
		pos := d.File
		if d.Line > 0 {
			pos = fmt.Sprintf("%s:%d:%d", d.File, d.Line, d.Column)
		}
		sev := red(string(d.Severity) + ":")
		if d.Severity == diag.Warning {
			sev = yellow(string(d.Severity) + ":")
		}
		fmt.Fprintf(w, "%s %s %s\n", bold(pos+":"), sev, d.Message)
		if d.Hint != "" {
			fmt.Fprintf(w, "  %s %s\n", cyan("hint:"), d.Hint)
		}
	}
}

func (s *ioStreams) summary(file string, diags diag.List) {
	errors, warnings := 0, 0
	for _, d := range diags {
		if d.Severity == diag.Error {
			errors++
		} else {
			warnings++
		}
	}
	green := s.paint(true, color.FgGreen)
	switch {
	case errors == 0 && warnings == 0:
		fmt.Fprintf(s.Err, "%s: %s\n", file, green("valid"))
	case errors == 0:
		fmt.Fprintf(s.Err, "%s: valid, %s\n", file, plural(warnings, "warning"))
	default:
		fmt.Fprintf(s.Err, "%s: invalid, %s", file, plural(errors, "error"))
		if warnings > 0 {
			fmt.Fprintf(s.Err, ", %s", plural(warnings, "warning"))
		}
		fmt.Fprintln(s.Err)
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("1 %s", word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}
