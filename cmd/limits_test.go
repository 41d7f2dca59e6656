package cmd

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The catalogue of hostile inputs: definitions, testing values and templates built to crash
// the tool, hang it or make it eat memory. Each must end with the exit code and the one
// line naming the limit (README, "Limits"). They are built here, in a temporary folder.

// limitDef is a definition of one stream reading items from {{ config['base_url'] }}, with
// top written before it and body as its request_body_json.
func limitDef(top, body string) string {
	return top + `version: 6.0.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        http_method: POST
        request_body_json:
` + body + `
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
`
}

// laughs is the "billion laughs": nine anchored lists of ten, each of the one before.
func laughs(indent string) string {
	var b strings.Builder
	b.WriteString(indent + "l0: &l0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		fmt.Fprintf(&b, "%sl%d: &l%d [%s]\n", indent, i, i, strings.TrimSuffix(strings.Repeat(fmt.Sprintf("*l%d, ", i-1), 10), ", "))
	}
	return b.String()
}

// refFanout has definitions a1…a59, each referring twice to the one before.
func refFanout() string {
	var b strings.Builder
	b.WriteString("definitions:\n  a0: {x: 1, y: 2}\n")
	for i := 1; i < 60; i++ {
		fmt.Fprintf(&b, "  a%d: {x: \"#/definitions/a%d\", y: \"#/definitions/a%d\"}\n", i, i-1, i-1)
	}
	return b.String()
}

// refChain has definitions a0…a39999, each a reference to the next.
func refChain() string {
	var b strings.Builder
	b.WriteString("definitions:\n")
	for i := 0; i < 40000; i++ {
		fmt.Fprintf(&b, "  a%d: \"#/definitions/a%d\"\n", i, i+1)
	}
	b.WriteString("  a40000: {}\n")
	return b.String()
}

// doubling is a template that doubles a string forty times with op.
func doubling(op string) string {
	return "          s: \"{% set s = 'x' %}{% for i in range(40) %}{% set s = " + op + " %}{% endfor %}{{ s }}\""
}

type limitEnv struct {
	t    *testing.T
	dir  string
	api  string
	vals string // testing values with base_url
}

func (e *limitEnv) file(name, content string) string {
	path := filepath.Join(e.dir, name)
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		e.t.Fatal(err)
	}
	return path
}

// read runs `read` of a definition with the given body against the API.
func (e *limitEnv) read(body string) []string {
	return []string{"read", e.file("def.yaml", limitDef("", body)), "--testing-values", e.vals}
}

type loadLimitCase struct {
	name string
	args func(e *limitEnv) []string
	code int
	// want is a line of stderr, with DIR for the temporary folder and API for the server.
	want string
}

