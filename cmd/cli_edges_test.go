package cmd

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// The rough edges of the command line (issue 14): each case runs the real command with
// Execute and asserts the exit code, the whole of stderr and, where the command reached the
// API, the exact request.

// edgesDef reads one page of items. Every typed property of its connection specification
// ends up in the request, so a test sees what --set, --set-json and the defaults gave.
const edgesDef = `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        request_parameters:
          port: "{{ config['port'] }}"
          ratio: "{{ config['ratio'] }}"
          big: "{{ config['big'] }}"
          verbose: "{{ config['verbose'] }}"
          ids: "{{ config['ids'] }}"
          status: "{{ config['filter']['status'] }}"
          any: "{{ config['any'] }}"
          page_size: "{{ config['page_size'] }}"
          region: "{{ config['options']['region'] }}"
          depth: "{{ config['options']['depth'] }}"
        authenticator:
          type: BearerAuthenticator
          api_token: "{{ config['token'] }}"
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, token]
    properties:
      base_url: {type: string}
      token: {type: string, airbyte_secret: true}
      pin: {type: integer, airbyte_secret: true}
      port: {type: integer}
      ratio: {type: number}
      big: {type: integer}
      verbose: {type: boolean}
      ids: {type: array, items: {type: integer}}
      filter:
        type: object
        properties:
          status: {type: string}
      any: {}
      page_size: {type: integer, default: 100}
      options:
        type: object
        properties:
          region: {type: string, default: eu}
          depth: {type: integer, default: 2}
`

// edgesAPI answers every request with one record.
func edgesAPI(t *testing.T) *recorder { return newRecorder(t, e2eAnswer(`[{"id":1}]`)) }

func TestSetTakesTextAndConvertsOnlyTypedKeys(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "def.yaml", edgesDef)
	tests := []struct {
		name  string
		args  []string
		query string // the request's query besides the defaults page_size=100, region=eu, depth=2
		auth  string
	}{
		{"a # in a string value is kept", []string{"--set", "token=abc #def"}, "", "Bearer abc #def"},
		{"digits for a string property stay a string", []string{"--set", "token=12345678"}, "", "Bearer 12345678"},
		{"quotes are part of the text", []string{"--set", `token="quoted"`}, "", `Bearer "quoted"`},
		{"an integer property", []string{"--set", "port=8080"}, "port=8080&", ""},
		{"a number keeps its spelling", []string{"--set", "ratio=1.50"}, "ratio=1.50&", ""},
		{"an integer beyond 64 bits keeps its digits", []string{"--set", "big=12345678901234567890"}, "big=12345678901234567890&", ""},
		{"a boolean property", []string{"--set", "verbose=true"}, "verbose=True&", ""},
		{"an array property takes JSON", []string{"--set", "ids=[1,2]"}, "ids=1&ids=2&", ""},
		{"an untyped property stays text", []string{"--set", "any=007"}, "any=007&", ""},
		{"a nested string property", []string{"--set", "filter.status=open"}, "status=open&", ""},
		{"--set-json gives structure", []string{"--set-json", `filter={"status":"closed"}`}, "status=closed&", ""},
		{"--set after --set-json changes the object just given", []string{"--set-json", `filter={"status":"closed"}`, "--set", "filter.status=open"}, "status=open&", ""},
		{"--set-json before --set in the other order", []string{"--set", "filter.status=open", "--set-json", `filter={"status":"closed"}`}, "status=closed&", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := edgesAPI(t)
			args := append([]string{"read", def, "--set", "base_url=" + api.URL, "--set", "token=t0"}, tt.args...)
			res := runCLI(t, "", args...)
			auth := tt.auth
			if auth == "" {
				auth = "Bearer t0"
			}
			e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
			e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/items?" + defaultsFirst(tt.query),
				Headers: map[string]string{"Authorization": auth}})
		})
	}
}

