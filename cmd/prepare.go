package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/auth"
	"connector/pkg/budget"
	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/template"
	"connector/pkg/transform"
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
	prefetch         int
	concurrency      int
	maxBody          sizeFlag
	state            stateFlags
	rec              recordFlags
	// command names the command running, for a recording.
	command string
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

// prepared is everything a run needs, built from the flags.
type prepared struct {
	def     *manifest.Definition
	values  *values.Values
	client  *httpx.Client
	auth    auth.Authenticator
	streams []*manifest.Stream
	// names are the streams asked for (--stream), selected once dynamic streams are made.
	names []string
	// onConfigUpdate is told the whole testing values after a token rotation was written.
	onConfigUpdate func(config map[string]any)
	// defaults are the values the specification's defaults filled.
	defaults []values.Default
	// budget paces the requests of the run (nil: the definition has no api_budget).
	budget *budget.Budget
	// recorder records the run's exchanges (--record), replay answers them (--replay).
	recorder   *har.Recorder
	recordPath string
	replay     *har.Replayer
	replayPath string
	archive    *har.Archive
	// releaseClock gives the templates of a replay back the machine's clock.
	releaseClock func()
}

// prepare loads and checks the definition and the testing values, registers every secret
// with the redactor and builds the HTTP client and the authenticator, which wait, read the
// clock and reach the network through env. No request is made.
func prepare(ctx context.Context, s *ioStreams, env *Env, defPath string, f *runFlags) (*prepared, error) {
	if _, err := os.Stat(defPath); err != nil {
		return nil, usagef("cannot read definition: %v", pathError(err))
	}
	def, diags, err := manifest.LoadContext(ctx, defPath)
	if err != nil {
		return nil, err
	}
	if diags.HasErrors() {
		diags.Sort()
		printDiagnostics(s, s.Err, diags)
		s.summary(defPath, diags)
		return nil, &silentError{code: exitInvalid}
	}
	p := &prepared{def: def, names: f.streams}
	if f.rec.record != "" && f.rec.replay != "" {
		return nil, usagef("--record and --replay cannot be used together: a replay sends no request to record")
	}
	var archive *har.Archive
	if f.rec.replay != "" {
		if archive, p.replay, err = openReplay(s, env, f.rec); err != nil {
			return nil, err
		}
		p.archive = archive
		p.replayPath = f.rec.replay
	}
	if len(def.Dynamic) == 0 { // else selected by resolve, once the dynamic streams are made
		streams, err := selectStreams(def, f.streams)
		if err != nil {
			return nil, err
		}
		p.streams = streams
	}

	var vals *values.Values
	var defaults []values.Default
	if archive != nil && f.testingValues == "" {
		vals, defaults, err = recordedValues(s, archive, f.rec.replay, def.ConnectionSpec, f.assign)
	} else {
		vals, defaults, err = loadTestingValues(s, defPath, def.ConnectionSpec, f.testingValues, f.assign, !f.noDefaults)
	}
	if err != nil {
		return nil, err
	}
	var raw map[string]any // the values as loaded, for a recording
	if f.rec.record != "" {
		raw = copyValues(vals.Map).(map[string]any)
	}
	p.defaults = defaults
	p.values = vals
	if err := transform.MigrateConfig(def.ConfigNormalization, vals.Map); err != nil {
		return nil, &invalidError{fmt.Errorf("%s: spec.config_normalization_rules: %w", defPath, err)}
	}
	if err := vals.Validate(def.ConnectionSpec); err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			printDiagnostics(s, s.Err, dl)
			fmt.Fprintf(s.Err, "%s: the testing values do not match spec.connection_specification of %s\n", vals.Name(), defPath)
			return nil, &silentError{code: exitInvalid}
		}
		return nil, &invalidError{fmt.Errorf("%s: %w (correct the schema in the definition)", defPath, err)}
	}
	if err := normalizeConfig(s, defPath, def, vals); err != nil {
		return nil, err
	}
	// A SelectiveAuthenticator: the checks below see the alternative the values select.
	chosen, err := def.Authenticator.Select(vals.Map)
	if err != nil {
		return nil, &invalidError{fmt.Errorf("%s: %w", vals.Name(), err)}
	}
	view := *def
	view.Authenticator = chosen
	if err := manifest.CheckGrantType(&view, vals.Map); err != nil {
		return nil, &invalidError{err}
	}
	if p.replay == nil { // a replay writes no rotated token anywhere
		if err := checkUpdater(&view, vals, f); err != nil {
			return nil, err
		}
	}
	rt := env.Transport
	if rt == nil {
		rt = transport(f)
	}
	p.client = &httpx.Client{
		HTTP:      &http.Client{Transport: rt},
		Timeout:   f.timeout,
		Sleep:     env.Sleep,
		Now:       env.clock(),
		Redactor:  s.redactor,
		UserAgent: "connector/" + version,
		MaxBody:   int64(f.maxBody),
	}
	if def.Budget != nil {
		b, err := budget.New(def.Budget, vals.Map, env.clock(), env.Sleep)
		if err != nil {
			return nil, &invalidError{err}
		}
		p.budget, p.client.Pacer = b, b
	}
	a, err := auth.New(def.Authenticator, auth.Env{
		Config: vals.Map, Client: p.client, Redactor: s.redactor, Now: env.clock(),
		ConfigUpdated: func(updates []auth.Update) error {
			return p.writeBack(updates, f)
		},
	})
	if err != nil {
		if auth.IsAuthError(err) {
			return nil, err
		}
		return nil, &invalidError{err}
	}
	p.auth = a
	if f.rec.record != "" {
		if err := p.startRecording(s, env, defPath, f, raw); err != nil {
			return nil, err
		}
		p.recordPath = f.rec.record
	}
	if env.Now != nil && (p.replay != nil || f.rec.record != "") {
		// now_utc() and its kind read the run's clock too: a replay's is the recording's,
		// which starts at the clock the recording started on. Released by finish.
		p.releaseClock = template.UseClock(vals.Map, env.Now)
	}
	return p, nil
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
			return nil, nil, &valuesRequired{&usageError{fmt.Sprintf("--testing-values is required: spec.connection_specification of %s requires %s; pass the file with the connector's configuration and credentials (see testing-values.example.yaml)",
				defPath, strings.Join(missing, ", "))}}
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
	labelValues(s.redactor, vals.Map, "")
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

