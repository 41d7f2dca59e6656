package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

var parametrizedDef = filepath.Join("..", "definitions", "parametrized-streams.yaml")

// The CDK 7.28.2's ParametrizedComponentsResolver yields one stream of the template per
// entry of list_of_parameters_for_stream, in order: catalog_books (page size 100, the
// mapping's default), catalog_authors (50), catalog_events (100), each reading the
// collection the mapping created in its requester's $parameters. No request makes them.
// The first request of each stream carries offset=0, which the CDK leaves out.
func TestParametrizedStreamsRead(t *testing.T) {
	res, log := demoRun(t, parametrizedDef, "read", "--format", "envelope", "--max-pages", "2")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	wantLog := `GET /v1/basic/books?limit=100&offset=0 200
GET /v1/basic/books?limit=100&offset=100 200
GET /v1/basic/authors?limit=50&offset=0 200
GET /v1/basic/authors?limit=50&offset=50 200
GET /v1/basic/events?limit=100&offset=0 200
GET /v1/basic/events?limit=100&offset=100 200
`
	if log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
	counts, first := streamCounts(t, res.Stdout)
	if counts != "catalog_books 200, catalog_authors 100, catalog_events 200" {
		t.Errorf("records: %s", counts)
	}
	if first["catalog_books"] != firstBook || first["catalog_authors"] != firstAuthor || first["catalog_events"] != firstEvent {
		t.Errorf("first records: %v", first)
	}
}

// check names catalog_authors, a stream the resolver makes: its first page of 50.
func TestParametrizedStreamsCheck(t *testing.T) {
	res, log := demoRun(t, parametrizedDef, "check")
	if res.Code != 0 || res.Stdout != "ok  catalog_authors  (50 records on the first page)\n" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if log != "GET /v1/basic/authors?limit=50&offset=0 200\n" {
		t.Errorf("requests:\n%s", log)
	}
}

// discover lists the made streams; the definition holds no static one.
func TestParametrizedStreamsDiscover(t *testing.T) {
	ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer ts.Close()
	config := writeFile(t, "config.json", `{"base_url":"`+ts.URL+`","username":"demo","password":"demo-password"}`)
	res := runCLI(t, "", "airbyte", "discover", "--manifest-path", parametrizedDef, "--config", config)
	var m struct {
		Catalog struct {
			Streams []struct{ Name string }
		}
	}
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &m) != nil {
		t.Fatalf("exit %d, stdout %s, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	var got []string
	for _, s := range m.Catalog.Streams {
		got = append(got, s.Name)
	}
	if strings.Join(got, ",") != "catalog_books,catalog_authors,catalog_events" {
		t.Errorf("streams %v", got)
	}
}

// streams lists the made streams, each with the page size its entry gave, without a
// request (noNetwork would fail one).
func TestParametrizedStreamsList(t *testing.T) {
	env := testEnv(nil)
	env.Transport = noNetwork{}
	res := runCLIEnv(t, env, "", "streams", parametrizedDef, "--testing-values", filepath.Join("..", "testing-values.example.yaml"))
	want := `STREAM           KIND     PAGINATION                      PARTITIONS  INCREMENTAL  PRIMARY KEY
catalog_books    dynamic  OffsetIncrement, page size 100  -           -            id
catalog_authors  dynamic  OffsetIncrement, page size 50   -           -            id
catalog_events   dynamic  OffsetIncrement, page size 100  -           -            id
`
	if res.Code != 0 || res.Stdout != want || res.Stderr != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// What the CDK refuses in a ParametrizedComponentsResolver is a validate error at its place:
// a mapping's condition ("`condition` is only supported for `ConfigComponentsResolver`"), a
// template reading stream_slice ("undeclared variables"); a `$parameters` in an entry, which
// the CDK's transformer drops, is a warning.
func TestParametrizedStreamsValidate(t *testing.T) {
	def := mutate(t, "parametrized-streams.yaml", "          value: \"{{ components_values['collection'] }}\"\n",
		"          value: \"{{ components_values['collection'] }}\"\n          condition: \"{{ true }}\"\n")
	res := runCLI(t, "", "validate", def)
	want := def + ":89:22: error: `condition` is only supported for ConfigComponentsResolver\n" +
		"  hint: the CDK's ParametrizedComponentsResolver refuses it\n"
	if res.Code != 3 || !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", res.Code, res.Stderr, want)
	}
	def = mutate(t, "parametrized-streams.yaml", "components_values.get('page_size', 100)", "stream_slice.get('page_size', 100)")
	res = runCLI(t, "", "validate", def)
	want = def + ":96:22: error: in `value`: unknown variable `stream_slice`\n"
	if res.Code != 3 || !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", res.Code, res.Stderr, want)
	}
	def = mutate(t, "parametrized-streams.yaml", "            collection: books\n", "            collection: books\n            $parameters: {page_size: 10}\n")
	res = runCLI(t, "", "validate", def)
	want = def + ":71:13: warning: `$parameters` in an entry of `list_of_parameters_for_stream` is dropped: the Airbyte CDK takes it out before the resolver sees the entry, so components_values has no `$parameters`\n"
	if res.Code != 0 || !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", res.Code, res.Stderr, want)
	}
}