// defaultsFirst places query, the parameters a case sets, among the defaults of edgesDef in
// the order the requester writes them (the order of request_parameters).
func defaultsFirst(query string) string {
	order := []string{"port", "ratio", "big", "verbose", "ids", "status", "any", "page_size", "region", "depth"}
	have := map[string][]string{"page_size": {"100"}, "region": {"eu"}, "depth": {"2"}}
	for _, kv := range strings.Split(strings.TrimSuffix(query, "&"), "&") {
		if k, v, ok := strings.Cut(kv, "="); ok {
			have[k] = append(have[k], v)
		}
	}
	var parts []string
	for _, k := range order {
		for _, v := range have[k] {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "&")
}

func TestSetErrors(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "def.yaml", edgesDef)
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"text for an integer", []string{"--set", "port=abc"}, 3,
			`error: --set port=abc: port is an integer in spec.connection_specification, and "abc" is not one`},
		{"a fraction for an integer", []string{"--set", "port=80.5"}, 3,
			`error: --set port=80.5: port is an integer in spec.connection_specification, and "80.5" is not one`},
		{"a number not spelled as JSON", []string{"--set", "ratio=.5"}, 3,
			`error: --set ratio=.5: ratio is a number in spec.connection_specification, and ".5" is not one`},
		{"yes for a boolean", []string{"--set", "verbose=yes"}, 3,
			`error: --set verbose=yes: verbose is a boolean in spec.connection_specification, and "yes" is not one (write true or false)`},
		{"a list that is not JSON", []string{"--set", "ids=1,2"}, 3,
			`error: --set ids=1,2: ids is an array in spec.connection_specification, and "1,2" is not one (write it as JSON, e.g. --set 'ids=["a","b"]')`},
		{"text for an object", []string{"--set", "filter=open"}, 3,
			`error: --set filter=open: filter is an object in spec.connection_specification, and "open" is not one (write it as JSON, e.g. --set 'filter={"key":"value"}')`},
		{"a secret is not repeated", []string{"--set", "pin=s3cr3t-pin"}, 3,
			`error: --set pin: pin is an integer in spec.connection_specification, and the value given is not one`},
		{"--set-json with invalid JSON", []string{"--set-json", `filter={"status":}`}, 2,
			`error: --set-json filter: invalid JSON at byte 11 of the value: invalid character '}' looking for beginning of value`},
		{"--set-json cut short", []string{"--set-json", `ids=[1,`}, 2,
			`error: --set-json ids: invalid JSON at byte 3 of the value: the value ends before it is complete`},
		{"--set-json with data after the value", []string{"--set-json", `ids=[1] [2]`}, 2,
			`error: --set-json ids: invalid JSON at byte 4 of the value: more data after the JSON value`},
		{"--set-json with no value", []string{"--set-json", `ids=`}, 2,
			`error: --set-json ids: invalid JSON at byte 0 of the value: the value is empty`},
		{"--set-json of the wrong type is checked against the spec", []string{"--set-json", `port="80"`}, 3,
			`(no --testing-values): error: testing value "port": got string, want integer`},
		{"an empty part in the key path", []string{"--set", "filter..status=open"}, 2,
			`error: --set filter..status: the key path has an empty part; write key.path=value`},
		{"a key below a value that is not a mapping", []string{"--set", "port=1", "--set", "port.x=2"}, 2,
			`error: --set port.x: port is not a mapping`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := edgesAPI(t)
			args := append([]string{"read", def, "--set", "base_url=" + api.URL, "--set", "token=t0"}, tt.args...)
			res := runCLI(t, "", args...)
			if res.Code != tt.code || !hasLine(res.Stderr, tt.stderr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and the line\n%s", res.Code, res.Stderr, tt.code, tt.stderr)
			}
			if res.Stdout != "" || len(api.requests()) != 0 {
				t.Errorf("stdout %q and %d requests: nothing may run", res.Stdout, len(api.requests()))
			}
			if strings.Contains(res.Stderr, "s3cr3t-pin") {
				t.Errorf("stderr shows the secret:\n%s", res.Stderr)
			}
		})
	}
}

// TestDefaultsAndOptionalTestingValues covers the defaults of spec.connection_specification
// (filled only where a value is absent, nested objects included, listed by check) and runs
// without --testing-values.
func TestDefaultsAndOptionalTestingValues(t *testing.T) {
	t.Parallel()
	noSpec := e2eOneStream(`
type: HttpRequester
url_base: "{{ config['base_url'] }}"
path: /items
`, e2eWholeBody)
	optional := strings.Replace(strings.Replace(edgesDef, "required: [base_url, token]", "required: []", 1),
		"        authenticator:\n          type: BearerAuthenticator\n          api_token: \"{{ config['token'] }}\"\n", "", 1)
	withSecretDefault := strings.Replace(edgesDef,
		"token: {type: string, airbyte_secret: true}", "token: {type: string, airbyte_secret: true, default: d3fault-t0ken}", 1)
	tests := []struct {
		name   string
		def    string
		values string // "" for no --testing-values
		args   []string
		code   int
		query  string // of the one request, "" for none
		stdout string
		stderr string
	}{
		{
			name: "check lists the defaults it applied",
			def:  edgesDef, values: "base_url: API\ntoken: t0\n",
			args:   []string{"check"},
			query:  "page_size=100&region=eu&depth=2",
			stdout: "ok  items  (1 record on the first page)\n",
			stderr: "defaults applied: options.depth=2, options.region=\"eu\", page_size=100\n",
		},
		{
			name: "a given value is never replaced, nested or not",
			def:  edgesDef, values: "base_url: API\ntoken: t0\npage_size: 5\noptions:\n  region: us\n",
			args:   []string{"check"},
			query:  "page_size=5&region=us&depth=2",
			stdout: "ok  items  (1 record on the first page)\n",
			stderr: "defaults applied: options.depth=2\n",
		},
		{
			name: "--set counts as given",
			def:  edgesDef, values: "base_url: API\ntoken: t0\n",
			args:   []string{"check", "--set", "page_size=7"},
			query:  "page_size=7&region=eu&depth=2",
			stdout: "ok  items  (1 record on the first page)\n",
			stderr: "defaults applied: options.depth=2, options.region=\"eu\"\n",
		},
		{
			name: "a secret default is applied and never shown",
			def:  withSecretDefault, values: "base_url: API\n",
			args:   []string{"check"},
			query:  "page_size=100&region=eu&depth=2",
			stdout: "ok  items  (1 record on the first page)\n",
			stderr: "defaults applied: options.depth=2, options.region=\"eu\", page_size=100, token=****\n",
		},
		{
			name:   "no --testing-values when the spec requires nothing",
			def:    optional,
			args:   []string{"read", "--set", "base_url=API"},
			query:  "page_size=100&region=eu&depth=2",
			stdout: "{\"id\":1}\n",
		},
		{
			name:   "no --testing-values when there is no spec",
			def:    noSpec,
			args:   []string{"read", "--set", "base_url=API"},
			query:  "",
			stdout: "{\"id\":1}\n",
		},
		{
			name:   "no --testing-values when --set gives every required key",
			def:    edgesDef,
			args:   []string{"read", "--set", "base_url=API", "--set", "token=t0"},
			query:  "page_size=100&region=eu&depth=2",
			stdout: "{\"id\":1}\n",
		},
		{
			name: "no --testing-values, and a required key missing",
			def:  edgesDef,
			args: []string{"check", "--set", "base_url=API"},
			code: 2,
			stderr: "error: --testing-values is required: spec.connection_specification of DEF requires token; " +
				"pass the file with the connector's configuration and credentials (see testing-values.example.yaml); " +
				"`connector init-values DEF -o creds.yaml` writes one to fill in\n",
		},
		{
			name: "values from --set only are named in messages",
			def:  edgesDef,
			args: []string{"read", "--set", "base_url=API", "--set", "token=t0", "--set-json", "ids=[\"a\"]"},
			code: 3,
			stderr: "(no --testing-values): error: testing value \"ids.0\": got string, want integer\n" +
				"(no --testing-values): the testing values do not match spec.connection_specification of DEF\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := edgesAPI(t)
			def := writeFile(t, "def.yaml", tt.def)
			args := append([]string{tt.args[0], def}, tt.args[1:]...)
			for i, a := range args {
				args[i] = strings.ReplaceAll(a, "API", api.URL)
			}
			if tt.values != "" {
				args = append(args, "--testing-values", writeFile(t, "values.yaml", strings.ReplaceAll(tt.values, "API", api.URL)))
			}
			res := runCLI(t, "", args...)
			res.Stderr = strings.ReplaceAll(res.Stderr, def, "DEF")
			e2eCheckResult(t, api, res, tt.code, tt.stdout, tt.stderr)
			if tt.code != 0 {
				e2eCheckRequests(t, api)
				return
			}
			url := "/items"
			if tt.query != "" {
				url += "?" + tt.query
			}
			e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: url})
			if strings.Contains(res.Stderr+res.Stdout, "d3fault-t0ken") {
				t.Errorf("the secret default is shown:\n%s", res.Stderr)
			}
		})
	}
}

