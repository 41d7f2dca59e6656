// Package session builds a run from values: a definition's bytes, the testing values (the
// connector's config), the streams asked for, a recording or a replay, and an environment
// (HTTP transport, clock, sleep, redactor, limits). Every face drives the same run through
// it — the CLI's read, check, paginate-trace, streams and test, and the Airbyte protocol
// entry point — and two sessions in one process share nothing mutable.
//
// Open loads and checks everything and makes no request; Resolve makes the dynamic
// streams; Options is what pkg/run reads with. Problems come back as typed errors
// (DefinitionError, ValuesError, InvalidError, ArgumentError) for the face to report in
// its own words.
package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"connector/pkg/auth"
	"connector/pkg/budget"
	"connector/pkg/diag"
	"connector/pkg/dynamic"
	"connector/pkg/har"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/run"
	"connector/pkg/template"
	"connector/pkg/transform"
	"connector/pkg/values"
)

// Inputs are what a run is built from.
type Inputs struct {
	// DefName names the definition in messages: its file, or the key of the config that
	// carried it.
	DefName string
	// Def is the definition, loaded by Load.
	Def *manifest.Definition
	// Values are the testing values, loaded by the face (a file, stdin, a protocol config,
	// a recording), with its overrides and defaults applied.
	Values *values.Values
	// Streams are the streams asked for (none: every stream, in definition order).
	Streams []string
	// WriteTokens is the file rotated OAuth tokens are written back to; "" keeps them in the
	// values of the run only (a replay, whose tokens are placeholders; the Airbyte entry
	// point, whose platform stores the config of the CONTROL message).
	WriteTokens string
	// Record, when set, records every exchange of the run (--record).
	Record *Recording
	// Replaying says the environment answers from a recording: no rotated token is
	// written anywhere, and the refresh_token_updater needs no file.
	Replaying bool
	// CheckRotation, when set, is asked before anything is built whether the run may rotate
	// tokens, when the authenticator the values select does (an OAuth
	// refresh_token_updater) and the run is no replay: the CLI refuses a run whose new
	// refresh token would be lost. Its error ends Open.
	CheckRotation func() error
	// FormTokenRequests sends OAuth token requests form-encoded from the first, as the CDK
	// does (the Airbyte entry point, where the platform expects the CDK's requests);
	// otherwise JSON first, as the seed says, then the form if the endpoint refuses JSON.
	FormTokenRequests bool
	// NoTokenChecks leaves out the checks that only matter once a token is used (the initial
	// access token a refresh_token_updater needs): the Airbyte discover, which the CDK runs on
	// a config without tokens because it sends no data request.
	NoTokenChecks bool
	// TemplateClock makes now_utc() and its kind read Env.Now (a recording, a replay): the
	// templates of the run see the run's clock, not the machine's. The clock goes to the
	// run's templates with their variables (template.Globals), never through the process.
	TemplateClock bool
}

// Recording is what a recording keeps besides the exchanges: how the run was asked for.
type Recording struct {
	Path string
	// Meta is the recording's description; Started and Values are filled by the session
	// (the run's clock, the testing values with every secret masked).
	Meta har.Meta
	// Creator names the program that made the recording.
	Creator har.Creator
	// State is the state file the run starts from, recorded with its secrets masked.
	State []byte
}

// Env is where a run reaches the world.
type Env struct {
	// Transport carries the requests (nil: a transport of its own, keeping IdleConns idle
	// connections per host).
	Transport http.RoundTripper
	IdleConns int
	Now       func() time.Time // nil: time.Now
	Sleep     func(ctx context.Context, d time.Duration) error
	// Redactor masks every secret the session registers, wherever the run's text goes.
	Redactor  *redact.Redactor
	Timeout   time.Duration // of each request
	MaxBody   int64         // the largest response body read
	UserAgent string
	// Note, when set, hears what a person should know once about the run (the token
	// endpoint took only a form-encoded body).
	Note func(text string)
	// FailFast gives up early on a server that cannot be reached or does not answer
	// (httpx.Client.FailFast): the CLI's choice; the Airbyte protocol keeps the CDK's retries.
	FailFast bool
}

