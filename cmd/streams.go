package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"connector/pkg/manifest"
	"connector/pkg/streaminfo"
	"connector/pkg/values"
)

type streamsOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
	// width is the most columns a line of the text table takes (0: no limit; -1: the
	// terminal's width when stdout is one).
	width int
}

// newCmdStreams is `connector streams DEF`: the streams of a definition, the dynamic ones
// included, each with its pagination, partitioning, incremental cursor and primary key. It
// is a command of its own, not a flag of validate, because making dynamic streams needs
// the testing values and, for an HttpComponentsResolver, requests, while validate reads
// the definition alone and never reaches the network.
func newCmdStreams(io *ioStreams, env *Env, runF func(*streamsOptions) error) *cobra.Command {
	opts := &streamsOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "streams DEF [--testing-values FILE] [--format text|json]",
		Short: "List the streams of a definition with their pagination, partitions, cursor and primary key",
		Long: `streams prints every stream a read would see, one line each on stdout, in read order: the
streams of the definition, then the streams each dynamic_streams entry makes from the testing
values (a ConfigComponentsResolver reads them; an HttpComponentsResolver requests its API, as
read does). Each line gives the stream's name, whether it is static or dynamic, its
pagination (strategy, page size, cursor), its partition router, its incremental cursor
(type, cursor field, step) and its primary key; "-" where it has none. Values that come from
the testing values are shown rendered when they are given, else as written.

Listing the static streams needs no testing values and makes no request. Without
--testing-values, when the specification requires values, a definition with dynamic streams
has its static streams listed alone, and stderr says which dynamic streams were left out.

On a terminal the table fits its width: the widest descriptions are cut with "…" (--width 0
prints them whole; a pipe gets them whole unless --width says otherwise).

--format json prints one JSON object per stream instead: {"name", "dynamic", "pagination",
"partitioning", "incremental", "primary_key"}, each part {"type", "text"} (and
"cursor_field" for the cursor) or null.`,
		Example: `  connector streams definitions/incremental-substream.yaml
  connector streams definitions/dynamic-streams.yaml --testing-values testing-values.example.yaml
  connector streams def.yaml --format json | jq -r 'select(.incremental != null) | .name'`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return streamsRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json"}, "output format: text (aligned columns) or json (one object per stream)")
	intFlag(c.Flags(), &opts.width, "width", -1, "fit the text table in `N` columns, cutting the widest descriptions with … (default: the terminal's width; 0: no limit)",
		0, "must be 0 (no limit) or more", 0, "")
	return c
}

func streamsRun(ctx context.Context, opts *streamsOptions) error {
	s := opts.io
	if _, err := os.Stat(opts.def); err != nil {
		return usagef("cannot read definition: %v", pathError(err))
	}
	def, diags, err := manifest.LoadContext(ctx, opts.def)
	if err != nil {
		return err
	}
	if diags.HasErrors() {
		diags.Sort()
		printDiagnostics(s, s.Err, diags)
		s.summary(opts.def, diags)
		return &silentError{code: exitInvalid}
	}
	if len(def.Dynamic) == 0 && len(def.Conditional) == 0 {
		// The static streams need no authenticator: the testing values only fill in
		// what the descriptions show.
		vals, _, err := loadTestingValues(s, opts.def, def.ConnectionSpec, opts.flags.testingValues, opts.flags.assign, true)
		var vr *valuesRequired
		switch {
		case errors.As(err, &vr):
			return printStreams(opts, describe(def, defaultsOnly(def), def))
		case err != nil:
			return err
		}
		return printStreams(opts, describe(def, vals.Map, def))
	}
	p, err := prepare(ctx, s, opts.env, opts.def, &opts.flags)
	var vr *valuesRequired
	switch {
	case errors.As(err, &vr):
		why := strings.TrimPrefix(vr.msg, "--testing-values is required: ")
		why, _, _ = strings.Cut(why, ";")
		if len(def.Conditional) > 0 {
			at := make([]string, len(def.Conditional))
			for i, cs := range def.Conditional {
				at[i] = fmt.Sprintf("%d:%d", cs.Pos.Line, cs.Pos.Column)
			}
			fmt.Fprintf(s.Err, "note: the streams of the ConditionalStreams at line %s are not listed: their conditions read the testing values, and %s; pass --testing-values FILE\n",
				strings.Join(at, ", "), why)
		}
		if len(def.Dynamic) > 0 {
			names := make([]string, len(def.Dynamic))
			for i, d := range def.Dynamic {
				names[i] = d.Name
			}
			fmt.Fprintf(s.Err, "note: the streams of dynamic_streams %s are not listed: they are made from the testing values, and %s; pass --testing-values FILE\n",
				strings.Join(names, ", "), why)
		}
		return printStreams(opts, describe(def, defaultsOnly(def), def))
	case err != nil:
		return err
	}
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(s, err)
	}
	return printStreams(opts, describe(p.Def, p.Values.Map, def))
}