// stillThere fails the test when a file's content changed.
func stillThere(t *testing.T, path string, before []byte) {
	t.Helper()
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Errorf("%s changed:\n%s", filepath.Base(path), after)
	}
}

// usageCase runs a command that must stop before any request with a usage error.
type usageCase struct {
	name string
	// args: DEF stands for a definition, SETTINGS for the settings file written from settings.
	args     []string
	env      map[string]string
	settings string
	code     int
	stderr   string // the whole of stderr; SETTINGS stands for the settings file
}

func runUsageCases(t *testing.T, cases []usageCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			def := writeFile(t, "def.yaml", edgesDef)
			settings := filepath.Join(t.TempDir(), "settings.yaml")
			if tt.settings != "" {
				if err := os.WriteFile(settings, []byte(tt.settings), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			vars := map[string]string{}
			for k, v := range tt.env {
				vars[k] = strings.ReplaceAll(v, "SETTINGS", settings)
			}
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.NewReplacer("DEF", def, "SETTINGS", settings).Replace(a)
			}
			res := runCLIEnv(t, testEnv(vars), "", args...)
			stderr := strings.ReplaceAll(res.Stderr, settings, "SETTINGS")
			if res.Code != tt.code || stderr != tt.stderr {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d, stderr:\n%s", res.Code, stderr, tt.code, tt.stderr)
			}
			if res.Stdout != "" {
				t.Errorf("stdout %q, want nothing", res.Stdout)
			}
			for _, raw := range []string{"strconv", "ParseInt", "ParseBool", "time: invalid", "invalid argument"} {
				if strings.Contains(res.Stderr, raw) {
					t.Errorf("stderr carries a raw Go error (%q):\n%s", raw, res.Stderr)
				}
			}
		})
	}
}