// Session is a run ready to read: the definition, the values, the client and the
// authenticator, built once.
type Session struct {
	Def    *manifest.Definition
	Values *values.Values
	Client *httpx.Client
	Auth   auth.Authenticator
	// Streams are the streams of the run, in order (set once Resolve has made the dynamic
	// streams).
	Streams []*manifest.Stream
	// Budget paces the requests of the run (nil: the definition has no api_budget).
	Budget *budget.Budget
	// Recorder records the run's exchanges (nil without a recording).
	Recorder *har.Recorder
	// OnConfigUpdate, when set, hears the whole config after rotated tokens were stored.
	OnConfigUpdate func(config map[string]any)

	in  Inputs
	env Env
	// templateNow is the clock of the run's templates: Env.Now with TemplateClock, else
	// nil, the machine's.
	templateNow func() time.Time
	// auths are the authenticators of the run by their Key: one for every requester that
	// names the same authenticator, so they share one token.
	authMu  sync.Mutex
	auths   map[string]auth.Authenticator
	authEnv auth.Env
	// logTo writes a LOG message of the protocol read under way (nil outside one).
	logTo atomic.Pointer[func(level, text string)]
}

// protocolLog writes a log line of a component as a LOG message when a protocol read is
// under way; elsewhere the component's notes (Env.Note) say what a person needs.
func (s *Session) protocolLog(level, text string) {
	if f := s.logTo.Load(); f != nil {
		(*f)(level, text)
	}
}

// authFor is the authenticator of a requester whose authenticator is a.
func (s *Session) authFor(a *manifest.Authenticator) (auth.Authenticator, error) {
	s.authMu.Lock()
	defer s.authMu.Unlock()
	if x, ok := s.auths[a.Key]; ok {
		return x, nil
	}
	x, err := auth.New(a, s.authEnv)
	if err != nil {
		return nil, err
	}
	s.auths[a.Key] = x
	return x, nil
}

// DefinitionError is a definition with errors: its diagnostics, every one of them.
type DefinitionError struct {
	Name  string
	Diags diag.List
}

func (e *DefinitionError) Error() string { return e.Name + ": " + FirstError(e.Diags) }

// ValuesError is testing values that do not match spec.connection_specification.
type ValuesError struct {
	Values, Def string
	Diags       diag.List
}

func (e *ValuesError) Error() string { return e.Values + ": " + FirstError(e.Diags) }

// InvalidError is input that cannot run: the values, a state, a definition's rule that
// only the values can break.
type InvalidError struct{ Err error }

func (e *InvalidError) Error() string { return e.Err.Error() }
func (e *InvalidError) Unwrap() error { return e.Err }

// ArgumentError is a request the session cannot follow: an unknown stream, a recording or
// state file it cannot write.
type ArgumentError struct{ Err error }

func (e *ArgumentError) Error() string { return e.Err.Error() }
func (e *ArgumentError) Unwrap() error { return e.Err }

func invalidf(format string, args ...any) error {
	return &InvalidError{fmt.Errorf(format, args...)}
}

// FirstError is the message of the first error of a diagnostics list.
func FirstError(dl diag.List) string {
	for _, d := range dl {
		if d.Severity == diag.Error {
			return d.Message
		}
	}
	return dl.Error()
}

// Load loads a definition from its text (YAML or JSON); name names it in diagnostics. A
// definition with errors is a DefinitionError. ctx ends a long load (Ctrl-C).
func Load(ctx context.Context, name string, src []byte) (*manifest.Definition, error) {
	def, _, err := LoadWarn(ctx, name, src)
	return def, err
}

// LoadWarn is Load that also returns the definition's warnings, in file order, for the face
// to show (validate lists them; the CLI's other commands sum them up).
func LoadWarn(ctx context.Context, name string, src []byte) (*manifest.Definition, diag.List, error) {
	def, diags, err := manifest.ParseContext(ctx, name, src)
	if err != nil {
		return nil, nil, err
	}
	diags.Sort()
	if diags.HasErrors() {
		return nil, nil, &DefinitionError{Name: name, Diags: diags}
	}
	return def, diags, nil
}

