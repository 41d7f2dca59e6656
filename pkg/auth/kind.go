package auth

import (
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// kind is an authenticator of the definition format with everything this package knows of
// it: how it is built, which of its fields hold credentials, and where the answers to its
// token or login requests carry tokens. Each kind is in the file of its authenticator
// (static.go, oauth.go, session.go, legacy.go, selective.go, jwt.go, ratelimited.go) and is
// registered in kinds by one line; its fields and their checks are the definition format's,
// in pkg/manifest (the Authenticator model and the loader's authenticator).
type kind struct {
	// make builds the authenticator from its definition, the run's environment and the
	// variables its templates read (the testing values and its $parameters).
	make func(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error)
	// secrets are the fields of a whose rendered values are credentials. The redactor learns
	// them even for an authenticator that is never built (a SelectiveAuthenticator's other
	// alternatives), so that none can be printed whichever one runs. Nil: none.
	secrets func(a *manifest.Authenticator) credentials
	// tokens are where the answers to a's token and login requests carry tokens, so that a
	// recording masks them before it writes anything. Nil: it makes no such request.
	tokens func(a *manifest.Authenticator) []TokenPath
}

// credentials are the fields of an authenticator that hold secrets: templates, request
// bodies whose every value is one, and the authenticators it holds (a login requester's, a
// profile assertion's), whose own credentials count too.
type credentials struct {
	templates []*template.Template
	trees     []*manifest.Tree
	inner     []*manifest.Authenticator
}

// kinds are the authenticators, by their type in definitions. They are registered at init
// because a SelectiveAuthenticator builds its alternative through New, which looks here.
var kinds map[string]kind

func init() {
	kinds = map[string]kind{
		manifest.BasicAuth:         basicKind,
		manifest.BearerAuth:        bearerKind,
		manifest.APIKeyAuth:        apiKeyKind,
		manifest.OAuthAuth:         oauthKind,
		manifest.SessionAuth:       sessionKind,
		manifest.LegacySessionAuth: legacyKind,
		manifest.SelectiveAuth:     selectiveKind,
		manifest.JWTAuth:           jwtKind,
		manifest.RateLimitedAuth:   rateLimitedKind,
	}
}

// TokenPath names a token in the JSON answer of a token or login request: Name is what a
// recording calls it, Path the keys leading to it.
type TokenPath struct {
	Name string
	Path []string
}

// TokenPaths are where the authenticator a finds tokens in the answers to its token and
// login requests (none for nil or a method that makes no such request).
func TokenPaths(a *manifest.Authenticator) []TokenPath {
	if a == nil {
		return nil
	}
	k, ok := kinds[a.Type]
	if !ok || k.tokens == nil {
		return nil
	}
	return k.tokens(a)
}

// tokenPath splits a dotted response key into a TokenPath.
func tokenPath(name, key string) TokenPath {
	return TokenPath{Name: name, Path: strings.Split(key, ".")}
}

// registerSecrets adds to the redactor the values the credential fields of a render to,
// without building it (no request, no check of the values).
func registerSecrets(a *manifest.Authenticator, env Env) {
	if a == nil || env.Redactor == nil {
		return
	}
	k, ok := kinds[a.Type]
	if !ok || k.secrets == nil {
		return
	}
	c := k.secrets(a)
	vars := env.Globals.Vars(a.Parameters)
	for _, t := range c.templates {
		if t == nil {
			continue
		}
		if v, err := t.Render(vars); err == nil {
			env.secret(v)
		}
	}
	scope := request.NewScope(vars, env.Redactor)
	for _, t := range c.trees {
		if t == nil {
			continue
		}
		if v, err := request.RenderTree(t, scope); err == nil {
			(&session{env: env}).registerSecrets(v, true)
		}
	}
	for _, in := range c.inner {
		registerSecrets(in, env)
	}
}
