package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The rough edges a new author meets (issue 28): each case runs the real command line and
// asserts the exit code and the whole of stderr.

// roughDef is a valid definition of one paginated stream; a case changes a line of it.
const roughDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
definitions:
  requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
    authenticator: {type: BearerAuthenticator, api_token: "{{ config['token'] }}"}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        $ref: "#/definitions/requester"
        path: /items
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        pagination_strategy:
          type: PageIncrement
          page_size: 10
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, token]
    properties:
      base_url: {type: string}
      token: {type: string, airbyte_secret: true}
`

// roughCase is a command line run in a folder holding def.yaml (roughDef changed by edit)
// and, when values is set, values.yaml; DIR in args stands for that folder, whose path is
// left out of stderr.
type roughCase struct {
	name   string
	edit   func(string) string
	values string
	env    map[string]string
	args   []string
	code   int
	stderr string
}

func runRough(t *testing.T, cases []roughCase) {
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			def := roughDef
			if tt.edit != nil {
				def = tt.edit(def)
			}
			write := func(name, content string) {
				if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			write("def.yaml", def)
			if tt.values != "" {
				write("values.yaml", tt.values)
			}
			var args []string
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "DIR", dir))
			}
			res := runCLIEnv(t, testEnv(tt.env), "", args...)
			stderr := strings.ReplaceAll(res.Stderr, dir+string(filepath.Separator), "")
			if res.Code != tt.code || stderr != tt.stderr {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", res.Code, stderr, tt.code, tt.stderr)
			}
		})
	}
}

// replaceLine replaces the line that is exactly old (without its indentation) by new, with
// the same indentation, or one space less when new starts with \b.
func replaceLine(old, new string) func(string) string {
	return func(s string) string {
		lines := strings.Split(s, "\n")
		for i, l := range lines {
			if strings.TrimSpace(l) == old {
				indent := l[:len(l)-len(strings.TrimLeft(l, " "))]
				if rest, ok := strings.CutPrefix(new, "\b"); ok {
					indent, new = indent[1:], rest
				}
				lines[i] = indent + new
				return strings.Join(lines, "\n")
			}
		}
		panic("no line " + old)
	}
}

// roughEdges are the cases; each is a row of the README's "A new author's rough edges and
// their messages", named by name, which quotes the first line of stderr.
var roughEdges = []roughCase{
	{name: "`pagination_strategy:` twice in one mapping of the definition",
		edit: replaceLine("page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}",
			"page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}\n        pagination_strategy: {type: OffsetIncrement, page_size: 5}"),
		args: []string{"validate", "DIR/def.yaml"}, code: 0,
		stderr: "def.yaml:26:9: warning: duplicate key `pagination_strategy` (first at line 22:9): the last one is used, as in the Airbyte CDK\n" +
			"  hint: remove one of them\n" +
			"def.yaml: valid, 1 warning\n"},
	{name: "`token:` twice in the testing values",
		values: "base_url: http://127.0.0.1:1\ntoken: a\ntoken: b\n",
		args:   []string{"check", "DIR/def.yaml", "--testing-values", "DIR/values.yaml"}, code: 3,
		stderr: "values.yaml:3:1: error: duplicate key `token` (first at line 2:1)\n  hint: keep one of them\n"},
	{name: "a `$ref` to a definition that does not exist",
		edit: replaceLine(`$ref: "#/definitions/requester"`, `$ref: "#/definitions/requestor"`),
		args: []string{"validate", "DIR/def.yaml"}, code: 3,
		stderr: "def.yaml:15:15: error: reference `#/definitions/requestor` not found\n" +
			"  hint: did you mean `#/definitions/requester`?\n" +
			"def.yaml: invalid, 1 error\n"},
	{name: "a key indented one space less than its mapping (line 16)",
		edit: replaceLine("path: /items", "\bpath: /items"),
		args: []string{"validate", "DIR/def.yaml"}, code: 3,
		stderr: "def.yaml:16:1: error: invalid YAML: did not find expected key\n" +
			"def.yaml: invalid, 1 error\n"},
	{name: "a template reading `config['base_ur']` beside the property `base_url`",
		edit: replaceLine(`url_base: "{{ config['base_url'] }}"`, `url_base: "{{ config['base_ur'] }}"`),
		args: []string{"validate", "DIR/def.yaml"}, code: 0,
		stderr: "def.yaml:7:26: warning: in `url_base`: config['base_ur'] is not in spec.connection_specification\n" +
			"  hint: did you mean `base_url`?\n" +
			"def.yaml: valid, 1 warning\n"},
	{name: "`check` with a value left empty, as `init-values` writes a required one",
		values: "base_url: http://127.0.0.1:1\ntoken:\n",
		args:   []string{"check", "DIR/def.yaml", "--testing-values", "DIR/values.yaml"}, code: 3,
		stderr: "values.yaml:2:7: error: testing value \"token\" is empty (null): fill it in\n" +
			"values.yaml: the testing values do not match spec.connection_specification of def.yaml\n"},
	{name: "`check` without `--testing-values`",
		args: []string{"check", "DIR/def.yaml"}, code: 2,
		stderr: "error: --testing-values is required: spec.connection_specification of def.yaml requires base_url, token; " +
			"pass the file with the connector's configuration and credentials (see testing-values.example.yaml); " +
			"`connector init-values def.yaml -o creds.yaml` writes one to fill in\n"},
	{name: "`read def.yaml --max-recods 3`",
		args: []string{"read", "DIR/def.yaml", "--max-recods", "3"}, code: 2,
		stderr: "error: unknown flag: --max-recods (did you mean --max-records?)\nRun 'connector read --help' for usage.\n"},
	{name: "`read def.yaml -max-records 3` (one dash)",
		args: []string{"read", "DIR/def.yaml", "-max-records", "3"}, code: 2,
		stderr: "error: unknown shorthand flag: 'm' in -max-records (did you mean --max-records?)\nRun 'connector read --help' for usage.\n"},
}

