package cmd

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/atomicfile"
	"connector/pkg/httpx"
	"connector/pkg/jsondiff"
	"connector/pkg/junit"
)

type testOptions struct {
	io     *ioStreams
	env    *Env
	defs   []string
	def    string // the definition of the run of one (testOne)
	replay string
	expect string
	update bool
	// requireRecordings fails a definition that has no recording instead of skipping it.
	requireRecordings bool
	junit             string
	format            string
	concurrency       int
}

func newCmdTest(io *ioStreams, env *Env, runF func(*testOptions) error) *cobra.Command {
	opts := &testOptions{io: io, env: env}
	c := &cobra.Command{
		Use:   "test DEF... [--replay FILE] [--expect RECORDS.jsonl] [--update] [--junit FILE]",
		Short: "Replay recorded reads offline and compare their records with the expected ones",
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

Without --replay, each definition finds its own recording by name: DIR/NAME.yaml is replayed
from DIR/testdata/NAME.har and compared with DIR/testdata/NAME.jsonl, so one command tests a
folder of connectors (connector test definitions/*.yaml). A definition without a recording is
reported as SKIP with the path looked for (FAIL with --require-recordings); any other problem
of one definition (invalid, a recording that cannot be read) is its FAIL, printed on stderr
too, and the next definition is tested. A last line counts them: 3 passed, 1 failed,
2 skipped. The exit code is 1 when one failed, 2 when none had a recording.

--junit FILE writes a JUnit XML report too (atomically): one testsuite, one testcase per
definition, a failure's message its first difference, a skipped one's the path looked for.

A connector tested in CI:
  connector read def.yaml --testing-values creds.yaml --record testdata/def.har   # once, with the API
  connector test def.yaml --update                                               # writes testdata/def.jsonl
  connector test def.yaml                                                        # in CI, offline`,
		Example: `  connector test definitions/bearer-auth.yaml --replay definitions/testdata/bearer-auth.har
  connector test def.yaml --replay def.har --expect golden/records.jsonl --update
  connector test def.yaml --replay def.har --format envelope --expect def.envelope.jsonl
  connector test definitions/*.yaml
  connector test definitions/*.yaml --require-recordings --junit report.xml`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("%s needs at least one definition file\nRun '%s --help' for usage.", c.Name(), c.CommandPath())
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			opts.defs = args
			if len(args) > 1 && opts.replay != "" {
				return usagef("--replay names the recording of one definition, and %d are given: leave it out and each is replayed from its own, DIR/testdata/NAME.har", len(args))
			}
			if len(args) > 1 && opts.expect != "" {
				return usagef("--expect names the expected records of one definition, and %d are given: leave it out and each is compared with its own, DIR/testdata/NAME.jsonl", len(args))
			}
			if runF != nil {
				return runF(opts)
			}
			return testRun(c.Context(), opts)
		},
	}
	c.Flags().StringVar(&opts.replay, "replay", "", "the recording `FILE` of a read (made with connector read … --record FILE; default: DIR/testdata/NAME.har for DIR/NAME.yaml)")
	c.Flags().StringVar(&opts.expect, "expect", "", "the expected records, one JSON line each (default: the recording with the extension .jsonl)")
	c.Flags().BoolVar(&opts.update, "update", false, "write the records of the replay to the --expect file instead of comparing")
	c.Flags().BoolVar(&opts.requireRecordings, "require-recordings", false, "a definition without a recording fails instead of being skipped")
	c.Flags().StringVar(&opts.junit, "junit", "", "also write a JUnit XML report to `FILE` (atomically), a testcase per definition")
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

// recordingPath is where a definition's recording is looked for when --replay is not
// given: DIR/NAME.yaml has DIR/testdata/NAME.har.
func recordingPath(def string) string {
	name := strings.TrimSuffix(filepath.Base(def), filepath.Ext(def))
	return filepath.Join(filepath.Dir(def), "testdata", name+".har")
}

// The outcomes of one definition's test: the first word of its line.
const (
	testPass    = "PASS"
	testFail    = "FAIL"
	testUpdated = "UPDATED"
	testSkip    = "SKIP"
)

// testCase is the outcome of the test of one definition.
type testCase struct {
	def     string
	status  string // testPass, testFail, testUpdated, testSkip
	detail  string // the line after "STATUS  def: ", redacted
	elapsed time.Duration
}

// testRun tests the definitions: with --replay the one given, as connector test always
// did (its line, its exit code, its errors); without, each from its own recording, a line
// each and a count at the end.
func testRun(ctx context.Context, opts *testOptions) error {
	now := opts.env.clock()
	start := now()
	var cases []testCase
	var err error
	if opts.replay != "" {
		cases, err = testGiven(ctx, opts, now)
	} else {
		cases, err = testEach(ctx, opts, now)
	}
	if opts.junit != "" && len(cases) > 0 && ctx.Err() == nil && !errors.Is(err, context.Canceled) {
		if werr := writeJUnit(opts.junit, start, now().Sub(start), cases); werr != nil {
			return usagef("cannot write the JUnit report: %s", pathError(werr))
		}
	}
	return err
}

// testGiven tests the definition with the recording of --replay.
func testGiven(ctx context.Context, opts *testOptions, now func() time.Time) ([]testCase, error) {
	o := *opts
	o.def = opts.defs[0]
	start := now()
	tc, err := testOne(ctx, &o)
	if err != nil {
		// Reported by the root as always, and as a failure in the JUnit report.
		tc = errorCase(opts.io, o.def, err)
		tc.elapsed = now().Sub(start)
		return []testCase{tc}, err
	}
	tc.elapsed = now().Sub(start)
	printTestCase(opts.io, tc)
	if tc.status == testFail {
		return []testCase{tc}, &silentError{code: exitFailure}
	}
	return []testCase{tc}, nil
}

// testEach tests every definition with the recording found by its name.
func testEach(ctx context.Context, opts *testOptions, now func() time.Time) ([]testCase, error) {
	s := opts.io
	var cases []testCase
	count := map[string]int{}
	for _, def := range opts.defs {
		start := now()
		o := *opts
		env := *opts.env // a replay points the run's network and clock at its recording
		o.env, o.def, o.replay = &env, def, recordingPath(def)
		var tc testCase
		if _, err := os.Stat(o.replay); err != nil {
			tc = testCase{def: def, status: testSkip, detail: "no recording (looked for " + o.replay + ")"}
			if !errors.Is(err, fs.ErrNotExist) {
				tc.detail = "cannot read the recording: " + pathError(err)
			}
			if opts.requireRecordings || !errors.Is(err, fs.ErrNotExist) {
				tc.status = testFail
			}
		} else {
			var err error
			if tc, err = testOne(ctx, &o); err != nil {
				if ctx.Err() != nil || errors.Is(err, context.Canceled) {
					return cases, err
				}
				// Its own problem: reported as the CLI would, and the next one is tested.
				if se := (*silentError)(nil); !errors.As(err, &se) {
					s.printError(err)
				}
				tc = errorCase(s, def, err)
			}
		}
		tc.elapsed = now().Sub(start)
		printTestCase(s, tc)
		cases = append(cases, tc)
		count[tc.status]++
	}
	var summary []string
	if opts.update {
		summary = append(summary, fmt.Sprintf("%d updated", count[testUpdated]))
	} else {
		summary = append(summary, fmt.Sprintf("%d passed", count[testPass]))
	}
	summary = append(summary, fmt.Sprintf("%d failed", count[testFail]))
	if n := count[testSkip]; n > 0 {
		summary = append(summary, fmt.Sprintf("%d skipped", n))
	}
	fmt.Fprintln(s.Out, strings.Join(summary, ", "))
	switch {
	case count[testFail] > 0:
		return cases, &silentError{code: exitFailure}
	case count[testSkip] == len(cases):
		return cases, usagef("no definition has a recording to replay: record one with connector read %s --testing-values FILE --record %s, or pass --replay FILE",
			opts.defs[0], recordingPath(opts.defs[0]))
	}
	return cases, nil
}

// errorCase is the failure of a definition that could not be tested: the first line of the
// error, or a pointer to the diagnostics already printed.
func errorCase(s *ioStreams, def string, err error) testCase {
	tc := testCase{def: def, status: testFail, detail: "the definition cannot be replayed (see above)"}
	if se := (*silentError)(nil); !errors.As(err, &se) {
		tc.detail = s.redactor.String(firstLine(err.Error()))
	}
	return tc
}

// firstLine is the first line of a message.
func firstLine(msg string) string {
	line, _, _ := strings.Cut(msg, "\n")
	return line
}

// printTestCase writes the line of one definition's test on stdout.
func printTestCase(s *ioStreams, tc testCase) {
	attrs := []color.Attribute{color.FgGreen, color.Bold}
	switch tc.status {
	case testFail:
		attrs = []color.Attribute{color.FgRed, color.Bold}
	case testSkip:
		attrs = []color.Attribute{color.FgYellow}
	}
	fmt.Fprintf(s.Out, "%s  %s: %s\n", s.paint(false, attrs...)(tc.status), tc.def, tc.detail)
}

// testOne replays the recording of opts.replay against opts.def and compares (or writes,
// with --update) the records. A difference is the FAIL outcome; an error is a problem that
// kept the test from running (a usage error, an invalid definition).
func testOne(ctx context.Context, opts *testOptions) (testCase, error) {
	s := opts.io
	tc := testCase{def: opts.def}
	if opts.expect == "" {
		opts.expect = expectPath(opts.replay)
	}
	a, err := loadRecording(opts.replay)
	if err != nil {
		return tc, err
	}
	meta := a.Log.Connector
	if meta.Command != "read" && meta.Command != "paginate-trace" {
		return tc, usagef("%s is a recording of %s; connector test replays a read: record one with connector read %s --testing-values FILE --record %s",
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
	// A stream with a file_uploader downloads its files again from the recording, into a
	// folder of the test's own that is removed after it: the files are not compared.
	dir, err := os.MkdirTemp("", "connector-test-files-*")
	if err != nil {
		return tc, err
	}
	defer os.RemoveAll(dir)
	ro.filesDir = dir

	// The records go to the expected file (--update) or to a comparison with it.
	var sink recordSink
	if opts.update {
		f, err := atomicfile.Create(opts.expect)
		if err != nil {
			return tc, usagef("cannot write the expected records: %s", pathError(err))
		}
		sink = &updateSink{file: f, w: bufio.NewWriterSize(f, 64<<10)}
	} else {
		f, err := os.Open(opts.expect)
		if err != nil {
			return tc, usagef("cannot read the expected records: %s (connector test %s --replay %s --update writes them)",
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
		return tc, err
	}
	defer p.Close() // a replay records nothing: Close writes no file
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
		return tc, readErr
	}
	fail := func(reason string) (testCase, error) {
		sink.abort()
		tc.status, tc.detail = testFail, s.redactor.String(reason)
		return tc, nil
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
			return tc, fmt.Errorf("cannot write the expected records %s: %w", opts.expect, err)
		}
		tc.status, tc.detail = testUpdated, fmt.Sprintf("%s written to %s (%s replayed from %s)", plural(n, "record"), opts.expect, replayed, opts.replay)
		return tc, nil
	}
	n, err := sink.finish()
	if err != nil {
		return fail(err.Error())
	}
	tc.status, tc.detail = testPass, fmt.Sprintf("%s as expected in %s (%s replayed from %s)", plural(n, "record"), opts.expect, replayed, opts.replay)
	return tc, nil
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

// writeJUnit writes the JUnit XML report of a test run to path, atomically: a testcase per
// definition, named by its path, its classname the folder it is in.
func writeJUnit(path string, start time.Time, took time.Duration, cases []testCase) error {
	suite := junit.Suite{Name: "connector test", Start: start, Time: took}
	for _, tc := range cases {
		c := junit.Case{Name: tc.def, Classname: filepath.ToSlash(filepath.Dir(tc.def)), Time: tc.elapsed}
		switch tc.status {
		case testFail:
			c.Failure = tc.detail
		case testSkip:
			c.Skipped = tc.detail
		}
		suite.Cases = append(suite.Cases, c)
	}
	data, err := junit.Marshal(suite)
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}
