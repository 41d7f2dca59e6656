package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"connector/pkg/atomicfile"
	"connector/pkg/builder"
	"connector/pkg/record"
	"connector/pkg/schemacheck"
)

type inferOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
	outDir string
}

func newCmdInferSchema(io *ioStreams, env *Env, runF func(*inferOptions) error) *cobra.Command {
	opts := &inferOptions{io: io, env: env}
	opts.flags.command = "infer-schema"
	c := &cobra.Command{
		Use:   "infer-schema DEF --testing-values FILE [--stream NAME]... [-o DIR]",
		Short: "Infer each stream's schema from a test read, as the Connector Builder does",
		Long: `infer-schema test-reads each stream (or those named with --stream) with the Connector
Builder's limits (5 slices, 5 pages per slice; --max-slices and --max-pages change them) and
infers its schema from the records exactly as the Airbyte CDK's SchemaInferrer does: numbers
are "number", a field seen null and otherwise is nullable, the primary key and cursor fields
are required and not nullable.

--format yaml (the default) writes each schema as a schema_loader ready to paste into the
stream in the definition; --format json writes one JSON object per stream,
{"stream": NAME, "schema": {...}}. With -o DIR each stream's schema goes to DIR/NAME.yaml
(or .json) instead of stdout, each file replaced atomically.

A stream whose read fails is said on stderr and the others are still inferred; the exit
code is then 1. A stream without records has no schema to infer (said on stderr).`,
		Example: `  connector infer-schema definitions/bearer-auth.yaml --testing-values testing-values.example.yaml
  connector infer-schema def.yaml --testing-values creds.yaml --stream users --format json | jq .schema
  connector infer-schema def.yaml --testing-values creds.yaml -o schemas/`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return inferRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	c.Flags().StringArrayVar(&opts.flags.streams, "stream", nil, "infer only the stream `NAME` (repeatable; default: every stream)")
	intFlag(c.Flags(), &opts.flags.maxPages, "max-pages", 0, "read at most `N` pages per slice (0: the Builder's 5)", 0, "must be 0 (the Builder's limit) or more", 0, "")
	intFlag(c.Flags(), &opts.flags.maxSlices, "max-slices", 0, "read at most `N` slices (0: the Builder's 5)", 0, "must be 0 (the Builder's limit) or more", 0, "")
	opts.flags.addVerbosity(c)
	enumFlag(c.Flags(), &opts.format, "format", []string{"yaml", "json"}, "output format: yaml (a schema_loader to paste) or json (one object per stream)")
	c.Flags().StringVarP(&opts.outDir, "output-dir", "o", "", "write each stream's schema to `DIR`/NAME.yaml (or .json) instead of stdout")
	return c
}

func inferRun(ctx context.Context, opts *inferOptions) (err error) {
	if opts.format == "" {
		opts.format = "yaml"
	}
	if opts.outDir != "" {
		if fi, err := os.Stat(opts.outDir); err != nil || !fi.IsDir() {
			return usagef("-o %s: not a folder (create it first)", opts.outDir)
		}
	}
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	defer func() { err = p.finish(opts.io, err) }()
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(opts.io, err)
	}
	lim := builder.DefaultLimits()
	if opts.flags.maxPages > 0 {
		lim.PagesPerSlice = opts.flags.maxPages
	}
	if opts.flags.maxSlices > 0 {
		lim.Slices = opts.flags.maxSlices
	}
	failed := 0
	for _, st := range p.Streams {
		sr, err := builder.TestRead(ctx, p.Session, st.Name, builder.Options{Limits: lim, NewInferrer: builder.SchemaInference(p.Values.Map)})
		if err != nil {
			if errors.Is(err, context.Canceled) {
				return err
			}
			return sessionError(opts.io, err)
		}
		readFailed := false
		for _, l := range sr.Logs {
			if l.Level == "ERROR" {
				opts.io.printError(fmt.Errorf("%s: %s", st.Name, l.Message))
				readFailed = true
			}
		}
		if readFailed {
			failed++
			continue
		}
		records, pages := 0, 0
		for _, sl := range sr.Slices {
			for _, pg := range sl.Pages {
				pages++
				records += len(pg.Records)
			}
		}
		if len(sr.InferredSchema) == 0 || string(sr.InferredSchema) == "null" {
			fmt.Fprintf(opts.io.Err, "%s: no records in %s, no schema to infer\n", st.Name, plural(pages, "page"))
			continue
		}
		text, err := schemaText(st.Name, sr.InferredSchema, opts.format)
		if err != nil {
			return err
		}
		if !opts.flags.quiet {
			fmt.Fprintf(opts.io.Err, "%s: schema inferred from %s in %s\n", st.Name, plural(records, "record"), plural(pages, "page"))
		}
		if opts.outDir == "" {
			if opts.format == "yaml" && len(p.Streams) > 1 {
				text = "# " + st.Name + "\n" + text
			}
			if _, err := fmt.Fprint(opts.io.Out, text); err != nil {
				return err
			}
			continue
		}
		path := filepath.Join(opts.outDir, st.Name+"."+opts.format)
		if err := writeAtomically(path, text); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	if failed > 0 {
		return &silentError{code: exitFailure}
	}
	return nil
}

// schemaText is a stream's inferred schema as the format asks: a schema_loader in YAML, or
// one JSON line {"stream": …, "schema": …}.
func schemaText(stream string, schema json.RawMessage, format string) (string, error) {
	v, err := record.Decode(schema)
	if err != nil {
		return "", err
	}
	if format == "yaml" {
		return schemacheck.LoaderYAML(v)
	}
	line := &record.Object{}
	line.Set("stream", stream)
	line.Set("schema", v)
	b, err := record.Marshal(line)
	if err != nil {
		return "", err
	}
	return string(b) + "\n", nil
}

// writeAtomically replaces the file at path with text.
func writeAtomically(path, text string) error {
	f, err := atomicfile.Create(path)
	if err != nil {
		return err
	}
	if _, err := f.Write([]byte(text)); err != nil {
		f.Abort()
		return err
	}
	return f.Commit()
}
