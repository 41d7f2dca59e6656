package cmd

import (
	"bytes"
	"context"
	"flag"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"connector/internal/protocoltest"
	"connector/pkg/output"
)

// update rewrites golden files: go test ./cmd -run TestX -update
var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// cliResult is what one command run printed and returned.
type cliResult struct {
	Stdout, Stderr string
	Code           int
}

// testEnv is the environment of an in-process run: the variables NO_COLOR=1 and vars, and
// the real clock, waits and network. A test that needs a fake clock or waits sets them on
// the Env it gets; the process environment is never read, so runs can go in parallel.
func testEnv(vars map[string]string) Env {
	all := map[string]string{"NO_COLOR": "1"}
	maps.Copy(all, vars)
	return Env{Getenv: func(name string) (string, bool) {
		v, ok := all[name]
		return v, ok
	}}
}

// runCLI runs the command line in-process with buffered streams, as a user would run it.
func runCLI(t *testing.T, stdin string, args ...string) cliResult {
	t.Helper()
	return runCLIEnv(t, testEnv(nil), stdin, args...)
}

// runCLIEnv is runCLI in env; its streams are replaced by stdin and buffers. When the
// command line writes the Airbyte protocol (`airbyte …`, `read` in the airbyte format),
// every line of stdout must be a valid Airbyte message, whatever the test then compares.
func runCLIEnv(t *testing.T, env Env, stdin string, args ...string) cliResult {
	t.Helper()
	var out, errb bytes.Buffer
	env.Stdin, env.Stdout, env.Stderr = strings.NewReader(stdin), &out, &errb
	code := Execute(context.Background(), args, env)
	if writesProtocol(args, env) {
		protocoltest.Check(t, out.String())
	}
	return cliResult{Stdout: out.String(), Stderr: errb.String(), Code: code}
}

// writesProtocol says whether the command line writes Airbyte protocol messages on stdout:
// a command of `airbyte`, or `read` whose --format, from wherever the program takes it (the
// command line, CONNECTOR_FORMAT, the settings file), is airbyte. The program's own command
// tree and settings decide, so no spelling of the format escapes the check.
func writesProtocol(args []string, env Env) bool {
	root := newRootCmd(newIOStreams(strings.NewReader(""), io.Discard, io.Discard), &env)
	c, rest, err := root.Find(args)
	if err != nil {
		return false
	}
	c.InitDefaultHelpFlag()
	if c.ParseFlags(rest) != nil {
		return false // a usage error, reported on stderr
	}
	if help, _ := c.Flags().GetBool("help"); help {
		return false
	}
	switch {
	case c.Name() == "catalog":
		return false // writes a configured catalog, a file, not messages
	case c.Name() == "airbyte" || c.HasParent() && c.Parent().Name() == "airbyte":
		return true
	case c.Name() != "read":
		return false
	}
	if err := loadSettings(c, &env); err != nil {
		return false
	}
	return c.Flags().Lookup("format").Value.String() == output.FormatAirbyte
}

// recorded is one request an API received.
type recorded struct {
	Method string
	URL    string // path and query, as received
	Header http.Header
	Body   string
}

// recorder is a local HTTP server that records every request and answers with handler.
type recorder struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []recorded
}

func newRecorder(t *testing.T, handler http.HandlerFunc) *recorder {
	t.Helper()
	r := &recorder{}
	r.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		r.mu.Lock()
		r.reqs = append(r.reqs, recorded{Method: req.Method, URL: req.URL.RequestURI(), Header: req.Header.Clone(), Body: string(body)})
		r.mu.Unlock()
		req.Body = io.NopCloser(bytes.NewReader(body))
		handler(w, req)
	}))
	t.Cleanup(r.Close)
	return r
}

// requests returns a copy of what was received so far.
func (r *recorder) requests() []recorded {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]recorded(nil), r.reqs...)
}

// writeFile writes content to name inside a fresh temporary folder and returns its path.
func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// golden compares got with testdata/NAME, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	got = scrubDates(got)
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("missing golden file (run with -update): %v", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (run with -update to accept):\n--- got ---\n%s\n--- want ---\n%s", name, got, want)
	}
}

// dateHeader is the Date header of a response in a trace, which changes every second.
var dateHeader = regexp.MustCompile(`(?m)^(\s+Date: )[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$`)

// scrubDates replaces the Date headers of a trace by DATE.
func scrubDates(s string) string {
	return dateHeader.ReplaceAllString(s, "${1}DATE")
}
