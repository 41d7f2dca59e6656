package cmd

import (
	"bufio"
	"fmt"

	"github.com/spf13/cobra"

	"connector/pkg/record"
	"connector/pkg/state"
)

type stateShowOptions struct {
	io     *ioStreams
	file   string
	format string
}

func newCmdStateShow(io *ioStreams, runF func(*stateShowOptions) error) *cobra.Command {
	opts := &stateShowOptions{io: io}
	c := &cobra.Command{
		Use:   "show FILE [--format text|json]",
		Short: "Show each stream's state in a state file, and each partition's",
		Long: `show prints the state FILE holds, a stream a line: its name, then its cursor
(updated_at = "2024-03-06T10:00:00Z") or its state as compact JSON. A per-partition state
(the CDK's {"states": [{"partition": …, "cursor": …}], "state": …}) gives a line with its
number of partitions, then a line for each of its other keys and one for each partition,
its key and its cursor:

  comments: 3 partitions
    use_global_cursor: false
    state: updated_at = "2024-03-06T10:00:00Z"
    lookback_window: 1
    parent_state: {}
    partition {"parent_slice":{},"project_id":1}: updated_at = "2024-03-06T10:00:00Z"

--format json prints one JSON object a stream: {"stream", "namespace" when it has one,
"global": true when it came in a GLOBAL message, "partitions" (their number) for a
per-partition state, "state": the state as written}.

Exit 0; 2 for a file that cannot be read; 3 for one that is not a state file.`,
		Example: `  connector state show state.json
  connector state show state.json --format json | jq -r .stream`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("state show needs exactly one state file, got %d\nRun 'connector state show --help' for usage.", len(args))
			}
			return nil
		},
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]string, cobra.ShellCompDirective) {
			if len(args) < 1 {
				return jsonFiles, cobra.ShellCompDirectiveFilterFileExt
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.file = args[0]
			if runF != nil {
				return runF(opts)
			}
			return stateShowRun(opts)
		},
	}
	enumFlag(c.Flags(), &opts.format, "format", []string{"text", "json"}, "text, or json: one object a stream")
	return c
}

func stateShowRun(opts *stateShowOptions) error {
	f, err := readStateFile(opts.file)
	if err != nil {
		return err
	}
	if len(f.Streams()) == 0 {
		fmt.Fprintf(opts.io.Err, "%s holds no state\n", opts.file)
		return nil
	}
	w := bufio.NewWriter(opts.io.Out)
	for _, s := range f.Streams() {
		if opts.format == "json" {
			line, err := stateJSON(s)
			if err != nil {
				return err
			}
			w.Write(append(line, '\n'))
			continue
		}
		w.WriteString(showStream(s))
	}
	return w.Flush()
}

// showStream is the text of one stream's state.
func showStream(s *state.Stream) string {
	name := streamName(s.Name, s.Namespace)
	if s.Global {
		name += " (GLOBAL state)"
	}
	parts, perPartition := state.Partitions(s.State)
	var kind string
	switch global, _ := s.State.Get("use_global_cursor"); {
	case perPartition:
		kind = " " + plural(len(parts), "partition")
	case global == true:
		kind = " global cursor"
	case s.State.Len() <= 1 || state.Canonical(s.State) == noCursorState:
		return name + ": " + describeState(s.State) + "\n"
	}
	text := name + ":" + kind + "\n"
	for _, e := range state.Entries(s.State) {
		text += "  " + entryName(e) + ": " + describeState(e.Value) + "\n"
	}
	return text
}

// stateJSON is the JSON object of one stream's state.
func stateJSON(s *state.Stream) ([]byte, error) {
	o := &record.Object{}
	o.Set("stream", s.Name)
	if s.Namespace != "" {
		o.Set("namespace", s.Namespace)
	}
	if s.Global {
		o.Set("global", true)
	}
	if parts, ok := state.Partitions(s.State); ok {
		o.Set("partitions", len(parts))
	}
	o.Set("state", s.State)
	return record.Marshal(o)
}