// transport keeps enough idle connections per host for every request that may be in flight
// at once (--prefetch × --concurrency), so none is closed and dialled again per page.
func transport(f *runFlags) http.RoundTripper {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = max(f.prefetch, 1)*max(f.concurrency, 1) + 1
	return t
}

// pathError drops the operation from a file error: "open x: no such file" → "x: no such file".
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}

func selectStreams(def *manifest.Definition, names []string) ([]*manifest.Stream, error) {
	if len(names) == 0 {
		return def.Streams, nil
	}
	var out []*manifest.Stream
	for _, n := range names {
		s := def.Stream(n)
		if s == nil {
			all := make([]string, len(def.Streams))
			for i, s := range def.Streams {
				all[i] = s.Name
			}
			return nil, usagef("unknown stream %q; the definition has: %s", n, strings.Join(all, ", "))
		}
		out = append(out, s)
	}
	return out, nil
}

// checkUpdater refuses, before any request, a run whose rotated refresh token would be lost
// (testing values from stdin without --testing-values-out, exit 2) or that lacks the initial
// access token and expiry the refresh_token_updater needs (exit 3).
func checkUpdater(def *manifest.Definition, vals *values.Values, f *runFlags) error {
	a := def.Authenticator
	if a == nil || a.OAuth == nil || a.OAuth.Updater == nil {
		return nil
	}
	if f.testingValues == "-" && f.testingValuesOut == "" {
		return usagef("the OAuth authenticator rotates the refresh token (refresh_token_updater), and the testing values come from stdin: the new token would be lost. Pass --testing-values-out FILE to keep it")
	}
	if f.testingValues == "" && f.testingValuesOut == "" {
		return usagef("the OAuth authenticator rotates the refresh token (refresh_token_updater), and there is no testing values file to write the new token to. Pass --testing-values FILE, or --testing-values-out FILE to keep it")
	}
	u := a.OAuth.Updater
	var missing []string
	for _, path := range [][]string{u.AccessTokenConfigPath, u.TokenExpiryDateConfigPath} {
		if v, ok := vals.Get(path); !ok || v == nil || v == "" {
			missing = append(missing, strings.Join(path, "."))
		}
	}
	if len(missing) > 0 {
		return &invalidError{fmt.Errorf("%s: the OAuth refresh_token_updater needs an initial access token and its expiry in the testing values; missing: %s",
			vals.Name(), strings.Join(missing, ", "))}
	}
	return nil
}

// writeBack stores rotated tokens in the testing values file (or --testing-values-out),
// atomically, and announces the new config on the airbyte output when there is one.
func (p *prepared) writeBack(updates []auth.Update, f *runFlags) error {
	m := make(map[string]any, len(updates))
	for _, u := range updates {
		m[strings.Join(u.Path, ".")] = u.Value
	}
	if p.replay != nil {
		// A replay's tokens are placeholders: they change the values of the run only.
		if err := p.values.Update(m); err != nil {
			return err
		}
		if p.onConfigUpdate != nil {
			p.onConfigUpdate(p.values.Map)
		}
		return nil
	}
	target := f.testingValuesOut
	if target == "" {
		target = f.testingValues
	}
	if err := p.values.WriteBack(target, m); err != nil {
		return fmt.Errorf("writing the rotated tokens to %s: %w", target, err)
	}
	if p.onConfigUpdate != nil {
		p.onConfigUpdate(p.values.Map)
	}
	return nil
}

func (p *prepared) options() *run.Options {
	return &run.Options{Config: p.values.Map, Auth: p.auth, Client: p.client}
}
