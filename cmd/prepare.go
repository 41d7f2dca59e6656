package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/fatih/color"
	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/session"
	"connector/pkg/values"
)

// runFlags are the flags shared by the commands that talk to the API.
type runFlags struct {
	testingValues    string
	testingValuesOut string
	assign           []assignment
	timeout          time.Duration
	streams          []string
	maxPages         int
	maxSlices        int
	maxRecords       int
	failFast         bool
	quiet, verbose   bool
	prefetch         int
	concurrency      int
	maxBody          sizeFlag
	state            stateFlags
	rec              recordFlags
	// command names the command running, for a recording.
	command string
	// checkSchema checks the records against the declared schema (--check-schema); strict
	// makes what it finds a failure.
	checkSchema, strict bool
	// noDefaults leaves absent values absent instead of filling the spec's defaults (the
	// Airbyte entry point: the CDK validates the config as given).
	noDefaults bool
}

func (f *runFlags) addTestingValues(c *cobra.Command) {
	c.Flags().StringVar(&f.testingValues, "testing-values", "", "the testing values `file` (YAML or JSON) with the connector's configuration and credentials; - reads stdin; may be left out when spec.connection_specification requires nothing")
	assignFlags(c.Flags(), &f.assign,
		"override or add a testing value, as `key.path=value` (repeatable); the value is text (api_key=\"$API_KEY\" is sent as is), converted only where spec.connection_specification types the key as integer, number, boolean, array (JSON) or object (JSON)",
		"override or add a testing value given as JSON, as `key.path=JSON` (repeatable), e.g. --set-json 'filter={\"status\":[\"open\"]}'")
	durationFlag(c.Flags(), &f.timeout, "timeout", 60*time.Second, "timeout of each HTTP request")
	c.Flags().StringVar(&f.testingValuesOut, "testing-values-out", "", "write rotated OAuth tokens to this `file` instead of the testing values file")
	f.maxBody = httpx.DefaultMaxBody
	c.Flags().Var(&f.maxBody, "max-body", "the largest response `size` read, after decompression, e.g. 64MiB or 1GiB; a larger body fails the request")
}

// prepared is the session of a command's run, with what the command keeps besides: the
// defaults the values took, and the recording it replays.
type prepared struct {
	*session.Session
	// defaults are the values the specification's defaults filled.
	defaults []values.Default
	// replay answers the run's requests from a recording (--replay), archive.
	replay     *har.Replayer
	replayPath string
	archive    *har.Archive
	recordPath string
}

