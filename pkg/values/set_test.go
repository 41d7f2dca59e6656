package values

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"gopkg.in/yaml.v3"
)

// spec reads a connection specification written in YAML, as the manifest loader gives it
// (whole numbers as int).
func spec(t *testing.T, src string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(src), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

const setSpec = `
type: object
definitions:
  port: {type: integer}
properties:
  port: {$ref: "#/definitions/port"}
  either: {type: [integer, "null"]}
  loose: {type: [integer, string]}
  credentials:
    oneOf:
      - properties:
          auth_type: {const: key}
          api_key: {type: string}
      - properties:
          auth_type: {const: oauth}
          expires_in: {type: integer}
  ratio: {type: number}
`

func TestSetConvertsByTheSpec(t *testing.T) {
	s := spec(t, setSpec)
	tests := []struct {
		assignment string
		path       []string
		want       any
	}{
		{"port=8080", []string{"port"}, json.Number("8080")},
		{"either=null", []string{"either"}, nil},
		{"either=12", []string{"either"}, json.Number("12")},
		{"loose=12", []string{"loose"}, "12"},
		{"credentials.api_key=0042", []string{"credentials", "api_key"}, "0042"},
		{"credentials.expires_in=3600", []string{"credentials", "expires_in"}, json.Number("3600")},
		{"ratio=1e3", []string{"ratio"}, json.Number("1e3")},
		{"port=1e3", []string{"port"}, json.Number("1e3")},
		{"unknown=12", []string{"unknown"}, "12"},
		{"empty=", []string{"empty"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.assignment, func(t *testing.T) {
			v := None()
			if err := v.Set(tt.assignment, s); err != nil {
				t.Fatal(err)
			}
			got, ok := v.Get(tt.path)
			if !ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("%v = %#v, want %#v", tt.path, got, tt.want)
			}
		})
	}
}

func TestSetTypeErrors(t *testing.T) {
	s := spec(t, setSpec)
	for _, tt := range []struct{ assignment, want string }{
		{"port=08", `--set port=08: port is an integer in spec.connection_specification, and "08" is not one`},
		{"either=x", `--set either=x: either is an integer or null in spec.connection_specification, and "x" is not one`},
		{"credentials.expires_in=soon", `--set credentials.expires_in=soon: credentials.expires_in is an integer in spec.connection_specification, and "soon" is not one`},
	} {
		err := None().Set(tt.assignment, s)
		var te *TypeError
		if !errors.As(err, &te) || err.Error() != tt.want {
			t.Errorf("Set(%q) = %v\nwant the TypeError %s", tt.assignment, err, tt.want)
		}
	}
}

func TestApplyDefaults(t *testing.T) {
	s := spec(t, `
type: object
definitions:
  node:
    type: object
    properties:
      depth: {type: integer, default: 1}
      child: {$ref: "#/definitions/node"}
properties:
  page_size: {type: integer, default: 100}
  tags: {type: array, default: [a, b]}
  options:
    type: object
    properties:
      region: {type: string, default: eu}
  needs_key:
    type: object
    required: [key]
    properties:
      key: {type: string}
      mode: {type: string, default: fast}
  tree: {$ref: "#/definitions/node"}
  given: {type: integer, default: 5}
  nothing: {type: string}
`)
	v, err := Parse("values.yaml", []byte("given: 7\noptions: {}\n"))
	if err != nil {
		t.Fatal(err)
	}
	got := v.ApplyDefaults(s)
	var paths []string
	for _, d := range got {
		paths = append(paths, d.Path)
	}
	// tree is recursive: the object is built once, its child (the same schema) is not.
	if !reflect.DeepEqual(paths, []string{"options.region", "page_size", "tags", "tree.depth"}) {
		t.Fatalf("defaults applied: %v", paths)
	}
	if v.Map["given"] != int64(7) {
		t.Errorf("given = %#v, the default replaced a given value", v.Map["given"])
	}
	if _, ok := v.Map["needs_key"]; ok {
		t.Errorf("needs_key was created without its required key: %#v", v.Map["needs_key"])
	}
	if v.Map["page_size"] != int64(100) {
		t.Errorf("page_size = %#v, want int64 100", v.Map["page_size"])
	}
	v.Map["tags"].([]any)[0] = "changed"
	if s["properties"].(map[string]any)["tags"].(map[string]any)["default"].([]any)[0] != "a" {
		t.Error("changing a value changed the default in the specification")
	}
	if FormatDefaults(got[:3]) != `options.region="eu", page_size=100, tags=["changed","b"]` {
		t.Errorf("FormatDefaults = %s", FormatDefaults(got[:3]))
	}
}
