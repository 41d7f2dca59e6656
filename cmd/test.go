package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/atomicfile"
	"connector/pkg/httpx"
	"connector/pkg/jsondiff"
)

type testOptions struct {
	io          *ioStreams
	env         *Env
	def         string
	replay      string
	expect      string
	update      bool
	format      string
	concurrency int
}

func newCmdTest(io *ioStreams, env *Env, runF func(*testOptions) error) *cobra.Command {
	opts := &testOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "test DEF --replay FILE [--expect RECORDS.jsonl] [--update]",
		Short: "Replay a recorded read offline and compare its records with the expected ones",
		Long: `test is a regression test of a connector that needs neither the API nor credentials: it
replays the read recorded in FILE (connector read … --record FILE) against the definition as it
is now, with the testing values, limits (--stream, --max-records, --max-pages, --max-slices)
and state the recording keeps, and compares the records with the expected file, one JSON line
per record (default: FILE with its extension replaced by .jsonl).

It prints one line on stdout: PASS, or FAIL with the first difference, named by the record
and its JSON path:

  FAIL  def.yaml: record 12 $.user.name: got "a", expected "b"

and exits 0 on PASS, 1 on FAIL. A request the definition now makes that the recording lacks
fails the test with its difference from the nearest recorded request
(request 3: query offset=200, recorded offset=300), and so do recorded requests it no longer
makes. --update writes the records of the replay to the expected file instead (atomically).

A connector tested in CI:
  connector read def.yaml --testing-values creds.yaml --record testdata/def.har   # once, with the API
  connector test def.yaml --replay testdata/def.har --update                     # writes testdata/def.jsonl
  connector test def.yaml --replay testdata/def.har                              # in CI, offline`,
		Example: `  connector test definitions/bearer-auth.yaml --replay definitions/testdata/bearer-auth.har
  connector test def.yaml --replay def.har --expect golden/records.jsonl --update
  connector test def.yaml --replay def.har --format envelope --expect def.envelope.jsonl`,
		Args: exactlyOneDefinition,
		RunE: func(c *cobra.Command, args []string) error {
			opts.def = args[0]
			if opts.replay == "" {
				return usagef("--replay is required: the recording to replay (connector read %s --testing-values FILE --record FILE makes one)", opts.def)
			}
			if runF != nil {
				return runF(opts)
			}
			return testRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.replay, "replay", "", "the recording `FILE` of a read (made with connector read … --record FILE)")
	c.Flags().StringVar(&opts.expect, "expect", "", "the expected records, one JSON line each (default: the --replay file with the extension .jsonl)")
	c.Flags().BoolVar(&opts.update, "update", false, "write the records of the replay to the --expect file instead of comparing")
	enumFlag(c.Flags(), &opts.format, "format", []string{"records", "envelope"}, "the format of the records compared: records, or envelope ({\"stream\": …, \"data\": …}) to see which stream each comes from")
	intFlag(c.Flags(), &opts.concurrency, "concurrency", 0, fmt.Sprintf("replay up to `N` slices at once (default: the definition's concurrency_level, else 1; at most %d); the records compared are the same", maxConcurrency),
		0, "must be 0 (the definition's concurrency_level) or more", maxConcurrency, fmt.Sprintf("must be at most %d (a limit of connector)", maxConcurrency))
	return c
}

// expectPath is the default expected file of a recording: its path with .jsonl for its
// extension.
func expectPath(recording string) string {
	return strings.TrimSuffix(recording, filepath.Ext(recording)) + ".jsonl"
}