var limitInputs = []loadLimitCase{
	{"a YAML alias bomb in request_body_json (1.4 KB, 10⁹ nodes)", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef("", laughs("          ")))}
	}, 3, "DIR/bomb.yaml:19:20: error: the definition expands to more than 1250000 nodes through YAML aliases (a limit of connector)"},
	{"a YAML alias that contains itself", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef("", "          a: &a {b: [*a]}"))}
	}, 3, "DIR/bomb.yaml:13:22: error: the alias *a is inside the value its anchor names, so it never ends"},
	{"a $ref fan-out (3.6 KB, 2⁶⁰ nodes)", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef(refFanout(), "          bomb: \"#/definitions/a59\""))}
	}, 3, "DIR/bomb.yaml:20:36: error: the definition expands to more than 1250000 nodes through $ref and $parameters (a limit of connector)"},
	{"a chain of 40,000 $ref", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef(refChain(), "          x: \"#/definitions/a0\""))}
	}, 3, "DIR/bomb.yaml:508:9: error: the definition nests more than 512 levels deep, counting each $ref it goes through (a limit of connector)"},
	{"YAML nested 2,000 levels deep", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef("", "          x: "+strings.Repeat("[", 2000)+strings.Repeat("]", 2000)))}
	}, 3, "DIR/bomb.yaml:13:520: error: the definition nests more than 512 levels deep (a limit of connector)"},
	{"a definition of 700,000 list items", func(e *limitEnv) []string {
		return []string{"validate", e.file("bomb.yaml", limitDef("", "          x: ["+strings.Repeat("1,", 700000)+"1]"))}
	}, 3, "DIR/bomb.yaml:13:1199980: error: the definition has more than 600000 YAML entries (a limit of connector)"},
	{"a definition larger than 16 MiB", func(e *limitEnv) []string {
		return []string{"validate", e.file("big.yaml", "a: \""+strings.Repeat("x", 16<<20)+"\"\n")}
	}, 3, "DIR/big.yaml: error: the definition is larger than 16 MiB (a limit of connector)"},
	{"/dev/zero as the definition", func(e *limitEnv) []string { return []string{"validate", "/dev/zero"} }, 3,
		"/dev/zero: error: the definition is larger than 16 MiB (a limit of connector)"},
	{"11,000 distinct templates", func(e *limitEnv) []string {
		var b strings.Builder
		for i := 0; i < 11000; i++ {
			fmt.Fprintf(&b, "          k%d: \"{{ config['k%d'] }}\"\n", i, i)
		}
		return []string{"validate", e.file("bomb.yaml", limitDef("", b.String()))}
	}, 3, "DIR/bomb.yaml:10012:18: error: the definition has more than 10000 template tags (a limit of connector)"},
	{"a definition with 5,000 unknown fields", func(e *limitEnv) []string {
		var b strings.Builder
		b.WriteString("version: 6.0.0\nstreams: []\n")
		for i := 0; i < 5000; i++ {
			fmt.Fprintf(&b, "unknown%d: 1\n", i)
		}
		return []string{"validate", e.file("many.yaml", b.String())}
	}, 3, "DIR/many.yaml: error: more than 1000 problems: only the first 1000 are reported (a limit of connector)"},

	// Testing values.
	{"testing values larger than 16 MiB", func(e *limitEnv) []string {
		return []string{"read", e.file("def.yaml", limitDef("", "          a: 1")), "--testing-values", e.file("big.yaml", "a: \""+strings.Repeat("x", 16<<20)+"\"\n")}
	}, 3, "DIR/big.yaml: error: the testing values are larger than 16 MiB (a limit of connector)"},
	{"--testing-values /dev/zero", func(e *limitEnv) []string {
		return []string{"read", e.file("def.yaml", limitDef("", "          a: 1")), "--testing-values", "/dev/zero"}
	}, 3, "/dev/zero: error: the testing values are larger than 16 MiB (a limit of connector)"},
	{"a YAML alias bomb in the testing values", func(e *limitEnv) []string {
		return []string{"read", e.file("def.yaml", limitDef("", "          a: 1")), "--testing-values", e.file("vals.yaml", "base_url: "+e.api+"\n"+laughs(""))}
	}, 3, "DIR/vals.yaml:7:30: error: the testing values expand to more than 600000 nodes through YAML aliases (a limit of connector)"},

	// Templates, evaluated when the first request is built: none is sent.
	{"a template that doubles a string 40 times", func(e *limitEnv) []string { return e.read(doubling("s ~ s")) }, 1,
		"error: stream items, page 1: request_body_json: s: evaluating `{% set s = s ~ s %}`: template result larger than 16 MiB (a limit of connector) (0 records written before the failure)"},
	{"… with *", func(e *limitEnv) []string { return e.read(doubling("s * 2")) }, 1,
		"error: stream items, page 1: request_body_json: s: evaluating `{% set s = s * 2 %}`: template result larger than 16 MiB (a limit of connector) (0 records written before the failure)"},
	{"… with join", func(e *limitEnv) []string { return e.read(doubling("[s, s]|join")) }, 1,
		"error: stream items, page 1: request_body_json: s: evaluating `{% set s = [s, s]|join %}`: template result larger than 16 MiB (a limit of connector) (0 records written before the failure)"},
	{"… with replace", func(e *limitEnv) []string { return e.read(doubling("(s ~ 'x').replace('x', 'xx')")) }, 1,
		"error: stream items, page 1: request_body_json: s: evaluating `{% set s = (s ~ 'x').replace('x', 'xx') %}`: template result larger than 16 MiB (a limit of connector) (0 records written before the failure)"},
	{"… with format", func(e *limitEnv) []string { return e.read(doubling("'{}{}'.format(s, s)")) }, 1,
		"error: stream items, page 1: request_body_json: s: evaluating `{% set s = '{}{}'.format(s, s) %}`: template result larger than 16 MiB (a limit of connector) (0 records written before the failure)"},
	{"a template that grows a string a million times", func(e *limitEnv) []string {
		return e.read("          s: \"{% set ns = namespace(s='') %}{% for i in range(1000) %}{% for j in range(1000) %}{% set ns.s = ns.s ~ 'xxxxxxxxxxxxxxxx' %}{% endfor %}{% endfor %}\"")
	}, 1, "error: stream items, page 1: request_body_json: s: evaluating `{% set ns.s = ns.s ~ 'xxxxxxxxxxxxxxxx' %}`: template evaluation handles more than 256 MiB in all (a limit of connector) (0 records written before the failure)"},
	{"a template whose value doubles 60 times, sharing its halves", func(e *limitEnv) []string {
		return e.read("          s: \"{{ " + strings.Repeat("[", 60) + "1" + strings.Repeat("] * 2", 60) + " }}\"")
	}, 1, "error: stream items, page 1: request_body_json: s: evaluating `" + ("{{ " + strings.Repeat("[", 60) + "1" + strings.Repeat("] * 2", 60))[:117] + "...`: template result holds more than 1048576 values (a limit of connector) (0 records written before the failure)"},
	{"a template of ten billion loop iterations", func(e *limitEnv) []string {
		return e.read("          s: \"{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}\"")
	}, 1, "error: stream items, page 1: request_body_json: s: evaluating `{% for j in range(100000) %}`: template evaluation takes more than 10000000 steps (a limit of connector) (0 records written before the failure)"},
}

