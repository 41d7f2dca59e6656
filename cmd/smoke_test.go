package cmd

import (
	"net/http"
	"testing"
)

func TestReadBearerSmoke(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"data":[{"id":12345678901234567890,"b":"<x>&"},{"id":2}]}`))
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
        path: /v1/items
        http_method: GET
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['token'] }}"
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, token]
    properties:
      base_url: {type: string}
      token: {type: string, airbyte_secret: true}
`)
	creds := writeFile(t, "creds.yaml", "base_url: "+api.URL+"\ntoken: tok-123\n")
	res := runCLI(t, "", "read", def, "--testing-values", creds)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	want := "{\"id\":12345678901234567890,\"b\":\"<x>&\"}\n{\"id\":2}\n"
	if res.Stdout != want {
		t.Errorf("stdout %q, want %q", res.Stdout, want)
	}
	reqs := api.requests()
	if len(reqs) != 1 || reqs[0].Method != "GET" || reqs[0].URL != "/v1/items" ||
		reqs[0].Header.Get("Authorization") != "Bearer tok-123" {
		t.Errorf("requests %+v", reqs)
	}
}
