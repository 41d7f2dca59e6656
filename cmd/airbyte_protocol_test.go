package cmd

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
)

// runCLIEnv checks stdout against the Airbyte protocol whenever the command line writes it,
// whichever way the format is chosen; writesProtocol decides with the program's own command
// tree and settings.
func TestWritesProtocol(t *testing.T) {
	settings := writeFile(t, "settings.yaml", "read:\n  format: airbyte\n")
	topLevel := writeFile(t, "top.yaml", "format: airbyte\n")
	tests := []struct {
		env  map[string]string
		args []string
		want bool
	}{
		{nil, []string{"airbyte", "spec", "--manifest-path", "d.yaml"}, true},
		{nil, []string{"airbyte", "read", "--config", "c.json", "--catalog", "k.json"}, true},
		{nil, []string{"airbyte"}, true}, // a usage error: stdout must stay empty
		{nil, []string{"airbyte", "read", "--help"}, false},
		{nil, []string{"read", "d.yaml", "--format", "airbyte"}, true},
		{nil, []string{"read", "d.yaml", "--format=airbyte"}, true},
		{nil, []string{"--no-color", "read", "d.yaml", "--format", "airbyte"}, true},
		{nil, []string{"read", "d.yaml"}, false},
		{nil, []string{"read", "d.yaml", "--format", "envelope"}, false},
		{map[string]string{"CONNECTOR_FORMAT": "airbyte"}, []string{"read", "d.yaml"}, true},
		{map[string]string{"CONNECTOR_FORMAT": "airbyte"}, []string{"read", "d.yaml", "--format", "records"}, false},
		{nil, []string{"read", "d.yaml", "--settings", settings}, true},
		{map[string]string{"CONNECTOR_SETTINGS": topLevel}, []string{"read", "d.yaml"}, true},
		{nil, []string{"read", "d.yaml", "--format", "csv"}, false}, // refused: exit 2, nothing on stdout
		{nil, []string{"check", "d.yaml", "--format", "json"}, false},
		{nil, []string{"paginate-trace", "d.yaml"}, false},
	}
	for _, tt := range tests {
		if got := writesProtocol(tt.args, testEnv(tt.env)); got != tt.want {
			t.Errorf("%v with %v: %v, want %v", tt.args, tt.env, got, tt.want)
		}
	}
}

// noNetwork refuses every request: the corpus's definitions name real APIs.
type noNetwork struct{}

func (noNetwork) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errors.New("no network in this test")
}

// Every real definition of the corpus gives a SPEC, and a CATALOG (or a TRACE ERROR) for a
// config made from its spec, each line valid under the protocol's schema (runCLIEnv checks
// them). No request leaves the machine: a dynamic stream whose resolver needs the API fails,
// and that failure is a protocol message too.
func TestAirbyteCorpusMessagesAreProtocol(t *testing.T) {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	env.Transport = noNetwork{}
	env.Sleep = func(context.Context, time.Duration) error { return nil }
	defs := testcorpus.Definitions(t)
	catalogs := 0
	for _, def := range defs {
		name := strings.TrimSuffix(filepath.Base(def), ".yaml")
		res := runCLIEnv(t, env, "", "airbyte", "spec", "--manifest-path", def)
		switch {
		case res.Code == 0 && strings.HasPrefix(res.Stdout, `{"type":"SPEC",`) && strings.Count(res.Stdout, "\n") == 1:
		case res.Code == 1 && strings.HasPrefix(res.Stdout, `{"type":"TRACE","trace":{"type":"ERROR",`):
			continue // a definition connector cannot run (Python components): "Invalid definition: …"
		default:
			t.Errorf("%s: spec: exit %d\n%s%s", name, res.Code, res.Stdout, res.Stderr)
			continue
		}
		var spec struct {
			Spec struct {
				ConnectionSpecification map[string]any `json:"connectionSpecification"`
			} `json:"spec"`
		}
		if err := json.Unmarshal([]byte(res.Stdout), &spec); err != nil {
			t.Fatal(err)
		}
		config, err := json.Marshal(exampleValue(spec.Spec.ConnectionSpecification, "config"))
		if err != nil {
			t.Fatal(err)
		}
		res = runCLIEnv(t, env, "", "airbyte", "discover", "--manifest-path", def, "--config", writeFile(t, "config.json", string(config)))
		switch {
		case res.Code == 0 && strings.HasPrefix(res.Stdout, `{"type":"CATALOG",`):
			catalogs++
		case res.Code == 1 && strings.HasPrefix(res.Stdout, `{"type":"TRACE","trace":{"type":"ERROR",`):
		default:
			t.Errorf("%s: discover: exit %d\n%s%s", name, res.Code, res.Stdout, res.Stderr)
		}
	}
	// 47 of the 62 today: the others need Python components, or values the example config
	// does not guess (a pattern, an authenticator to choose, an OAuth access token).
	if catalogs < len(defs)*2/3 {
		t.Errorf("only %d of %d definitions gave a catalog", catalogs, len(defs))
	}
}

