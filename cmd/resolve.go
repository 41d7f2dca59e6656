package cmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"connector/pkg/manifest"
	"connector/pkg/resolve"
	"connector/pkg/session"
)

type resolveOptions struct {
	io    *ioStreams
	env   *Env
	def   string
	flags runFlags
	// full makes the dynamic streams too (full_resolve), at most limit per definition.
	full  bool
	limit int
	// migrate and normalize ask for the passes the Builder asks for with __should_migrate
	// and __should_normalize.
	migrate, normalize bool
	compact            bool
}

// newCmdResolve is `connector resolve DEF`: the manifest as the CDK resolves it, the answer
// of serve's /v1/manifest/resolve (with --full, full_resolve) for a file. It is a command
// of its own rather than a flag of validate because --full needs the testing values and,
// for an HttpComponentsResolver, requests.
func newCmdResolve(io *ioStreams, env *Env, runF func(*resolveOptions) error) *cobra.Command {
	opts := &resolveOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "resolve DEF [--full [--testing-values FILE] [--stream-limit N]] [--migrate] [--normalize] [--compact]",
		Short: "Print a definition resolved as the Connector Builder sees it (the CDK's resolved manifest)",
		Long: `resolve prints the definition as the Airbyte CDK 7.28.2 resolves it, the JSON that serve's
/v1/manifest/resolve answers and the Connector Builder edits: every $ref replaced by a copy
of what it names (in definitions and schemas too), every component given its default type
and its inherited $parameters, each parameter also copied into the component's fields. The
keys come in the order the CDK leaves them. The definition is validated first, as validate
does; its problems are reported the same way.

--full adds what /v1/manifest/full_resolve adds: each stream gets "dynamic_stream_name":
null, and the streams each dynamic_streams entry makes from the testing values follow, at
most --stream-limit of each (an HttpComponentsResolver requests its API, as read does).
Secrets of the testing values are masked in them.

--migrate and --normalize apply the passes the Builder asks for by sending __should_migrate
and __should_normalize with the manifest: url_base and path become url, request_body_json
and request_body_data become request_body; the values repeated in authenticator, url_base,
paginator and the other linkable fields move to definitions.linked, referenced from where
they were.

The JSON goes to stdout, indented (--compact: on one line, as serve writes it).`,
		Example: `  connector resolve definitions/offset-pagination.yaml
  connector resolve definitions/dynamic-streams.yaml --full --testing-values testing-values.example.yaml
  connector resolve def.yaml --normalize | jq '.definitions.linked'`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if !opts.full {
				for _, name := range []string{"testing-values", "stream-limit", "set", "set-json"} {
					if c.Flags().Changed(name) {
						return usagef("--%s needs --full: only the dynamic streams read the testing values", name)
					}
				}
			}
			if runF != nil {
				return runF(opts)
			}
			return resolveRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	c.Flags().BoolVar(&opts.full, "full", false, "make the dynamic streams from the testing values too, as full_resolve does")
	intFlag(c.Flags(), &opts.limit, "stream-limit", resolve.DefaultStreamLimit, "with --full, keep at most `N` streams of each dynamic stream definition",
		1, "must be between 1 and 100", resolve.DefaultStreamLimit, "must be between 1 and 100")
	c.Flags().BoolVar(&opts.migrate, "migrate", false, "migrate the deprecated requester fields, as __should_migrate asks")
	c.Flags().BoolVar(&opts.normalize, "normalize", false, "move repeated values to definitions.linked, as __should_normalize asks")
	c.Flags().BoolVar(&opts.compact, "compact", false, "write the JSON on one line")
	return c
}

func resolveRun(ctx context.Context, opts *resolveOptions) error {
	s := opts.io
	if _, err := os.Stat(opts.def); err != nil {
		return usagef("cannot read definition: %v", pathError(err))
	}
	src, diags := manifest.ReadFile(opts.def)
	if diags.HasErrors() {
		return sessionError(s, &session.DefinitionError{Name: opts.def, Diags: diags})
	}
	var made []resolve.Made
	if opts.full {
		p, err := prepare(ctx, s, opts.env, opts.def, &opts.flags)
		if err != nil {
			return err
		}
		defer p.Close()
		if made, err = p.DynamicEdits(ctx, nil); err != nil {
			return sessionError(s, err)
		}
	} else {
		_, warnings, err := session.LoadWarn(ctx, opts.def, src)
		if err != nil {
			return sessionError(s, err)
		}
		warnSummary(s, opts.def, warnings)
	}
	m, err := resolve.Parse(src)
	if err != nil {
		return &invalidError{fmt.Errorf("%s: %w", opts.def, err)}
	}
	if opts.migrate {
		m.Set("__should_migrate", true)
	}
	if opts.normalize {
		m.Set("__should_normalize", true)
	}
	if m, err = resolve.Manifest(m, resolve.Options{Now: opts.env.clock()}); err != nil {
		return &invalidError{fmt.Errorf("%s: %w", opts.def, err)}
	}
	if opts.full {
		if m, err = resolve.Full(m, made, opts.limit, s.redactor.String); err != nil {
			return &invalidError{fmt.Errorf("%s: %w", opts.def, err)}
		}
	}
	indent := "  "
	if opts.compact {
		indent = ""
	}
	b, err := resolve.Encode(m, indent)
	if err != nil {
		return &invalidError{fmt.Errorf("%s: %w", opts.def, err)}
	}
	_, err = s.Out.Write(append(b, '\n'))
	return err
}
