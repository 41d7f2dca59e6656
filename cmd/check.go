package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/session"
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
	targets := checkTargets(p.Def)
	if cd := p.Def.CheckDynamic; cd != nil {
		streams, err := checkDynamic(opts.io, cd, p.Def.Streams)
		if streams == nil {
			return err
		}
		targets = targetsOf(streams)
	}
	ro := p.Options()
	ro.MaxSlices, ro.MaxPages = 1, 1 // the first page of the first slice
	green := opts.io.paint(false, color.FgGreen, color.Bold)
	red := opts.io.paint(false, color.FgRed, color.Bold)
	enc := json.NewEncoder(opts.io.Out)
	enc.SetEscapeHTML(false)
	failed := 0
	for _, t := range targets {
		line := checkLine{Stream: t.name, OK: true}
		if s := t.stream; s == nil {
			line.OK, line.Error = false, t.missing
		} else {
			res := run.Stream(ctx, ro, s)
			if errors.Is(res.Err, context.Canceled) {
				return res.Err
			}
			line.OK, line.Records = res.Err == nil, res.FirstPageRecords
			if res.Err != nil {
				line.Error = opts.io.redactor.String(failureReason(res.Err, s))
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
	return nil
}

// failureReason drops the "stream X, page 1:" prefix: check prints the stream itself.
func failureReason(err error, s *manifest.Stream) string {
	var se *run.StreamError
	if errors.As(err, &se) {
		return se.Err.Error()
	}
	return err.Error()
}

// checkTarget is a stream the check names, and the stream of that name (nil when the
// definition, as the testing values made it, has none: missing says why).
type checkTarget struct {
	name    string
	stream  *manifest.Stream
	missing string
}

// checkTargets are the streams the definition's check names: check.stream_names, or every
// stream (for a CheckDynamicStream, every stream, of which the first stream_count count).
// A name validate accepted may be missing once the testing values are known: the stream of
// a ConditionalStreams whose condition is false, or a dynamic stream not made. The CDK's
// CheckStream fails on it ("is not part of the catalog").
func checkTargets(def *manifest.Definition) []checkTarget {
	if def.CheckDynamic != nil || len(def.CheckStreams) == 0 {
		return targetsOf(def.Streams)
	}
	var out []checkTarget
	for _, n := range def.CheckStreams {
		t := checkTarget{name: n, stream: def.Stream(n)}
		if t.stream == nil {
			t.missing = "not among the streams: no stream of that name is defined or made by dynamic_streams"
			if p, ok := def.LeftOut[n]; ok {
				t.missing = "not among the streams: " + session.LeftOutReason(p)
			}
		}
		out = append(out, t)
	}
	return out
}

func targetsOf(streams []*manifest.Stream) []checkTarget {
	out := make([]checkTarget, len(streams))
	for i, s := range streams {
		out[i] = checkTarget{name: s.Name, stream: s}
	}
	return out
}
