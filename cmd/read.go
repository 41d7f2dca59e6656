package cmd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/output"
	"connector/pkg/run"
)

type readOptions struct {
	io     *ioStreams
	def    string
	flags  runFlags
	format string
	now    func() time.Time
}

func newCmdRead(io *ioStreams, runF func(*readOptions) error) *cobra.Command {
	opts := &readOptions{io: io, now: time.Now}
	c := &cobra.Command{
		Use:   "read DEF --testing-values FILE",
		Short: "Stream the records of every stream as JSON lines",
		Long: `read requests the pages of each stream in definition order (or of the streams named with
--stream) and writes every record to stdout as one JSON line, as soon as its page arrives.
Records are written byte for byte as the API sent them: key order and numbers untouched.

Formats: records (the record itself), envelope ({"stream": …, "data": …}) and airbyte
(Airbyte protocol RECORD, TRACE and CONTROL messages).

When a stream fails, the failure is reported on stderr, the remaining streams are still read,
and the exit code is 1 (--fail-fast stops at the first failure). Ctrl-C writes out what was
read and exits 130.`,
		Example: `  connector read definitions/bearer-auth.yaml --testing-values testing-values.example.yaml
  connector read def.yaml --testing-values creds.yaml --stream users --max-records 10
  API_KEY=… connector read def.yaml --testing-values creds.yaml --set api_key="$API_KEY" | jq .id`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if err := checkFormat(opts.format, output.Formats); err != nil {
				return err
			}
			if err := checkLimits(&opts.flags); err != nil {
				return err
			}
			if runF != nil {
				return runF(opts)
			}
			return readRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	addStreamFlags(c, &opts.flags)
	c.Flags().IntVar(&opts.flags.maxRecords, "max-records", 0, "stop each stream after `N` records (0: no limit)")
	c.Flags().StringVar(&opts.format, "format", output.FormatRecords, "output format: records, envelope or airbyte")
	c.Flags().BoolVar(&opts.flags.failFast, "fail-fast", false, "stop at the first stream that fails instead of reading the others")
	return c
}

func addStreamFlags(c *cobra.Command, f *runFlags) {
	c.Flags().StringArrayVar(&f.streams, "stream", nil, "read only this stream (repeatable; default: every stream in definition order)")
	c.Flags().IntVar(&f.maxPages, "max-pages", 0, "stop each stream after `N` pages (0: no limit)")
}

func exactlyOneDefinition(c *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s needs exactly one definition file, got %d\nRun '%s --help' for usage.", c.Name(), len(args), c.CommandPath())
	}
	return nil
}

func checkFormat(format string, allowed []string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	return usagef("--format must be one of %s, not %q", strings.Join(allowed, ", "), format)
}

func checkLimits(f *runFlags) error {
	if f.maxPages < 0 || f.maxRecords < 0 {
		return usagef("--max-pages and --max-records must be 0 (no limit) or positive")
	}
	if f.timeout <= 0 {
		return usagef("--timeout must be positive, e.g. 30s")
	}
	return nil
}

func readRun(ctx context.Context, opts *readOptions) error {
	p, err := prepare(opts.io, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	out, err := output.NewRecordWriter(opts.io.Out, opts.format, opts.now)
	if err != nil {
		return usagef("%v", err)
	}
	p.onConfigUpdate = func(config map[string]any) { out.Control(config) }
	ro := p.options()
	ro.Out = out
	ro.MaxPages, ro.MaxRecords = opts.flags.maxPages, opts.flags.maxRecords
	prog := &progress{io: opts.io, now: time.Now, live: opts.io.errTTY}
	ro.Observer = prog
	failed := 0
	for _, s := range p.streams {
		out.StreamStatus(s.Name, "STARTED")
		res := run.Stream(ctx, ro, s)
		prog.clear()
		if res.Err != nil {
			if errors.Is(res.Err, context.Canceled) {
				out.StreamStatus(s.Name, "INCOMPLETE")
				out.Flush()
				fmt.Fprintf(opts.io.Err, "interrupted: %s stopped after %s and %s\n", s.Name,
					plural(res.Records, "record"), plural(res.Pages, "page"))
				return res.Err
			}
			if isBrokenPipe(res.Err) {
				return res.Err
			}
			failed++
			out.StreamStatus(s.Name, "INCOMPLETE")
			out.Flush()
			opts.io.printError(fmt.Errorf("%v (%s written before the failure)", res.Err, plural(res.Records, "record")))
			if opts.flags.failFast {
				break
			}
			continue
		}
		out.StreamStatus(s.Name, "COMPLETE")
		if err := out.Flush(); err != nil {
			return err
		}
		if res.Limit != "" {
			fmt.Fprintf(opts.io.Err, "%s: stopped early by %s after %s and %s\n", s.Name, res.Limit,
				plural(res.Records, "record"), plural(res.Pages, "page"))
		}
	}
	if failed > 0 {
		if len(p.streams) > 1 {
			fmt.Fprintf(opts.io.Err, "%d of %d streams failed\n", failed, len(p.streams))
		}
		return &silentError{code: exitFailure}
	}
	return nil
}

// progress shows records, pages and records/s on one refreshed stderr line when stderr is a
// terminal; otherwise it stays silent.
type progress struct {
	io      *ioStreams
	now     func() time.Time
	live    bool
	start   time.Time
	records int
	pages   int
	stream  string
	shown   bool
}

func (p *progress) StreamStart(stream string) {
	p.stream, p.records, p.pages, p.start = stream, 0, 0, p.now()
}

func (p *progress) Page(ev run.PageEvent) {
	p.records += ev.Emitted
	p.pages++
	if !p.live {
		return
	}
	rate := float64(p.records) / p.now().Sub(p.start).Seconds()
	fmt.Fprintf(p.io.Err, "\r\033[K%s: %d records, %d pages, %.0f records/s\r", p.stream, p.records, p.pages, rate)
	p.shown = true
}

func (p *progress) StreamEnd(run.Result) {}

func (p *progress) clear() {
	if p.shown {
		fmt.Fprint(p.io.Err, "\r\033[K\r")
		p.shown = false
	}
}
