package cmd

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// e2eSpecDef reads /items with a Bearer token, sending region and page_size as parameters and
// filter.status when set; its spec requires base_url, token and region.
var e2eSpecDef = e2eOneStream(`
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  region: "{{ config['region'] }}"
  page_size: "{{ config['page_size'] }}"
  status: "{{ config.get('filter', {}).get('status') }}"
authenticator:
  type: BearerAuthenticator
  api_token: "{{ config['token'] }}"`, e2eWholeBody) + `spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, token, region]
    properties:
      base_url: {type: string}
      token: {type: string, airbyte_secret: true}
      region: {type: string, enum: [eu, us]}
      page_size: {type: integer}
      filter:
        type: object
        properties:
          status: {type: string}
`

// TestE2ETestingValues checks where testing values come from (file, stdin, the
// CONNECTOR_TESTING_VALUES variable, --set) and that they reach the request.
func TestE2ETestingValues(t *testing.T) {
	t.Parallel()
	// In env, stdin and args, VALUES stands for the values file, DIR for its folder and
	// BASE for the address of the API.
	tests := []struct {
		name  string
		env   string // CONNECTOR_TESTING_VALUES
		stdin string
		args  []string
		want  e2eRequest
	}{
		{
			name: "a file",
			args: []string{"--testing-values", "VALUES"},
			want: e2eRequest{Method: "GET", URL: "/items?region=eu&page_size=10", Headers: map[string]string{"Authorization": "Bearer from-file"}},
		},
		{
			name:  "stdin",
			stdin: "base_url: BASE\ntoken: from-stdin\nregion: us\n",
			args:  []string{"--testing-values", "-"},
			want:  e2eRequest{Method: "GET", URL: "/items?region=us", Headers: map[string]string{"Authorization": "Bearer from-stdin"}},
		},
		{
			name:  "stdin as JSON",
			stdin: `{"base_url": "BASE", "token": "json-tok", "region": "us", "page_size": 5}`,
			args:  []string{"--testing-values", "-"},
			want:  e2eRequest{Method: "GET", URL: "/items?region=us&page_size=5", Headers: map[string]string{"Authorization": "Bearer json-tok"}},
		},
		{
			name: "the CONNECTOR_TESTING_VALUES variable",
			env:  "VALUES",
			want: e2eRequest{Method: "GET", URL: "/items?region=eu&page_size=10", Headers: map[string]string{"Authorization": "Bearer from-file"}},
		},
		{
			name: "the flag wins over CONNECTOR_TESTING_VALUES",
			env:  filepath.Join("DIR", "nowhere.yaml"),
			args: []string{"--testing-values", "VALUES"},
			want: e2eRequest{Method: "GET", URL: "/items?region=eu&page_size=10", Headers: map[string]string{"Authorization": "Bearer from-file"}},
		},
		{
			name: "--set overrides values and adds nested ones",
			args: []string{"--testing-values", "VALUES", "--set", "token=from-set", "--set", "page_size=25", "--set", "filter.status=open"},
			want: e2eRequest{Method: "GET", URL: "/items?region=eu&page_size=25&status=open", Headers: map[string]string{"Authorization": "Bearer from-set"}},
		},
		{
			name: "--set with a value containing = and spaces",
			args: []string{"--testing-values", "VALUES", "--set", "token=a=b c"},
			want: e2eRequest{Method: "GET", URL: "/items?region=eu&page_size=10", Headers: map[string]string{"Authorization": "Bearer a=b c"}},
		},
		{
			name:  "--set over stdin",
			stdin: "base_url: BASE\ntoken: from-stdin\nregion: us\n",
			args:  []string{"--testing-values", "-", "--set", "region=eu"},
			want:  e2eRequest{Method: "GET", URL: "/items?region=eu", Headers: map[string]string{"Authorization": "Bearer from-stdin"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			dir := t.TempDir()
			def := filepath.Join(dir, "def.yaml")
			vals := filepath.Join(dir, "values.yaml")
			e2eWrite(t, def, e2eSpecDef)
			e2eWrite(t, vals, "base_url: "+api.URL+"\ntoken: from-file\nregion: eu\npage_size: 10\n")
			fill := strings.NewReplacer("VALUES", vals, "DIR", dir, "BASE", api.URL).Replace
			vars := map[string]string{}
			if tt.env != "" {
				vars["CONNECTOR_TESTING_VALUES"] = fill(tt.env)
			}
			args := []string{"read", def}
			for _, a := range tt.args {
				args = append(args, fill(a))
			}
			res := runCLIEnv(t, testEnv(vars), fill(tt.stdin), args...)
			e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
			got := api.requests()
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			g := got[0]
			if g.Method != tt.want.Method || g.URL != tt.want.URL {
				t.Errorf("request %s %s, want %s %s", g.Method, g.URL, tt.want.Method, tt.want.URL)
			}
			for k, v := range tt.want.Headers {
				if g.Header.Get(k) != v {
					t.Errorf("header %s = %q, want %q", k, g.Header.Get(k), v)
				}
			}
		})
	}
}

func e2eWrite(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestE2EInvalidTestingValues checks the testing values that stop a run before any request:
// a missing file (exit 2) and values that do not match spec.connection_specification (exit
// 3, naming the key at its position).
func TestE2EInvalidTestingValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		values string // "" for no file at all
		args   []string
		code   int
		stderr string // VALUES stands for the values file, DEF for the definition
	}{
		{
			name:   "a missing file",
			args:   []string{"--testing-values", "VALUES"},
			code:   2,
			stderr: "error: cannot read testing values: VALUES: no such file or directory\n",
		},
		{
			name:   "no --testing-values at all",
			code:   2,
			stderr: "error: --testing-values is required: spec.connection_specification of DEF requires base_url, token, region; pass the file with the connector's configuration and credentials (see testing-values.example.yaml); `connector init-values DEF -o creds.yaml` writes one to fill in\n",
		},
		{
			name:   "a missing required key",
			values: "base_url: BASE\nregion: eu\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:1:1: error: missing required testing value \"token\"\n" +
				"  hint: add `token: …` to the testing values, or pass --set token=…\n" +
				"VALUES: the testing values do not match spec.connection_specification of DEF\n",
		},
		{
			name:   "a value of the wrong type",
			values: "base_url: BASE\ntoken: t\nregion: eu\npage_size: ten\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:4:12: error: testing value \"page_size\": got string, want integer\n" +
				"VALUES: the testing values do not match spec.connection_specification of DEF\n",
		},
		{
			name:   "a value outside the enum",
			values: "base_url: BASE\ntoken: t\nregion: asia\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:3:9: error: testing value \"region\": value must be one of 'eu', 'us'\n" +
				"VALUES: the testing values do not match spec.connection_specification of DEF\n",
		},
		{
			name:   "a nested value of the wrong type",
			values: "base_url: BASE\ntoken: t\nregion: eu\nfilter:\n  status: [open]\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:5:11: error: testing value \"filter.status\": got array, want string\n" +
				"VALUES: the testing values do not match spec.connection_specification of DEF\n",
		},
		{
			name:   "every problem at once",
			values: "base_url: BASE\nregion: asia\npage_size: 1.5\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:1:1: error: missing required testing value \"token\"\n" +
				"  hint: add `token: …` to the testing values, or pass --set token=…\n" +
				"VALUES:2:9: error: testing value \"region\": value must be one of 'eu', 'us'\n" +
				"VALUES:3:12: error: testing value \"page_size\": got number, want integer\n" +
				"VALUES: the testing values do not match spec.connection_specification of DEF\n",
		},
		{
			name:   "a wrong type given with --set",
			values: "base_url: BASE\ntoken: t\nregion: eu\n",
			args:   []string{"--testing-values", "VALUES", "--set", "page_size=lots"},
			code:   3,
			stderr: "error: --set page_size=lots: page_size is an integer in spec.connection_specification, and \"lots\" is not one\n",
		},
		{
			name:   "--set supplies a missing required key",
			values: "base_url: BASE\nregion: eu\n",
			args:   []string{"--testing-values", "VALUES", "--set", "token=t"},
			code:   0,
		},
		{
			name:   "testing values that are not YAML",
			values: "base_url: BASE\ntoken: [unclosed\n",
			args:   []string{"--testing-values", "VALUES"},
			code:   3,
			stderr: "VALUES:2:1: error: invalid YAML: did not find expected ',' or ']'\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			dir := t.TempDir()
			def := filepath.Join(dir, "def.yaml")
			vals := filepath.Join(dir, "values.yaml")
			e2eWrite(t, def, e2eSpecDef)
			if tt.values != "" {
				e2eWrite(t, vals, strings.ReplaceAll(tt.values, "BASE", api.URL))
			}
			args := []string{"read", def}
			for _, a := range tt.args {
				args = append(args, strings.ReplaceAll(a, "VALUES", vals))
			}
			res := runCLI(t, "", args...)
			res.Stderr = strings.NewReplacer(vals, "VALUES", def, "DEF").Replace(res.Stderr)
			stdout := ""
			if tt.code == 0 {
				stdout = "{\"id\":1}\n"
			}
			e2eCheckResult(t, api, res, tt.code, stdout, tt.stderr)
			wantRequests := 0
			if tt.code == 0 {
				wantRequests = 1
			}
			if got := len(api.requests()); got != wantRequests {
				t.Errorf("the API received %d requests, want %d", got, wantRequests)
			}
		})
	}
}

// A connection specification that is not a valid JSON schema names the definition file and
// the broken keyword, before any request.
func TestBrokenConnectionSpecificationNamesTheDefinition(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `[]`) })
	def := writeFile(t, "def.yaml", `version: 6.5.0
streams:
  - name: items
    retriever:
      requester: {url_base: "`+api.URL+`", path: /items}
      record_selector: {extractor: {field_path: []}}
spec:
  connection_specification:
    type: object
    properties:
      port: {type: integer, minimum: one}
`)
	vals := writeFile(t, "values.yaml", "port: 3\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	want := "error: " + def + `: spec.connection_specification is not a valid JSON schema: properties/port/minimum: must be a number, got the string "one" (correct the schema in the definition)` + "\n"
	if res.Code != 3 || res.Stderr != want || len(api.requests()) != 0 {
		t.Errorf("exit %d, stderr %q, want %q; %d requests", res.Code, res.Stderr, want, len(api.requests()))
	}
}