// TestUsageErrorsExit2 covers unknown commands and the caps of --prefetch and --concurrency.
func TestUsageErrorsExit2(t *testing.T) {
	t.Parallel()
	help := "Run 'connector --help' for usage.\n"
	runUsageCases(t, []usageCase{
		{name: "version is not a command", args: []string{"version"}, code: 2,
			stderr: "error: unknown command \"version\"; connector --version prints the version\n" + help},
		{name: "a misspelt command", args: []string{"reed", "DEF"}, code: 2,
			stderr: "error: unknown command \"reed\"; did you mean \"read\"?\n" + help},
		{name: "a word that is no command", args: []string{"frobnicate"}, code: 2,
			stderr: "error: unknown command \"frobnicate\"; the commands are airbyte, check, demo-api, dev, infer-schema, init-values, oauth, paginate-trace, read, resolve, serve, state, streams, test, validate\n" + help},
		{name: "help on no command", args: []string{"help", "frobnicate"}, code: 2,
			stderr: "error: unknown command \"frobnicate\"; the commands are airbyte, check, demo-api, dev, infer-schema, init-values, oauth, paginate-trace, read, resolve, serve, state, streams, test, validate\n" + help},
		{name: "help on no subcommand", args: []string{"help", "airbyte", "frob"}, code: 2,
			stderr: "error: no help topic \"airbyte frob\": connector airbyte has no such command\nRun 'connector airbyte --help' for usage.\n"},
		{name: "demo-api takes no argument", args: []string{"demo-api", "now"}, code: 2,
			stderr: "error: demo-api takes no arguments, got \"now\"\nRun 'connector demo-api --help' for usage.\n"},
		{name: "oauth without a definition", args: []string{"oauth"}, code: 2,
			stderr: "error: oauth needs exactly one definition file, got 0\nRun 'connector oauth --help' for usage.\n"},
		{name: "--prefetch above the cap", args: []string{"read", "DEF", "--prefetch", "100000"}, code: 2,
			stderr: "error: --prefetch must be at most 64 (a limit of connector)\n"},
		{name: "--prefetch beyond any integer", args: []string{"paginate-trace", "DEF", "--prefetch", "99999999999999999999"}, code: 2,
			stderr: "error: --prefetch must be at most 64 (a limit of connector)\n"},
		{name: "--prefetch 0", args: []string{"read", "DEF", "--prefetch", "0"}, code: 2,
			stderr: "error: --prefetch must be 1 (one page at a time) or more\n"},
		{name: "--concurrency above the cap", args: []string{"read", "DEF", "--concurrency", "65"}, code: 2,
			stderr: "error: --concurrency must be at most 64 (a limit of connector)\n"},
		{name: "--concurrency below 0", args: []string{"read", "DEF", "--concurrency", "-1"}, code: 2,
			stderr: "error: --concurrency must be 0 (the definition's concurrency_level) or more\n"},
		{name: "--prefetch above the cap from the environment", args: []string{"read", "DEF"}, env: map[string]string{"CONNECTOR_PREFETCH": "100000"}, code: 2,
			stderr: "error: --prefetch must be at most 64 (a limit of connector) (from CONNECTOR_PREFETCH)\n"},
		{name: "--port out of range", args: []string{"oauth", "DEF", "--port", "70000"}, code: 2,
			stderr: "error: --port must be a port number from 0 (any free port) to 65535\n"},
		{name: "--max-records beyond any integer", args: []string{"read", "DEF", "--max-records", "99999999999999999999"}, code: 2,
			stderr: "error: --max-records must be at most 9223372036854775807\n"},
	})
}

// TestFlagValuesFromEverySource gives the same bad values on the command line, in the
// environment and in the settings file: the message is the same, with its source.
func TestFlagValuesFromEverySource(t *testing.T) {
	t.Parallel()
	var cases []usageCase
	for _, f := range []struct {
		cmd, flag, value, rule string
	}{
		{"read", "max-records", "abc", `must be a whole number, not "abc"`},
		{"paginate-trace", "max-pages", "-3", `must be 0 (no limit) or more`},
		{"check", "timeout", "5", `must be a duration such as 30s, 2m or 1h30m, not "5"`},
		{"read", "timeout", "0s", `must be positive, e.g. 30s`},
		{"read", "fail-fast", "maybe", `must be true or false, not "maybe"`},
		{"demo-api", "log", "loud", `must be true or false, not "loud"`},
		{"validate", "format", "yaml", `must be text or json, not "yaml"`},
		{"read", "format", "csv", `must be records, envelope or airbyte, not "csv"`},
	} {
		env := "CONNECTOR_" + strings.ToUpper(strings.ReplaceAll(f.flag, "-", "_"))
		args := []string{f.cmd, "DEF"}
		if f.cmd == "demo-api" {
			args = []string{f.cmd}
		}
		cases = append(cases,
			usageCase{name: f.cmd + " --" + f.flag + " on the command line", args: append(args, "--"+f.flag+"="+f.value), code: 2,
				stderr: "error: --" + f.flag + " " + f.rule + "\n"},
			usageCase{name: f.cmd + " --" + f.flag + " from " + env, args: args, env: map[string]string{env: f.value}, code: 2,
				stderr: "error: --" + f.flag + " " + f.rule + " (from " + env + ")\n"},
			usageCase{name: f.cmd + " --" + f.flag + " from the section of the settings file",
				args: append(args, "--settings", "SETTINGS"), settings: f.cmd + ":\n  " + f.flag + ": \"" + f.value + "\"\n", code: 2,
				stderr: "error: --" + f.flag + " " + f.rule + " (from " + f.cmd + "." + f.flag + " in SETTINGS)\n"},
		)
	}
	runUsageCases(t, cases)
}