func testRun(ctx context.Context, opts *testOptions) (err error) {
	s := opts.io
	if opts.expect == "" {
		opts.expect = expectPath(opts.replay)
	}
	a, err := loadRecording(opts.replay)
	if err != nil {
		return err
	}
	meta := a.Log.Connector
	if meta.Command != "read" && meta.Command != "paginate-trace" {
		return usagef("%s is a recording of %s; connector test replays a read: record one with connector read %s --testing-values FILE --record %s",
			opts.replay, meta.Command, opts.def, opts.replay)
	}
	ro := &readOptions{env: opts.env, def: opts.def, format: opts.format}
	ro.flags = runFlags{
		command:     "read",
		timeout:     60 * time.Second,
		maxBody:     httpx.DefaultMaxBody,
		streams:     meta.Streams,
		maxRecords:  meta.MaxRecords,
		maxPages:    meta.MaxPages,
		maxSlices:   meta.MaxSlices,
		prefetch:    max(meta.Prefetch, 1),
		concurrency: opts.concurrency,
		rec:         recordFlags{replay: opts.replay, archive: a},
	}

	// The records go to the expected file (--update) or to a comparison with it.
	var sink recordSink
	if opts.update {
		f, err := atomicfile.Create(opts.expect)
		if err != nil {
			return usagef("cannot write the expected records: %s", pathError(err))
		}
		sink = &updateSink{file: f, w: bufio.NewWriterSize(f, 64<<10)}
	} else {
		f, err := os.Open(opts.expect)
		if err != nil {
			return usagef("cannot read the expected records: %s (connector test %s --replay %s --update writes them)",
				pathError(err), opts.def, opts.replay)
		}
		defer f.Close()
		sink = &compareSink{want: bufio.NewReaderSize(f, 64<<10)}
	}
	sub := *s
	sub.Out = sink
	ro.io = &sub

	p, err := prepare(ctx, ro.io, ro.env, ro.def, &ro.flags)
	if err != nil {
		sink.abort()
		return err
	}
	defer p.Close() // a replay records nothing: Close only gives the templates their clock back
	readErr := func() error {
		states, err := p.openState(stateFlags{})
		if err != nil {
			return err
		}
		if err := p.Resolve(ctx, nil); err != nil {
			return sessionError(ro.io, err)
		}
		return readStreams(ctx, ro, p, states)
	}()
	if errors.Is(readErr, context.Canceled) || ctx.Err() != nil {
		sink.abort()
		return readErr
	}
	green := s.paint(false, color.FgGreen, color.Bold)
	red := s.paint(false, color.FgRed, color.Bold)
	fail := func(reason string) error {
		sink.abort()
		fmt.Fprintf(s.Out, "%s  %s: %s\n", red("FAIL"), opts.def, s.redactor.String(reason))
		return &silentError{code: exitFailure}
	}
	if readErr != nil {
		reason := "the replayed read failed (see above)"
		if nm := p.replay.Failure(); nm != nil {
			reason = nm.Error()
		}
		return fail(reason)
	}
	if unused := p.replay.Unused(); len(unused) > 0 {
		return fail(fmt.Sprintf("the read no longer makes %s of %s, the first: entry %d, %s %s",
			plural(len(unused), "recorded request"), opts.replay, unused[0].Entry, unused[0].Method, unused[0].URL))
	}
	replayed := plural(p.replay.Requests(), "request")
	if opts.update {
		n, err := sink.finish()
		if err != nil {
			return fmt.Errorf("cannot write the expected records %s: %w", opts.expect, err)
		}
		fmt.Fprintf(s.Out, "%s  %s: %s written to %s (%s replayed from %s)\n", green("UPDATED"), opts.def, plural(n, "record"), opts.expect, replayed, opts.replay)
		return nil
	}
	n, err := sink.finish()
	if err != nil {
		return fail(err.Error())
	}
	fmt.Fprintf(s.Out, "%s  %s: %s as expected in %s (%s replayed from %s)\n", green("PASS"), opts.def, plural(n, "record"), opts.expect, replayed, opts.replay)
	return nil
}

// recordSink receives the records of a test's read: it writes them (--update) or compares
// them with the expected ones.
type recordSink interface {
	io.Writer
	// finish says how many records there were, or how they differ from the expected ones.
	finish() (int, error)
	abort()
}

// updateSink writes the records to the expected file.
type updateSink struct {
	file *atomicfile.File
	w    *bufio.Writer
	n    int
}

func (u *updateSink) Write(p []byte) (int, error) {
	u.n += bytes.Count(p, []byte{'\n'})
	return u.w.Write(p)
}

func (u *updateSink) finish() (int, error) {
	if err := u.w.Flush(); err != nil {
		u.file.Abort()
		return u.n, err
	}
	return u.n, u.file.Commit()
}

func (u *updateSink) abort() { u.file.Abort() }

// compareSink compares the records, line by line as they come, with the expected file,
// and keeps the first difference.
type compareSink struct {
	want    *bufio.Reader
	partial []byte // the start of a record not complete yet
	n       int    // records received
	diff    error
	wantErr error
}

func (c *compareSink) Write(p []byte) (int, error) {
	data := p
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			c.partial = append(c.partial, data...)
			break
		}
		line := data[:i]
		if len(c.partial) > 0 {
			line = append(c.partial, line...)
		}
		c.record(line)
		c.partial = c.partial[:0]
		data = data[i+1:]
	}
	return len(p), nil
}

// record compares the next record with the next expected line.
func (c *compareSink) record(got []byte) {
	c.n++
	if c.diff != nil {
		return
	}
	want, ok := c.next()
	if !ok {
		c.diff = fmt.Errorf("record %d: got %s, expected no more records (the expected file has %d)", c.n, excerpt(got), c.n-1)
		return
	}
	if bytes.Equal(got, want) {
		return
	}
	d, err := jsondiff.First(got, want, nil)
	if err != nil || d == nil {
		c.diff = fmt.Errorf("record %d: got %s, expected %s", c.n, excerpt(got), excerpt(want))
		return
	}
	c.diff = fmt.Errorf("record %d %s", c.n, d)
}

// next is the next expected record (a line; an empty line at the end is none).
func (c *compareSink) next() ([]byte, bool) {
	if c.wantErr != nil {
		return nil, false
	}
	line, err := c.want.ReadBytes('\n')
	if err != nil && err != io.EOF {
		c.wantErr = err
	}
	line = bytes.TrimSuffix(line, []byte{'\n'})
	if len(line) == 0 && err != nil {
		return nil, false
	}
	return line, true
}

func (c *compareSink) finish() (int, error) {
	if len(c.partial) > 0 {
		c.record(c.partial)
		c.partial = nil
	}
	if c.wantErr != nil {
		return c.n, fmt.Errorf("cannot read the expected records: %s", pathError(c.wantErr))
	}
	if c.diff != nil {
		return c.n, c.diff
	}
	if want, ok := c.next(); ok {
		return c.n, fmt.Errorf("record %d: got none (the read ended after %s), expected %s", c.n+1, plural(c.n, "record"), excerpt(want))
	}
	return c.n, nil
}

func (c *compareSink) abort() {}

// excerpt is the start of a record for a message.
func excerpt(line []byte) string {
	const max = 120
	if len(line) > max {
		return string(line[:max]) + "…"
	}
	return string(line)
}
