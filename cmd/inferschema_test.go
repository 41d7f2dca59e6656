package cmd

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// infer-schema reads each stream as the Builder's test read does and writes the schema the
// CDK's SchemaInferrer makes of its records.
func TestInferSchema(t *testing.T) {
	api := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer api.Close()
	vals := authDemoValues(t, api.URL)

	res := runCLI(t, "", "infer-schema", authDefinition("incremental-datetime.yaml"), "--testing-values", vals, "--format", "json")
	want := `{"stream":"events","schema":{"$schema":"http://json-schema.org/schema#","type":"object","properties":{"id":{"type":"number"},"kind":{"type":["string","null"]},"book_id":{"type":["number","null"]},"quantity":{"type":["number","null"]},"updated_at":{"type":"string"}},"required":["id","updated_at"]}}` + "\n"
	if res.Code != 0 || res.Stdout != want || res.Stderr != "events: schema inferred from 208 records in 10 pages\n" {
		t.Errorf("exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}

	// YAML, ready to paste under the stream, into a folder.
	dir := t.TempDir()
	res = runCLI(t, "", "infer-schema", authDefinition("incremental-datetime.yaml"), "--testing-values", vals, "-o", dir, "-q")
	got, err := os.ReadFile(filepath.Join(dir, "events.yaml"))
	if res.Code != 0 || err != nil || res.Stdout != "" || res.Stderr != "" {
		t.Fatalf("exit %d, %v, stdout %q, stderr %q", res.Code, err, res.Stdout, res.Stderr)
	}
	wantYAML := `schema_loader:
  type: InlineSchemaLoader
  schema:
    $schema: http://json-schema.org/schema#
    type: object
    properties:
      id:
        type: number
      kind:
        type:
          - string
          - "null"
`
	if !strings.HasPrefix(string(got), wantYAML) || !strings.HasSuffix(string(got), "    required:\n      - id\n      - updated_at\n") {
		t.Errorf("events.yaml:\n%s", got)
	}

	// A stream that fails is said, and the exit code is 1.
	bad := authDemoValues(t, api.URL)
	data, _ := os.ReadFile(bad)
	os.WriteFile(bad, []byte(strings.Replace(string(data), "bearer_token: demo-bearer-token", "bearer_token: wrong-token-x", 1)), 0o600)
	res = runCLI(t, "", "infer-schema", authDefinition("bearer-auth.yaml"), "--testing-values", bad)
	if res.Code != 1 || res.Stdout != "" || !strings.Contains(res.Stderr, "error: books: ") || strings.Contains(res.Stderr, "wrong-token-x") {
		t.Errorf("exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}

	// -o must be a folder.
	res = runCLI(t, "", "infer-schema", authDefinition("bearer-auth.yaml"), "--testing-values", vals, "-o", filepath.Join(dir, "nope"))
	if res.Code != 2 || !strings.Contains(res.Stderr, "not a folder") {
		t.Errorf("exit %d, stderr %s", res.Code, res.Stderr)
	}
}
