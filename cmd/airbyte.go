package cmd

import (
	"connector/pkg/protocol"
	"context"
	"errors"
	"os"

	"github.com/spf13/cobra"
)

type airbyteOptions struct {
	io      *ioStreams
	env     *Env
	command string // spec, check, discover or read
	// config, manifestPath, catalog and state are the CDK's --config, --manifest-path,
	// --catalog and --state.
	config, manifestPath, catalog, state string
}

// newCmdAirbyte is `connector airbyte`: the Airbyte protocol entry point, taking the
// arguments of the CDK's source-declarative-manifest so the binary can replace that image.
func newCmdAirbyte(io *ioStreams, env *Env, runF func(*airbyteOptions) error) *cobra.Command {
	c := &cobra.Command{
		Use:   "airbyte spec|check|discover|read [--manifest-path DEF] --config FILE",
		Short: "Speak the Airbyte protocol, as the CDK's source-declarative-manifest does",
		Long: `airbyte takes the arguments of the Airbyte CDK's source-declarative-manifest and writes
only Airbyte protocol messages on stdout, one JSON object per line. The definition is
--manifest-path, or else the config's __injected_declarative_manifest key, as the Airbyte
platform passes it.

  spec       the definition's spec as a SPEC message (--config is optional)
  check      one CONNECTION_STATUS: SUCCEEDED, or FAILED with the (redacted) reason, after the
             definition's check (CheckStream, CheckDynamicStream)
  discover   a CATALOG with every stream, dynamic ones resolved
  read       the catalog's streams (--catalog, a ConfiguredAirbyteCatalog), in its order, as
             'connector read --format airbyte' writes them: RECORD, STATE at checkpoints, TRACE
             stream statuses and errors, CONTROL. A catalog stream the definition lacks gets an
             INCOMPLETE status. --state is Airbyte's list of STATE messages; it is only read
             (the platform keeps the state from the STATE messages). Exit 1 when a stream failed.

An invalid config is reported as the CDK reports it: check answers FAILED ("Config validation
error: ...") and exits 0; discover and read write a TRACE ERROR (failure_type config_error) and
exit 1.`,
		Example: `  connector airbyte spec --manifest-path def.yaml
  connector airbyte check --manifest-path def.yaml --config config.json
  connector airbyte discover --config config-with-injected-manifest.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json --state state.json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown airbyte command %q: use spec, check, discover or read\nRun '%s --help' for usage.", args[0], c.CommandPath())
			}
			return usagef("airbyte needs a command: spec, check, discover or read\nRun '%s --help' for usage.", c.CommandPath())
		},
		RunE: func(*cobra.Command, []string) error { return nil },
	}
	for _, name := range []string{"spec", "check", "discover", "read"} {
		opts := &airbyteOptions{io: io, env: env, command: name}
		use := name + " [--manifest-path DEF] --config FILE"
		if name == "read" {
			use += " --catalog FILE [--state FILE]"
		}
		sub := &cobra.Command{
			Use:     use,
			Short:   "The Airbyte protocol's " + name,
			Example: airbyteExamples[name],
			Args:    cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				if opts.command != "spec" && opts.config == "" {
					return usagef("airbyte %s needs --config FILE", opts.command)
				}
				if opts.command == "read" && opts.catalog == "" {
					return usagef("airbyte read needs --catalog FILE")
				}
				if runF != nil {
					return runF(opts)
				}
				return airbyteRun(c.Context(), opts)
			},
		}
		sub.Flags().StringVar(&opts.config, "config", "", "the config `file` (JSON): the connector's configuration, and the definition under __injected_declarative_manifest when --manifest-path is absent")
		sub.Flags().StringVar(&opts.manifestPath, "manifest-path", "", "the definition `file` (YAML); without it the config's __injected_declarative_manifest is the definition")
		if name == "read" {
			sub.Flags().StringVar(&opts.catalog, "catalog", "", "the configured catalog `file` (JSON): the streams to read, in order")
			sub.Flags().StringVar(&opts.state, "state", "", "the state `file` (JSON): Airbyte's list of STATE messages; read, never written")
		}
		c.AddCommand(sub)
	}
	c.AddCommand(newCmdAirbyteCatalog(io, env, nil))
	return c
}

// airbyteExamples are the examples of each protocol command's help.
var airbyteExamples = map[string]string{
	"spec": `  connector airbyte spec --manifest-path def.yaml
  connector airbyte spec          # without a definition: the spec of a config that carries one`,
	"check": `  connector airbyte check --manifest-path def.yaml --config config.json
  connector airbyte check --config config-with-injected-manifest.json | jq .connectionStatus`,
	"discover": `  connector airbyte discover --manifest-path def.yaml --config config.json
  connector airbyte discover --manifest-path def.yaml --config config.json | jq -r '.catalog.streams[].name'`,
	"read": `  connector airbyte catalog def.yaml --incremental > catalog.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json
  connector airbyte read --manifest-path def.yaml --config config.json --catalog catalog.json --state state.json | jq -c 'select(.type == "STATE")'`,
}

// airbyteRun runs one protocol command. Every failure is reported on stdout as a protocol
// message; the returned error only carries the exit code.
func airbyteRun(ctx context.Context, opts *airbyteOptions) error {
	err := protocol.Run(ctx, protocol.Request{
		Command: opts.command, Config: opts.config, ManifestPath: opts.manifestPath,
		Catalog: opts.catalog, State: opts.state,
	}, protocol.Env{
		Transport: opts.env.Transport, Now: opts.env.clock(), Sleep: opts.env.Sleep,
		Redactor: opts.io.redactor, UserAgent: "connector/" + version,
		StagingDir: protocol.StagingDir(opts.env.lookup, func(dir string) bool { _, err := os.Stat(dir); return err == nil }),
	}, opts.io.Out)
	if errors.Is(err, protocol.ErrFailed) {
		return &silentError{code: exitFailure}
	}
	return err
}
