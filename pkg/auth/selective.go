package auth

import (
	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// newSelective builds the alternative of a SelectiveAuthenticator that the testing values
// select. The credentials of every alternative are registered with the redactor first, so
// that none can be printed whichever one runs.
func newSelective(a *manifest.Authenticator, env Env) (Authenticator, error) {
	for _, name := range a.Selective.Names {
		registerSecrets(a.Selective.Alternatives[name], env)
	}
	alt, err := a.Select(env.Globals.Config)
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	return New(alt, env)
}

// registerSecrets adds to the redactor the values the credential fields of a render to,
// without building it (no request, no check of the values).
func registerSecrets(a *manifest.Authenticator, env Env) {
	if a == nil || env.Redactor == nil {
		return
	}
	vars := env.Globals.Vars(a.Parameters)
	ts := []*template.Template{a.Username, a.Password, a.APIToken}
	var trees []*manifest.Tree
	if o := a.OAuth; o != nil {
		ts = append(ts, o.ClientID, o.ClientSecret, o.RefreshToken, o.AccessTokenValue)
		trees = append(trees, o.RefreshRequestBody)
	}
	if j := a.JWT; j != nil {
		ts = append(ts, j.SecretKey, j.Passphrase)
	}
	if o := a.OAuth; o != nil && o.ProfileAssertion != nil {
		registerSecrets(o.ProfileAssertion, env)
	}
	if l := a.Legacy; l != nil {
		ts = append(ts, l.Username, l.Password, l.SessionToken)
	}
	if s := a.Session; s != nil && s.Login != nil {
		trees = append(trees, s.Login.BodyJSON, s.Login.BodyData)
		registerSecrets(s.Login.Authenticator, env)
	}
	for _, t := range ts {
		if t == nil {
			continue
		}
		if v, err := t.Render(vars); err == nil {
			env.secret(v)
		}
	}
	scope := request.NewScope(vars, env.Redactor)
	for _, t := range trees {
		if t == nil {
			continue
		}
		if v, err := request.RenderTree(t, scope); err == nil {
			(&session{env: env}).registerSecrets(v, true)
		}
	}
}
