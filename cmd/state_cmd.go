package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"connector/pkg/record"
	"connector/pkg/state"
)

// newCmdState is `connector state show|diff`: state files read by a person.
func newCmdState(io *ioStreams) *cobra.Command {
	c := &cobra.Command{
		Use:   "state show|diff",
		Short: "Show a state file, or the differences between two",
		Long: `state reads the state files of incremental reads (connector read --state FILE, or the
state the Airbyte platform keeps: a list of STATE messages, STREAM or GLOBAL, the older mapping
of stream names to states, or the STATE lines of a read in the airbyte format) and shows
them as a person reads them: state show FILE lists each stream's cursor, and each partition
of a per-partition state; state diff A B lists the streams and partitions added, removed and
changed between two of them.`,
		Example: `  connector state show state.json
  connector state diff before.json after.json
  connector state show state.json --format json | jq .`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				hint := "the commands are show, diff"
				if near := nearest(args[0], []string{"show", "diff"}); near != "" {
					hint = fmt.Sprintf("did you mean %q?", near)
				}
				return usagef("unknown command %q for connector state; %s\nRun 'connector state --help' for usage.", args[0], hint)
			}
			return nil
		},
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(newCmdStateShow(io, nil), newCmdStateDiff(io, nil))
	return c
}

// readStateFile reads a state file to show: a file that cannot be read is a usage error
// (exit 2), and so is one that does not exist (state.Read takes it as an empty state: the
// first run of a read); one that is not a state file is invalid input (exit 3), in the
// words a read uses.
func readStateFile(path string) (*state.File, error) {
	if _, err := os.Stat(path); err != nil {
		return nil, usagef("cannot read the state file: %s", pathError(err))
	}
	f, err := state.Read(path)
	var se *state.Error
	switch {
	case errors.As(err, &se):
		return nil, &invalidError{fmt.Errorf("state file %w", err)}
	case errors.Is(err, fs.ErrNotExist), err != nil:
		return nil, usagef("cannot read the state file: %s", pathError(err))
	}
	return f, nil
}

// streamName is a stream as the state commands name it: its name, and its namespace when
// it has one.
func streamName(name, namespace string) string {
	if namespace == "" {
		return name
	}
	return fmt.Sprintf("%s (namespace %s)", name, namespace)
}

// noCursorState is the state of a full refresh stream read to its end.
const noCursorState = `{"__ab_no_cursor_state_message":true}`

// describeState is a state, or a part of one, on one line: `updated_at = "2024-03-06"` for
// an object of one key whose value is not an object or a list (a cursor), else compact JSON.
func describeState(v any) string {
	if o, ok := v.(*record.Object); ok {
		if c := state.Canonical(o); c == noCursorState {
			return "full refresh, read to its end"
		}
		if o.Len() == 1 {
			k := o.Keys()[0]
			val, _ := o.Get(k)
			if isScalar(val) {
				return k + " = " + compactJSON(val)
			}
		}
	}
	return compactJSON(v)
}

// describeChange is a change of a state's part: `updated_at "a" → "b"` when both are the
// same cursor, else both described.
func describeChange(old, new any) string {
	o, ok1 := old.(*record.Object)
	n, ok2 := new.(*record.Object)
	if ok1 && ok2 && o.Len() == 1 && n.Len() == 1 && o.Keys()[0] == n.Keys()[0] {
		k := o.Keys()[0]
		ov, _ := o.Get(k)
		nv, _ := n.Get(k)
		if isScalar(ov) && isScalar(nv) {
			return k + " " + compactJSON(ov) + " → " + compactJSON(nv)
		}
	}
	return describeState(old) + " → " + describeState(new)
}

func isScalar(v any) bool {
	switch v.(type) {
	case *record.Object, []any:
		return false
	}
	return true
}

// compactJSON is v as compact JSON, keys in the order written.
func compactJSON(v any) string {
	b, err := record.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// entryName names a part of a stream's state: its key, or `partition {…}`.
func entryName(e state.Entry) string {
	if e.Partition != nil {
		return "partition " + compactJSON(e.Partition)
	}
	return e.Key
}
