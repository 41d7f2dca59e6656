package auth

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"

	"connector/pkg/request"
)

// The session header is Authorization here, so that the endpoint writes it down.
const legacyYAML = `
    type: LegacySessionTokenAuthenticator
    username: "{{ config.get('username', '') }}"
    password: "{{ config.get('password', '') }}"
    header: Authorization
    session_token: "{{ config.get('session_token', '') }}"
    session_token_response_key: id
    login_url: session
    validate_session_url: user/current
`

// LegacySessionTokenAuthenticator: the configured token is checked before each request
// (GET url_base+validate_session_url); on a 401, or without a token, one login (a POST of
// the pair as Python's json.dumps writes it) gives the token for the run. Checked against
// the reference in cmd/auth_legacy_body_test.go.
func TestLegacySession(t *testing.T) {
	login := seen{"POST", "/api/session", "application/json", "", `{"username": "us\u00e9r", "password": "p\"w"}`}
	check := func(tok string) seen { return seen{"GET", "/api/user/current", "", tok, ""} }
	tests := []struct {
		name    string
		config  map[string]any
		answers []answer
		applied []string // the header on two data requests
		want    []seen
	}{{
		name:    "a valid token",
		config:  map[string]any{"session_token": "good", "username": "usér", "password": `p"w`},
		answers: []answer{{200, `{}`}},
		applied: []string{"good", "good"},
		want:    []seen{check("good"), check("good")},
	}, {
		name:    "a rejected token: one login for the run",
		config:  map[string]any{"session_token": "bad", "username": "usér", "password": `p"w`},
		answers: []answer{{401, `{}`}, {200, `{"id":"fresh"}`}, {401, `{}`}},
		applied: []string{"fresh", "fresh"},
		want:    []seen{check("bad"), login, check("bad")},
	}, {
		name:    "no token",
		config:  map[string]any{"username": "usér", "password": `p"w`},
		answers: []answer{{200, `{"id":4242424242}`}},
		applied: []string{"4242424242", "4242424242"},
		want:    []seen{login},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.answers...)
			tt.config["base_url"] = e.URL + "/api/"
			a, r, err := build(t, legacyYAML, tt.config, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != "LegacySessionTokenAuthenticator" {
				t.Errorf("Name = %s", a.Name())
			}
			var got []string
			for range 2 {
				got = append(got, applied(t, a).Header.Get("Authorization"))
			}
			if !reflect.DeepEqual(got, tt.applied) {
				t.Errorf("headers %q, want %q", got, tt.applied)
			}
			if !reflect.DeepEqual(e.requests(), tt.want) {
				t.Errorf("requests:\n  %+v\nwant:\n  %+v", e.requests(), tt.want)
			}
			for _, secret := range append([]string{"usér"}, tt.applied[0]) {
				if out := r.String("x " + secret + " x"); strings.Contains(out, secret) {
					t.Errorf("%q is not redacted: %s", secret, out)
				}
			}
		})
	}
}

