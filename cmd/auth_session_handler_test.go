package cmd

import (
	"net/http"
	"strings"
	"testing"
)

// The login requester's own error_handler decides about login failures: a FAIL filter stops
// at once with its message instead of the default retries of a 503.
func TestSessionLoginUsesItsOwnErrorHandler(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			w.WriteHeader(503)
			w.Write([]byte(`{"error":"maintenance"}`))
			return
		}
		w.Write([]byte(`[{"id":1}]`))
	})
	def := writeFile(t, "def.yaml", `
version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
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
          type: SessionTokenAuthenticator
          login_requester:
            type: HttpRequester
            url_base: "{{ config['base_url'] }}"
            path: /login
            http_method: POST
            request_body_json:
              password: "{{ config['password'] }}"
            error_handler:
              type: DefaultErrorHandler
              response_filters:
                - type: HttpResponseFilter
                  action: FAIL
                  http_codes: [503]
                  error_message: the login service is down for maintenance
          session_token_path: [token]
          request_authentication: {type: Bearer}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`)
	creds := writeFile(t, "creds.yaml", "base_url: "+api.URL+"\npassword: pw-secret-1\n")
	res := runCLI(t, "", "read", def, "--testing-values", creds)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1; stderr:\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "the login service is down for maintenance") {
		t.Errorf("stderr does not carry the handler's message:\n%s", res.Stderr)
	}
	if strings.Contains(res.Stderr, "pw-secret-1") {
		t.Errorf("stderr leaks the password:\n%s", res.Stderr)
	}
	if reqs := api.requests(); len(reqs) != 1 || reqs[0].URL != "/login" {
		t.Errorf("requests %+v, want exactly one login and no retry", reqs)
	}
}
