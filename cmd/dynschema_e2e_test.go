package cmd

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// airtableAPI answers the endpoints of testdata/dynschema/airtable.yaml (the corpus's
// airtable definition, its url_base read from the testing values) and logs the requests.
func airtableAPI(t *testing.T, log *logBuffer) *httptest.Server {
	t.Helper()
	dir := filepath.Join("testdata", "dynschema")
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.Write([]byte(r.Method + " " + r.URL.RequestURI() + "\n"))
		file := map[string]string{
			"/v0/meta/bases":             "bases.json",
			"/v0/meta/bases/app1/tables": "tables.json",
			"/v0/app1/tbl1":              "tbl1-1.json",
			"/v0/app1/tbl2":              "tbl2.json",
		}[r.URL.Path]
		if r.URL.Path == "/v0/app1/tbl1" && r.URL.Query().Get("offset") == "itr2" {
			file = "tbl1-2.json"
		}
		b, err := os.ReadFile(filepath.Join(dir, file))
		if file == "" || err != nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
}

// A DynamicSchemaLoader inside a dynamic stream (airtable): each stream's schema is built
// from its table's entry in GET meta/bases/app1/tables (the first record its filter keeps),
// and the records are normalized to it. want.jsonl holds the records the CDK 7.28.2 emits
// for the same definition, config and responses (run-cdk read; same values, compared with
// sorted keys: the CDK's KeysToLower orders keys as a Python set does). The definition's
// concurrency_level reads 5 slices at once; --concurrency 1 keeps the requests in the order
// the log below holds (the records are in that order whatever the concurrency).
func TestDynamicSchemaLoaderAirtable(t *testing.T) {
	log := &logBuffer{}
	ts := airtableAPI(t, log)
	defer ts.Close()
	values := filepath.Join(t.TempDir(), "values.yaml")
	os.WriteFile(values, []byte("base_url: "+ts.URL+"/v0/\ncredentials:\n  auth_method: api_key\n  api_key: key123\n"), 0o600)
	res := runCLI(t, "", "read", filepath.Join("testdata", "dynschema", "airtable.yaml"), "--testing-values", values, "--format", "envelope",
		"--concurrency", "1")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	want, _ := os.ReadFile(filepath.Join("testdata", "dynschema", "want.jsonl"))
	if res.Stdout != string(want) {
		t.Errorf("records:\n%s\nwant:\n%s", res.Stdout, want)
	}
	wantLog := `GET /v0/meta/bases
GET /v0/meta/bases/app1/tables
GET /v0/meta/bases/app1/tables
GET /v0/app1/tbl1
GET /v0/app1/tbl1?offset=itr2
GET /v0/meta/bases/app1/tables
GET /v0/app1/tbl2
`
	if log.String() != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log.String(), wantLog)
	}
}

// paginate-trace shows the schema loader's request under its own heading.
func TestDynamicSchemaLoaderTrace(t *testing.T) {
	log := &logBuffer{}
	ts := airtableAPI(t, log)
	defer ts.Close()
	values := filepath.Join(t.TempDir(), "values.yaml")
	os.WriteFile(values, []byte("base_url: "+ts.URL+"/v0/\ncredentials:\n  auth_method: api_key\n  api_key: key123\n"), 0o600)
	res := runCLI(t, "", "paginate-trace", filepath.Join("testdata", "dynschema", "airtable.yaml"), "--testing-values", values, "--stream", "my_base/scores/tbl2")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	for _, want := range []string{
		"schema loader dynamic_properties, read for the schema of my_base/scores/tbl2 (DynamicSchemaLoader; NoPagination)",
		"dynamic_properties (schema of my_base/scores/tbl2): 1 page, 1 record read for the schema",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("trace lacks %q:\n%s", want, res.Stdout)
		}
	}
}
