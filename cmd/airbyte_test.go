package cmd

import (
	"encoding/json"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
	"connector/pkg/template"
)

// The goldens in testdata/airbyte/*.{spec,discover}.golden are what the Airbyte CDK
// (v7.28.2, source-declarative-manifest, through /work/cdkref/run-cdk) printed for the same
// definition and config, its LOG lines left out: the comparison is byte for byte.
func TestAirbyteSpecAndDiscoverMatchTheCDK(t *testing.T) {
	cases := []struct{ name, def, config string }{
		{"no-auth", "../definitions/no-auth.yaml", `{"base_url":"http://127.0.0.1:8787"}`},
		{"incremental-datetime", "../definitions/incremental-datetime.yaml", `{"base_url":"http://127.0.0.1:8787","start_date":"2024-01-01T00:00:00Z"}`},
		{"gitbook", "", `{"access_token":"dummy-access_token","space_id":"dummy-space_id"}`},
		{"spacex-api", "", `{}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			def := tc.def
			if def == "" {
				def = testcorpus.File(t, tc.name+".yaml")
			}
			config := writeFile(t, "config.json", tc.config)
			res := runCLI(t, "", "airbyte", "spec", "--manifest-path", def)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("spec: exit %d, stderr %q", res.Code, res.Stderr)
			}
			golden(t, "airbyte/"+tc.name+".spec.golden", res.Stdout)
			res = runCLI(t, "", "airbyte", "discover", "--manifest-path", def, "--config", config)
			if res.Code != 0 || res.Stderr != "" {
				t.Fatalf("discover: exit %d, stderr %q", res.Code, res.Stderr)
			}
			golden(t, "airbyte/"+tc.name+".discover.golden", res.Stdout)
		})
	}
}

// The platform passes the definition inside the config: the same catalog and spec come out.
func TestAirbyteInjectedManifest(t *testing.T) {
	src, err := os.ReadFile("../definitions/no-auth.yaml")
	if err != nil {
		t.Fatal(err)
	}
	manifest, err := yamlToJSON(src)
	if err != nil {
		t.Fatal(err)
	}
	config := writeFile(t, "config.json", `{"base_url":"http://127.0.0.1:8787","__injected_declarative_manifest":`+manifest+`}`)
	res := runCLI(t, "", "airbyte", "discover", "--config", config)
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("discover: exit %d, stderr %q", res.Code, res.Stderr)
	}
	golden(t, "airbyte/no-auth.discover.golden", res.Stdout)
	res = runCLI(t, "", "airbyte", "spec", "--config", config)
	if res.Code != 0 {
		t.Fatalf("spec: exit %d, stderr %q", res.Code, res.Stderr)
	}
	golden(t, "airbyte/no-auth.spec.golden", res.Stdout)
}

// The goldens in testdata/airbyte/check-*.golden are the CONNECTION_STATUS of `airbyte
// check`, the test server's address replaced by BASE_URL; the status is not an exit code
// (0 either way) and stderr stays empty.
func TestAirbyteCheck(t *testing.T) {
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/public/") {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"data":[{"id":1}]}`))
			return
		}
		http.NotFound(w, r)
	})
	def := "../definitions/no-auth.yaml"
	cases := []struct{ name, def, config string }{
		{"succeeded", def, `{"base_url":"` + api.URL + `"}`},
		// The CDK: an invalid config is a FAILED status with the validation error, exit 0.
		{"invalid-config", def, `{"base_url":5}`},
		// The first page of the check stream fails: FAILED with the reason.
		{"http-failure", def, `{"base_url":"` + api.URL + `/nowhere"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			config := writeFile(t, "config.json", tc.config)
			res := runCLI(t, "", "airbyte", "check", "--manifest-path", tc.def, "--config", config)
			if res.Code != 0 || res.Stderr != "" {
				t.Errorf("exit %d, stderr %q", res.Code, res.Stderr)
			}
			golden(t, "airbyte/check-"+tc.name+".golden", strings.ReplaceAll(res.Stdout, api.URL, "BASE_URL"))
		})
	}
	// The first page of each stream the check names, until one fails.
	var urls []string
	for _, r := range api.requests() {
		urls = append(urls, r.URL)
	}
	want := []string{"/v1/public/books?offset=0&limit=100", "/v1/public/authors?offset=0&limit=100", "/nowhere/v1/public/books?offset=0&limit=100"}
	if !slices.Equal(urls, want) {
		t.Errorf("requests %q, want %q", urls, want)
	}
}

func TestAirbyteCheckHTTPFailureIsFailed(t *testing.T) {
	api := newRecorder(t, http.NotFound)
	config := writeFile(t, "config.json", `{"base_url":"`+api.URL+`"}`)
	res := runCLI(t, "", "airbyte", "check", "--manifest-path", "../definitions/no-auth.yaml", "--config", config)
	// As the CDK: the reason as a WARN log, "Check failed" as an ERROR log, then the status
	// whose message is Python's repr() of the reason.
	lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("stdout %q: want 3 lines", res.Stdout)
	}
	var warn, failed struct {
		Type string
		Log  struct{ Level, Message string }
	}
	var m struct {
		Type             string
		ConnectionStatus struct{ Status, Message string }
	}
	for i, v := range []any{&warn, &failed, &m} {
		if err := json.Unmarshal([]byte(lines[i]), v); err != nil {
			t.Fatalf("line %d %q: %v", i+1, lines[i], err)
		}
	}
	if warn.Log.Level != "WARN" || !strings.HasPrefix(warn.Log.Message, "Stream books is not available: ") || failed.Log != (struct{ Level, Message string }{"ERROR", "Check failed"}) {
		t.Errorf("logs %+v %+v", warn, failed)
	}
	if res.Code != 0 || m.Type != "CONNECTION_STATUS" || m.ConnectionStatus.Status != "FAILED" ||
		m.ConnectionStatus.Message != template.PyRepr(warn.Log.Message) || !strings.Contains(m.ConnectionStatus.Message, "404") {
		t.Errorf("exit %d, message %+v", res.Code, m)
	}
}

// Failures before a catalog is made are one TRACE ERROR (config_error) and exit 1, as the
// CDK's entrypoint does.
func TestAirbyteConfigErrors(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	def := "../definitions/no-auth.yaml"
	bad := writeFile(t, "bad.json", `{"base_url":5}`)
	noManifest := writeFile(t, "config.json", `{"base_url":"x"}`)
	notJSON := writeFile(t, "broken.json", `{"base_url":`)
	badDef := writeFile(t, "def.yaml", "version: 6.0.0\ntype: DeclarativeSource\nstreams:\n  - type: DeclarativeStream\n    nme: x\n")
	cases := []struct {
		name string
		args []string
		msg  string
	}{
		// The CDK validates the config as given: a required key is required even when the
		// spec gives it a default (read and check fill defaults; the entry point does not).
		{"required value with a default left out", []string{"read", "--manifest-path", def, "--config", writeFile(t, "empty.json", `{}`), "--catalog", catalog(t, "books")},
			`"message":"Config validation error: missing required config value \"base_url\"","internal_message":"missing required config value \"base_url\"","failure_type":"config_error"`},
		{"invalid config", []string{"discover", "--manifest-path", def, "--config", bad},
			`"message":"Config validation error: config value \"base_url\": got integer, want string","internal_message":"config value \"base_url\": got integer, want string","failure_type":"config_error"`},
		{"no definition", []string{"discover", "--config", noManifest},
			`"message":"Error starting the sync. This could be due to an invalid configuration or catalog. Error: invalid config: ` + "`__injected_declarative_manifest`" + ` should be provided at the root of the config or using the --manifest-path argument; config only has keys: [base_url]","failure_type":"config_error"`},
		{"config not JSON", []string{"check", "--manifest-path", def, "--config", notJSON},
			`"message":"Error starting the sync. This could be due to an invalid configuration or catalog. Error: could not read json file ` + notJSON + `: it is not a JSON object","failure_type":"config_error"`},
		{"invalid definition", []string{"spec", "--manifest-path", badDef},
			`"message":"Invalid definition: DeclarativeStream is missing the required field ` + "`name`" + `","failure_type":"config_error"`},
		{"config missing", []string{"check", "--manifest-path", def, "--config", "/nonexistent/config.json"},
			`"message":"Error starting the sync. This could be due to an invalid configuration or catalog. Error: cannot read the config: /nonexistent/config.json: no such file or directory","failure_type":"config_error"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res := runCLIEnv(t, env, "", append([]string{"airbyte"}, tc.args...)...)
			var e struct {
				Error struct{ Message string } `json:"error"`
			}
			json.Unmarshal([]byte(`{"error":{`+tc.msg+`}}`), &e)
			// As the CDK's entry point: a FATAL log, then the TRACE ERROR.
			want := `{"type":"LOG","log":{"level":"FATAL","message":` + strconv.Quote(e.Error.Message) + "}}\n" +
				`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{` + tc.msg + "}}}\n"
			if res.Code != 1 || res.Stdout != want || res.Stderr != "" {
				t.Errorf("exit %d\nstdout %s\nwant   %s\nstderr %s", res.Code, res.Stdout, want, res.Stderr)
			}
		})
	}
}

