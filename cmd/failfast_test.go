package cmd

import (
	"fmt"
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
