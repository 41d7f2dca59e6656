package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/values"
)

type checkOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
}

func newCmdCheck(io *ioStreams, env *Env, runF func(*checkOptions) error) *cobra.Command {
	opts := &checkOptions{io: io, env: env}
	opts.flags.command = "check"
	c := &cobra.Command{
		Use:   "check DEF --testing-values FILE",
		Short: "Check that the testing values work: authenticate and fetch the first page of each stream",
		Long: `check validates the definition, fills absent testing values with the defaults of
spec.connection_specification (listed on stderr as "defaults applied: page_size=100", secrets
as ****), checks the testing values against it (missing required keys, wrong types),
authenticates (fetching a token where the method needs one) and requests the first page of
each stream in check.stream_names (every stream when absent). --testing-values may be left out
when the specification requires nothing.

It prints one line per stream on stdout, ok with the number of records on the first page or
FAILED with the reason, and exits 0 only when every stream passed.

` + recordingHelp,
		Example: `  connector check definitions/oauth-refresh-token.yaml --testing-values testing-values.example.yaml
  connector check def.yaml --testing-values creds.yaml --format json
  connector check def.yaml --testing-values creds.yaml --record check.har && connector check def.yaml --replay check.har`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return checkRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	opts.flags.addVerbosity(c)
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json"}, "output format: text or json (one object per stream)")
	opts.flags.rec.add(c)
	opts.flags.addSchemaCheck(c)
	return c
}

type checkLine struct {
	Stream  string `json:"stream"`
	OK      bool   `json:"ok"`
	Records int    `json:"records"`
	Error   string `json:"error,omitempty"`
}

func checkRun(ctx context.Context, opts *checkOptions) (err error) {
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	defer func() { err = p.finish(opts.io, err) }()
	if len(p.defaults) > 0 && !opts.flags.quiet {
		fmt.Fprintf(opts.io.Err, "defaults applied: %s\n", values.FormatDefaults(p.defaults))
	}
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(opts.io, err)
	}
	plan := p.CheckPlan()
	switch {
	case plan.NoStreams:
		fmt.Fprintln(opts.io.Out, "FAILED  no streams to connect to: the dynamic streams resolved to none")
		return &silentError{code: exitFailure}
	case plan.Skipped > 0:
		fmt.Fprintf(opts.io.Err, "check: use_check_availability is false: %s resolved, none requested\n", plural(plan.Skipped, "stream"))
		return nil
	}
	green := opts.io.paint(false, color.FgGreen, color.Bold)
	red := opts.io.paint(false, color.FgRed, color.Bold)
	enc := json.NewEncoder(opts.io.Out)
	enc.SetEscapeHTML(false)
	failed, schemaWarnings := 0, 0
	for _, t := range plan.Targets {
		line := checkLine{Stream: t.Name, OK: false, Error: t.Missing}
		if t.Stream != nil {
			res := p.CheckStream(ctx, t.Stream, opts.flags.checkSchema)
			if errors.Is(res.Err, context.Canceled) {
				return res.Err
			}
			line.OK, line.Records = res.Err == nil, res.Records
			line.Error = opts.io.redactor.String(res.Reason)
			if res.Schema != nil {
				schemaWarnings += res.Schema.Total()
				printSchemaCheck(opts.io, opts.flags.quiet, t.Name, *res.Schema, res.SchemaErr)
			}
		}
		if !line.OK {
			failed++
		}
		if opts.format == "json" {
			if err := enc.Encode(line); err != nil {
				return err
			}
			continue
		}
		if line.OK {
			fmt.Fprintf(opts.io.Out, "%s  %s  (%s on the first page)\n", green("ok"), line.Stream, plural(line.Records, "record"))
		} else {
			fmt.Fprintf(opts.io.Out, "%s  %s  %s\n", red("FAILED"), line.Stream, line.Error)
		}
	}
	if failed > 0 {
		return &silentError{code: exitFailure}
	}
	if opts.flags.strict && schemaWarnings > 0 {
		opts.io.printError(fmt.Errorf("--strict: the schema check found %s", plural(schemaWarnings, "warning")))
		return &silentError{code: exitFailure}
	}
	return nil
}
