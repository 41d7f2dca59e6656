package auth

import (
	"context"
	"encoding/base64"
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// The static methods send a credential of the testing values as it is, on every request.

// basicKind is BasicHttpAuthenticator: username and password in an Authorization header.
var basicKind = kind{
	make: func(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
		render := renderer{typ: a.Type, vars: vars}.render
		user, err := render(a.Username, "username")
		if err != nil {
			return nil, err
		}
		pass, err := render(a.Password, "password")
		if err != nil {
			return nil, err
		}
		env.Redactor.Add(user, pass)
		return basic{user: user, pass: pass}, nil
	},
	secrets: staticSecrets,
}

// bearerKind is BearerAuthenticator: api_token after "Bearer " in an Authorization header.
var bearerKind = kind{
	make: func(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
		tok, err := renderer{typ: a.Type, vars: vars}.render(a.APIToken, "api_token")
		if err != nil {
			return nil, err
		}
		if tok == "" {
			return nil, &Error{Msg: fmt.Sprintf("BearerAuthenticator: api_token %s renders empty; set it in the testing values", a.APIToken.Source())}
		}
		env.Redactor.Add(tok)
		return bearer{token: tok}, nil
	},
	secrets: staticSecrets,
}

// apiKeyKind is ApiKeyAuthenticator: api_token where inject_into says (a header, a query
// parameter, a body field).
var apiKeyKind = kind{
	make: func(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
		key, err := renderer{typ: a.Type, vars: vars}.render(a.APIToken, "api_token")
		if err != nil {
			return nil, err
		}
		if key == "" {
			return nil, &Error{Msg: fmt.Sprintf("ApiKeyAuthenticator: api_token %s renders empty; set it in the testing values", a.APIToken.Source())}
		}
		env.Redactor.Add(key)
		opt, err := injectOption(a.Inject, vars)
		if err != nil {
			return nil, fmt.Errorf("ApiKeyAuthenticator: %w", err)
		}
		return apiKey{key: key, opt: opt}, nil
	},
	secrets: staticSecrets,
}

// staticSecrets are the credential fields of the static methods.
func staticSecrets(a *manifest.Authenticator) credentials {
	return credentials{templates: []*template.Template{a.Username, a.Password, a.APIToken}}
}

type basic struct{ user, pass string }

func (a basic) Apply(_ context.Context, b *request.Builder) error {
	enc := base64.StdEncoding.EncodeToString([]byte(a.user + ":" + a.pass))
	return b.SetHeader("Authorization", "Basic "+enc, "the authenticator")
}
func (basic) Name() string { return manifest.BasicAuth }

type bearer struct{ token string }

func (a bearer) Apply(_ context.Context, b *request.Builder) error {
	return b.SetHeader("Authorization", "Bearer "+a.token, "the authenticator")
}
func (bearer) Name() string { return manifest.BearerAuth }

type apiKey struct {
	key string
	opt *request.Option
}

func (a apiKey) Apply(_ context.Context, b *request.Builder) error {
	return a.opt.Inject(b, a.key, "the authenticator")
}
func (apiKey) Name() string { return manifest.APIKeyAuth }
