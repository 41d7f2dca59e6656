package cmd

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// --check-schema checks each record against the stream's declared schema and primary key,
// and says on stderr what does not fit; --strict makes that a failure.
func TestCheckSchema(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			fmt.Fprint(w, `{"data":[{"id":1,"price":"cheap"},{"id":1,"price":2},{"price":3},{"id":4,"price":4}]}`)
		default:
			fmt.Fprint(w, `{"data":[]}`)
		}
	}))
	defer api.Close()
	def := writeFile(t, "def.yaml", `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
definitions:
  requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}"}
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    schema_loader:
      type: InlineSchemaLoader
      schema: {type: object, properties: {id: {type: integer}, price: {type: number}}}
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /items}, record_selector: {$ref: "#/definitions/selector"}}
  - type: DeclarativeStream
    name: empty
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /empty}, record_selector: {$ref: "#/definitions/selector"}}
spec:
  type: Spec
  connection_specification: {type: object, required: [base_url], properties: {base_url: {type: string}}}
`)
	warnings := `warning: items: schema check of 4 records: 1 schema mismatch, 1 missing primary key, 1 repeated primary key
  record 1 /price: got string, want number
  record 2 /id: primary key id = 1 already in record 1
  record 3 /id: primary key field id is missing
`
	for _, cmd := range [][]string{{"read"}, {"paginate-trace"}, {"check"}} {
		args := append(cmd, def, "--set", "base_url="+api.URL, "--check-schema")
		res := runCLI(t, "", args...)
		if res.Code != 0 || !strings.Contains(res.Stderr, warnings) {
			t.Errorf("%s: exit %d, stderr:\n%s", cmd[0], res.Code, res.Stderr)
		}
		if cmd[0] != "check" && !strings.Contains(res.Stderr, "warning: empty: the stream returned no records") {
			t.Errorf("%s: no warning for the empty stream:\n%s", cmd[0], res.Stderr)
		}
		res = runCLI(t, "", append(args, "--strict")...)
		if res.Code != 1 || !strings.Contains(res.Stderr, "error: --strict: the schema check found ") {
			t.Errorf("%s --strict: exit %d, stderr:\n%s", cmd[0], res.Code, res.Stderr)
		}
	}
	// Without --check-schema, nothing is checked.
	if res := runCLI(t, "", "read", def, "--set", "base_url="+api.URL); res.Code != 0 || strings.Contains(res.Stderr, "schema") {
		t.Errorf("read: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
}