func TestLimits(t *testing.T) {
	t.Parallel()
	for _, tt := range limitInputs {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"data":[]}`)) })
			e := &limitEnv{t: t, dir: t.TempDir(), api: api.URL}
			e.vals = e.file("values.yaml", "base_url: "+api.URL+"\n")
			res := runCLI(t, "", tt.args(e)...)
			stderr := strings.NewReplacer(e.dir, "DIR", api.URL, "API").Replace(res.Stderr)
			if res.Code != tt.code {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", res.Code, tt.code, stderr)
			}
			if !hasLine(stderr, tt.want) {
				t.Errorf("stderr:\n%s\nwant the line:\n%s", stderr, tt.want)
			}
			for _, bad := range []string{"panic", "goroutine ", "runtime error", "fatal error", "internal error"} {
				if strings.Contains(res.Stderr, bad) {
					t.Errorf("the output contains %q:\n%s", bad, res.Stderr)
				}
			}
			if len(api.requests()) != 0 {
				t.Errorf("%d requests were sent; a template beyond a limit must stop the read before its request", len(api.requests()))
			}
		})
	}
}

// endless reads like /dev/zero.
type endless struct{ n int }

func (z *endless) Read(p []byte) (int, error) {
	clear(p)
	z.n += len(p)
	return len(p), nil
}

func TestEndlessTestingValuesOnStdin(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "def.yaml", limitDef("", "          a: 1"))
	var out, errb bytes.Buffer
	in := &endless{}
	env := testEnv(nil)
	env.Stdin, env.Stdout, env.Stderr = in, &out, &errb
	code := Execute(context.Background(), []string{"read", def, "--testing-values", "-"}, env)
	if code != exitInvalid || errb.String() != "<stdin>: error: the testing values are larger than 16 MiB (a limit of connector)\n" {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
	if in.n > 17<<20 {
		t.Errorf("read %d bytes of an endless stdin", in.n)
	}
}

// Ctrl-C during a load: the command ends with 130 and prints nothing. (The load stopping at
// its first look at the context is TestLoadStopsWhenCanceled in pkg/manifest.)
func TestCanceledLoad(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"data":[]}`)) })
	def := writeFile(t, "def.yaml", limitDef(refFanout(), "          x: \"#/definitions/a10\""))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var errb bytes.Buffer
	s := newIOStreams(strings.NewReader(""), io.Discard, &errb)

	err := validateRun(ctx, &validateOptions{io: s, files: []string{def}, format: "text"})
	if code := exitCode(err); code != exitInterrupted {
		t.Errorf("validate: exit %d (%v), want 130", code, err)
	}

	var opts *readOptions
	env := testEnv(nil)
	c := newCmdRead(s, &env, func(o *readOptions) error { opts = o; return nil })
	c.SetArgs([]string{def, "--testing-values", vals})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	err = readRun(ctx, opts)
	if code := exitCode(err); code != exitInterrupted {
		t.Errorf("read: exit %d (%v), want 130", code, err)
	}
	if errb.Len() != 0 || len(api.requests()) != 0 {
		t.Errorf("stderr %q, %d requests; want nothing", errb.String(), len(api.requests()))
	}
}
