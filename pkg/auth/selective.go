package auth

import (
	"connector/pkg/manifest"
)

// selectiveKind is SelectiveAuthenticator: one of several authenticators, chosen by a value
// of the testing values.
var selectiveKind = kind{
	make: func(a *manifest.Authenticator, env Env, _ map[string]any) (Authenticator, error) {
		return newSelective(a, env)
	},
	secrets: func(a *manifest.Authenticator) credentials {
		return credentials{inner: alternatives(a)}
	},
	tokens: func(a *manifest.Authenticator) []TokenPath {
		var out []TokenPath
		for _, alt := range alternatives(a) {
			out = append(out, TokenPaths(alt)...)
		}
		return out
	},
}

// alternatives are the authenticators a SelectiveAuthenticator chooses from, in written order.
func alternatives(a *manifest.Authenticator) []*manifest.Authenticator {
	out := make([]*manifest.Authenticator, 0, len(a.Selective.Names))
	for _, name := range a.Selective.Names {
		out = append(out, a.Selective.Alternatives[name])
	}
	return out
}

// newSelective builds the alternative of a SelectiveAuthenticator that the testing values
// select. The credentials of every alternative are registered with the redactor first, so
// that none can be printed whichever one runs.
func newSelective(a *manifest.Authenticator, env Env) (Authenticator, error) {
	for _, alt := range alternatives(a) {
		registerSecrets(alt, env)
	}
	alt, err := a.Select(env.Globals.Config)
	if err != nil {
		return nil, &ConfigError{Msg: err.Error()}
	}
	return New(alt, env)
}