func TestAirbyteUsage(t *testing.T) {
	for _, args := range [][]string{{"airbyte"}, {"airbyte", "nope"}, {"airbyte", "check", "--manifest-path", "x.yaml"}, {"airbyte", "read", "--manifest-path", "x.yaml", "--config", "c.json"}} {
		res := runCLI(t, "", args...)
		if res.Code != 2 || res.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, res.Code, res.Stdout, res.Stderr)
		}
	}
}

// yamlToJSON is a definition as the platform passes it: JSON, in the definition's key order.
func yamlToJSON(src []byte) (string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return "", err
	}
	var b strings.Builder
	var walk func(n *yaml.Node) error
	walk = func(n *yaml.Node) error {
		switch n.Kind {
		case yaml.DocumentNode:
			return walk(n.Content[0])
		case yaml.AliasNode:
			return walk(n.Alias)
		case yaml.MappingNode, yaml.SequenceNode:
			open, end := "{", "}"
			if n.Kind == yaml.SequenceNode {
				open, end = "[", "]"
			}
			b.WriteString(open)
			for i, c := range n.Content {
				if i > 0 {
					b.WriteString(map[bool]string{true: ":", false: ","}[n.Kind == yaml.MappingNode && i%2 == 1])
				}
				if err := walk(c); err != nil {
					return err
				}
			}
			b.WriteString(end)
			return nil
		}
		var v any
		if err := n.Decode(&v); err != nil {
			return err
		}
		j, err := json.Marshal(v)
		b.Write(j)
		return err
	}
	err := walk(&doc)
	return b.String(), err
}