func TestRoughEdges(t *testing.T) {
	t.Parallel()
	runRough(t, roughEdges)
}

// The README's table has a row per case, quoting the first line the user reads.
func TestRoughEdgesAreInTheReadme(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "## A new author's rough edges and their messages")
	if !ok {
		t.Fatal("README.md has no section \"A new author's rough edges and their messages\"")
	}
	if end := strings.Index(table, "\n## "); end >= 0 {
		table = table[:end]
	}
	rows := map[string]string{}
	for _, line := range strings.Split(table, "\n") {
		if name, rest, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | "); ok && name != "input" {
			rows[name] = rest
		}
	}
	for _, tt := range roughEdges {
		row, ok := rows[tt.name]
		first, _, _ := strings.Cut(tt.stderr, "\n")
		if !ok {
			t.Errorf("README: no row for %q", tt.name)
		} else if !strings.Contains(row, first) {
			t.Errorf("README: the row for %q does not quote %q", tt.name, first)
		}
	}
	if len(rows) != len(roughEdges) {
		t.Errorf("README table has %d rows, the cases are %d", len(rows), len(roughEdges))
	}
}

// NO_COLOR turns colour off only when it is set to a value that is not empty
// (no-color.org); --no-color always does. The streams are taken to be terminals.
func TestEmptyNoColorKeepsColour(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		env     map[string]string
		noColor bool
		want    bool
	}{
		{"NO_COLOR unset", nil, false, true},
		{"NO_COLOR empty", map[string]string{"NO_COLOR": ""}, false, true},
		{"NO_COLOR=1", map[string]string{"NO_COLOR": "1"}, false, false},
		{"NO_COLOR=0 (any value that is not empty)", map[string]string{"NO_COLOR": "0"}, false, false},
		{"NO_COLOR empty and --no-color", map[string]string{"NO_COLOR": ""}, true, false},
	}
	for _, tt := range tests {
		env := Env{Getenv: func(name string) (string, bool) { v, ok := tt.env[name]; return v, ok }}
		s := &ioStreams{outTTY: true, errTTY: true, noColorEnv: env.noColor()}
		s.setColor(!tt.noColor)
		if s.colorOut != tt.want || s.colorErr != tt.want {
			t.Errorf("%s: colour on stdout %v, on stderr %v, want %v", tt.name, s.colorOut, s.colorErr, tt.want)
		}
	}
}

// The README says how to get the command before it first runs it, and holds no Go string
// residue (`+"`failed`"+`) from messages pasted out of the code.
func TestReadmeReadsAsText(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, residue := range []string{"`+\"", "\"+`"} {
		if i := strings.Index(readme, residue); i >= 0 {
			t.Errorf("README line %d has the Go string residue %s", strings.Count(readme[:i], "\n")+1, residue)
		}
	}
	// first is the offset of the first line of a code block that runs `connector`.
	first, fenced, off := -1, false, 0
	for _, line := range strings.SplitAfter(readme, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		} else if fenced && strings.HasPrefix(line, "connector ") {
			first = off
			break
		}
		off += len(line)
	}
	if first < 0 {
		t.Fatal("README runs no `connector` command")
	}
	for _, how := range []string{"`make build`", "`go install .`", "`./connector`", "`PATH`"} {
		if i := strings.Index(readme, how); i < 0 || i > first {
			t.Errorf("README says %s only after its first `connector` command (line %d)", how, strings.Count(readme[:first], "\n")+1)
		}
	}
}
