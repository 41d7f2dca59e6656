package cmd

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"
)

type streamsOptions struct {
	io    *ioStreams
	env   *Env
	def   string
	flags runFlags
}

// newCmdStreams is `connector streams DEF`: the stream names of a definition, the dynamic ones
// included. It is a command of its own, not a flag of validate, because making dynamic
// streams needs the testing values and, for an HttpComponentsResolver, requests, while
// validate reads the definition alone and never reaches the network.
func newCmdStreams(io *ioStreams, env *Env, runF func(*streamsOptions) error) *cobra.Command {
	opts := &streamsOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "streams DEF [--testing-values FILE]",
		Short: "List the streams of a definition, the dynamic streams made from the testing values included",
		Long: `streams prints the name of every stream a read would see, one per line on stdout, in
read order: the streams of the definition, then the streams each dynamic_streams entry makes
from the testing values (a ConfigComponentsResolver reads them; an HttpComponentsResolver
requests its API, as read does).`,
		Example: `  connector streams definitions/dynamic-streams.yaml --testing-values testing-values.example.yaml`,
		Args:    exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return streamsRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	return c
}

func streamsRun(ctx context.Context, opts *streamsOptions) error {
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	if err := p.resolve(ctx, nil); err != nil {
		return err
	}
	for _, s := range p.def.Streams {
		fmt.Fprintln(opts.io.Out, s.Name)
	}
	return nil
}
