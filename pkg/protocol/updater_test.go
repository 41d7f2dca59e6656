package protocol

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// updaterDef rotates its refresh token (an OAuth refresh_token_updater), as freshbooks,
// trustpilot and zendesk-sunshine of the Airbyte catalogue do.
const updaterDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
          refresh_token: "{{ config['refresh_token'] }}"
          refresh_token_updater: {}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, client_id, client_secret, refresh_token]
    properties:
      base_url: {type: string}
      client_id: {type: string}
      client_secret: {type: string, airbyte_secret: true}
      refresh_token: {type: string, airbyte_secret: true}
`

// runUpdater runs a protocol command on updaterDef with a config that holds no access token,
// and returns stdout and the requests the API received.
func runUpdater(t *testing.T, command string) (string, []string, error) {
	t.Helper()
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path)
		http.Error(w, "no", http.StatusUnauthorized)
	}))
	defer srv.Close()
	config := `{"base_url":"` + srv.URL + `","client_id":"id-1","client_secret":"secret-77","refresh_token":"refresh-88"}`
	out, err := runFiles(t, command, map[string]string{"def.yaml": updaterDef, "config.json": config})
	return out, got, err
}

// The CDK's discover sends no request, so it asks no access token of a config whose
// authenticator rotates its refresh token: neither do we.
func TestDiscoverNeedsNoInitialAccessToken(t *testing.T) {
	out, got, err := runUpdater(t, "discover")
	if err != nil || len(got) != 0 {
		t.Fatalf("%v, requests %q, output %s", err, got, out)
	}
	// CDK 7.28.2 writes this same line for updaterDef and this config
	// (/work/cdkref/run source discover --config config.json --manifest-path def.yaml).
	want := `{"type":"CATALOG","catalog":{"streams":[{"name":"items","json_schema":{},"supported_sync_modes":["full_refresh"],"source_defined_primary_key":[["id"]],"is_resumable":false,"is_file_based":false}]}}`
	if strings.TrimSpace(out) != want {
		t.Errorf("discover wrote\n%s\nwant\n%s", out, want)
	}
}

// read still stops before any request when the initial access token is missing.
func TestReadStillNeedsInitialAccessToken(t *testing.T) {
	out, got, err := runUpdater(t, "read")
	if err == nil || len(got) != 0 {
		t.Fatalf("err %v, requests %q", err, got)
	}
	if !strings.Contains(out, `"failure_type":"config_error"`) || !strings.Contains(out, "missing: credentials.access_token, credentials.token_expiry_date") {
		t.Errorf("read wrote %s", out)
	}
}
