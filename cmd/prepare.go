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
	"connector/pkg/diag"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/values"
)

// runFlags are the flags shared by the commands that talk to the API.
type runFlags struct {
	testingValues    string
	testingValuesOut string
	set              []string
	timeout          time.Duration
	streams          []string
	maxPages         int
	maxRecords       int
	failFast         bool
	prefetch         int
	concurrency      int
}

func (f *runFlags) addTestingValues(c *cobra.Command) {
	c.Flags().StringVar(&f.testingValues, "testing-values", "", "the testing values `file` (YAML or JSON) with the connector's configuration and credentials; - reads stdin")
	c.Flags().StringArrayVar(&f.set, "set", nil, "override or add a testing value, as `key.path=value` (the value is parsed as a YAML scalar; repeatable)")
	c.Flags().DurationVar(&f.timeout, "timeout", 60*time.Second, "timeout of each HTTP request")
	c.Flags().StringVar(&f.testingValuesOut, "testing-values-out", "", "write rotated OAuth tokens to this `file` instead of the testing values file")
}

// configureClient, when set, adjusts every HTTP client prepare builds. Tests use it to
// inject a fake Sleep and clock, so retries are asserted without real waits.
var configureClient func(*httpx.Client)

// prepared is everything a run needs, built from the flags.
type prepared struct {
	def     *manifest.Definition
	values  *values.Values
	client  *httpx.Client
	auth    auth.Authenticator
	streams []*manifest.Stream
	// onConfigUpdate is told the whole testing values after a token rotation was written.
	onConfigUpdate func(config map[string]any)
}

// prepare loads and checks the definition and the testing values, registers every secret
// with the redactor and builds the HTTP client and the authenticator. No request is made.
func prepare(ctx context.Context, s *ioStreams, defPath string, f *runFlags) (*prepared, error) {
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
	p := &prepared{def: def}
	streams, err := selectStreams(def, f.streams)
	if err != nil {
		return nil, err
	}
	p.streams = streams

	if f.testingValues == "" {
		return nil, usagef("--testing-values is required: the file with the connector's configuration and credentials (see testing-values.example.yaml)")
	}
	vals, err := values.Load(f.testingValues, s.In)
	if err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			printDiagnostics(s, s.Err, dl)
			return nil, &silentError{code: exitInvalid}
		}
		return nil, usagef("cannot read testing values: %v", pathError(err))
	}
	for _, a := range f.set {
		if err := vals.Set(a); err != nil {
			return nil, usagef("%v", err)
		}
	}
	p.values = vals
	// Secrets first, so that nothing printed from here on can carry one.
	s.redactor.Add(vals.Secrets(def.ConnectionSpec)...)
	if err := vals.Validate(def.ConnectionSpec); err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			printDiagnostics(s, s.Err, dl)
			fmt.Fprintf(s.Err, "%s: the testing values do not match spec.connection_specification of %s\n", vals.File, defPath)
			return nil, &silentError{code: exitInvalid}
		}
		return nil, &invalidError{fmt.Errorf("%s: %w (correct the schema in the definition)", defPath, err)}
	}
	if err := manifest.CheckGrantType(def, vals.Map); err != nil {
		return nil, &invalidError{err}
	}
	if err := checkUpdater(def, vals, f); err != nil {
		return nil, err
	}
	p.client = &httpx.Client{
		HTTP:      &http.Client{Transport: transport(f)},
		Timeout:   f.timeout,
		Redactor:  s.redactor,
		UserAgent: "connector/" + version,
	}
	if configureClient != nil {
		configureClient(p.client)
	}
	a, err := auth.New(def.Authenticator, auth.Env{
		Config: vals.Map, Client: p.client, Redactor: s.redactor,
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
	return p, nil
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
	u := a.OAuth.Updater
	var missing []string
	for _, path := range [][]string{u.AccessTokenConfigPath, u.TokenExpiryDateConfigPath} {
		if v, ok := vals.Get(path); !ok || v == nil || v == "" {
			missing = append(missing, strings.Join(path, "."))
		}
	}
	if len(missing) > 0 {
		return &invalidError{fmt.Errorf("%s: the OAuth refresh_token_updater needs an initial access token and its expiry in the testing values; missing: %s",
			vals.File, strings.Join(missing, ", "))}
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
	return &run.Options{Def: p.def, Config: p.values.Map, Auth: p.auth, Client: p.client}
}
