package session

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"connector/pkg/auth"
	"connector/pkg/har"
	"connector/pkg/manifest"
	"connector/pkg/redact"
)

// Which values of a run are secrets: those spec.connection_specification marks
// (airbyte_secret), those config_normalization_rules derive from them, the tokens the
// authenticator obtains (registered by pkg/auth as it gets them), and, for a recording, every
// value whose key names a credential or an account.

// LabelValues proposes each string of the values as the placeholder name of its value, its
// key path (credentials.refresh_token), for when the value turns out secret.
func LabelValues(r *redact.Redactor, v any, path string) {
	switch x := v.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			p := k
			if path != "" {
				p = path + "." + k
			}
			LabelValues(r, x[k], p)
		}
	case []any:
		for i, e := range x {
			LabelValues(r, e, fmt.Sprintf("%s.%d", path, i))
		}
	case string:
		r.Label(x, path)
	}
}

// addCredentialValues registers as secrets the values whose key names a credential
// (password, api_key, access_token, client_secret) or an account (username, client_id,
// login, email), even when the specification does not say they are: a values file often
// holds credentials of other connectors, and a recording must keep none of them.
func addCredentialValues(r *redact.Redactor, v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			addCredentialValues(r, e, k)
		}
	case []any:
		for _, e := range x {
			addCredentialValues(r, e, key)
		}
	case string:
		if har.CredentialKey(key) || accountKey(key) {
			r.Add(x)
		}
	}
}

// accountKey reports a key whose value names an account: username, client_id, login, email.
func accountKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"username", "user_name", "client_id", "clientid", "login", "email"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// tokenPaths are where the authenticator a finds tokens in token and login answers, for a
// recording to learn them first.
func tokenPaths(a *manifest.Authenticator) []har.TokenPath {
	var out []har.TokenPath
	for _, p := range auth.TokenPaths(a) {
		out = append(out, har.TokenPath{Name: p.Name, Path: p.Path})
	}
	return out
}

// startRecording makes the run's client record. It runs once the authenticator is built,
// so that every secret it registered is masked in the values the recording keeps (raw: a
// copy taken before the run changed them).
func (s *Session) startRecording(raw map[string]any) error {
	rec, red := s.in.Record, s.env.Redactor
	addCredentialValues(red, raw, "")
	meta := rec.Meta
	meta.Started = s.env.Now()
	meta.Values = har.MaskValues(raw, red).(map[string]any)
	if len(rec.State) > 0 && json.Valid(rec.State) {
		meta.State = json.RawMessage(red.Placeholders(string(rec.State)))
	}
	r, err := har.Create(rec.Path, s.Client.HTTP.Transport, har.Options{
		Creator:  rec.Creator,
		Meta:     &meta,
		Redactor: red,
		Now:      s.env.Now,
		Tokens:   tokenPaths(s.Def.Authenticator),
	})
	if err != nil {
		return &ArgumentError{err}
	}
	// No request has been made yet: the client takes the recorder from the first one on.
	s.Client.HTTP.Transport = r
	s.Recorder = r
	return nil
}

// copyValues is a deep copy of the values.
func copyValues(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = copyValues(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = copyValues(e)
		}
		return out
	}
	return v
}
