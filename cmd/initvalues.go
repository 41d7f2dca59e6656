package cmd

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"connector/pkg/atomicfile"
	"connector/pkg/initvalues"
	"connector/pkg/manifest"
)

type initValuesOptions struct {
	io     *ioStreams
	def    string
	output string
	force  bool
}

// newCmdInitValues is `connector init-values DEF`: a starter testing values file written
// from the definition's spec.connection_specification (pkg/initvalues).
func newCmdInitValues(io *ioStreams, runF func(*initValuesOptions) error) *cobra.Command {
	opts := &initValuesOptions{io: io}
	c := &cobra.Command{
		Use:   "init-values DEF [-o FILE [--force]]",
		Short: "Write a starter testing values file from the definition's spec",
		Long: `init-values writes a testing values file to start from, made from the definition's
spec.connection_specification: every property with its title, description and type as a
comment (allowed values, format and pattern, examples, limits), in the spec's order.

Defaults and fixed values (a const, or an enum of one value) are filled in. Required values without a default are left
empty and marked "required": fill them in. Secrets (airbyte_secret) are left empty: write
them in the file, or pass them at run time with --set. An optional value without a default is
a commented-out line: remove its "# " to set it. A oneOf is written with its first
alternative filled in and the others commented out after it, each named by the value that
chooses it. A list of objects shows one item: filled in when the list is required, commented
out otherwise.

The file goes to stdout, or with -o to FILE (written atomically, mode 0600 when new); an
existing FILE is kept unless --force is given. It loads as it is with --testing-values.`,
		Example: `  connector init-values definitions/selective-auth.yaml
  connector init-values def.yaml -o creds.yaml
  connector init-values def.yaml -o creds.yaml --force     # replace creds.yaml
  connector check def.yaml --testing-values creds.yaml     # once the required values are filled in`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return initValuesRun(opts)
		},
	}
	c.Flags().StringVarP(&opts.output, "output", "o", "", "write the values to `FILE` instead of stdout")
	c.Flags().BoolVar(&opts.force, "force", false, "with -o, replace FILE when it exists")
	return c
}

func initValuesRun(opts *initValuesOptions) error {
	s := opts.io
	if _, err := os.Stat(opts.def); err != nil {
		return usagef("cannot read definition: %v", pathError(err))
	}
	if opts.output != "" && !opts.force {
		if _, err := os.Lstat(opts.output); err == nil {
			return usagef("%s already exists; pass --force to replace it, or choose another file with -o", opts.output)
		}
	}
	spec, diags := manifest.LoadSpec(opts.def)
	if diags.HasErrors() {
		diags.Sort()
		printDiagnostics(s, s.Err, diags)
		s.summary(opts.def, diags)
		return &silentError{code: exitInvalid}
	}
	if spec.Ordered == nil {
		return &invalidError{fmt.Errorf("%s has no spec.connection_specification, so there are no testing values to describe; its templates read config without a specification of it", opts.def)}
	}
	text, res, err := initvalues.Generate(spec.Ordered, initvalues.Options{Definition: opts.def, File: opts.output})
	switch {
	case errors.Is(err, initvalues.ErrNoProperties):
		fmt.Fprintf(s.Err, "note: %s: %v; the file holds only its header\n", opts.def, err)
	case err != nil:
		return &invalidError{fmt.Errorf("%s: %w", opts.def, err)}
	}
	if opts.output == "" {
		_, err := s.Out.Write(text)
		return err
	}
	if err := atomicfile.Write(opts.output, text); err != nil {
		return fmt.Errorf("writing %s: %w", opts.output, err)
	}
	msg := "wrote " + opts.output
	if len(res.Required) > 0 {
		msg += "; fill in the required values: " + strings.Join(res.Required, ", ")
	}
	fmt.Fprintln(s.Err, msg)
	return nil
}
