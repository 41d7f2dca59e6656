package cmd

import (
	"net/http"
	"strings"
	"testing"
)

// The seed: "When the grant type is refresh_token, the end user must provide a refresh token."
// An empty one is refused before any request, as invalid testing values (exit 3).
func TestOAuthRefreshGrantNeedsARefreshToken(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"access_token":"a","expires_in":3600}`))
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
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          grant_type: refresh_token
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
          refresh_token: "{{ config['refresh_token'] }}"
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`)
	creds := writeFile(t, "creds.yaml", "base_url: "+api.URL+"\nclient_id: cid-1\nclient_secret: csecret-1\nrefresh_token: \"\"\n")
	for _, command := range []string{"read", "check", "paginate-trace"} {
		res := runCLI(t, "", command, def, "--testing-values", creds)
		want := "error: the OAuth grant type refresh_token needs a refresh token, but refresh_token ({{ config['refresh_token'] }}) is empty in the testing values; set it, or use grant_type client_credentials\n"
		if res.Code != 3 || res.Stderr != want || res.Stdout != "" {
			t.Errorf("%s: exit %d, stdout %q\nstderr %q\nwant %q", command, res.Code, res.Stdout, res.Stderr, want)
		}
		if strings.Contains(res.Stderr, "csecret-1") {
			t.Errorf("%s: secret in stderr", command)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
