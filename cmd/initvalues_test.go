package cmd

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"connector/internal/testcorpus"
	"connector/pkg/manifest"
)

// initValuesFile runs init-values DEF -o FILE and returns the file and the paths stderr
// says to fill in.
func initValuesFile(t *testing.T, def string) (string, []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "values.yaml")
	res := runCLI(t, "", "init-values", def, "-o", file)
	if res.Code != 0 || res.Stdout != "" {
		t.Fatalf("exit %d, stdout %q, stderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	msg := strings.TrimSuffix(res.Stderr, "\n")
	msg = msg[strings.LastIndex(msg, "\n")+1:] // after a note about an empty specification
	if !strings.HasPrefix(msg, "wrote "+file) {
		t.Fatalf("stderr: %q", res.Stderr)
	}
	_, list, _ := strings.Cut(msg, "; fill in the required values: ")
	var required []string
	if list != "" {
		required = strings.Split(list, ", ")
	}
	return file, required
}

// valueErr is a problem the testing values check reports: `file:line:col: error: testing
// value "path": …` (or "missing required testing value").
var valueErr = regexp.MustCompile(`: error: (?:missing required )?testing value "([^"]+)"`)

// The file init-values writes for every example definition loads through the same path as
// check and read (prepare: the values loader, the defaults, the configuration
// normalization, the check against the spec, the authenticator), no request made. When
// nothing is left to fill in it passes; otherwise the only problems are the values it
// named as required.
func TestInitValuesDefinitionsLoadBack(t *testing.T) {
	defs, err := filepath.Glob(filepath.Join("..", "definitions", "*.yaml"))
	if err != nil || len(defs) == 0 {
		t.Fatalf("no definitions: %v", err)
	}
	for _, def := range defs {
		t.Run(filepath.Base(def), func(t *testing.T) {
			file, required := initValuesFile(t, def)
			checkPrepared(t, def, file, required)
		})
	}
}

// The file of each real definition loads through the values loader, with the defaults,
// and passes the check against the definition's spec when nothing is left to fill in;
// otherwise the only problems are the values it named as required. (Some real
// definitions need values their spec leaves optional, such as the credentials object a
// SelectiveAuthenticator reads: prepare refuses those files until the user fills them.)
func TestInitValuesCorpusLoadsBack(t *testing.T) {
	for _, def := range testcorpus.Definitions(t) {
		t.Run(filepath.Base(def), func(t *testing.T) {
			file, required := initValuesFile(t, def)
			spec, _ := manifest.LoadSpec(def)
			var errb bytes.Buffer
			s := newIOStreams(strings.NewReader(""), &bytes.Buffer{}, &errb)
			vals, _, err := loadTestingValues(s, def, spec.ConnectionSpec, file, nil, true)
			if err != nil {
				t.Fatalf("%v\n%s", err, errb.String())
			}
			err = vals.Validate(spec.ConnectionSpec)
			if err == nil {
				return
			}
			if len(required) == 0 {
				t.Fatalf("nothing to fill in, yet: %v", err)
			}
			for _, line := range strings.Split(err.Error(), "\n") {
				checkNamesRequired(t, line, required)
			}
		})
	}
}

func checkPrepared(t *testing.T, def, file string, required []string) {
	t.Helper()
	var errb bytes.Buffer
	s := newIOStreams(strings.NewReader(""), &bytes.Buffer{}, &errb)
	_, err := prepare(context.Background(), s, &Env{}, def, &runFlags{testingValues: file})
	s.Err.(*redactingWriter).Flush()
	if err == nil {
		return
	}
	var se *silentError
	if len(required) == 0 || !errors.As(err, &se) || se.code != exitInvalid {
		t.Fatalf("%v (required: %q)\n%s", err, required, errb.String())
	}
	for _, line := range strings.Split(strings.TrimSuffix(errb.String(), "\n"), "\n") {
		if strings.HasPrefix(line, file+": the testing values do not match") || strings.HasPrefix(line, "  hint: ") {
			continue
		}
		checkNamesRequired(t, line, required)
	}
}

// checkNamesRequired fails unless line is a problem of one of the required values, or of
// the object that holds one (a oneOf none of whose kinds matches yet).
func checkNamesRequired(t *testing.T, line string, required []string) {
	t.Helper()
	m := valueErr.FindStringSubmatch(line)
	if m == nil {
		t.Errorf("unexpected problem: %s", line)
		return
	}
	path := regexp.MustCompile(`\[(\d+)\]`).ReplaceAllString(m[1], ".$1")
	var want []string
	for _, r := range required {
		want = append(want, regexp.MustCompile(`\[(\d+)\]`).ReplaceAllString(r, ".$1"))
	}
	if !slices.ContainsFunc(want, func(r string) bool { return r == path || strings.HasPrefix(r, path+".") }) {
		t.Errorf("problem with %q, not among the required %q: %s", path, required, line)
	}
}

// A definition for the command's own cases.
const initValuesDef = `version: 6.5.0
type: DeclarativeSource
check:
  type: CheckStream
  stream_names: [items]
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['token'] }}"
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: []
`

const initValuesSpec = `spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, token]
    properties:
      base_url:
        type: string
        default: https://api.example.com
      token:
        title: Token
        type: string
        airbyte_secret: true
`

const initValuesWant = `# base_url and token
# Lines that are not comments are the required values, the defaults and the fixed values.
# A commented-out line is an optional value: remove its "# " to set it.
# Required, to fill in: token.
# Secrets are left empty: write them here and keep this file private, or pass them at run time, e.g.
# --set token="$TOKEN".
# Then check them against the API:
#   connector check DEF --testing-values FILE

# string, required; default https://api.example.com
base_url: https://api.example.com

# Token
# string, required, secret (airbyte_secret)
# left empty: write it here, or pass it at run time with --set token=…
token:
`

func TestInitValuesCommand(t *testing.T) {
	def := writeFile(t, "def.yaml", initValuesDef+initValuesSpec)
	header := "# Testing values for " + def + "\n# from its spec.connection_specification, written by `connector init-values`.\n"
	want := func(file string) string {
		w := strings.Replace(initValuesWant, "# base_url and token\n", header, 1)
		return strings.Replace(w, "check DEF --testing-values FILE", "check "+def+" --testing-values "+file, 1)
	}

	t.Run("stdout", func(t *testing.T) {
		res := runCLI(t, "", "init-values", def)
		if res.Code != 0 || res.Stderr != "" || res.Stdout != want("FILE") {
			t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", res.Code, res.Stderr, res.Stdout, want("FILE"))
		}
	})

	t.Run("-o writes a new file, mode 0600", func(t *testing.T) {
		file := filepath.Join(t.TempDir(), "creds.yaml")
		res := runCLI(t, "", "init-values", def, "-o", file)
		if res.Code != 0 || res.Stdout != "" || res.Stderr != "wrote "+file+"; fill in the required values: token\n" {
			t.Fatalf("exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
		}
		got, err := os.ReadFile(file)
		if err != nil || string(got) != want(file) {
			t.Errorf("file (%v):\n%s\nwant:\n%s", err, got, want(file))
		}
		if info, _ := os.Stat(file); info.Mode().Perm() != 0o600 {
			t.Errorf("mode %v", info.Mode().Perm())
		}
	})

	t.Run("-o keeps an existing file", func(t *testing.T) {
		file := writeFile(t, "creds.yaml", "token: mine\n")
		res := runCLI(t, "", "init-values", def, "--output", file)
		wantErr := "error: " + file + " already exists; pass --force to replace it, or choose another file with -o\n"
		if res.Code != 2 || res.Stdout != "" || res.Stderr != wantErr {
			t.Errorf("exit %d, stdout %q, stderr %q", res.Code, res.Stdout, res.Stderr)
		}
		if got, _ := os.ReadFile(file); string(got) != "token: mine\n" {
			t.Errorf("file changed:\n%s", got)
		}
	})

	t.Run("--force replaces it, keeping its mode", func(t *testing.T) {
		file := writeFile(t, "creds.yaml", "token: mine\n")
		if err := os.Chmod(file, 0o640); err != nil {
			t.Fatal(err)
		}
		res := runCLI(t, "", "init-values", def, "-o", file, "--force")
		if res.Code != 0 {
			t.Fatalf("exit %d, stderr %q", res.Code, res.Stderr)
		}
		got, _ := os.ReadFile(file)
		if string(got) != want(file) {
			t.Errorf("file:\n%s", got)
		}
		if info, _ := os.Stat(file); info.Mode().Perm() != 0o640 {
			t.Errorf("mode %v", info.Mode().Perm())
		}
	})

	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no spec", []string{writeFile(t, "nospec.yaml", initValuesDef)}, 3,
			"error: NOSPEC has no spec.connection_specification, so there are no testing values to describe; its templates read config without a specification of it\n"},
		{"a definition that does not exist", []string{"nope.yaml"}, 2,
			"error: cannot read definition: nope.yaml: no such file or directory\n"},
		{"no definition", nil, 2,
			"error: init-values needs exactly one definition file, got 0\nRun 'connector init-values --help' for usage.\n"},
		{"a spec that is not a schema", []string{writeFile(t, "badspec.yaml", initValuesDef+"spec:\n  type: Spec\n  connection_specification: [a]\n")}, 3,
			"BADSPEC:25:29: error: `connection_specification` must be a mapping (a JSON schema), not a list\nBADSPEC: invalid, 1 error\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLI(t, "", append([]string{"init-values"}, tc.args...)...)
			want := tc.stderr
			if len(tc.args) > 0 {
				want = strings.NewReplacer("NOSPEC", tc.args[0], "BADSPEC", tc.args[0]).Replace(want)
			}
			if res.Code != tc.code || res.Stdout != "" || res.Stderr != want {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit %d, stderr:\n%s", res.Code, res.Stdout, res.Stderr, tc.code, want)
			}
		})
	}

	t.Run("a spec without properties", func(t *testing.T) {
		def := writeFile(t, "empty.yaml", initValuesDef+"spec:\n  type: Spec\n  connection_specification:\n    type: object\n")
		res := runCLI(t, "", "init-values", def)
		if res.Code != 0 || !strings.HasSuffix(res.Stdout, "\n\n# (the specification declares no properties)\n") ||
			res.Stderr != "note: "+def+": spec.connection_specification declares no properties; the file holds only its header\n" {
			t.Errorf("exit %d, stdout:\n%s\nstderr %q", res.Code, res.Stdout, res.Stderr)
		}
	})
}

func TestInitValuesHelp(t *testing.T) {
	res := runCLI(t, "", "init-values", "--help")
	for _, want := range []string{
		"Usage:\n  connector init-values DEF [-o FILE [--force]] [flags]",
		"Examples:\n  connector init-values definitions/selective-auth.yaml\n",
		"-o, --output FILE",
		"--force",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, res.Stdout)
		}
	}
}
