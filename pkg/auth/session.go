package auth

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// session is the SessionTokenAuthenticator: it logs in with the login requester, takes the
// token at session_token_path and sends it as a Bearer token or an API key. With an
// expiration_duration the token is reused until it is that old; without one, every data
// request gets its own login.
type session struct {
	env   Env
	def   *manifest.Session
	login Authenticator // the login requester's own authenticator
	// handler is the login requester's own error_handler (nil: the default retries).
	handler *httpx.Handler
	vars    map[string]any
	opt     *request.Option // where an ApiKey request_authentication puts the token

	mu       sync.Mutex
	token    string
	obtained time.Time
}

// sessionKind is SessionTokenAuthenticator: a token from a login request, sent as a bearer
// token or an API key, logged in again when it expires.
var sessionKind = kind{
	make: newSession,
	secrets: func(a *manifest.Authenticator) credentials {
		var c credentials
		if l := a.Session.Login; l != nil {
			c.trees = []*manifest.Tree{l.BodyJSON, l.BodyData}
			c.inner = []*manifest.Authenticator{l.Authenticator}
		}
		return c
	},
	tokens: func(a *manifest.Authenticator) []TokenPath {
		return []TokenPath{{Name: "session_token", Path: a.Session.TokenPath}}
	},
}

func newSession(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
	d := a.Session
	if d == nil || d.Login == nil {
		return nil, fmt.Errorf("%s has no login_requester", a.Type)
	}
	inner, err := New(d.Login.Authenticator, env)
	if err != nil {
		return nil, fmt.Errorf("%s.login_requester: %w", a.Type, err)
	}
	handler, err := httpx.NewHandler(d.Login.ErrorHandler, env.Globals)
	if err != nil {
		return nil, fmt.Errorf("%s login_requester error_handler: %w", a.Type, err)
	}
	s := &session{env: env, def: d, login: inner, vars: vars, handler: handler}
	if d.RequestAuth == "ApiKey" {
		if s.opt, err = injectOption(d.Inject, vars); err != nil {
			return nil, fmt.Errorf("%s.request_authentication: %w", a.Type, err)
		}
	}
	// The values a login sends (a username and password in the body, say) are secrets.
	lvars := s.loginVars()
	for _, t := range []*manifest.Tree{d.Login.BodyJSON, d.Login.BodyData, d.Login.Params, d.Login.Headers} {
		if t == nil {
			continue
		}
		v, err := request.RenderTree(t, request.NewScope(lvars, env.Redactor))
		if err != nil {
			return nil, fmt.Errorf("%s.login_requester: %w", a.Type, err)
		}
		s.registerSecrets(v, t == d.Login.BodyJSON || t == d.Login.BodyData)
	}
	return s, nil
}

func (s *session) loginVars() map[string]any {
	return s.env.Globals.Vars(s.def.Login.Parameters)
}

// registerSecrets adds the string values of a rendered login option: every value of a body,
// and the values of parameters and headers whose name says they are credentials.
func (s *session) registerSecrets(v any, all bool) {
	obj, ok := v.(*record.Object)
	if !ok {
		return
	}
	for _, k := range obj.Keys() {
		val, _ := obj.Get(k)
		if !all && !secretName(k) {
			continue
		}
		switch x := val.(type) {
		case *record.Object:
			s.registerSecrets(x, all)
		case string:
			s.env.secret(x)
		}
	}
}

func (s *session) Name() string { return manifest.SessionAuth }

// Apply logs in when needed and puts the session token in the request.
func (s *session) Apply(ctx context.Context, b *request.Builder) error {
	s.mu.Lock()
	if s.expired(s.env.Now()) {
		if err := s.fetch(ctx); err != nil {
			s.mu.Unlock()
			return err
		}
	}
	tok := s.token
	s.mu.Unlock()
	vars := make(map[string]any, len(s.vars)+1)
	for k, v := range s.vars {
		vars[k] = v
	}
	vars["session_token"] = tok
	value := tok
	if s.def.Token != nil {
		v, err := request.NewScope(vars, s.env.Redactor).Render(s.def.Token)
		if err != nil {
			return fmt.Errorf("%s.request_authentication.api_token: %w", manifest.SessionAuth, err)
		}
		value = v
	}
	if s.def.RequestAuth == "ApiKey" {
		return s.opt.Inject(b, value, "the authenticator")
	}
	return b.SetHeader("Authorization", "Bearer "+value, "the authenticator")
}

// expired reports whether a login is due: no token yet, no expiration_duration (one login
// per data request), or a token at least expiration_duration old.
func (s *session) expired(now time.Time) bool {
	if s.token == "" || s.def.Expiration <= 0 {
		return true
	}
	return now.Sub(s.obtained) >= s.def.Expiration
}

// fetch sends the login request and keeps the token. s.mu is held.
func (s *session) fetch(ctx context.Context) error {
	b, err := request.FromRequester("login", s.def.Login, request.NewScope(s.loginVars(), s.env.Redactor))
	if err != nil {
		return fmt.Errorf("session login request: %w", err)
	}
	if err := s.login.Apply(ctx, b); err != nil {
		return err
	}
	req, err := b.Build()
	if err != nil {
		return fmt.Errorf("session login request: %w", err)
	}
	req.Handler = s.handler
	resp, err := s.env.Client.Do(ctx, req)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return s.env.redacted(statusMessage("session login", err))
	}
	where := fmt.Sprintf("%d %s from %s %s", resp.Status, http.StatusText(resp.Status), req.Method, s.env.redact(req.URL))
	path := strings.Join(s.def.TokenPath, ".")
	body, err := decodeObject(resp.Body)
	if err != nil {
		return &Error{Msg: fmt.Sprintf("session login: %s: %s, so there is no token at session_token_path %s", where, notAnObject(err), path)}
	}
	v := lookupPath(body, s.def.TokenPath)
	if v == nil || template.IsEmpty(v) {
		return &Error{Msg: fmt.Sprintf("session login: %s: no session token at session_token_path %s", where, path)}
	}
	tok := template.ToString(v)
	s.env.secret(tok)
	s.token, s.obtained = tok, s.env.Now()
	return nil
}