// An image built on the Dockerfile's with a definition inside sets CONNECTOR_MANIFEST_PATH:
// the platform's plain `spec` (no arguments but the command) then answers its spec.
func TestAirbyteManifestPathFromEnvironment(t *testing.T) {
	env := testEnv(map[string]string{"CONNECTOR_MANIFEST_PATH": "../definitions/no-auth.yaml"})
	res := runCLIEnv(t, env, "", "airbyte", "spec")
	if res.Code != 0 || res.Stderr != "" {
		t.Fatalf("spec: exit %d, stderr %q", res.Code, res.Stderr)
	}
	golden(t, "airbyte/no-auth.spec.golden", res.Stdout)
}

// `airbyte spec` without a definition answers as the CDK's source-declarative-manifest
// does: the spec of any definition, a config that carries one under
// __injected_declarative_manifest (its spec.json).
func TestAirbyteSpecWithoutADefinition(t *testing.T) {
	res := runCLI(t, "", "airbyte", "spec")
	want := `{"type":"SPEC","spec":{"connectionSpecification":{"$schema":"http://json-schema.org/draft-07/schema#","title":"Low-code source spec","type":"object","required":["__injected_declarative_manifest"],"additionalProperties":true,"properties":{"__injected_declarative_manifest":{"title":"Low-code manifest","type":"object","description":"The low-code manifest that defines the components of the source."}}},"documentationUrl":"https://docs.airbyte.com/integrations/sources/low-code","supportsNormalization":false,"supportsDBT":false}}` + "\n"
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr: %s", res.Code, res.Stdout, want, res.Stderr)
	}
	// A config without the definition, for spec, is the same answer.
	cfg := writeFile(t, "config.json", `{"api_key":"k"}`)
	if res := runCLI(t, "", "airbyte", "spec", "--config", cfg); res.Code != 0 || res.Stdout != want {
		t.Errorf("with a config: exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
}
