package cmd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A connection that cannot be made fails the read at once: three attempts (waits 1 s and
// 2 s), one message naming the host and the cause, and the streams after it on the same host
// fail unsent, named once at the end. check says the same per stream.
func TestFailFastRefusedConnection(t *testing.T) {
	t.Parallel()
	closed := refusedURL(t)
	host := strings.TrimPrefix(closed, "http://")
	def := filepath.Join("..", "definitions", "no-auth.yaml")
	scrub := func(s string) string { return strings.ReplaceAll(s, host, "HOST") }

	env, waits := fakeWaits()
	res := runCLIEnv(t, env, "", "read", def, "--set", "base_url="+closed)
	want := `retrying GET http://HOST/v1/public/books?offset=0&limit=100 in 1 s (attempt 2 of 3): connection refused by HOST (is the server running?)
retrying GET http://HOST/v1/public/books?offset=0&limit=100 in 2 s (attempt 3 of 3): connection refused by HOST (is the server running?)
error: stream books, page 1: GET http://HOST/v1/public/books?offset=0&limit=100: connection refused by HOST (is the server running?) (gave up after 2 retries) (0 records written before the failure)
error: 1 more stream not read: HOST could not be reached (connection refused; see above): authors
2 of 2 streams failed
`
	if res.Code != 1 || res.Stdout != "" || scrub(res.Stderr) != want || fmt.Sprint(waits()) != "[1s 2s]" {
		t.Errorf("read: exit %d, waits %v, stderr:\n%s\nwant:\n%s", res.Code, waits(), scrub(res.Stderr), want)
	}

	env, waits = fakeWaits()
	res = runCLIEnv(t, env, "", "check", def, "--set", "base_url="+closed)
	want = `FAILED  books  GET http://HOST/v1/public/books?offset=0&limit=100: connection refused by HOST (is the server running?) (gave up after 2 retries)
FAILED  authors  GET http://HOST/v1/public/authors?offset=0&limit=100: not sent: HOST could not be reached earlier in this run (connection refused)
`
	if res.Code != 1 || scrub(res.Stdout) != want || fmt.Sprint(waits()) != "[1s 2s]" {
		t.Errorf("check: exit %d, waits %v, stdout:\n%s\nwant:\n%s", res.Code, waits(), scrub(res.Stdout), want)
	}
}

// read, check and paginate-trace show the definition's warnings in one line (validate lists
// them); --quiet silences it.
func TestWarningsOnEveryCommand(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[]`)) // an empty page ends the PageIncrement
	one := e2eOneStream(`
url_base: "{{ config['base_url'] }}"
path: /items`, e2eWholeBody) + "      paginator:\n" + e2eIndent(`
type: DefaultPaginator
pagination_strategy: {type: PageIncrement, page_sise: 10}`, 8)
	two := strings.Replace(one, "path: /items", "path: /items\n        http_methd: GET", 1)
	for _, tt := range []struct {
		def, want string
	}{
		{one, "warning: DEF:15:52: unknown field `page_sise` in PageIncrement; it is ignored (did you mean `page_size`?)\n"},
		{two, "warning: DEF: 2 warnings (connector validate DEF lists them), the first: DEF:11:9: unknown field `http_methd` in HttpRequester; it is ignored (did you mean `http_method`?)\n"},
	} {
		def := writeFile(t, "def.yaml", tt.def)
		for _, command := range []string{"read", "check", "paginate-trace"} {
			res := runCLI(t, "", command, def, "--set", "base_url="+api.URL)
			if got := strings.ReplaceAll(res.Stderr, def, "DEF"); res.Code != 0 || got != tt.want {
				t.Errorf("%s: exit %d, stderr:\n%s\nwant:\n%s", command, res.Code, got, tt.want)
			}
			if res := runCLI(t, "", command, def, "--set", "base_url="+api.URL, "-q"); res.Code != 0 || res.Stderr != "" {
				t.Errorf("%s -q: exit %d, stderr:\n%s", command, res.Code, res.Stderr)
			}
		}
	}
}

// A read in which nothing succeeded writes no state: the state file is not created (nor
// changed), and stderr says so once instead of printing a state the stream did not earn.
func TestFailedStreamWritesNoState(t *testing.T) {
	t.Parallel()
	closed := refusedURL(t)
	def := filepath.Join("..", "definitions", "incremental-datetime.yaml")
	for _, before := range []string{"", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-01-01T00:00:00Z"}}}]` + "\n"} {
		statePath := filepath.Join(t.TempDir(), "state.json")
		if before != "" {
			if err := os.WriteFile(statePath, []byte(before), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		env, _ := fakeWaits()
		res := runCLIEnv(t, env, "", "read", def, "--set", "base_url="+closed, "--set", "start_date=2024-01-01T00:00:00Z", "--state", statePath, "-q")
		want := "STATE: state unchanged for 1 stream that failed before a slice was read whole: events\n"
		got := strings.ReplaceAll(res.Stderr, statePath, "STATE")
		if res.Code != 1 || !strings.HasSuffix(got, want) || strings.Contains(got, "events: state {") {
			t.Errorf("exit %d, stderr:\n%s\nwant it to end with:\n%s", res.Code, got, want)
		}
		data, err := os.ReadFile(statePath)
		if before == "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("a state file was written: %q (%v)", data, err)
		}
		if before != "" && string(data) != before {
			t.Errorf("the state file changed:\n%s\nwant:\n%s", data, before)
		}
	}
}
