package cmd

import (
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// authSecretForms are the ways a secret may leak: as is, URL-encoded and base64-encoded.
func authSecretForms(s string) []string {
	return []string{s, url.QueryEscape(s), url.PathEscape(s),
		base64.StdEncoding.EncodeToString([]byte(s)), base64.URLEncoding.EncodeToString([]byte(s))}
}

// assertNoAuthSecret fails when text carries any form of any secret.
func assertNoAuthSecret(t *testing.T, where, text string, secrets []string) {
	t.Helper()
	for _, s := range secrets {
		if len(s) < 3 {
			continue
		}
		for _, f := range authSecretForms(s) {
			if strings.Contains(text, f) {
				t.Errorf("%s contains the secret %q (as %q):\n%s", where, s, f, text)
				return
			}
		}
	}
}

// authEchoAPI refuses every request with 401 and echoes it back: request line, headers and body,
// as a careless API would. Anything the connector prints from it must be redacted.
func authEchoAPI(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var keys []string
		for k := range r.Header {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var b strings.Builder
		for _, k := range keys {
			if k == "Authorization" || strings.HasPrefix(k, "X-") {
				fmt.Fprintf(&b, "%s=%s ", k, r.Header.Get(k))
			}
		}
		fmt.Fprintf(&b, "body=%s url=%s", body, r.URL.RequestURI())
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(b.String()))
	})
}

// TestNoSecretInOutputForEveryAuthMethod runs read, check and paginate-trace for every
// authentication method against the demo API (right and wrong credentials) and against an
// API that echoes the request in its errors, and looks for every credential and every issued
// token, in every encoding, in stderr, the trace and the check report.
func TestNoSecretInOutputForEveryAuthMethod(t *testing.T) {
	t.Parallel()
	cases := []struct {
		def  string
		keys []string
	}{
		{"no-auth.yaml", nil},
		{"basic-auth.yaml", []string{"username", "password"}},
		{"basic-auth-empty-password.yaml", []string{"reader_username"}},
		{"bearer-auth.yaml", []string{"bearer_token"}},
		{"api-key-header.yaml", []string{"api_key"}},
		{"api-key-query.yaml", []string{"api_key"}},
		{"api-key-body-data.yaml", []string{"api_key"}},
		{"api-key-body-json.yaml", []string{"api_key"}},
		{"api-key-body-json-nested.yaml", []string{"api_key"}},
		{"oauth-refresh-token.yaml", []string{"client_id", "client_secret", "refresh_token"}},
		{"oauth-client-credentials.yaml", []string{"client_id", "client_secret"}},
		{"oauth-expiry-date.yaml", []string{"client_id", "client_secret", "refresh_token"}},
		{"oauth-rotating-refresh-token.yaml", []string{"client_id", "client_secret", "credentials.refresh_token", "credentials.access_token"}},
		{"session-token.yaml", []string{"username", "password"}},
		{"session-token-no-expiration.yaml", []string{"username", "password"}},
	}
	demoCreds := map[string]string{
		"username": "demo", "password": "demo-password", "reader_username": "reader",
		"bearer_token": "demo-bearer-token", "api_key": "demo-api-key",
		"client_id": "demo-client", "client_secret": "demo-client-secret", "refresh_token": "demo-refresh-token",
		"credentials.refresh_token": "demo-rotating-refresh-token", "credentials.access_token": "demo-expired-access-token",
	}
	odd := func(key string) string { return "s3/" + key + "+=?&é x:y%" }
	for _, c := range cases {
		t.Run(strings.TrimSuffix(c.def, ".yaml"), func(t *testing.T) {
			t.Parallel()
			echo := authEchoAPI(t)
			type server struct {
				name   string
				url    string                  // "": a fresh demo API for every command (rotated tokens are single-use)
				values func(key string) string // nil: the demo values of the file
				wantOK bool
			}
			servers := []server{
				{"demo", "", nil, true},
				{"wrong", "", func(k string) string { return "wrong-" + strings.ReplaceAll(k, ".", "-") + "-v4lue" }, c.keys == nil},
				{"echo", echo.URL, odd, false},
			}
			for _, srv := range servers {
				var secrets []string
				var set []string
				creds := map[string]string{}
				for _, k := range c.keys {
					v := demoCreds[k]
					if srv.values != nil {
						v = srv.values(k)
						set = append(set, "--set", k+"="+v) // --set takes the text as it is
					}
					creds[k] = v
					secrets = append(secrets, v, demoCreds[k])
				}
				for _, pair := range [][2]string{{creds["username"], creds["password"]}, {creds["reader_username"], ""}, {"demo", "demo-password"}} {
					if pair[0] != "" {
						secrets = append(secrets, base64.StdEncoding.EncodeToString([]byte(pair[0]+":"+pair[1])))
					}
				}
				commands := [][]string{
					{"read", "--max-pages", "2"},
					{"check"},
					{"check", "--format", "json"},
					{"paginate-trace", "--max-pages", "2"},
					{"paginate-trace", "--max-pages", "2", "--format", "json"},
				}
				for _, cmdArgs := range commands {
					demo := newAuthDemo(t, demoapi.Options{Records: 120})
					base := srv.url
					if base == "" {
						base = demo.URL
					}
					vals := authDemoValues(t, base)
					args := append([]string{cmdArgs[0], authDefinition(c.def), "--testing-values", vals}, cmdArgs[1:]...)
					args = append(args, set...)
					res := runCLI(t, "", args...)
					what := srv.name + " " + strings.Join(cmdArgs, " ")
					if (res.Code == 0) != srv.wantOK {
						t.Errorf("%s: exit %d, stderr:\n%s\nstdout:\n%s", what, res.Code, res.Stderr, res.Stdout)
					}
					all := append(append([]string(nil), secrets...), demo.tokens()...)
					assertNoAuthSecret(t, what+" stderr", res.Stderr, all)
					if cmdArgs[0] != "read" {
						assertNoAuthSecret(t, what+" stdout", res.Stdout, all)
					}
					if srv.name == "echo" && cmdArgs[0] == "paginate-trace" && c.keys != nil && !strings.Contains(res.Stdout, "****") {
						t.Errorf("%s: the trace shows no redacted value:\n%s", what, res.Stdout)
					}
				}
			}
		})
	}
}
