package cmd

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// formOnlyAPI is a token endpoint that takes only RFC 6749's form-encoded body (it answers
// 400 to JSON, as Microsoft's does) and a data endpoint that wants its token.
func formOnlyAPI(t *testing.T) (*httptest.Server, func() []string) {
	var mu sync.Mutex
	var tokenBodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			body, _ := io.ReadAll(r.Body)
			mu.Lock()
			tokenBodies = append(tokenBodies, r.Header.Get("Content-Type")+" "+string(body))
			mu.Unlock()
			if r.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
				w.WriteHeader(http.StatusBadRequest)
				fmt.Fprint(w, `{"error":"invalid_request","error_description":"AADSTS900144: The request body must contain the following parameter: 'grant_type'."}`)
				return
			}
			fmt.Fprint(w, `{"access_token":"at-form","expires_in":3600}`)
		case "/items":
			if r.Header.Get("Authorization") != "Bearer at-form" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			fmt.Fprint(w, `[{"id":1}]`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), tokenBodies...) }
}

const formOAuthDef = `version: 6.0.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          grant_type: client_credentials
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, client_id, client_secret]
    properties:
      base_url: {type: string}
      client_id: {type: string}
      client_secret: {type: string, airbyte_secret: true}
`

// read sends the seed's JSON token request first; refused, it sends the form once, says so
// on stderr, and reads.
func TestReadSendsTheFormWhenTheTokenEndpointRefusesJSON(t *testing.T) {
	api, bodies := formOnlyAPI(t)
	def := writeFile(t, "def.yaml", formOAuthDef)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nclient_id: app-1\nclient_secret: s3cr3t-value\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 || res.Stdout != `{"id":1}`+"\n" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	note := "note: the OAuth token endpoint " + api.URL + "/token answered 400 Bad Request to a JSON body and took the form-encoded one (RFC 6749): token requests are form-encoded for the rest of the run\n"
	if !strings.Contains(res.Stderr, note) {
		t.Errorf("stderr:\n%s\nwant the line:\n%s", res.Stderr, note)
	}
	want := []string{
		`application/json {"client_id":"app-1","client_secret":"s3cr3t-value","grant_type":"client_credentials"}`,
		"application/x-www-form-urlencoded client_id=app-1&client_secret=s3cr3t-value&grant_type=client_credentials",
	}
	if got := bodies(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("token requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// airbyte sends the form from the first token request, as the CDK does.
func TestAirbyteSendsTheFormTokenRequest(t *testing.T) {
	api, bodies := formOnlyAPI(t)
	def := writeFile(t, "def.yaml", formOAuthDef)
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`","client_id":"app-1","client_secret":"s3cr3t-value"}`)
	res := runCLI(t, "", "airbyte", "check", "--manifest-path", def, "--config", config)
	if res.Code != 0 || !strings.Contains(res.Stdout, `"status":"SUCCEEDED"`) {
		t.Fatalf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	// The CDK's order: the grant type first (no refresh token with client_credentials).
	want := "application/x-www-form-urlencoded grant_type=client_credentials&client_id=app-1&client_secret=s3cr3t-value"
	if got := bodies(); len(got) != 1 || got[0] != want {
		t.Errorf("token requests %q, want only %q", got, want)
	}
}
