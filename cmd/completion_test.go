package cmd

import (
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// Completion as the shell scripts ask for it: the hidden __complete command prints one
// candidate per line, then ":" and cobra's directive (4: no file names, 8: files with the
// extensions listed).
func TestCompletion(t *testing.T) {
	noAuth := filepath.Join("..", "definitions", "no-auth.yaml")
	dyn := filepath.Join("..", "definitions", "dynamic-streams.yaml")
	vals := writeFile(t, "values.yaml", "username: u\npassword: p\nextra_tables:\n  - {name: few_events, collection: events}\n  - {name: more_reviews, collection: reviews}\n")
	broken := writeFile(t, "broken.yaml", "streams: nope\n")
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"read --stream: the streams in definition order", nil,
			[]string{"read", noAuth, "--stream", ""}, "books\nauthors\n:4\n"},
		{"--stream keeps the names starting with what is typed", nil,
			[]string{"read", noAuth, "--stream", "a"}, "authors\n:4\n"},
		{"--stream leaves out the streams already named", nil,
			[]string{"paginate-trace", noAuth, "--stream", "books", "--stream", ""}, "authors\n:4\n"},
		{"--stream before the definition: nothing to offer", nil,
			[]string{"read", "--stream", ""}, ":4\n"},
		{"--stream of a definition that does not load: nothing", nil,
			[]string{"read", broken, "--stream", ""}, ":4\n"},
		{"--stream: the dynamic streams of a ConfigComponentsResolver, not of an HTTP one", nil,
			[]string{"read", dyn, "--testing-values", vals, "--stream", ""}, "few_events\nmore_reviews\n:4\n"},
		{"--stream: --set-json changes the dynamic streams", nil,
			[]string{"read", dyn, "--testing-values", vals, "--set-json", `extra_tables=[{"name":"x","collection":"events"}]`, "--stream", ""}, "x\n:4\n"},
		{"--stream: the testing values from the environment", map[string]string{"CONNECTOR_TESTING_VALUES": vals},
			[]string{"paginate-trace", dyn, "--stream", "m"}, "more_reviews\n:4\n"},
		{"--stream: dynamic streams need the testing values", nil,
			[]string{"read", dyn, "--stream", ""}, ":4\n"},
		{"--stream: the streams of every ConditionalStreams, once each, whatever the values", nil,
			[]string{"read", filepath.Join("..", "definitions", "conditional-streams.yaml"), "--stream", ""}, "authors\nbooks\nevents\n:4\n"},
		{"--stream: the streams of a ParametrizedComponentsResolver", nil,
			[]string{"read", filepath.Join("..", "definitions", "parametrized-streams.yaml"), "--testing-values", vals, "--stream", "catalog_"},
			"catalog_books\ncatalog_authors\ncatalog_events\n:4\n"},
		{"read --format", nil, []string{"read", noAuth, "--format", ""}, "records\nenvelope\nairbyte\n:4\n"},
		{"check --format", nil, []string{"check", noAuth, "--format", ""}, "text\njson\n:4\n"},
		{"paginate-trace --format", nil, []string{"paginate-trace", noAuth, "--format", "j"}, "json\n:4\n"},
		{"validate --format", nil, []string{"validate", "--format", ""}, "text\njson\n:4\n"},
		{"streams --format", nil, []string{"streams", noAuth, "--format", ""}, "text\njson\n:4\n"},
		{"DEF: definition files", nil, []string{"read", ""}, "yaml\nyml\n:8\n"},
		{"one DEF only", nil, []string{"check", noAuth, ""}, ":4\n"},
		{"validate takes several", nil, []string{"validate", noAuth, ""}, "yaml\nyml\n:8\n"},
		{"init-values DEF", nil, []string{"init-values", ""}, "yaml\nyml\n:8\n"},
		{"init-values -o", nil, []string{"init-values", noAuth, "-o", ""}, "yaml\nyml\njson\n:8\n"},
		{"--testing-values", nil, []string{"read", noAuth, "--testing-values", ""}, "yaml\nyml\njson\n:8\n"},
		{"--state", nil, []string{"read", noAuth, "--state", ""}, "json\n:8\n"},
		{"--settings", nil, []string{"check", "--settings", ""}, "yaml\nyml\njson\ntoml\n:8\n"},
		{"a number: no file names", nil, []string{"read", noAuth, "--max-pages", ""}, ":4\n"},
		{"demo-api takes no argument", nil, []string{"demo-api", ""}, ":4\n"},
		{"airbyte --manifest-path", nil, []string{"airbyte", "read", "--manifest-path", ""}, "yaml\nyml\n:8\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLIEnv(t, testEnv(tc.env), "", append([]string{"__complete"}, tc.args...)...)
			if res.Code != 0 || res.Stdout != tc.want {
				t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", res.Code, res.Stdout, tc.want, res.Stderr)
			}
		})
	}
}

// The completion command writes each shell's script.
func TestCompletionScripts(t *testing.T) {
	for shell, want := range map[string]string{
		"bash":       "# bash completion V2 for connector",
		"zsh":        "#compdef connector",
		"fish":       "# fish completion for connector",
		"powershell": "# powershell completion for connector",
	} {
		res := runCLI(t, "", "completion", shell)
		if res.Code != 0 || !strings.HasPrefix(res.Stdout, want) {
			t.Errorf("%s: exit %d, stdout starts %q, stderr %q", shell, res.Code, res.Stdout[:min(len(res.Stdout), 60)], res.Stderr)
		}
	}
}

// Every command a person runs has examples in its help, as the README promises (the protocol
// commands and completion included).
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRootCmd(newIOStreams(strings.NewReader(""), io.Discard, io.Discard), &Env{})
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden && c.Name() != "help" && c != root && strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s --help has no examples", c.CommandPath())
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