// describe describes the streams of def, the definition as the testing values made it from
// loaded: a stream of a ConditionalStreams is conditional, one that is not a stream of
// loaded was made by dynamic_streams (whose names differ from the static streams').
func describe(def *manifest.Definition, config map[string]any, loaded *manifest.Definition) []streaminfo.Info {
	static := map[string]bool{}
	for _, s := range loaded.Streams {
		static[s.Name] = true
	}
	infos := make([]streaminfo.Info, len(def.Streams))
	for i, s := range def.Streams {
		conditional := s.ConditionalAt != manifest.Pos{}
		infos[i] = streaminfo.Of(s, config, !static[s.Name] && !conditional)
		infos[i].Conditional = conditional
	}
	return infos
}

// defaultsOnly is the testing values of a listing without them: the spec's defaults.
func defaultsOnly(def *manifest.Definition) map[string]any {
	vals := values.None()
	vals.ApplyDefaults(def.ConnectionSpec)
	return vals.Map
}

func printStreams(opts *streamsOptions, infos []streaminfo.Info) error {
	red := opts.io.redactor.String
	if opts.format == "json" {
		for _, in := range infos {
			b, err := json.Marshal(in)
			if err != nil {
				return err
			}
			if _, err := fmt.Fprintln(opts.io.Out, red(string(b))); err != nil {
				return err
			}
		}
		return nil
	}
	// A GROUP column after KIND when the definition has stream groups.
	grouped := false
	for _, in := range infos {
		grouped = grouped || in.Group != ""
	}
	rows := [][]string{{"STREAM", "KIND", "PAGINATION", "PARTITIONS", "INCREMENTAL", "PRIMARY KEY"}}
	shrinks := []bool{false, false, true, true, true, true}
	if grouped {
		rows[0] = slices.Insert(rows[0], 2, "GROUP")
		shrinks = slices.Insert(shrinks, 2, false)
	}
	for _, in := range infos {
		kind := "static"
		switch {
		case in.Dynamic:
			kind = "dynamic"
		case in.Conditional:
			kind = "conditional"
		}
		cells := append([]string{in.Name, kind}, in.Line()...)
		if grouped {
			g := in.Group
			if g == "" {
				g = "-"
			}
			cells = slices.Insert(cells, 2, g)
		}
		for i := range cells {
			cells[i] = red(cells[i])
		}
		rows = append(rows, cells)
	}
	width := opts.width
	if width < 0 {
		width = opts.io.outWidth()
	}
	var b strings.Builder
	for _, line := range fitTable(rows, width, shrinks) {
		b.WriteString(line)
		b.WriteByte('\n')
	}
	_, err := io.WriteString(opts.io.Out, b.String())
	return err
}

// fitTable lays rows out in aligned columns two spaces apart, in at most width characters
// a line (0: no limit): while the table is too wide, the widest column that may shrink loses
// a character, down to 12, and a cell wider than its column is cut with "…".
func fitTable(rows [][]string, width int, shrinks []bool) []string {
	const minWidth = 12
	widths := make([]int, len(shrinks))
	for _, r := range rows {
		for i, c := range r {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	total := func() int {
		t := 2 * (len(widths) - 1)
		for _, w := range widths {
			t += w
		}
		return t
	}
	for width > 0 && total() > width {
		widest := -1
		for i, w := range widths {
			if shrinks[i] && w > minWidth && (widest < 0 || w > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			break // as narrow as it goes
		}
		widths[widest]--
	}
	lines := make([]string, len(rows))
	for n, r := range rows {
		var b strings.Builder
		for i, c := range r {
			if utf8.RuneCountInString(c) > widths[i] {
				c = string([]rune(c)[:widths[i]-1]) + "…"
			}
			b.WriteString(c)
			if i < len(r)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)+2))
			}
		}
		lines[n] = b.String()
	}
	return lines
}
