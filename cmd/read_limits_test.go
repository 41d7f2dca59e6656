package cmd

import (
	"net/http"
	"testing"
)

// A --max-records limit reached with the last record of the last page left nothing out, so
// read must not claim it stopped early; one record fewer must say so.
func TestMaxRecordsAtTheNaturalEnd(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"id":1},{"id":2}]`))
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
      requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
`)
	creds := writeFile(t, "creds.yaml", "base_url: "+api.URL+"\n")
	tests := []struct {
		max, stdout, stderr string
	}{
		{"2", "{\"id\":1}\n{\"id\":2}\n", ""},
		{"1", "{\"id\":1}\n", "items: stopped early by --max-records 1 after 1 record and 1 page\n"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", "read", def, "--testing-values", creds, "--max-records", tt.max)
		if res.Code != 0 || res.Stdout != tt.stdout || res.Stderr != tt.stderr {
			t.Errorf("--max-records %s: exit %d\nstdout %q\nstderr %q\nwant stdout %q stderr %q",
				tt.max, res.Code, res.Stdout, res.Stderr, tt.stdout, tt.stderr)
		}
	}
}