// exampleValue is a value the schema s accepts, as a person would first try: its default,
// const, first enum value or first example, else one by type (for an object, its required
// properties), a date where the format or pattern asks for one.
func exampleValue(s map[string]any, key string) any {
	if s == nil {
		return "example-" + key
	}
	for _, k := range []string{"default", "const"} {
		if v, ok := s[k]; ok {
			return v
		}
	}
	for _, k := range []string{"enum", "examples"} {
		if l, ok := s[k].([]any); ok && len(l) > 0 {
			return l[0]
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if l, ok := s[k].([]any); ok && len(l) > 0 {
			first, _ := l[0].(map[string]any)
			return exampleValue(first, key)
		}
	}
	typ := s["type"]
	if l, ok := typ.([]any); ok && len(l) > 0 {
		typ = l[0]
	}
	format, _ := s["format"].(string)
	pattern, _ := s["pattern"].(string)
	switch {
	case typ == "object" || typ == nil && s["properties"] != nil:
		props, _ := s["properties"].(map[string]any)
		out := map[string]any{}
		required, _ := s["required"].([]any)
		for _, r := range required {
			name, _ := r.(string)
			p, _ := props[name].(map[string]any)
			out[name] = exampleValue(p, name)
		}
		return out
	case typ == "integer" || typ == "number":
		return 1
	case typ == "boolean":
		return false
	case typ == "array":
		return []any{}
	case format == "date" || strings.Contains(pattern, "[0-9]{4}-[0-9]{2}-[0-9]{2}$"):
		return "2024-01-01"
	case format == "date-time" || strings.Contains(pattern, "[0-9]{4}"):
		return "2024-01-01T00:00:00Z"
	}
	return "example-" + key
}

// The example config of a spec, on its own.
func TestExampleValue(t *testing.T) {
	var spec map[string]any
	src := `
type: object
required: [api_key, start, since, count, mode, auth, tags, flag]
properties:
  api_key: {type: string}
  start: {type: string, format: date-time}
  since: {type: string, pattern: "^[0-9]{4}-[0-9]{2}-[0-9]{2}$"}
  count: {type: integer}
  mode: {type: string, enum: [fast, slow]}
  auth:
    type: object
    oneOf:
      - {type: object, required: [token], properties: {token: {type: string}, kind: {const: bearer}}}
  tags: {type: array}
  flag: {type: boolean, default: true}
  optional: {type: string}
`
	if err := yaml.Unmarshal([]byte(src), &spec); err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(exampleValue(spec, "config"))
	want := `{"api_key":"example-api_key","auth":{"token":"example-token"},"count":1,"flag":true,"mode":"fast","since":"2024-01-01","start":"2024-01-01T00:00:00Z","tags":[]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
