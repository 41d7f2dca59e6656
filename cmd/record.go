package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/session"
	"connector/pkg/values"
)

// recordFlags are --record and --replay of read, check and paginate-trace.
type recordFlags struct {
	record string
	replay string
	// archive is the --replay file when it is loaded already (connector test).
	archive *har.Archive
}

func (f *recordFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.record, "record", "", "record every HTTP exchange of the run to this HAR `FILE`, secrets replaced by named placeholders (****api_key****), with the testing values, for --replay and connector test")
	c.Flags().StringVar(&f.replay, "replay", "", "answer every request from this HAR `FILE` (made with --record) instead of the network, at once and on the recording's clock; the testing values come from it unless --testing-values is given; a request the recording lacks fails with its difference from the nearest recorded one")
}

// recordingHelp is the paragraph the help of read, check and paginate-trace gives to
// --record and --replay.
const recordingHelp = `Recording: --record FILE writes every HTTP exchange of the run (logins, token refreshes,
data requests, parent streams, jobs) to a HAR 1.2 file, in the order the requests were sent,
each secret replaced by a named placeholder such as ****api_key**** (tokens the API issues
too), with the testing values, secrets replaced. --replay FILE then runs without a network:
each request is answered by the first identical recorded request not used yet (method, URL,
query parameters in any order, the headers the definition or authenticator set, body), at
once, on the recording's clock; a request the recording lacks fails the read (exit 1) with
its difference from the nearest recorded request, e.g.
  request 3: query offset=200, recorded offset=300
--testing-values is optional with --replay. See also: connector test.`

// openReplay loads the recording of --replay and makes env answer from it: its transport,
// its clock and its waits. The redactor learns the recording's placeholders.
func openReplay(s *ioStreams, env *Env, f recordFlags) (*har.Archive, *har.Replayer, error) {
	path, a := f.replay, f.archive
	if a == nil {
		var err error
		if a, err = loadRecording(path); err != nil {
			return nil, nil, err
		}
	}
	rp := har.NewReplayer(a, path, s.redactor)
	env.Transport, env.Now, env.Sleep = rp, rp.Now, rp.Sleep
	return a, rp, nil
}

// loadRecording reads a recording: one that cannot be read is a usage error (exit 2), like
// any missing file; one that is not a recording of connector is invalid input (exit 3).
func loadRecording(path string) (*har.Archive, error) {
	a, err := har.Load(path)
	if err != nil {
		var fe *har.FileError
		if errors.As(err, &fe) && !fe.Unreadable {
			return nil, &invalidError{err}
		}
		return nil, usagef("%v", err)
	}
	return a, nil
}

// recordedValues are the testing values a recording holds (secrets as placeholders), then
// --set and --set-json, then the defaults of spec, as loadTestingValues gives them.
func recordedValues(s *ioStreams, a *har.Archive, path string, spec map[string]any, assign []assignment) (*values.Values, []values.Default, error) {
	data, err := json.Marshal(a.Log.Connector.Values)
	if err != nil {
		return nil, nil, &invalidError{fmt.Errorf("%s: the recorded testing values: %w", path, err)}
	}
	if string(data) == "null" {
		data = []byte("{}")
	}
	vals, err := values.Parse(path, data)
	if err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			printDiagnostics(s, s.Err, dl)
			return nil, nil, &silentError{code: exitInvalid}
		}
		return nil, nil, &invalidError{err}
	}
	return finishValues(s, vals, spec, assign, true)
}

// recording is what a recording of the run keeps besides its exchanges: how the run was
// asked for, and the state it starts from.
func recording(defPath string, f *runFlags) *session.Recording {
	r := &session.Recording{
		Path:    f.rec.record,
		Creator: har.Creator{Name: "connector", Version: version},
		Meta: har.Meta{
			Command:    f.command,
			Definition: defPath,
			Streams:    f.streams,
			MaxRecords: f.maxRecords,
			MaxPages:   f.maxPages,
			MaxSlices:  f.maxSlices,
		},
	}
	if f.prefetch > 1 {
		r.Meta.Prefetch = f.prefetch
	}
	if f.state.path != "" {
		r.State, _ = os.ReadFile(f.state.path)
	}
	return r
}

// openState opens the state of the run: --state, or for a replay without it, the state the
// recording began with (written only to --state-out).
func (p *prepared) openState(f stateFlags) (*session.State, error) {
	files := session.StateFiles{In: f.path, Out: f.out, ReadOnly: f.readOnly}
	if p.archive != nil {
		files.Recorded, files.RecordedFrom = p.archive.Log.Connector.State, p.replayPath
	}
	st, err := session.OpenState(files)
	return st, sessionError(nil, err)
}

// finish ends what prepare started around the run: it writes the recording (said on
// stderr), and after a replay notes the recorded requests the run did not make. err is the
// run's result; a recording that cannot be written makes a successful run fail.
func (p *prepared) finish(s *ioStreams, err error) error {
	if p == nil {
		return err
	}
	recording := p.Recorder != nil
	n, rerr := p.Close()
	switch {
	case rerr != nil:
		s.printError(rerr)
		if err == nil {
			return &silentError{code: exitFailure}
		}
	case recording:
		fmt.Fprintf(s.Err, "recorded %s in %s\n", plural(n, "request"), p.recordPath)
	}
	if p.replay != nil && err == nil {
		if unused := p.replay.Unused(); len(unused) > 0 {
			fmt.Fprintf(s.Err, "note: %s of %s not made by this run, the first: entry %d, %s %s\n",
				plural(len(unused), "recorded request"), p.replayPath, unused[0].Entry, unused[0].Method, unused[0].URL)
		}
	}
	return err
}
