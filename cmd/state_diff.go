package cmd

import (
	"bufio"

	"github.com/spf13/cobra"

	"connector/pkg/record"
	"connector/pkg/state"
)

type stateDiffOptions struct {
	io     *ioStreams
	a, b   string
	format string
}

func newCmdStateDiff(io *ioStreams, runF func(*stateDiffOptions) error) *cobra.Command {
	opts := &stateDiffOptions{io: io}
	c := &cobra.Command{
		Use:   "diff A B [--format text|json]",
		Short: "List the streams and partitions whose state differs between two state files",
		Long: `diff compares the state files A and B, and prints a line for each difference, the
streams in A's order, then those only B has: + a stream or a part of its state only B has,
- one only A has, ~ one both have, changed, with its old and new values:

  ~ comments  state: updated_at "2024-03-04T10:00:00Z" → "2024-03-06T10:00:00Z"
  ~ comments  partition {"parent_slice":{},"project_id":1}: updated_at "2024-03-04T10:00:00Z" → "2024-03-06T10:00:00Z"
  + comments  partition {"parent_slice":{},"project_id":3}: updated_at = "2024-03-06T09:00:00Z"
  + orders: modified = "2024-03-05"

Within a stream, the keys and partitions removed or changed come in A's order (the keys, then
the partitions), then those added, in B's order.

The parts of a stream's state are its keys, and each partition of a per-partition state
(named by its partition, whatever the order of the partition's keys). Files written in
another form (GLOBAL or STREAM messages, the older mapping) with the same states are equal.

--format json prints one JSON object a difference: {"change": "added", "removed" or
"changed", "stream", "namespace" when it has one, "key" or "partition" for a part of the
state, "old" and "new" values (absent for what is absent)}.

Exit codes, like diff(1): 0 when the states are the same (nothing printed), 1 when they
differ; 2 for a file that cannot be read, 3 for one that is not a state file.`,
		Example: `  connector state diff before.json after.json
  cp state.json before.json && connector read def.yaml --testing-values creds.yaml --state state.json >/dev/null && connector state diff before.json state.json
  connector state diff a.json b.json --format json | jq -r .stream | sort -u`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 2 {
				return usagef("state diff needs two state files, got %d\nRun 'connector state diff --help' for usage.", len(args))
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) < 2 {
				return jsonFiles, cobra.ShellCompDirectiveFilterFileExt
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.a, opts.b = args[0], args[1]
			if runF != nil {
				return runF(opts)
			}
			return stateDiffRun(opts)
		},
	}
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json"}, "text, or json: one object a difference")
	return c
}

func stateDiffRun(opts *stateDiffOptions) error {
	a, err := readStateFile(opts.a)
	if err != nil {
		return err
	}
	b, err := readStateFile(opts.b)
	if err != nil {
		return err
	}
	changes := state.Diff(a, b)
	w := bufio.NewWriter(opts.io.Out)
	for _, ch := range changes {
		if opts.format == "json" {
			line, err := changeJSON(ch)
			if err != nil {
				return err
			}
			w.Write(append(line, '\n'))
			continue
		}
		w.WriteString(changeText(ch) + "\n")
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if len(changes) > 0 {
		return &silentError{code: exitFailure}
	}
	return nil
}

// changeSigns are the first characters of a difference's line.
var changeSigns = map[string]string{state.Added: "+", state.Removed: "-", state.Changed: "~"}

// changeText is the line of one difference.
func changeText(ch state.Change) string {
	line := changeSigns[ch.Kind] + " " + streamName(ch.Stream, ch.Namespace)
	if ch.Entry.Key != "" || ch.Entry.Partition != nil {
		line += "  " + entryName(ch.Entry)
	}
	switch ch.Kind {
	case state.Added:
		return line + ": " + describeState(ch.New)
	case state.Removed:
		return line + ": " + describeState(ch.Old)
	}
	return line + ": " + describeChange(ch.Old, ch.New)
}

// changeJSON is the JSON object of one difference.
func changeJSON(ch state.Change) ([]byte, error) {
	o := &record.Object{}
	o.Set("change", ch.Kind)
	o.Set("stream", ch.Stream)
	if ch.Namespace != "" {
		o.Set("namespace", ch.Namespace)
	}
	switch {
	case ch.Entry.Partition != nil:
		o.Set("partition", ch.Entry.Partition)
	case ch.Entry.Key != "":
		o.Set("key", ch.Entry.Key)
	}
	if ch.Old != nil || ch.Kind != state.Added {
		o.Set("old", ch.Old)
	}
	if ch.New != nil || ch.Kind != state.Removed {
		o.Set("new", ch.New)
	}
	return record.Marshal(o)
}
