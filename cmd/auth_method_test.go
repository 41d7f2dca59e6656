package cmd

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// One authentication method with two credentials (rollbar.yaml: a project token for some
// streams, an account token for others, in the same header) is one method: the definition
// loads, and each stream sends the token its own requester names, as the CDK does.
func TestOneMethodTwoCredentials(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" "+r.Header.Get("X-Access-Token"))
		mu.Unlock()
		w.Write([]byte(`[{"id":1}]`))
	}))
	t.Cleanup(api.Close)
	def := writeFile(t, "def.yaml", `version: 6.0.0
definitions:
  project_requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
    authenticator:
      type: ApiKeyAuthenticator
      api_token: "{{ config['project_token'] }}"
      inject_into: {type: RequestOption, inject_into: header, field_name: X-Access-Token}
  account_requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
    authenticator:
      type: ApiKeyAuthenticator
      api_token: '{{ config["account_token"] }}'
      inject_into: {type: RequestOption, inject_into: header, field_name: X-Access-Token}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/project_requester", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  - type: DeclarativeStream
    name: projects
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/account_requester", path: /projects}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      base_url: {type: string}
      project_token: {type: string, airbyte_secret: true}
      account_token: {type: string, airbyte_secret: true}
`)
	if v := runCLI(t, "", "validate", def); v.Code != 0 {
		t.Fatalf("validate: exit %d\n%s", v.Code, v.Stderr)
	}
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nproject_token: proj-tok-1\naccount_token: acct-tok-2\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("read: exit %d\n%s", res.Code, res.Stderr)
	}
	if got, want := strings.Join(seen, "\n"), "/items proj-tok-1\n/projects acct-tok-2"; got != want {
		t.Errorf("requests:\n%s\nwant:\n%s", got, want)
	}
}
