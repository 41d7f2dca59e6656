package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStateFileFolderCheckedBeforeTheRead: a --state or --state-out in a folder that does
// not exist is a usage error before any request, not a failure at the first checkpoint.
func TestStateFileFolderCheckedBeforeTheRead(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	missing := filepath.Join(t.TempDir(), "no", "such", "state.json")
	for _, flag := range []string{"--state", "--state-out"} {
		res := runCLI(t, "", "read", def, "--testing-values", vals, flag, missing)
		if res.Code != exitUsage || !strings.Contains(res.Stderr, "does not exist") {
			t.Errorf("%s in a missing folder: exit %d, stderr %q; want exit 2 naming the folder", flag, res.Code, res.Stderr)
		}
	}
	if n := len(api.requests()); n != 0 {
		t.Errorf("%d requests were sent before the state file was found unwritable", n)
	}
	dir := t.TempDir()
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--state-out", dir)
	if res.Code != exitUsage || !strings.Contains(res.Stderr, "is a folder") {
		t.Errorf("--state-out on a folder: exit %d, stderr %q", res.Code, res.Stderr)
	}
}

// TestFullRefreshStreamStateIsNoCursor: a full refresh stream read to its end writes the
// CDK's state of a stream without a cursor, so that a StateDelegatingStream turns
// incremental next time; states of streams not read are kept.
func TestFullRefreshStreamStateIsNoCursor(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	st := writeFile(t, "state.json", `{"other": {"updated_at": "2024-01-01"}}`)
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--state", st)
	if res.Code != 0 {
		t.Fatalf("exit %d: %s", res.Code, res.Stderr)
	}
	got, err := os.ReadFile(st)
	if err != nil {
		t.Fatal(err)
	}
	want := "[\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"other"},"stream_state":{"updated_at":"2024-01-01"}}},` + "\n" +
		`{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"__ab_no_cursor_state_message":true}}}` + "\n]\n"
	if string(got) != want {
		t.Errorf("state file:\n%s\nwant:\n%s", got, want)
	}
	if res.Stderr != "" {
		t.Errorf("stderr %q, want nothing for a full refresh stream", res.Stderr)
	}
}
