package cmd

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// The requests below were compared with the CDK 7.28.2 on the same definitions and values
// (run-cdk read against logserver.py): the same methods, URLs, authentication headers and
// bodies. Where they differ it is said.

const selectiveRequester = `
type: HttpRequester
url_base: "{{ config['base_url'] }}"
path: /items
authenticator:
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
    key:
      type: ApiKeyAuthenticator
      api_token: "{{ config['credentials']['api_key'] }}"
      inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}
    "True":
      type: BearerAuthenticator
      api_token: "{{ config['credentials']['other_token'] }}"
    none:
      type: NoAuth
`

func TestSelectiveAuthenticatorChoosesFromTheTestingValues(t *testing.T) {
	secrets := "  api_token: tok-secret-1\n  username: user-secret-2\n  password: pass-secret-3\n  api_key: key-secret-4\n  other_token: tok-secret-5\n"
	tests := []struct {
		name, choice string
		url, auth    string
	}{
		{"bearer", "token", "/items", "Bearer tok-secret-1"},
		{"basic", "basic", "/items", "Basic dXNlci1zZWNyZXQtMjpwYXNzLXNlY3JldC0z"},
		{"api key", "key", "/items?api_key=key-secret-4", ""},
		// The CDK takes str() of the value: a YAML true selects the key "True".
		{"boolean value", "true", "/items", "Bearer tok-secret-5"},
		{"no auth", "none", "/items", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			def := e2eOneStream(selectiveRequester, e2eWholeBody)
			res := e2eRead(t, api, def, "credentials:\n  auth_type: "+tt.choice+"\n"+secrets)
			e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
			e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: tt.url, Headers: map[string]string{"Authorization": tt.auth}})
		})
	}
}

func TestSelectiveAuthenticatorBadSelection(t *testing.T) {
	tests := []struct{ name, values, stderr string }{
		{"unknown name", "credentials:\n  auth_type: oauth\n",
			"error: values.yaml: the testing values set credentials.auth_type to \"oauth\", which names no authenticator of the SelectiveAuthenticator; choices: token, basic, key, True, none\n"},
		{"missing value", "credentials: {}\n",
			"error: values.yaml: the SelectiveAuthenticator reads the authenticator to use at credentials.auth_type in the testing values, and there is no value there; set it to one of: token, basic, key, True, none\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, e2eAnswer(`[]`))
			def := e2eOneStream(selectiveRequester, e2eWholeBody)
			for _, cmd := range []string{"read", "check", "paginate-trace"} {
				defPath := writeFile(t, "def.yaml", def)
				vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+tt.values)
				res := runCLI(t, "", cmd, defPath, "--testing-values", vals)
				res.Stderr = strings.ReplaceAll(res.Stderr, vals, "values.yaml")
				e2eCheckResult(t, api, res, 3, "", tt.stderr)
			}
			e2eCheckRequests(t, api)
		})
	}
}

func TestSelectiveAuthenticatorValidatesEveryAlternative(t *testing.T) {
	def := e2eOneStream(`
type: HttpRequester
url_base: "{{ config['base_url'] }}"
authenticator:
  type: SelectiveAuthenticator
  authenticator_selection_path: [auth]
  authenticators:
    token:
      type: BearerAuthenticator
      api_token: literal-token
    oauth:
      type: OAuthAuthenticator
      grant_type: password
      client_id: "{{ config['id'] }}"
      client_secret: "{{ config['secret'] }}"
      token_refresh_endpoint: https://example.com/token
    broken:
      type: BearerAuthenticator
      api_token: "{{ config['token'] ) }}"
`, e2eWholeBody)
	res := runCLI(t, "", "validate", writeFile(t, "def.yaml", def))
	want := []string{
		"def.yaml:17:26: error: the bearer token (`api_token`) is written in the definition",
		"def.yaml:20:27: error: OAuth grant type `password` is not supported",
		// A template that does not compile only matters when the alternative is selected
		// (the CDK fails then, not before): a warning, and testing values selecting it
		// are refused.
		"def.yaml:26:46: warning: in `api_token`: unexpected `)`",
	}
	if res.Code != 3 {
		t.Errorf("exit %d, want 3", res.Code)
	}
	for _, w := range want {
		if !strings.Contains(res.Stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, res.Stderr)
		}
	}
}

func TestSelectiveAuthenticatorRefusesABrokenAlternative(t *testing.T) {
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := e2eOneStream(`
type: HttpRequester
url_base: "{{ config['base_url'] }}"
authenticator:
  type: SelectiveAuthenticator
  authenticator_selection_path: [auth]
  authenticators:
    token:
      type: BearerAuthenticator
      api_token: "{{ config['token'] }}"
    broken:
      type: BearerAuthenticator
      api_token: "{{ config['token'] ) }}"
`, e2eWholeBody)
	res := e2eRead(t, api, def, "auth: token\ntoken: tok-secret-1\n")
	res.Stderr = regexp.MustCompile(`/\S*/def\.yaml`).ReplaceAllString(res.Stderr, "def.yaml")
	e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "warning: def.yaml:20:46: in `api_token`: unexpected `)`, expected `}}` (in the SelectiveAuthenticator alternative `broken`: testing values that select it are refused)\n")
	e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/", Headers: map[string]string{"Authorization": "Bearer tok-secret-1"}})

	api = newRecorder(t, e2eAnswer(`[{"id":1}]`))
	res = e2eRead(t, api, def, "auth: broken\ntoken: tok-secret-1\n")
	if res.Code != 3 || !strings.Contains(res.Stderr, "set auth to \"broken\", and that authenticator of the SelectiveAuthenticator cannot run: line 20:46: in `api_token`: unexpected `)`") {
		t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	e2eCheckRequests(t, api)
}

// Every alternative's credentials are secrets, the one selected and the others.
func TestSelectiveAuthenticatorRedactsEveryAlternative(t *testing.T) {
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		// The API echoes secrets of the alternatives that are not used.
		w.Write([]byte(`{"next": "pass-secret-3 key-secret-4"}`))
	})
	def := e2eOneStream(selectiveRequester, e2eWholeBody)
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\ncredentials:\n  auth_type: token\n  api_token: tok-secret-1\n  username: user-secret-2\n  password: pass-secret-3\n  api_key: key-secret-4\n")
	res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals, "--max-pages", "1")
	for _, s := range []string{"tok-secret-1", "user-secret-2", "pass-secret-3", "key-secret-4"} {
		if strings.Contains(res.Stdout+res.Stderr, s) {
			t.Errorf("%s printed:\n%s\n%s", s, res.Stdout, res.Stderr)
		}
	}
	if res.Code != 0 || !strings.Contains(res.Stdout, "Authorization: Bearer ****") {
		t.Errorf("exit %d:\n%s\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// definitions/selective-auth.yaml reads the demo API with each of its alternatives.
func TestSelectiveAuthDefinitionReadsTheDemoAPI(t *testing.T) {
	for _, method := range []string{"basic", "bearer", "api_key"} {
		t.Run(method, func(t *testing.T) {
			ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
			defer ts.Close()
			res := runCLI(t, "", "read", filepath.Join("..", "definitions", "selective-auth.yaml"),
				"--testing-values", filepath.Join("..", "testing-values.example.yaml"),
				"--set", "base_url="+ts.URL, "--set", "auth_method="+method)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			if n := strings.Count(res.Stdout, "\n"); n != demoapi.DefaultRecords {
				t.Errorf("%d records, want %d", n, demoapi.DefaultRecords)
			}
		})
	}
}
