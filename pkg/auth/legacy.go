package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"unicode/utf16"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// legacySession is the LegacySessionTokenAuthenticator, as the reference implementation
// runs it: before each data request a session token from the testing values is checked
// with GET api_url+validate_session_url (the token in the session header); when it is
// empty or the check answers 401, the token of one POST of {"username", "password"} to
// api_url+login_url is used, kept for the whole run. The token goes in the session header.
// The reference checks the token twice per data request (it evaluates the header twice);
// this checks it once.
type legacySession struct {
	env                      Env
	header                   string
	loginURL, validateURL    string
	sessionToken, user, pass string
	responseKey              string
	mu                       sync.Mutex
	loggedIn                 string // the token of the login, once made
}

// legacyKind is LegacySessionTokenAuthenticator: a session token of the testing values,
// validated once, or one from a login with username and password.
var legacyKind = kind{
	make: newLegacy,
	secrets: func(a *manifest.Authenticator) credentials {
		l := a.Legacy
		return credentials{templates: []*template.Template{l.Username, l.Password, l.SessionToken}}
	},
	tokens: func(a *manifest.Authenticator) []TokenPath {
		// Only a literal key can be known before the run's values are.
		if k := a.Legacy.SessionTokenResponseKey; k != nil && k.IsLiteral() {
			return []TokenPath{{Name: "session_token", Path: []string{k.Source()}}}
		}
		return nil
	},
}

func newLegacy(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
	d := a.Legacy
	r := renderer{typ: a.Type, vars: vars}
	l := &legacySession{env: env}
	var api string
	for _, f := range []struct {
		t    *template.Template
		name string
		dst  *string
	}{
		{d.Header, "header", &l.header}, {d.APIURL, "url_base", &api}, {d.LoginURL, "login_url", &l.loginURL},
		{d.ValidateSessionURL, "validate_session_url", &l.validateURL}, {d.SessionTokenResponseKey, "session_token_response_key", &l.responseKey},
		{d.SessionToken, "session_token", &l.sessionToken}, {d.Username, "username", &l.user}, {d.Password, "password", &l.pass},
	} {
		v, err := r.render(f.t, f.name)
		if err != nil {
			return nil, err
		}
		*f.dst = v
	}
	// The paths are joined to the requester's URL by plain concatenation, as the reference
	// does: url_base "https://host/api/" and login_url "session" give https://host/api/session.
	l.loginURL, l.validateURL = api+l.loginURL, api+l.validateURL
	if l.header == "" {
		return nil, &ConfigError{Msg: fmt.Sprintf("%s: header %s renders empty", a.Type, sourceOf(d.Header))}
	}
	env.secret(l.sessionToken, l.user, l.pass)
	return l, nil
}

func (l *legacySession) Name() string { return manifest.LegacySessionAuth }

// Apply puts the session token in the session header.
func (l *legacySession) Apply(ctx context.Context, b *request.Builder) error {
	tok, err := l.token(ctx)
	if err != nil {
		return err
	}
	return b.SetHeader(l.header, tok, "the authenticator")
}

func (l *legacySession) token(ctx context.Context) (string, error) {
	if l.sessionToken != "" {
		ok, err := l.validate(ctx)
		if err != nil {
			return "", err
		}
		if ok {
			return l.sessionToken, nil
		}
	}
	if l.user == "" || l.pass == "" {
		return "", &Error{Msg: fmt.Sprintf("%s: the session token is not valid (or not set), and there is no username and password to log in with", manifest.LegacySessionAuth)}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loggedIn == "" {
		if err := l.login(ctx); err != nil {
			return "", err
		}
	}
	return l.loggedIn, nil
}

// validate checks the configured session token: true on a success, false on 401; any other
// failure is an authentication error.
func (l *legacySession) validate(ctx context.Context) (bool, error) {
	b := request.New("validate", http.MethodGet, l.validateURL)
	if err := b.SetHeader(l.header, l.sessionToken, "the authenticator"); err != nil {
		return false, err
	}
	req, err := b.Build()
	if err != nil {
		return false, fmt.Errorf("session token validation request: %w", err)
	}
	req.Unpaced = true // outside the api_budget, as the CDK sends it
	_, err = l.env.Client.Do(ctx, req)
	var se *httpx.StatusError
	switch {
	case err == nil:
		return true, nil
	case ctx.Err() != nil:
		return false, ctx.Err()
	case errors.As(err, &se) && se.Status == http.StatusUnauthorized:
		return false, nil
	}
	return false, l.env.redacted(statusMessage("validating the session token", err))
}

// login posts the username and password and keeps the token at session_token_response_key.
// l.mu is held.
func (l *legacySession) login(ctx context.Context) error {
	b := request.New("login", http.MethodPost, l.loginURL)
	_ = b.SetHeader("Content-Type", "application/json", "the authenticator")
	// The reference sends json.dumps of the pair: ", " and ": " separators, non-ASCII escaped.
	body := `{"username": ` + pyJSONString(l.user) + `, "password": ` + pyJSONString(l.pass) + `}`
	if err := b.SetText(body, "the authenticator"); err != nil {
		return err
	}
	req, err := b.Build()
	if err != nil {
		return fmt.Errorf("session login request: %w", err)
	}
	req.Unpaced, req.Step = true, httpx.StepLegacy
	resp, err := l.env.Client.Do(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return l.env.redacted(statusMessage("session login", err))
	}
	where := fmt.Sprintf("%d %s from POST %s", resp.Status, http.StatusText(resp.Status), l.env.redact(req.URL))
	obj, err := decodeObject(resp.Body)
	if err != nil {
		return &Error{Msg: fmt.Sprintf("session login: %s: %s, so there is no session token at %q", where, notAnObject(err), l.responseKey)}
	}
	v, ok := obj[l.responseKey]
	if !ok || v == nil {
		return &Error{Msg: fmt.Sprintf("session login: %s: no session token at session_token_response_key %q", where, l.responseKey)}
	}
	tok := template.ToString(v)
	l.env.secret(tok)
	l.loggedIn = tok
	return nil
}

// pyJSONString is s as Python's json.dumps writes it: non-ASCII characters as \uXXXX.
func pyJSONString(s string) string {
	raw, _ := json.Marshal(s)
	var b strings.Builder
	for _, r := range strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&").Replace(string(raw)) {
		switch {
		case r < 0x80:
			b.WriteRune(r)
		case r > 0xFFFF:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, `\u%04x\u%04x`, r1, r2)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
	}
	return b.String()
}
