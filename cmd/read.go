package cmd

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"connector/pkg/manifest"
	"connector/pkg/output"
	"connector/pkg/session"
)

type readOptions struct {
	io     *ioStreams
	env    *Env
	def    string
	flags  runFlags
	format string
	// missing are streams asked for that the definition lacks: an INCOMPLETE status each
	// before any other message (airbyte read, as the CDK does for its catalog).
	missing []string
	// protocol is the read of the Airbyte entry point (airbyte read): LOG messages where the
	// CDK writes them (a stream's start, RUNNING and end, notes as warnings), and a read in
	// which streams failed ends with one more TRACE ERROR naming them all, without a stream,
	// as the CDK's concurrent read does.
	protocol bool
	// configAsGiven lays out the config of a CONTROL message as the config file was written
	// (airbyte read: key order, the injected definition back in its place); nil: as is.
	configAsGiven func(config map[string]any) any
	// filesDir is --files-dir: where the files of streams with a file_uploader go.
	filesDir string
}

func newCmdRead(io *ioStreams, env *Env, runF func(*readOptions) error) *cobra.Command {
	opts := &readOptions{io: io, env: env}
	opts.flags.command = "read"
	c := &cobra.Command{
		Use:   "read DEF --testing-values FILE",
		Short: "Stream the records of every stream as JSON lines",
		Long: `read requests the pages of each stream in definition order (or of the streams named with
--stream) and writes every record to stdout as one JSON line, as soon as its page arrives.
Records are written byte for byte as the API sent them: key order and numbers untouched; a
stream with transformations writes the record Airbyte would emit, numbers still as sent.

Formats: records (the record itself), envelope ({"stream": …, "data": …}) and airbyte
(Airbyte protocol RECORD, STATE, TRACE and CONTROL messages). In airbyte, a failed stream gives a
TRACE ERROR message (message, internal_message, failure_type config_error, transient_error or
system_error, stream_descriptor) before its INCOMPLETE status.

Incremental streams (incremental_sync) read from their start, or with --state FILE from where
the state file says they stopped; the file is rewritten after every slice whose records are all
written (a checkpoint), and stderr says where each stream's state stands at its end.

When a stream fails, the failure is reported on stderr, the remaining streams are still read,
and the exit code is 1 (--fail-fast stops at the first failure). Ctrl-C writes out what was
read and exits 130.

` + recordingHelp,
		Example: `  connector read definitions/bearer-auth.yaml --testing-values testing-values.example.yaml
  connector read def.yaml --testing-values creds.yaml --stream users --max-records 10
  API_KEY=… connector read def.yaml --testing-values creds.yaml --set api_key="$API_KEY" | jq .id
  connector read def.yaml --set base_url=http://127.0.0.1:8787 --set page_size=50   # no values file needed when the spec requires nothing else
  connector read def.yaml --testing-values creds.yaml --set-json 'filter={"status":["open","closed"]}'
  connector read def.yaml --testing-values creds.yaml --format airbyte --concurrency 4
  connector read def.yaml --testing-values creds.yaml --state state.json   # incremental: from where the last read stopped
  connector read def.yaml --testing-values creds.yaml --record books.har   # keep every exchange, secrets masked
  connector read def.yaml --replay books.har                              # the same read, offline`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if runF != nil {
				return runF(opts)
			}
			return readRun(c.Context(), opts)
		},
	}
	opts.flags.addTestingValues(c)
	addStreamFlags(c, &opts.flags)
	opts.flags.addVerbosity(c)
	addMaxRecords(c, &opts.flags)
	enumFlag(c.Flags(), &opts.format, "format", output.Formats, "output format: records, envelope or airbyte")
	c.Flags().BoolVar(&opts.flags.failFast, "fail-fast", false, "stop at the first stream that fails instead of reading the others")
	opts.flags.state.add(c)
	opts.flags.rec.add(c)
	opts.flags.addSchemaCheck(c)
	c.Flags().StringVar(&opts.filesDir, "files-dir", "", "download the file of each record of a stream with a file_uploader into `DIR`, a folder per stream (made when missing); needed to read such a stream")
	intFlag(c.Flags(), &opts.flags.concurrency, "concurrency", 0, fmt.Sprintf("read up to `N` slices at once, across and within streams (default: the definition's concurrency_level, else 1; at most %d); stdout stays exactly that of a read one slice at a time", maxConcurrency),
		0, "must be 0 (the definition's concurrency_level) or more", maxConcurrency, fmt.Sprintf("must be at most %d (a limit of connector)", maxConcurrency))
	return c
}