func TestLegacySessionFailures(t *testing.T) {
	tests := []struct {
		name    string
		config  map[string]any
		answers []answer
		want    string
	}{{
		name:    "a rejected token and nothing to log in with",
		config:  map[string]any{"session_token": "bad"},
		answers: []answer{{401, `{}`}},
		want:    "authentication failed: LegacySessionTokenAuthenticator: the session token is not valid (or not set), and there is no username and password to log in with",
	}, {
		name:    "a login answer without the token",
		config:  map[string]any{"username": "u", "password": "secret-pw"},
		answers: []answer{{200, `{"token":"x"}`}},
		want:    `authentication failed: session login: 200 OK from POST {base}/api/session: no session token at session_token_response_key "id"`,
	}, {
		name:    "a login answer that is not an object",
		config:  map[string]any{"username": "u", "password": "secret-pw"},
		answers: []answer{{200, `[1]`}},
		want:    `authentication failed: session login: 200 OK from POST {base}/api/session: the answer is not a JSON object, so there is no session token at "id"`,
	}, {
		name:    "a failing login",
		config:  map[string]any{"username": "u", "password": "secret-pw"},
		answers: []answer{{403, `{"error":"no"}`}},
		want:    `authentication failed: session login: 403 Forbidden from POST {base}/api/session: {"error":"no"}`,
	}, {
		name:    "a failing check",
		config:  map[string]any{"session_token": "tok-secret", "username": "u", "password": "secret-pw"},
		answers: []answer{{500, `{"error":"down"}`}},
		want:    `authentication failed: validating the session token: 500 Internal Server Error from GET {base}/api/user/current: {"error":"down"}`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.answers...)
			tt.config["base_url"] = e.URL + "/api/"
			a, _, err := build(t, legacyYAML, tt.config, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Apply(context.Background(), request.New("data", "GET", "https://api.test/data"))
			var ae *Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v (%T), want an *auth.Error", err, err)
			}
			want := strings.ReplaceAll(tt.want, "{base}", e.URL)
			if err.Error() != want {
				t.Errorf("error:\n  %s\nwant:\n  %s", err, want)
			}
			for _, secret := range []string{"secret-pw", "tok-secret"} {
				if strings.Contains(err.Error(), secret) {
					t.Errorf("the error shows %s: %s", secret, err)
				}
			}
		})
	}
	if _, _, err := build(t, strings.Replace(legacyYAML, "header: Authorization", `header: "{{ config.get('h', '') }}"`, 1), map[string]any{"base_url": "https://api.test/"}, nil, nil); err == nil ||
		err.Error() != `LegacySessionTokenAuthenticator: header {{ config.get('h', '') }} renders empty` {
		t.Errorf("error %v", err)
	}
}

// pyJSONString writes as Python's json.dumps: non-ASCII escaped, <>& as they are.
func TestPyJSONString(t *testing.T) {
	for in, want := range map[string]string{
		"plain": `"plain"`, `a"b\c`: `"a\"b\\c"`, "é": `"\u00e9"`, "😀": `"\ud83d\ude00"`, "<a&b>": `"<a&b>"`, "\n": `"\n"`,
	} {
		if got := pyJSONString(in); got != want {
			t.Errorf("pyJSONString(%q) = %s, want %s", in, got, want)
		}
	}
}

const selectiveYAML = `
    type: SelectiveAuthenticator
    authenticator_selection_path: [credentials, auth_type]
    authenticators:
      token:
        type: BearerAuthenticator
        api_token: "{{ config['credentials']['api_token'] }}"
      basic:
        type: BasicHttpAuthenticator
        username: "{{ config['credentials']['username'] }}"
        password: "{{ config['credentials']['password'] }}"
      oauth:
        type: OAuthAuthenticator
        token_refresh_endpoint: https://auth.test/token
        client_id: "{{ config['credentials']['client_id'] }}"
        client_secret: "{{ config['credentials']['client_secret'] }}"
        refresh_token: "{{ config['credentials']['refresh_token'] }}"
`

// SelectiveAuthenticator runs the alternative the testing values select, and the
// credentials of every alternative are redacted, whichever runs.
func TestSelective(t *testing.T) {
	creds := func(choice string) map[string]any {
		return map[string]any{"credentials": map[string]any{
			"auth_type": choice, "api_token": "tok-secret-1", "username": "user-secret-2", "password": "pass-secret-3",
			"client_id": "id-secret-4", "client_secret": "cs-secret-5", "refresh_token": "rt-secret-6"}}
	}
	for choice, want := range map[string]string{"token": "Bearer tok-secret-1", "basic": "Basic dXNlci1zZWNyZXQtMjpwYXNzLXNlY3JldC0z"} {
		a, r, err := build(t, selectiveYAML, creds(choice), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := applied(t, a).Header.Get("Authorization"); got != want {
			t.Errorf("%s: Authorization %q, want %q", choice, got, want)
		}
		all := "tok-secret-1 user-secret-2 pass-secret-3 id-secret-4 cs-secret-5 rt-secret-6"
		if got := r.String(all); strings.Contains(got, "secret") {
			t.Errorf("%s: not every credential is redacted: %s", choice, got)
		}
	}
	_, _, err := build(t, selectiveYAML, creds("saml"), nil, nil)
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "saml") {
		t.Errorf("error %v, want a *ConfigError naming the choice", err)
	}
}
