package cmd

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// `connector resolve` prints the resolved manifest the CDK makes of the file (the goldens of
// pkg/resolve are the CDK's own output), indented, or on one line with --compact.
func TestResolveCommand(t *testing.T) {
	def := filepath.Join("..", "definitions", "incremental-substream.yaml")
	want, err := os.ReadFile(filepath.Join("..", "pkg", "resolve", "testdata", "cdk", "definitions", "plain", "incremental-substream.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "resolve", def, "--compact")
	if res.Code != 0 || res.Stderr != "" || res.Stdout != string(want)+"\n" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", res.Code, res.Stderr, res.Stdout, want)
	}
	res = runCLI(t, "", "resolve", def)
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(res.Stdout)); err != nil || compact.String() != string(want) {
		t.Errorf("the indented output is not the same JSON (%v):\n%s", err, res.Stdout)
	}
	if !strings.HasPrefix(res.Stdout, "{\n  \"version\": \"6.5.0\",\n  \"type\": \"DeclarativeSource\",\n") {
		t.Errorf("indented output:\n%.200s", res.Stdout)
	}
}

// --full against the demo API: the same manifest the CDK's full_resolve answers for the same
// definition and config (pkg/serve's goldens), --stream-limit included.
func TestResolveFull(t *testing.T) {
	ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer ts.Close()
	for _, c := range []struct {
		limit  []string
		golden string
	}{{nil, "full_resolve.dynamic-streams.cdk.json"}, {[]string{"--stream-limit", "1"}, "full_resolve.dynamic-streams.limit1.cdk.json"}} {
		args := append([]string{"resolve", filepath.Join("..", "definitions", "dynamic-streams.yaml"), "--full", "--compact",
			"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url=" + ts.URL,
			"--set-json", `extra_tables=[{"name":"cfg_books","collection":"books","page_size":50},{"name":"cfg_authors","collection":"authors"}]`}, c.limit...)
		res := runCLI(t, "", args...)
		answer, err := os.ReadFile(filepath.Join("..", "pkg", "serve", "testdata", c.golden))
		if err != nil {
			t.Fatal(err)
		}
		want := strings.TrimSuffix(strings.TrimPrefix(string(answer), `{"manifest":`), "}") + "\n"
		if res.Code != 0 || res.Stdout != want {
			t.Errorf("%v: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", c.limit, res.Code, res.Stderr, res.Stdout, want)
		}
	}
}

func TestResolveRefusals(t *testing.T) {
	def := filepath.Join("..", "definitions", "no-auth.yaml")
	bad := writeFile(t, "bad.yaml", "version: 6.5.0\ntype: DeclarativeSource\nstreams: nope\n")
	cases := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"resolve", def, "--stream-limit", "3"}, 2, "error: --stream-limit needs --full: only the dynamic streams read the testing values\n"},
		{[]string{"resolve", def, "--full", "--stream-limit", "101"}, 2, "error: --stream-limit must be between 1 and 100"},
		{[]string{"resolve", bad}, 3, bad + ":3:10: error: "},
		{[]string{"resolve", def, def}, 2, "error: resolve needs exactly one definition file, got 2"},
	}
	for _, c := range cases {
		res := runCLI(t, "", c.args...)
		if res.Code != c.code || !strings.HasPrefix(res.Stderr, c.stderr) || res.Stdout != "" {
			t.Errorf("%v: exit %d, stderr %q, stdout %q", c.args, res.Code, res.Stderr, res.Stdout)
		}
	}
}