func addStreamFlags(c *cobra.Command, f *runFlags) {
	c.Flags().StringArrayVar(&f.streams, "stream", nil, "read only the stream `NAME` (repeatable; default: every stream in definition order)")
	intFlag(c.Flags(), &f.maxPages, "max-pages", 0, "stop each stream after `N` pages (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
	intFlag(c.Flags(), &f.maxSlices, "max-slices", 0, "stop each stream after `N` slices (partitions) (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
	intFlag(c.Flags(), &f.prefetch, "prefetch", 1, fmt.Sprintf("request up to `N` pages ahead at once, at most %d (OffsetIncrement or PageIncrement with a page_size; records stay in page order)", maxPrefetch),
		1, "must be 1 (one page at a time) or more", maxPrefetch, fmt.Sprintf("must be at most %d (a limit of connector)", maxPrefetch))
}

func addMaxRecords(c *cobra.Command, f *runFlags) {
	intFlag(c.Flags(), &f.maxRecords, "max-records", 0, "stop each stream after `N` records (0: no limit)", 0, "must be 0 (no limit) or more", 0, "")
}

func exactlyOneDefinition(c *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usagef("%s needs exactly one definition file, got %d\nRun '%s --help' for usage.", c.Name(), len(args), c.CommandPath())
	}
	return nil
}

func readRun(ctx context.Context, opts *readOptions) (err error) {
	p, err := prepare(ctx, opts.io, opts.env, opts.def, &opts.flags)
	if err != nil {
		return err
	}
	defer func() { err = p.finish(opts.io, err) }()
	states, err := p.openState(opts.flags.state)
	if err != nil {
		return err
	}
	if err := p.Resolve(ctx, nil); err != nil {
		return sessionError(opts.io, err)
	}
	if err := filesFolder(opts.filesDir, p.Streams); err != nil {
		return err
	}
	return readStreams(ctx, opts, p, states)
}

// filesFolder checks --files-dir before a read: a stream with a file_uploader downloads a
// file per record, which goes nowhere unless the flag says where; the folder is made when
// it is missing.
func filesFolder(dir string, streams []*manifest.Stream) error {
	if dir == "" {
		for _, s := range streams {
			if s.Files != nil {
				return usagef("stream %s has a file_uploader, which downloads a file for each record: --files-dir DIR says where they go (a folder per stream in DIR); or leave the stream out with --stream", s.Name)
			}
		}
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("--files-dir %s: %v", dir, err)
	}
	return nil
}

// readStreams reads the prepared streams and writes them in opts.format; `read`, `test`
// and `airbyte read` share it, so all write the same messages. What stderr says comes from
// the read's events (readReport).
func readStreams(ctx context.Context, opts *readOptions, p *prepared, states *session.State) error {
	widenPipe(opts.io.Out)
	f := &opts.flags
	prog := &progress{io: opts.io, now: opts.env.clock(), live: opts.io.errTTY && !f.quiet}
	res, err := p.Read(ctx, session.ReadSpec{
		Out: opts.io.Out, Format: opts.format,
		State: states, StatePath: f.state.path,
		MaxSlices: f.maxSlices, MaxPages: f.maxPages, MaxRecords: f.maxRecords,
		Prefetch: f.prefetch, Workers: f.concurrency, FailFast: f.failFast,
		Protocol: opts.protocol, Missing: opts.missing, ConfigAsGiven: opts.configAsGiven,
		Observer: prog, Report: readReport(opts.io, f.quiet, prog), CheckSchema: f.checkSchema,
		FilesDir: opts.filesDir,
	})
	switch {
	case err != nil:
		return sessionError(opts.io, err)
	case res.Stopped != nil:
		return res.Stopped
	case res.Failed > 0 || res.StateErr != nil:
		return &silentError{code: exitFailure}
	case f.strict && res.SchemaWarnings > 0:
		opts.io.printError(fmt.Errorf("--strict: the schema check found %s", plural(res.SchemaWarnings, "warning")))
		return &silentError{code: exitFailure}
	}
	return ctx.Err()
}