// TestSettingsFileErrors covers the keys of a settings file: unknown keys (top level and in a
// section, with a did-you-mean), and a top-level value that a command's flag refuses.
func TestSettingsFileErrors(t *testing.T) {
	t.Parallel()
	read := []string{"read", "DEF", "--settings", "SETTINGS"}
	runUsageCases(t, []usageCase{
		{name: "a misspelt flag name", args: read, settings: "max-record: 5\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"max-record\" (did you mean \"max-records\"?)\n"},
		{name: "an unknown key", args: read, settings: "colour: red\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"colour\": a setting is a flag name, or a section named after a command (airbyte, check, demo-api, dev, infer-schema, init-values, oauth, paginate-trace, read, resolve, serve, state, streams, test, validate)\n"},
		{name: "a misspelt section", args: read, settings: "raed:\n  format: envelope\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"raed\" (did you mean \"read\"?)\n"},
		{name: "a misspelt flag in a section", args: read, settings: "read:\n  formt: envelope\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"read.formt\" (did you mean \"format\"?)\n"},
		{name: "a flag the section's command does not have", args: read, settings: "check:\n  stream: [items]\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"check.stream\": check has no flag --stream\n"},
		{name: "unknown keys are errors whatever the command", args: []string{"validate", "DEF", "--settings", "SETTINGS"}, settings: "read:\n  max-recods: 5\n", code: 2,
			stderr: "error: SETTINGS: unknown setting \"read.max-recods\" (did you mean \"max-records\"?)\n"},
		{name: "a section that is not a mapping", args: read, settings: "read: envelope\n", code: 2,
			stderr: "error: SETTINGS: \"read\" is a section for the read command and must hold flag names and values, not \"envelope\"\n"},
		{name: "a mapping for a flag", args: read, settings: "read:\n  format: {a: b}\n", code: 2,
			stderr: "error: --format must be a single value, not a mapping (from read.format in SETTINGS)\n"},
		{name: "a top-level format that check refuses", args: []string{"check", "DEF", "--settings", "SETTINGS"}, settings: "format: envelope\n", code: 2,
			stderr: "error: --format must be text or json, not \"envelope\" (from format in SETTINGS); a top-level setting applies to every command with that flag: move it under \"read:\" or \"test:\", the section of the command it is meant for\n"},
		{name: "a top-level format that read refuses", args: read, settings: "format: text\n", code: 2,
			stderr: "error: --format must be records, envelope or airbyte, not \"text\" (from format in SETTINGS); a top-level setting applies to every command with that flag: move it under \"check:\" or \"paginate-trace:\" or \"streams:\" or \"validate:\", the section of the command it is meant for\n"},
		{name: "a top-level value no command takes", args: read, settings: "prefetch: 100\n", code: 2,
			stderr: "error: --prefetch must be at most 64 (a limit of connector) (from prefetch in SETTINGS)\n"},
		{name: "a settings file that does not exist", args: []string{"read", "DEF"}, env: map[string]string{"CONNECTOR_SETTINGS": "SETTINGS"}, code: 2,
			stderr: "error: cannot read the settings file (from CONNECTOR_SETTINGS): SETTINGS: no such file or directory\n"},
		{name: "a settings file over 1 MiB", args: read, settings: "# " + strings.Repeat("x", 1<<20) + "\n", code: 2,
			stderr: "error: settings file SETTINGS: larger than 1 MiB (a limit of connector)\n"},
		{name: "a settings file whose aliases explode", args: read, code: 2,
			settings: "a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]\n",
			stderr:   "error: settings file SETTINGS: line 5: more nodes than the limit once the aliases are expanded (a limit of connector)\n"},
		{name: "a settings file of an unknown format", args: []string{"read", "DEF", "--settings", "settings.ini"}, code: 2,
			stderr: "error: settings file settings.ini: name it .yaml, .yml, .json or .toml, after its format\n"},
	})
}

