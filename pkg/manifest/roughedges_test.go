package manifest

import (
	"strings"
	"testing"
)

// The rough edges a new author meets (issue 28): each case asserts the whole list of
// diagnostics validate prints.

// edgeDef is a valid definition with one paginated stream; a case changes a line of it.
const edgeDef = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
definitions:
  requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
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
    properties:
      base_url: {type: string}
`

// edgeDiags parses src and renders its diagnostics as validate prints them.
func edgeDiags(t *testing.T, src string) (*Definition, string) {
	t.Helper()
	def, diags := Parse("def.yaml", []byte(src))
	return def, diags.Error()
}

func TestDuplicateKeyIsAWarningAndTheLastWins(t *testing.T) {
	src := strings.Replace(edgeDef, "        page_token_option:", `        pagination_strategy:
          type: OffsetIncrement
          page_size: 5
        page_token_option:`, 1)
	def, got := edgeDiags(t, src)
	want := "def.yaml:24:9: warning: duplicate key `pagination_strategy` (first at line 21:9): the last one is used, as in the Airbyte CDK\n" +
		"  hint: remove one of them"
	if got != want {
		t.Fatalf("got:\n%s\nwant:\n%s", got, want)
	}
	if def == nil {
		t.Fatal("no definition: a duplicate key is a warning")
	}
	if s := def.Streams[0].Paginator.Strategy.Type; s != "OffsetIncrement" {
		t.Errorf("the strategy is %s, want the last one written, OffsetIncrement", s)
	}
}

// A $ref that names nothing is the one problem reported: the fields it would have given are
// not also reported missing.
func TestBrokenRefHidesTheFieldsItWouldGive(t *testing.T) {
	src := strings.Replace(edgeDef, `$ref: "#/definitions/requester"`, `$ref: "#/definitions/requestor"`, 1)
	def, got := edgeDiags(t, src)
	want := "def.yaml:14:15: error: reference `#/definitions/requestor` not found\n" +
		"  hint: did you mean `#/definitions/requester`?"
	if def != nil || got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	// Without the $ref, the same mapping misses its url_base.
	src = strings.Replace(edgeDef, `        $ref: "#/definitions/requester"`+"\n", "", 1)
	if _, got := edgeDiags(t, src); got != "def.yaml:14:9: error: HttpRequester is missing the required field `url_base` (or `url`)" {
		t.Errorf("without the $ref: %s", got)
	}
}

// A YAML syntax error is reported on the line where the parser stopped, not where the block
// holding it starts.
func TestYAMLErrorOnTheOffendingLine(t *testing.T) {
	src := strings.Replace(edgeDef, "        path: /items", "       path: /items", 1)
	if _, got := edgeDiags(t, src); got != "def.yaml:15:1: error: invalid YAML: did not find expected key" {
		t.Errorf("got %s", got)
	}
}

// A template reading a config key the specification does not declare is a warning, once per
// key; the keys that config_normalization_rules add and the OAuth flow writes are declared.
func TestConfigKeyNotInTheSpec(t *testing.T) {
	t.Run("a typo", func(t *testing.T) {
		src := strings.Replace(edgeDef, "config['base_url']", "config['base_ur']", 1)
		src = strings.Replace(src, "path: /items", "path: \"/{{ config.base_ur }}/{{ config['region'] }}\"", 1)
		def, got := edgeDiags(t, src)
		want := "def.yaml:7:26: warning: in `url_base`: config['base_ur'] is not in spec.connection_specification (read at 1 other place too)\n" +
			"  hint: did you mean `base_url`?\n" +
			"def.yaml:15:48: warning: in `path`: config['region'] is not in spec.connection_specification\n" +
			"  hint: declare it under spec.connection_specification.properties, or fix the key"
		if def == nil || got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("keys added by config_normalization_rules or written by the OAuth flow", func(t *testing.T) {
		src := strings.Replace(edgeDef, "path: /items", "path: \"/{{ config['region'] }}/{{ config['token'] }}/{{ config['old'] }}\"", 1) + `  config_normalization_rules:
    type: ConfigNormalizationRules
    config_migrations:
      - type: ConfigMigration
        transformations:
          - type: ConfigAddFields
            fields:
              - {type: AddedFieldDefinition, path: [region], value: "{{ config['old'] }}"}
  advanced_auth:
    auth_flow_type: oauth2.0
    oauth_config_specification:
      complete_oauth_output_specification:
        type: object
        properties:
          access_token: {type: string, path_in_connector_config: [token]}
`
		_, got := edgeDiags(t, src)
		want := "def.yaml:15:72: warning: in `path`: config['old'] is not in spec.connection_specification\n" +
			"  hint: declare it under spec.connection_specification.properties, or fix the key"
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("no properties declared", func(t *testing.T) {
		src := strings.Replace(edgeDef, "    properties:\n      base_url: {type: string}\n", "", 1)
		if _, got := edgeDiags(t, src); got != "" {
			t.Errorf("got:\n%s", got)
		}
	})
}