// prepare reads the definition and the testing values of the flags and opens the run's
// session: the definition and the values checked, every secret registered with the
// redactor, the HTTP client and the authenticator built, reaching the network and the
// clock through env. No request is made. Problems are printed as the CLI prints them.
func prepare(ctx context.Context, s *ioStreams, env *Env, defPath string, f *runFlags) (*prepared, error) {
	if f.quiet && f.verbose {
		return nil, usagef("--quiet and --verbose cannot be used together")
	}
	if _, err := os.Stat(defPath); err != nil {
		return nil, usagef("cannot read definition: %v", pathError(err))
	}
	src, diags := manifest.ReadFile(defPath)
	if diags.HasErrors() {
		return nil, sessionError(s, &session.DefinitionError{Name: defPath, Diags: diags})
	}
	def, warnings, err := session.LoadWarn(ctx, defPath, src)
	if err != nil {
		return nil, sessionError(s, err)
	}
	if !f.quiet {
		warnSummary(s, defPath, warnings)
	}
	spec := def.ConnectionSpec
	p := &prepared{}
	if f.rec.record != "" && f.rec.replay != "" {
		return nil, usagef("--record and --replay cannot be used together: a replay sends no request to record")
	}
	if f.rec.replay != "" {
		if p.archive, p.replay, err = openReplay(s, env, f.rec); err != nil {
			return nil, err
		}
		p.replayPath = f.rec.replay
	}
	var vals *values.Values
	if p.archive != nil && f.testingValues == "" {
		vals, p.defaults, err = recordedValues(s, p.archive, f.rec.replay, spec, f.assign)
	} else {
		vals, p.defaults, err = loadTestingValues(s, defPath, spec, f.testingValues, f.assign, !f.noDefaults)
	}
	if err != nil {
		return nil, err
	}
	in := session.Inputs{
		DefName: defPath, Def: def, Values: vals, Streams: f.streams,
		Replaying:     p.replay != nil,
		TemplateClock: env.Now != nil && (p.replay != nil || f.rec.record != ""),
		CheckRotation: func() error { return checkRotation(f) },
	}
	if in.WriteTokens = f.testingValuesOut; in.WriteTokens == "" {
		in.WriteTokens = f.testingValues
	}
	if f.rec.record != "" {
		in.Record = recording(defPath, f)
		p.recordPath = f.rec.record
	}
	sess, err := session.Open(in, session.Env{
		Transport: env.Transport, IdleConns: max(f.prefetch, 1)*max(f.concurrency, 1) + 1,
		Now: env.clock(), Sleep: env.Sleep, Redactor: s.redactor,
		Timeout: f.timeout, MaxBody: int64(f.maxBody), UserAgent: "connector/" + version,
		Note: func(text string) {
			if !f.quiet {
				fmt.Fprintln(s.Err, "note: "+text)
			}
		},
		FailFast: true,
	})
	if err != nil {
		return nil, sessionError(s, err)
	}
	p.Session = sess
	if n := newNotices(s, f); n != nil {
		sess.Client.OnRetry = n.retry
		if f.verbose {
			sess.Client.Observe = n.exchange
		}
		if sess.Budget != nil {
			sess.Budget.OnWait = func(req *httpx.Request, d time.Duration, policy string) {
				n.budgetWait(req.Method, s.redactor.String(req.URL), d, policy)
			}
		}
	}
	return p, nil
}

// warnSummary says in one line on stderr that the definition has warnings: the warning
// itself when there is one, else "def.yaml: 2 warnings (connector validate def.yaml lists
// them), the first: def.yaml:14:9: unknown field …". validate shows them all; the other
// commands would otherwise say nothing of a misspelt field that silently drops a limit.
func warnSummary(s *ioStreams, defPath string, warnings diag.List) {
	n := 0
	var first *diag.Diagnostic
	for i := range warnings {
		if warnings[i].Severity == diag.Warning {
			if n++; first == nil {
				first = &warnings[i]
			}
		}
	}
	if n == 0 {
		return
	}
	yellow := s.paint(true, color.FgYellow, color.Bold)
	pos := first.File
	if first.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", first.File, first.Line, first.Column)
	}
	text := pos + ": " + first.Message
	if first.Hint != "" {
		text += " (" + first.Hint + ")"
	}
	if n > 1 {
		text = fmt.Sprintf("%s: %d warnings (connector validate %s lists them), the first: %s", defPath, n, defPath, text)
	}
	fmt.Fprintln(s.Err, yellow("warning:")+" "+text)
}

// sessionError reports a problem of a session as the CLI does: a definition's or the
// values' diagnostics printed with a summary (exit 3), invalid input (exit 3), a request
// the session cannot follow (exit 2).
func sessionError(s *ioStreams, err error) error {
	var de *session.DefinitionError
	var ve *session.ValuesError
	var ie *session.InvalidError
	var ae *session.ArgumentError
	switch {
	case errors.As(err, &de):
		printDiagnostics(s, s.Err, de.Diags)
		s.summary(de.Name, de.Diags)
		return &silentError{code: exitInvalid}
	case errors.As(err, &ve):
		printDiagnostics(s, s.Err, ve.Diags)
		fmt.Fprintf(s.Err, "%s: the testing values do not match spec.connection_specification of %s\n", ve.Values, ve.Def)
		return &silentError{code: exitInvalid}
	case errors.As(err, &ie):
		return &invalidError{ie.Err}
	case errors.As(err, &ae):
		return usagef("%v", ae.Err)
	}
	return err
}