// Open checks the values against the definition, registers every secret with the
// redactor, and builds the HTTP client and the authenticator. No request is made.
func Open(in Inputs, env Env) (*Session, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if env.Redactor == nil {
		env.Redactor = &redact.Redactor{}
	}
	def := in.Def
	s := &Session{Def: def, Values: in.Values, in: in, env: env}
	if in.TemplateClock {
		// A replay's clock is its recording's, which starts at the time the recording did.
		s.templateNow = env.Now
	}
	var err error
	// Streams that depend on the values are selected once they are made: those of a
	// ConditionalStreams below, the dynamic ones by Resolve.
	if len(def.Dynamic) == 0 && len(def.Conditional) == 0 {
		if s.Streams, err = Select(def, in.Streams); err != nil {
			return nil, err
		}
	}
	vals := in.Values
	LabelValues(env.Redactor, vals.Map, "")
	env.Redactor.Add(vals.Secrets(def.ConnectionSpec)...)
	var raw map[string]any // the values as given, for a recording
	if in.Record != nil {
		raw = copyValues(vals.Map).(map[string]any)
	}
	if err := transform.MigrateConfig(def.ConfigNormalization, s.globals()); err != nil {
		return nil, invalidf("%s: spec.config_normalization_rules: %w", in.DefName, err)
	}
	if err := vals.Validate(def.ConnectionSpec); err != nil {
		var dl diag.List
		if errors.As(err, &dl) {
			return nil, &ValuesError{Values: vals.Name(), Def: in.DefName, Diags: dl}
		}
		return nil, invalidf("%s: %w (correct the schema in the definition)", in.DefName, err)
	}
	if err := s.normalizeConfig(); err != nil {
		return nil, err
	}
	if len(def.Conditional) > 0 {
		// The CDK evaluates the conditions with the config after its normalization.
		if def, err = dynamic.Choose(def, s.globals()); err != nil {
			return nil, &InvalidError{err}
		}
		s.Def = def
		if len(def.Dynamic) == 0 {
			if s.Streams, err = Select(def, in.Streams); err != nil {
				return nil, err
			}
		}
	}
	// A SelectiveAuthenticator: the checks below see the alternative the values select.
	chosen, err := def.Authenticator.Select(vals.Map)
	if err != nil {
		return nil, invalidf("%s: %w", vals.Name(), err)
	}
	view := *def
	view.Authenticator = chosen
	if err := manifest.CheckGrantType(&view, vals.Map); err != nil {
		return nil, &InvalidError{err}
	}
	if !in.Replaying { // a replay writes no rotated token anywhere
		if a := view.Authenticator; in.CheckRotation != nil && a != nil && a.OAuth != nil && a.OAuth.Updater != nil {
			if err := in.CheckRotation(); err != nil {
				return nil, err
			}
		}
		if !in.NoTokenChecks {
			if err := checkUpdater(&view, vals); err != nil {
				return nil, err
			}
		}
	}
	rt := env.Transport
	if rt == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = max(env.IdleConns, 2)
		if env.FailFast {
			// A host that never completes the handshake (packets dropped) is unreachable
			// after 10 s, not after the 30 s of Go's default dialer.
			t.DialContext = (&net.Dialer{Timeout: httpx.UnreachableBudget, KeepAlive: 30 * time.Second}).DialContext
		}
		rt = t
	}
	s.Client = &httpx.Client{
		HTTP:      &http.Client{Transport: rt},
		Timeout:   env.Timeout,
		Sleep:     env.Sleep,
		Now:       env.Now,
		Redactor:  env.Redactor,
		UserAgent: env.UserAgent,
		MaxBody:   env.MaxBody,
		FailFast:  env.FailFast,
		// The answers the CDK would give from its cache of parent streams (manifest.Cached).
		Cache: &httpx.Cache{},
	}
	if def.Budget != nil {
		b, err := budget.New(def.Budget, s.globals(), env.Now, env.Sleep)
		if err != nil {
			return nil, &InvalidError{err}
		}
		s.Budget, s.Client.Pacer = b, b
	}
	s.authEnv = auth.Env{
		Globals: s.globals(), Client: s.Client, Redactor: env.Redactor, Now: env.Now,
		ConfigUpdated: s.storeTokens, FormTokenRequests: in.FormTokenRequests, Note: env.Note, Log: s.protocolLog,
	}
	a, err := auth.New(def.Authenticator, s.authEnv)
	if err != nil {
		if auth.IsAuthError(err) {
			return nil, err
		}
		return nil, &InvalidError{err}
	}
	s.Auth = a
	s.auths = map[string]auth.Authenticator{}
	if def.Authenticator != nil {
		s.auths[def.Authenticator.Key] = a
	}
	// Every other authenticator of the streams (the same method with other credentials) is
	// built now, so that its problems are found before any request.
	for _, st := range s.Streams {
		if st.Requester != nil && st.Requester.Authenticator != nil {
			if _, err := s.authFor(st.Requester.Authenticator); err != nil {
				if auth.IsAuthError(err) {
					return nil, err
				}
				return nil, &InvalidError{err}
			}
		}
	}
	if in.Record != nil {
		if err := s.startRecording(raw); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Redactor is the redactor that masks every secret of the run.
func (s *Session) Redactor() *redact.Redactor { return s.env.Redactor }

// globals are what every template of the run sees besides its component's own variables:
// the testing values and the templates' clock.
func (s *Session) globals() template.Globals {
	return template.Globals{Config: s.Values.Map, Now: s.templateNow}
}

// Now is the run's clock.
func (s *Session) Now() time.Time { return s.env.Now() }

// Options are the options of a read of the session's streams, which the face completes
// with its limits, output and observer.
func (s *Session) Options() *run.Options {
	return &run.Options{Config: s.Values.Map, Auth: s.Auth, AuthFor: s.authFor, Client: s.Client, Now: s.env.Now,
		TemplateNow: s.templateNow, Cached: manifest.Cached(s.Def.Streams)}
}

// Close ends what Open started around the run: the recording is written. It returns how
// many requests were recorded.
func (s *Session) Close() (recorded int, err error) {
	if s == nil {
		return 0, nil
	}
	_ = s.Client.Cache.Close() // its file is unlinked already: nothing is left behind
	if s.Recorder != nil {
		recorded, err = s.Recorder.Close()
		s.Recorder = nil
		if err != nil {
			return 0, fmt.Errorf("%s: %w", s.in.Record.Path, err)
		}
	}
	return recorded, nil
}

// normalizeConfig finishes what spec.config_normalization_rules asks of the values, in
// the CDK's order: the config_migrations ran before the check against
// spec.connection_specification; here the transformations, then the validations on the
// result. The values change in memory only: a file is never rewritten with them. Values
// the rules move or derive are registered as secrets when their key is one.
func (s *Session) normalizeConfig() error {
	n := s.Def.ConfigNormalization
	if n == nil {
		return nil
	}
	vals := s.Values
	if err := transform.TransformConfig(n, s.globals()); err != nil {
		return invalidf("%s: spec.config_normalization_rules: %w", s.in.DefName, err)
	}
	s.env.Redactor.Add(vals.Secrets(s.Def.ConnectionSpec)...)
	if err := transform.ValidateConfig(n, vals.Map, values.CheckSchema); err != nil {
		return invalidf("%s: %w (spec.config_normalization_rules of %s)", vals.Name(), err, s.in.DefName)
	}
	return nil
}

// checkUpdater refuses, before any request, a run that lacks the initial access token and
// expiry the refresh_token_updater needs.
func checkUpdater(def *manifest.Definition, vals *values.Values) error {
	a := def.Authenticator
	if a == nil || a.OAuth == nil || a.OAuth.Updater == nil {
		return nil
	}
	u := a.OAuth.Updater
	var missing []string
	for _, path := range [][]string{u.AccessTokenConfigPath, u.TokenExpiryDateConfigPath} {
		if v, ok := vals.Get(path); !ok || v == nil || v == "" {
			missing = append(missing, strings.Join(path, "."))
		}
	}
	if len(missing) > 0 {
		return invalidf("%s: the OAuth refresh_token_updater needs an initial access token and its expiry in the testing values; missing: %s",
			vals.Name(), strings.Join(missing, ", "))
	}
	return nil
}

// storeTokens keeps rotated tokens: in the WriteTokens file, atomically, and in the values
// of the run; then OnConfigUpdate hears the new config.
func (s *Session) storeTokens(updates []auth.Update) error {
	m := make(map[string]any, len(updates))
	for _, u := range updates {
		m[strings.Join(u.Path, ".")] = u.Value
	}
	if target := s.in.WriteTokens; target != "" && !s.in.Replaying {
		if err := s.Values.WriteBack(target, m); err != nil {
			return fmt.Errorf("writing the rotated tokens to %s: %w", target, err)
		}
	} else if err := s.Values.Update(m); err != nil {
		return err
	}
	if s.OnConfigUpdate != nil {
		s.OnConfigUpdate(s.Values.Map)
	}
	return nil
}

// LeftOutReason says why a stream of the ConditionalStreams at p is not among the streams.
func LeftOutReason(p manifest.Pos) string {
	return fmt.Sprintf("the condition of its ConditionalStreams (line %d:%d) is false for the testing values", p.Line, p.Column)
}

// Select picks the streams named (none: every stream) of def.
func Select(def *manifest.Definition, names []string) ([]*manifest.Stream, error) {
	if len(names) == 0 {
		return def.Streams, nil
	}
	var out []*manifest.Stream
	for _, n := range names {
		s := def.Stream(n)
		if s == nil {
			if p, ok := def.LeftOut[n]; ok {
				return nil, &ArgumentError{fmt.Errorf("stream %q is left out: %s", n, LeftOutReason(p))}
			}
			all := make([]string, len(def.Streams))
			for i, s := range def.Streams {
				all[i] = s.Name
			}
			return nil, &ArgumentError{fmt.Errorf("unknown stream %q; the definition has: %s", n, strings.Join(all, ", "))}
		}
		out = append(out, s)
	}
	return out, nil
}
