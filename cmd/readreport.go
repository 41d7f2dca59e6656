package cmd

import (
	"errors"
	"fmt"
	"strings"

	"connector/pkg/diag"
	"connector/pkg/session"
)

// readReport says on stderr, in the CLI's words, what a read's events tell a person: notes
// and where each stream's state stands (not with --quiet), failures, interruptions and the
// closing count. The progress line is cleared before each stream's end is said.
func readReport(s *ioStreams, quiet bool, prog *progress) func(session.Event) {
	red := s.redactor
	return func(ev session.Event) {
		switch ev := ev.(type) {
		case session.Warning:
			if !quiet {
				fmt.Fprintln(s.Err, red.String("note: "+ev.Text))
			}
		case session.StreamEnded:
			prog.clear()
		case session.StateSaved:
			if quiet {
				return
			}
			where := ""
			if ev.File != "" {
				where = " (saved in " + ev.File + ")"
			}
			fmt.Fprint(s.Err, red.String(fmt.Sprintf("%s: state %s%s\n", ev.Stream, ev.Text, where)))
		case session.BudgetWaited:
			if !quiet {
				fmt.Fprintf(s.Err, "note: %s: %s waited %s in total for the API budget: %s\n",
					ev.Stream, plural(ev.Requests, "request"), diag.Duration(ev.Wait), strings.Join(ev.Policies, "; "))
			}
		case session.NoPartition:
			fmt.Fprintf(s.Err, "note: %s: %s of the parent stream %s had no value at %s and gave no partition\n",
				ev.Stream, plural(ev.Skip.Records, "record"), ev.Skip.Parent, ev.Skip.ParentKey)
		case session.Interrupted:
			fmt.Fprintf(s.Err, "interrupted: %s stopped after %s and %s\n", ev.Stream,
				plural(ev.Records, "record"), plural(ev.Pages, "page"))
		case session.StreamFailed:
			if !ev.Grouped {
				s.printError(errors.New(ev.Message))
			}
		case session.StoppedEarly:
			if !quiet {
				fmt.Fprintf(s.Err, "%s: stopped early by %s after %s and %s\n", ev.Stream, ev.Limit,
					plural(ev.Records, "record"), plural(ev.Pages, "page"))
			}
		case session.StateNotWritten:
			s.printError(ev.Err)
		case session.Unreached:
			s.printError(fmt.Errorf("%s not read: %s could not be reached (%s; see above): %s",
				plural(len(ev.Streams), "more stream"), ev.Host, ev.Cause, cutList(ev.Streams, 10)))
		case session.StateUnchanged:
			fmt.Fprintf(s.Err, "%s: state unchanged for %s that failed before a slice was read whole: %s\n",
				ev.File, plural(len(ev.Streams), "stream"), cutList(ev.Streams, 10))
		case session.SchemaChecked:
			printSchemaCheck(s, quiet, ev.Stream, ev.Report, ev.Err)
		case session.Failures:
			if ev.NotRead > 0 {
				fmt.Fprintf(s.Err, "--fail-fast: stopped at the first failure; %s not read\n", plural(ev.NotRead, "stream"))
			} else if ev.Streams > 1 {
				fmt.Fprintf(s.Err, "%d of %d streams failed\n", ev.Failed, ev.Streams)
			}
		}
	}
}

// cutList joins names with ", ", the first max of them and "…" when there are more.
func cutList(names []string, max int) string {
	if len(names) > max {
		return strings.Join(names[:max], ", ") + ", …"
	}
	return strings.Join(names, ", ")
}
