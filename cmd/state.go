package cmd

import (
	"github.com/spf13/cobra"
)

// stateFlags are --state and --state-out.
type stateFlags struct {
	path, out string
	// readOnly never writes the state (airbyte read: the platform keeps it).
	readOnly bool
}

func (f *stateFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.path, "state", "", "read incremental streams' state from `FILE` when it exists, and rewrite it (atomically) after every checkpoint: a slice whose records are all written")
	c.Flags().StringVar(&f.out, "state-out", "", "write the state to `FILE` instead of the --state file")
}