// loadTestingValues reads the testing values of a command for the definition at defPath:
// the file at path ("-": stdin; "": none), then --set and --set-json in command-line order,
// then, when withDefaults, the defaults of spec (spec.connection_specification), which it
// returns. Every
// secret among the values is registered with the redactor before it returns, so that
// nothing printed afterwards can carry one. Without a file, keys that spec requires and
// the command line does not give are a usage error.
func loadTestingValues(s *ioStreams, defPath string, spec map[string]any, path string, assign []assignment, withDefaults bool) (*values.Values, []values.Default, error) {
	vals := values.None()
	if path != "" {
		var err error
		vals, err = values.Load(path, s.In)
		if err != nil {
			var dl diag.List
			if errors.As(err, &dl) {
				printDiagnostics(s, s.Err, dl)
				return nil, nil, &silentError{code: exitInvalid}
			}
			return nil, nil, usagef("cannot read testing values: %v", pathError(err))
		}
	}
	vals, defaults, err := finishValues(s, vals, spec, assign, withDefaults)
	if err != nil {
		return nil, nil, err
	}
	if path == "" {
		if missing := missingRequired(spec, vals.Map); len(missing) > 0 {
			return nil, nil, &valuesRequired{&usageError{fmt.Sprintf("--testing-values is required: spec.connection_specification of %s requires %s; pass the file with the connector's configuration and credentials (see testing-values.example.yaml); `connector init-values %s -o creds.yaml` writes one to fill in",
				defPath, strings.Join(missing, ", "), defPath)}}
		}
	}
	return vals, defaults, nil
}

// finishValues applies --set and --set-json, then, when withDefaults, the defaults of
// spec, which it returns, and registers every secret with the redactor, each value named after its key path for
// the placeholders of a recording.
func finishValues(s *ioStreams, vals *values.Values, spec map[string]any, assign []assignment, withDefaults bool) (*values.Values, []values.Default, error) {
	if err := applyAssignments(vals, assign, spec); err != nil {
		return nil, nil, err
	}
	var defaults []values.Default
	if withDefaults {
		defaults = vals.ApplyDefaults(spec)
	}
	session.LabelValues(s.redactor, vals.Map, "")
	s.redactor.Add(vals.Secrets(spec)...)
	return vals, defaults, nil
}

// valuesRequired is the usage error of a command run without testing values that the
// specification requires (`streams` then lists the static streams alone).
type valuesRequired struct{ *usageError }

func (e *valuesRequired) Unwrap() error { return e.usageError }

// applyAssignments applies --set and --set-json in command-line order. A value that does
// not fit the type the specification gives its key is invalid testing values (exit 3, as
// the same value in the file would be); a malformed assignment is a usage error.
func applyAssignments(vals *values.Values, list []assignment, spec map[string]any) error {
	for _, a := range list {
		var err error
		if a.json {
			err = vals.SetJSON(a.text)
		} else {
			err = vals.Set(a.text, spec)
		}
		var te *values.TypeError
		switch {
		case errors.As(err, &te):
			return &invalidError{err}
		case err != nil:
			return usagef("%v", err)
		}
	}
	return nil
}

// missingRequired lists the top-level keys spec.connection_specification requires that
// config lacks.
func missingRequired(spec, config map[string]any) []string {
	required, _ := spec["required"].([]any)
	var missing []string
	for _, r := range required {
		if name, ok := r.(string); ok {
			if _, has := config[name]; !has {
				missing = append(missing, name)
			}
		}
	}
	return missing
}

// pathError drops the operation from a file error: "open x: no such file" → "x: no such file".
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

// checkRotation refuses, before any request, a run whose rotated refresh token would be
// lost: testing values from stdin, or none, without --testing-values-out (exit 2).
func checkRotation(f *runFlags) error {
	if f.testingValues == "-" && f.testingValuesOut == "" {
		return usagef("the OAuth authenticator rotates the refresh token (refresh_token_updater), and the testing values come from stdin: the new token would be lost. Pass --testing-values-out FILE to keep it")
	}
	if f.testingValues == "" && f.testingValuesOut == "" {
		return usagef("the OAuth authenticator rotates the refresh token (refresh_token_updater), and there is no testing values file to write the new token to. Pass --testing-values FILE, or --testing-values-out FILE to keep it")
	}
	return nil
}