// TestSettingsApply runs commands whose flags come from the settings file and the
// environment, against a local API: a section wins over the top level, the environment over
// the file, the command line over everything; top-level values reach every command with
// the flag and no other.
func TestSettingsApply(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "def.yaml", edgesDef)
	settings := `# every command with --testing-values
testing-values: VALUES
max-records: 1
set: ["token=abc #def"]
read:
  format: envelope
  max-records: 2
`
	tests := []struct {
		name           string
		args           []string
		env            map[string]string
		stdout, stderr string
		auth           string
	}{
		{
			name:   "the read section wins over the top level",
			args:   []string{"read", "DEF", "--settings", "SETTINGS"},
			stdout: "{\"stream\":\"items\",\"data\":{\"id\":1}}\n{\"stream\":\"items\",\"data\":{\"id\":2}}\n",
			stderr: "items: stopped early by --max-records 2 after 2 records and 1 page\n",
			auth:   "Bearer abc #def",
		},
		{
			name:   "the environment wins over the file",
			args:   []string{"read", "DEF", "--settings", "SETTINGS"},
			env:    map[string]string{"CONNECTOR_MAX_RECORDS": "1", "CONNECTOR_FORMAT": "records"},
			stdout: "{\"id\":1}\n",
			stderr: "items: stopped early by --max-records 1 after 1 record and 1 page\n",
			auth:   "Bearer abc #def",
		},
		{
			name:   "the command line wins over everything",
			args:   []string{"read", "DEF", "--settings", "SETTINGS", "--max-records", "3", "--set", "token=cli"},
			env:    map[string]string{"CONNECTOR_MAX_RECORDS": "1"},
			stdout: "{\"stream\":\"items\",\"data\":{\"id\":1}}\n{\"stream\":\"items\",\"data\":{\"id\":2}}\n{\"stream\":\"items\",\"data\":{\"id\":3}}\n",
			auth:   "Bearer cli",
		},
		{
			name:   "the same file suits check: format stays under read",
			args:   []string{"check", "DEF"},
			env:    map[string]string{"CONNECTOR_SETTINGS": "SETTINGS"},
			stdout: "ok  items  (3 records on the first page)\n",
			stderr: "defaults applied: options.depth=2, options.region=\"eu\", page_size=100\n",
			auth:   "Bearer abc #def",
		},
		{
			name:   "and paginate-trace takes the top-level max-records",
			args:   []string{"paginate-trace", "DEF", "--settings", "SETTINGS", "--format", "json"},
			stdout: `{"event":"stream_end","pages":1,"records":1,"stopped_by":"--max-records 1","stream":"items"}` + "\n",
			stderr: "items: stopped early by --max-records 1 after 1 record and 1 page\n",
			auth:   "Bearer abc #def",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[{"id":1},{"id":2},{"id":3}]`))
			values := writeFile(t, "values.yaml", "base_url: "+api.URL+"\ntoken: t0\n")
			path := writeFile(t, "settings.yaml", strings.ReplaceAll(settings, "VALUES", values))
			vars := map[string]string{}
			for k, v := range tt.env {
				vars[k] = strings.ReplaceAll(v, "SETTINGS", path)
			}
			args := make([]string, len(tt.args))
			for i, a := range tt.args {
				args[i] = strings.NewReplacer("DEF", def, "SETTINGS", path).Replace(a)
			}
			res := runCLIEnv(t, testEnv(vars), "", args...)
			res.Stdout = e2eScrub(res.Stdout, api)
			if tt.args[0] == "paginate-trace" {
				// Only the end of the stream is compared: TestTraceMaxRecords checks the rest.
				var end string
				for _, line := range strings.SplitAfter(res.Stdout, "\n") {
					if strings.Contains(line, `"event":"stream_end"`) {
						end += line
					}
				}
				res.Stdout = end
			}
			e2eCheckResult(t, api, res, 0, tt.stdout, tt.stderr)
			got := api.requests()
			if len(got) != 1 || got[0].Header.Get("Authorization") != tt.auth {
				t.Errorf("requests %+v, want one with Authorization %q", got, tt.auth)
			}
		})
	}
}

// traceLimitDef pages by offset, two records a page, over an API with five records.
const traceLimitDef = `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: OffsetIncrement, page_size: 2}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
`

// offsetAPI serves five records, limit and offset from the query.
func offsetAPI(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		limit, _ := strconv.Atoi(r.URL.Query().Get("limit"))
		offset, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		var recs []string
		for i := offset; i < min(offset+limit, 5); i++ {
			recs = append(recs, fmt.Sprintf(`{"id":%d}`, i+1))
		}
		w.Write([]byte(`{"data":[` + strings.Join(recs, ",") + `]}`))
	})
}

// TestTraceMaxRecords: paginate-trace --max-records stops like read and says so in the page
// decision, at the end of the stream and on stderr, in both formats.
func TestTraceMaxRecords(t *testing.T) {
	t.Parallel()
	def := writeFile(t, "def.yaml", traceLimitDef)
	stderr := "items: stopped early by --max-records 3 after 3 records and 2 pages\n"
	tests := []struct {
		format, stdout string
	}{
		{"text", `stream items (OffsetIncrement limit 2; offset → query parameter "offset"; limit → query parameter "limit")
  → GET http://API/items?offset=0&limit=2 (data)
    ← 200 OK, 28 bytes
      Content-Length: 28
      Content-Type: text/plain; charset=utf-8
      Date: DATE
    page 1: 2 records extracted, token 0 → 2
    next: offset=2 (2 records ≥ limit 2)
  → GET http://API/items?offset=2&limit=2 (data)
    ← 200 OK, 28 bytes
      Content-Length: 28
      Content-Type: text/plain; charset=utf-8
      Date: DATE
    page 2: 2 records extracted (1 emitted), token 2 → 4
    stop: --max-records 3
  items: 2 pages, 3 records emitted, stopped early by --max-records 3
`},
		{"json", `{"event":"stream_start","pagination":"OffsetIncrement limit 2; offset → query parameter \"offset\"; limit → query parameter \"limit\"","stream":"items"}
{"attempt":1,"event":"request","headers":{},"kind":"data","method":"GET","size":28,"status":200,"stream":"items","url":"http://API/items?offset=0&limit=2"}
{"decision":"next","emitted":2,"event":"page","page":1,"reason":"next: offset=2 (2 records ≥ limit 2)","records":2,"size":28,"status":200,"stream":"items","token_after":2,"token_before":0}
{"attempt":1,"event":"request","headers":{},"kind":"data","method":"GET","size":28,"status":200,"stream":"items","url":"http://API/items?offset=2&limit=2"}
{"decision":"stop","emitted":1,"event":"page","page":2,"reason":"stop: --max-records 3","records":2,"size":28,"status":200,"stream":"items","token_after":4,"token_before":2}
{"event":"stream_end","pages":2,"records":3,"stopped_by":"--max-records 3","stream":"items"}
`},
	}
	for _, tt := range tests {
		t.Run(tt.format, func(t *testing.T) {
			t.Parallel()
			api := offsetAPI(t)
			vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
			res := runCLI(t, "", "paginate-trace", def, "--testing-values", vals, "--max-records", "3", "--format", tt.format)
			res.Stdout = e2eScrub(res.Stdout, api)
			e2eCheckResult(t, api, res, 0, tt.stdout, stderr)
			e2eCheckRequests(t, api, e2eGet("/items?offset=0&limit=2"), e2eGet("/items?offset=2&limit=2"))
		})
	}
}

// failingDef has one stream per way to fail; the path names the failure.
const failingDef = `version: 6.5.0
type: DeclarativeSource
definitions:
  stream:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: "/{{ parameters.name }}"
        authenticator: {type: BearerAuthenticator, api_token: "{{ config['token'] }}"}
        error_handler:
          type: DefaultErrorHandler
          response_filters:
            - type: HttpResponseFilter
              http_codes: [400]
              action: FAIL
              failure_type: config_error
              error_message: "the account is not set up for this report"
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
streams:
  - {$ref: "#/definitions/stream", $parameters: {name: unauthorized}}
  - {$ref: "#/definitions/stream", $parameters: {name: unavailable}}
  - {$ref: "#/definitions/stream", $parameters: {name: missing}}
  - {$ref: "#/definitions/stream", $parameters: {name: filtered}}
  - {$ref: "#/definitions/stream", $parameters: {name: echo}}
  - {$ref: "#/definitions/stream", $parameters: {name: fine}}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      token: {type: string, airbyte_secret: true}
`

// TestAirbyteTraceError: in --format airbyte a failed stream writes a TRACE ERROR message,
// classified and redacted, before its INCOMPLETE status; the other streams go on.
func TestAirbyteTraceError(t *testing.T) {
	t.Parallel()
	env, _ := fakeWaits() // the retries do not wait
	const token = "tok-9f8e7d6c"
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/unauthorized":
			w.WriteHeader(http.StatusUnauthorized)
		case "/unavailable":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
		case "/filtered":
			w.WriteHeader(http.StatusBadRequest)
		case "/echo":
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprintf(w, `{"error":"bad header %s"}`, r.Header.Get("Authorization"))
		default:
			w.Write([]byte(`[{"id":1}]`))
		}
	})
	def := writeFile(t, "def.yaml", failingDef)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\ntoken: "+token+"\n")
	res := runCLIEnv(t, env, "", "read", def, "--testing-values", vals, "--format", "airbyte")
	status := func(stream, s string) string {
		return `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"` + stream + `"},"status":"` + s + `"}}}`
	}
	failed := func(stream, message, internal, failureType string) []string {
		return []string{status(stream, "STARTED"),
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"stream ` + stream + `, page 1: ` + message +
				` (0 records written before the failure)","internal_message":"` + internal + `","failure_type":"` + failureType +
				`","stream_descriptor":{"name":"` + stream + `"}}}}`,
			status(stream, "INCOMPLETE"),
			// As the CDK's FinalStateCursor: the state of no cursor, whatever happened.
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"` + stream + `"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":0.0}}}`}
	}
	var want []string
	for _, f := range [][4]string{
		{"unauthorized", "authentication failed: 401 Unauthorized from GET http://API/unauthorized", "authentication failed: 401 Unauthorized from GET http://API/unauthorized", "config_error"},
		{"unavailable", "503 Service Unavailable from GET http://API/unavailable (gave up after 5 retries)", "503 Service Unavailable from GET http://API/unavailable (gave up after 5 retries)", "transient_error"},
		{"missing", "404 Not Found from GET http://API/missing", "404 Not Found from GET http://API/missing", "system_error"},
		{"filtered", "400 Bad Request from GET http://API/filtered: the account is not set up for this report", "400 Bad Request from GET http://API/filtered: the account is not set up for this report", "config_error"},
		{"echo", `500 Internal Server Error from GET http://API/echo: {\"error\":\"bad header Bearer ****\"} (gave up after 5 retries)`, `500 Internal Server Error from GET http://API/echo: {\"error\":\"bad header Bearer ****\"} (gave up after 5 retries)`, "transient_error"},
	} {
		want = append(want, failed(f[0], f[1], f[2], f[3])...)
	}
	want = append(want, status("fine", "STARTED"), status("fine", "RUNNING"), `{"type":"RECORD","record":{"stream":"fine","data":{"id":1},"emitted_at":0}}`,
		status("fine", "COMPLETE"), `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"fine"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":1.0}}}`)
	if res.Code != 1 {
		t.Errorf("exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	e2eCheckAirbyte(t, e2eScrub(res.Stdout, api), want...)
	if strings.Contains(res.Stdout+res.Stderr, token) {
		t.Errorf("the token is printed:\n%s\n%s", res.Stdout, res.Stderr)
	}
}

// TestAirbyteTraceErrorNetwork: a connection refused after the retries is transient.
func TestAirbyteTraceErrorNetwork(t *testing.T) {
	t.Parallel()
	env, _ := fakeWaits() // the retries do not wait
	closed := refusedURL(t)
	def := writeFile(t, "def.yaml", e2eOneStream("type: HttpRequester\nurl_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	res := runCLIEnv(t, env, "", "read", def, "--set", "base_url="+closed, "--format", "airbyte")
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(res.Stdout, closed, "CLOSED")), "\n")
	if res.Code != 1 || len(lines) != 4 {
		t.Fatalf("exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
	var msg struct {
		Trace struct {
			Type  string
			Error struct {
				Message         string
				InternalMessage string `json:"internal_message"`
				FailureType     string `json:"failure_type"`
			}
		}
	}
	if err := json.Unmarshal([]byte(lines[1]), &msg); err != nil {
		t.Fatal(err)
	}
	e := msg.Trace.Error
	if msg.Trace.Type != "ERROR" || e.FailureType != "transient_error" ||
		!matchEllipsis(e.Message, "stream items, page 1: GET CLOSED/items: connection refused by … (is the server running?) (gave up after 5 retries) (0 records written before the failure)") ||
		!matchEllipsis(e.InternalMessage, "GET CLOSED/items: connection refused by … (is the server running?) (gave up after 5 retries)") {
		t.Errorf("trace %+v", msg.Trace)
	}
}

// TestOAuthRefusesAWrongState: callbacks whose state is wrong or missing are answered 400 and
// refused, whatever they carry, and connector oauth goes on waiting: the real callback that
// follows is taken, or --timeout ends the wait.
func TestOAuthRefusesAWrongState(t *testing.T) {
	t.Parallel()
	demo := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	t.Cleanup(demo.Close) // after the parallel subtests
	forged := []string{
		"code=forged-code&state=wrong-state",
		"error=access_denied&state=wrong-state",
		"code=forged-code",
	}
	refused := "refused a redirect whose state does not match the one sent (a stale or forged redirect); still waiting for the right one"
	for _, real := range []bool{true, false} {
		name := "then the real callback"
		extra := []string{}
		if !real {
			name, extra = "then the timeout", []string{"--timeout", "2s"}
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			values := writeOAuthValues(t, demo.URL)
			before, _ := os.ReadFile(values)
			run := startOAuth(t, testEnv(nil), append([]string{oauthDef, "--testing-values", values}, extra...)...)
			consent := run.consentURL(t)
			u, err := url.Parse(consent)
			if err != nil {
				t.Fatal(err)
			}
			callback := u.Query().Get("redirect_uri")
			for _, q := range forged {
				resp, err := http.Get(callback + "?" + q)
				if err != nil {
					t.Fatal(err)
				}
				body, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "<h1>Redirect refused</h1>") {
					t.Errorf("forged callback %s: %d %q, want 400 and a refusal page", q, resp.StatusCode, body)
				}
			}
			if real {
				if status, page := browse(t, consent); status != http.StatusOK {
					t.Errorf("the real callback answered %d %q", status, page)
				}
			}
			code, stderr := run.wait(t)
			if got := strings.Count(stderr, refused+"\n"); got != len(forged) {
				t.Errorf("stderr has %d refusal lines, want %d:\n%s", got, len(forged), stderr)
			}
			if real {
				data, _ := os.ReadFile(values)
				if code != 0 || !strings.Contains(string(data), "  access_token: demo-access-") {
					t.Errorf("exit %d, values:\n%s\nstderr:\n%s", code, data, stderr)
				}
				return
			}
			if want := " within 2 s (open the consent URL in a browser, or raise --timeout)\n"; code != 1 || !strings.HasSuffix(stderr, want) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit 1 and an end in %q", code, stderr, want)
			}
			stillThere(t, values, before)
		})
	}
}

