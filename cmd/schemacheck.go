package cmd

import (
	"fmt"
	"strings"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/schemacheck"
)

// addSchemaCheck adds --check-schema and --strict.
func (f *runFlags) addSchemaCheck(c *cobra.Command) {
	c.Flags().BoolVar(&f.checkSchema, "check-schema", false, "check every record against the stream's declared schema and primary key, and say on stderr what does not fit (a count per stream, the first few with record number and JSON pointer) and which streams returned no records")
	c.Flags().BoolVar(&f.strict, "strict", false, "with --check-schema, exit 1 when a check found anything")
}

// shownSchemaWarnings is how many warnings of a stream stderr shows.
const shownSchemaWarnings = 3

// printSchemaCheck says on stderr what the schema checks of a stream found: nothing when
// all fits (a line unless quiet), else a warning with the counts and the first few.
func printSchemaCheck(s *ioStreams, quiet bool, stream string, rep schemacheck.Report, err error) {
	yellow := s.paint(true, color.FgYellow, color.Bold)
	if err != nil {
		fmt.Fprintln(s.Err, yellow("warning:")+" "+s.redactor.String(fmt.Sprintf("%s: %v; only the primary key was checked", stream, err)))
	}
	total := rep.Total()
	if total == 0 {
		if !quiet {
			fmt.Fprintf(s.Err, "%s: schema check: %s fit the declared schema and primary key\n", stream, plural(rep.Records, "record"))
		}
		return
	}
	var counts []string
	for _, k := range schemacheck.Kinds {
		if n := rep.Counts[k]; n > 0 {
			counts = append(counts, k.Count(n))
		}
	}
	if rep.Records == 0 {
		fmt.Fprintln(s.Err, yellow("warning:")+" "+stream+": the stream returned no records")
		return
	}
	fmt.Fprintln(s.Err, yellow("warning:")+" "+fmt.Sprintf("%s: schema check of %s: %s", stream, plural(rep.Records, "record"), strings.Join(counts, ", ")))
	for i, w := range rep.Warnings {
		if i == shownSchemaWarnings {
			break
		}
		fmt.Fprintln(s.Err, "  "+s.redactor.String(w.String()))
	}
	if total > shownSchemaWarnings {
		fmt.Fprintf(s.Err, "  … and %d more\n", total-shownSchemaWarnings)
	}
}
