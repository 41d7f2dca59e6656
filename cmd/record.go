package cmd

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/state"
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

// copyValues is a deep copy of the testing values.
func copyValues(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValues(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValues(e)
		}
		return out
	}
	return v
}

// labelValues proposes each string of the testing values as the placeholder name of its
// value, its key path (credentials.refresh_token), for when the value turns out secret.
func labelValues(r *redact.Redactor, v any, path string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			labelValues(r, x[k], p)
		}
	case []any:
		for i, e := range x {
			labelValues(r, e, fmt.Sprintf("%s.%d", path, i))
		}
	case string:
		r.Label(x, path)
	}
}

// addCredentialValues registers as secrets the testing values whose key names a credential
// (password, api_key, access_token, client_secret) or an account (username, client_id,
// login, email), even when the specification does not say they are: a values file often
// holds credentials of other connectors, and a recording must keep none of them.
func addCredentialValues(r *redact.Redactor, v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			addCredentialValues(r, e, k)
		}
	case []any:
		for _, e := range x {
			addCredentialValues(r, e, key)
		}
	case string:
		if har.CredentialKey(key) || accountKey(key) {
			r.Add(x)
		}
	}
}

// accountKey reports a key whose value names an account: username, client_id, login, email.
func accountKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"username", "user_name", "client_id", "clientid", "login", "email"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// tokenPaths are where the authenticator of def finds tokens in token and login answers,
// for a recording to learn them first.
func tokenPaths(a *manifest.Authenticator) []har.TokenPath {
	if a == nil {
		return nil
	}
	var out []har.TokenPath
	switch {
	case a.OAuth != nil:
		out = append(out, har.TokenPath{Name: "access_token", Path: strings.Split(a.OAuth.AccessTokenName, ".")})
		refresh := a.OAuth.RefreshTokenName
		if a.OAuth.Updater != nil {
			refresh = a.OAuth.Updater.RefreshTokenName
		}
		if refresh != "" {
			out = append(out, har.TokenPath{Name: "refresh_token", Path: strings.Split(refresh, ".")})
		}
	case a.Session != nil:
		out = append(out, har.TokenPath{Name: "session_token", Path: a.Session.TokenPath})
	case a.Legacy != nil && a.Legacy.SessionTokenResponseKey != nil && a.Legacy.SessionTokenResponseKey.IsLiteral():
		out = append(out, har.TokenPath{Name: "session_token", Path: []string{a.Legacy.SessionTokenResponseKey.Source()}})
	case a.Selective != nil:
		for _, name := range a.Selective.Names {
			out = append(out, tokenPaths(a.Selective.Alternatives[name])...)
		}
	}
	return out
}

// startRecording makes the run's client record into --record. It runs once the
// authenticator is built, so that every secret it registered is masked in the testing
// values the recording keeps (raw: a copy taken when they were loaded).
func (p *prepared) startRecording(s *ioStreams, env *Env, defPath string, f *runFlags, raw map[string]any) error {
	addCredentialValues(s.redactor, raw, "")
	meta := &har.Meta{
		Command:    f.command,
		Definition: defPath,
		Started:    env.clock()(),
		Values:     har.MaskValues(raw, s.redactor).(map[string]any),
		Streams:    f.streams,
		MaxRecords: f.maxRecords,
		MaxPages:   f.maxPages,
		MaxSlices:  f.maxSlices,
	}
	if f.prefetch > 1 {
		meta.Prefetch = f.prefetch
	}
	if f.state.path != "" {
		if data, err := os.ReadFile(f.state.path); err == nil && json.Valid(data) {
			meta.State = json.RawMessage(s.redactor.Placeholders(string(data)))
		}
	}
	rec, err := har.Create(f.rec.record, p.client.HTTP.Transport, har.Options{
		Creator:  har.Creator{Name: "connector", Version: version},
		Meta:     meta,
		Redactor: s.redactor,
		Now:      env.clock(),
		Tokens:   tokenPaths(p.def.Authenticator),
	})
	if err != nil {
		return usagef("%v", err)
	}
	// No request has been made yet: the client takes the recorder from the first one on.
	p.client.HTTP.Transport = rec
	p.recorder = rec
	return nil
}

// openState opens the state of the run: --state, or for a replay without it, the state the
// recording began with (written only to --state-out).
func (p *prepared) openState(f stateFlags) (*stateStore, error) {
	st, err := openState(f)
	if err != nil || p.archive == nil || f.path != "" || len(p.archive.Log.Connector.State) == 0 {
		return st, err
	}
	file, err := state.Parse(p.replayPath, p.archive.Log.Connector.State)
	if err != nil {
		return nil, &invalidError{fmt.Errorf("the state recorded in %v", err)}
	}
	st.file = file
	return st, nil
}

// release gives the templates of the run back the machine's clock.
func (p *prepared) release() {
	if p.releaseClock != nil {
		p.releaseClock()
		p.releaseClock = nil
	}
}

// finish ends what prepare started around the run: it writes the recording (said on
// stderr), and after a replay notes the recorded requests the run did not make. err is the
// run's result; a recording that cannot be written makes a successful run fail.
func (p *prepared) finish(s *ioStreams, err error) error {
	if p == nil {
		return err
	}
	p.release()
	if p.recorder != nil {
		n, rerr := p.recorder.Close()
		p.recorder = nil
		if rerr != nil {
			s.printError(fmt.Errorf("%s: %w", p.recordPath, rerr))
			if err == nil {
				return &silentError{code: exitFailure}
			}
		} else {
			fmt.Fprintf(s.Err, "recorded %s in %s\n", plural(n, "request"), p.recordPath)
		}
	}
	if p.replay != nil && err == nil {
		if unused := p.replay.Unused(); len(unused) > 0 {
			fmt.Fprintf(s.Err, "note: %s of %s not made by this run, the first: entry %d, %s %s\n",
				plural(len(unused), "recorded request"), p.replayPath, unused[0].Entry, unused[0].Method, unused[0].URL)
		}
	}
	return err
}