// exampleCommands returns the shell commands a definition's header comment shows (the lines
// "#   …").
func exampleCommands(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cmds []string
	for _, line := range strings.Split(string(data), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		if c, ok := strings.CutPrefix(line, "#   "); ok {
			cmds = append(cmds, strings.TrimSpace(c))
		}
	}
	return cmds
}

// TestExamplesNeverRewriteCommittedFiles: a definition that writes rotated tokens back
// shows a command that reads a copy of the example values, and running its commands as
// shown (twice, against a fresh demo API) leaves testing-values.example.yaml as it is.
func TestExamplesNeverRewriteCommittedFiles(t *testing.T) {
	t.Parallel()
	defs, err := filepath.Glob(filepath.Join("..", "definitions", "*.yaml"))
	if err != nil || len(defs) == 0 {
		t.Fatalf("no definitions: %v", err)
	}
	example := filepath.Join("..", "testing-values.example.yaml")
	before, err := os.ReadFile(example)
	if err != nil {
		t.Fatal(err)
	}
	rotating := 0
	for _, def := range defs {
		data, _ := os.ReadFile(def)
		if !strings.Contains(string(data), "refresh_token_updater:") {
			continue
		}
		rotating++
		t.Run(filepath.Base(def), func(t *testing.T) {
			t.Parallel()
			demo := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
			defer demo.Close()
			dir := t.TempDir()
			copies := map[string]string{} // a path the commands write → where the test puts it
			local := func(p string) string {
				if c, ok := copies[p]; ok {
					return c
				}
				return filepath.Join("..", p)
			}
			cmds := exampleCommands(t, def)
			var reads [][]string
			for _, c := range cmds {
				f := strings.Fields(c)
				switch f[0] {
				case "cp":
					if len(f) != 3 {
						t.Fatalf("cannot follow %q", c)
					}
					copies[f[2]] = filepath.Join(dir, filepath.Base(f[2]))
					src, err := os.ReadFile(local(f[1]))
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(copies[f[2]], src, 0o600); err != nil {
						t.Fatal(err)
					}
				case "connector":
					args := f[1:]
					for i := 1; i < len(args); i++ {
						if i > 1 && args[i-1] != "--testing-values" {
							continue
						}
						if _, copied := copies[args[i]]; i > 1 && !copied {
							// Running it would rewrite a file of the repository: report, do not run.
							t.Fatalf("%q reads %s, a committed file, and the run rewrites it: show a command that reads a copy", c, args[i])
						}
						args[i] = local(args[i])
					}
					reads = append(reads, args)
				}
			}
			if len(reads) == 0 {
				t.Fatalf("no connector command in the header comment: %q", cmds)
			}
			for _, args := range reads {
				for run := 1; run <= 2; run++ {
					res := runCLI(t, "", append(args, "--set", "base_url="+demo.URL, "--max-records", "1")...)
					if res.Code != 0 {
						t.Errorf("run %d of %q: exit %d\n%s", run, args, res.Code, res.Stderr)
					}
				}
			}
			stillThere(t, example, before)
			for shown, c := range copies {
				data, _ := os.ReadFile(c)
				if strings.Contains(string(data), "refresh_token: "+demoapi.DemoRotatingRefreshToken) {
					t.Errorf("%s (the copy at %s) still holds the first refresh token:\n%s", shown, c, data)
				}
			}
		})
	}
	if rotating == 0 {
		t.Fatal("no definition in definitions/ rotates its refresh token: the test checks nothing")
	}
}
