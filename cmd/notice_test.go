package cmd

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/redact"
)

// Every retry is a line on stderr as it happens; --quiet says nothing but the error;
// --verbose adds a line per request.
func TestRetriesAreVisible(t *testing.T) {
	t.Parallel()
	replies := []reply{{503, nil, "busy"}, {500, nil, "down"}, page(1)}
	def := resDef("")
	for _, tt := range []struct {
		args   []string
		stderr string
	}{
		{nil, "retrying GET http://API/items?page=1 in 1 s (attempt 2 of 6): 503 Service Unavailable\n" +
			"retrying GET http://API/items?page=1 in 2 s (attempt 3 of 6): 500 Internal Server Error\n"},
		{[]string{"--quiet"}, ""},
		{[]string{"-v"}, "GET http://API/items?page=1 → 503 Service Unavailable (4 bytes, T)\n" +
			"retrying GET http://API/items?page=1 in 1 s (attempt 2 of 6): 503 Service Unavailable\n" +
			"GET http://API/items?page=1 → 500 Internal Server Error (4 bytes, T)\n" +
			"retrying GET http://API/items?page=1 in 2 s (attempt 3 of 6): 500 Internal Server Error\n" +
			"GET http://API/items?page=1 → 200 OK (19 bytes, T)\n"},
	} {
		env, _ := fakeWaits()
		api := scripted(t, replies...)
		res := resRead(t, env, api, def, tt.args...)
		got := regexp.MustCompile(`, [0-9.]+ [µm]?s\)`).ReplaceAllString(resScrub(res.Stderr, api), ", T)")
		if res.Code != 0 || res.Stdout != "{\"id\":1}\n" || got != tt.stderr {
			t.Errorf("%v: exit %d, stdout %q, stderr:\n%s\nwant:\n%s", tt.args, res.Code, res.Stdout, got, tt.stderr)
		}
	}
	res := runCLI(t, "", "read", "x.yaml", "--quiet", "--verbose")
	if want := "error: --quiet and --verbose cannot be used together\n"; res.Code != 2 || res.Stderr != want {
		t.Errorf("--quiet --verbose: exit %d, stderr %q, want %q", res.Code, res.Stderr, want)
	}
}

// On a terminal a retry is one line that the next replaces, and an error clears it.
func TestRetryLineOnATerminal(t *testing.T) {
	var buf bytes.Buffer
	s := &ioStreams{Err: &buf, redactor: &redact.Redactor{}, errTTY: true}
	n := &notices{io: s, live: true}
	n.retry(httpx.Retry{Method: "GET", URL: "http://h/x", Attempt: 1, Of: 6, Wait: 4 * time.Second, Cause: "connection refused"})
	n.budgetWait("GET", "http://h/x", 1500*time.Millisecond, "policy 1")
	s.printError(errGone)
	want := "\r\033[Kretrying GET http://h/x in 4 s (attempt 2 of 6): connection refused\r" +
		"\r\033[Kwaiting 1.5 s for the API budget before GET http://h/x (policy 1)\r" +
		"\r\033[Kerror: gone\n"
	if got := buf.String(); got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

var errGone = errorString("gone")

type errorString string

func (e errorString) Error() string { return string(e) }

// --quiet leaves stderr to errors: no "stopped early" line, no "state" line, no "defaults
// applied" line, which a plain run writes.
func TestQuietSaysNothingButErrors(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1},{"id":2}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	state := filepath.Join(t.TempDir(), "state.json")
	loud := runCLI(t, "", "read", def, "--testing-values", vals, "--max-records", "1", "--state-out", state)
	if loud.Code != 0 || !strings.Contains(loud.Stderr, "items: stopped early by --max-records 1 after 1 record") {
		t.Fatalf("without --quiet: exit %d, stderr:\n%s", loud.Code, loud.Stderr)
	}
	quiet := runCLI(t, "", "read", def, "--testing-values", vals, "--max-records", "1", "--state-out", state, "--quiet")
	if quiet.Code != 0 || quiet.Stderr != "" || quiet.Stdout != `{"id":1}`+"\n" {
		t.Errorf("--quiet: exit %d, stdout %q, stderr:\n%s", quiet.Code, quiet.Stdout, quiet.Stderr)
	}
}
