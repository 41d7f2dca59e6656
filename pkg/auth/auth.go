// Package auth applies a connector's authenticator to outgoing requests: it renders the
// credentials from the testing values once, registers them with the redactor, and for
// token-based methods fetches, caches and refreshes the token.
package auth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/request"
	"connector/pkg/template"
)

// Authenticator applies credentials to a request being built.
type Authenticator interface {
	// Apply adds the credentials to b, fetching a token first when the method needs one.
	Apply(ctx context.Context, b *request.Builder) error
	// Name is the authenticator type, for messages.
	Name() string
}

// Retrier is implemented by authenticators that can recover from a 401 on a data request
// (OAuth: refresh the token once and retry the request once).
type Retrier interface {
	// Renew forces a new token; it reports false when the method cannot renew.
	Renew(ctx context.Context) (bool, error)
}

// Env is what an authenticator needs from the run.
type Env struct {
	// Globals are the testing values and the clock the authenticator's templates read.
	Globals  template.Globals
	Client   *httpx.Client
	Redactor *redact.Redactor
	// Now is the clock of token expiry and of a JWT's iat, nbf and exp.
	Now func() time.Time
	// ConfigUpdated is called after a token refresh changed values of the testing values
	// (refresh_token_updater); it receives the paths and values written.
	ConfigUpdated func(updates []Update) error
	// FormTokenRequests sends OAuth token requests form-encoded from the first one, as the
	// CDK does (the Airbyte entry point); otherwise the body is JSON, as the seed says, and
	// form-encoded once the token endpoint refuses JSON.
	FormTokenRequests bool
	// Note, when set, hears what a person should know once: the token endpoint took only a
	// form-encoded body.
	Note func(text string)
	// Log, when set, hears the log lines the CDK writes where this authenticator does
	// something a person should see (a wait for a quota reset), in the CDK's words, with
	// their level: the protocol entry point writes them as LOG messages.
	Log func(level, text string)
}

// log writes a line to Env.Log, when set.
func (e Env) log(level, format string, args ...any) {
	if e.Log != nil {
		e.Log(level, fmt.Sprintf(format, args...))
	}
}

// Update is one value written back to the testing values.
type Update struct {
	Path  []string
	Value any
}

// Error is an authentication failure (exit code 1).
type Error struct {
	Msg string
}

func (e *Error) Error() string { return "authentication failed: " + e.Msg }

// ConfigError is testing values that cannot work with the authenticator (exit code 3), found
// before any request.
type ConfigError struct {
	Msg string
}

func (e *ConfigError) Error() string { return e.Msg }

// sourceOf names a template for messages: its source, or "not set".
func sourceOf(t *template.Template) string {
	if t == nil {
		return "not set"
	}
	return t.Source()
}

// IsAuthError reports whether err is an authentication failure.
func IsAuthError(err error) bool {
	var ae *Error
	return errors.As(err, &ae)
}

// New builds the authenticator of a definition; a nil definition means no authentication.
func New(a *manifest.Authenticator, env Env) (Authenticator, error) {
	if env.Now == nil {
		env.Now = time.Now
	}
	if a == nil || a.Type == manifest.NoAuth {
		return noAuth{}, nil
	}
	k, ok := kinds[a.Type]
	if !ok {
		return nil, fmt.Errorf("authenticator %s is not supported", a.Type)
	}
	return k.make(a, env, env.Globals.Vars(a.Parameters))
}

// renderer renders the fields of one authenticator with the testing values; an error names
// the authenticator and the field, and an absent field renders "".
type renderer struct {
	typ  string
	vars map[string]any
	// trim drops surrounding whitespace (endpoints and OAuth client fields); passwords and
	// tokens of the static methods are sent exactly as written.
	trim bool
}

func (r renderer) render(t *template.Template, field string) (string, error) {
	if t == nil {
		return "", nil
	}
	s, err := t.Render(r.vars)
	if err != nil {
		return "", fmt.Errorf("%s.%s: %w", r.typ, field, err)
	}
	if r.trim {
		s = strings.TrimSpace(s)
	}
	return s, nil
}

// injectOption renders where an API key or session token goes; unlike a paginator's
// option, it must name a field.
func injectOption(o *manifest.RequestOption, vars map[string]any) (*request.Option, error) {
	opt, err := request.NewOption(o, vars)
	if err != nil {
		return nil, err
	}
	if opt == nil {
		return nil, errors.New("no inject_into option")
	}
	if opt.Name == "" && len(opt.Path) == 0 {
		return nil, errors.New("the request option has an empty field name")
	}
	return opt, nil
}

type noAuth struct{}

func (noAuth) Apply(context.Context, *request.Builder) error { return nil }
func (noAuth) Name() string                                  { return manifest.NoAuth }

// statusMessage turns an HTTP failure of a token or login request into an authentication
// error naming the endpoint and the status.
func statusMessage(what string, err error) error {
	var se *httpx.StatusError
	if errors.As(err, &se) {
		return &Error{Msg: what + ": " + se.Error()}
	}
	return &Error{Msg: what + ": " + strings.TrimPrefix(err.Error(), "authentication failed: ")}
}
