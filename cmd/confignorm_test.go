package cmd

import (
	"os"
	"strings"
	"testing"
)

// configNormDef is a definition whose spec.config_normalization_rules migrate, transform and
// validate the testing values; its one request shows the values the stream saw. Run with the
// Airbyte CDK 7.28.2 against a logging server, the testing values of TestConfigNormalization
// gave GET /items?region=europe&mode=fast&workers=2&reports=2&old=gone&nested=2 with
// X-Key: sekret-key (the migration moved api_key under credentials, removed legacy, raised
// num_workers 1 to 2 and read the reports text as a list; the transformations remapped
// region, left the number 2 alone since the CDK renders map keys as strings, and derived mode).
const configNormDef = `version: 6.0.0
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
        http_method: GET
        authenticator:
          type: ApiKeyAuthenticator
          api_token: "{{ config['credentials']['api_key'] }}"
          inject_into:
            type: RequestOption
            inject_into: header
            field_name: X-Key
        request_parameters:
          region: "{{ config['region'] }}"
          mode: "{{ config['mode'] }}"
          workers: "{{ config['num_workers'] }}"
          reports: "{{ config['reports_array'] | length }}"
          old: "{{ config.get('legacy', 'gone') }}"
          nested: "{{ config['opts']['level'] }}"
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: [data]
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url]
    properties:
      base_url: {type: string}
      api_key: {type: string, airbyte_secret: true}
      region: {type: string}
      num_workers: {type: integer}
      legacy: {type: string}
      reports: {type: string}
      opts: {type: object}
  config_normalization_rules:
    type: ConfigNormalizationRules
    config_migrations:
      - type: ConfigMigration
        description: move api_key under credentials
        transformations:
          - type: ConfigAddFields
            fields:
              - type: AddedFieldDefinition
                path: ["credentials", "api_key"]
                value: "{{ config['api_key'] }}"
            condition: "{{ config.get('api_key', False) }}"
          - type: ConfigRemoveFields
            field_pointers:
              - ["api_key"]
              - ["legacy"]
            condition: "{{ config.get('credentials') }}"
      - type: ConfigMigration
        transformations:
          - type: ConfigAddFields
            fields:
              - type: AddedFieldDefinition
                path: ["num_workers"]
                value: "2"
            condition: "{{ config.get('num_workers', 25) == 1 }}"
          - type: ConfigAddFields
            fields:
              - type: AddedFieldDefinition
                path: ["reports_array"]
                value: "{{ config['reports'] }}"
            condition: "{{ config.get('reports', False) }}"
    transformations:
      - type: ConfigRemapField
        field_path: ["region"]
        map:
          eu: europe
          us: america
      - type: ConfigRemapField
        field_path: ["opts", "level"]
        map:
          "1": one
          2: two
      - type: ConfigAddFields
        fields:
          - type: AddedFieldDefinition
            path: ["mode"]
            value: "{{ 'fast' if config['num_workers'] > 1 else 'slow' }}"
    validations:
      - type: DpathValidator
        field_path: ["reports_array"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema:
            type: array
            items:
              type: object
              required: [name]
              properties:
                name: {type: string, minLength: 1}
      - type: DpathValidator
        field_path: ["reports_array", "*"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: object, properties: {name: {type: string, maxLength: 5}}}
      - type: DpathValidator
        field_path: ["missing_key"]
        validation_strategy:
          type: ValidateAdheresToSchema
          base_schema: {type: integer}
`

func TestConfigNormalization(t *testing.T) {
	t.Parallel()
	const values = "api_key: sekret-key\nregion: eu\nnum_workers: 1\nlegacy: x\n" +
		"reports: \"[{'name': 'abc'}, {'name': 'de'}]\"\nopts: {level: 2}\n"
	t.Run("the stream sees the normalized values", func(t *testing.T) {
		t.Parallel()
		api := newRecorder(t, e2eAnswer(`{"data": [{"id": 1}]}`))
		defPath := writeFile(t, "def.yaml", configNormDef)
		text := "base_url: " + api.URL + "\n" + values
		vals := writeFile(t, "values.yaml", text)
		res := runCLI(t, "", "read", defPath, "--testing-values", vals)
		e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
		e2eCheckRequests(t, api, e2eRequest{Method: "GET",
			URL:     "/items?region=europe&mode=fast&workers=2&reports=2&old=gone&nested=2",
			Headers: map[string]string{"X-Key": "sekret-key"}})
		if got, _ := os.ReadFile(vals); string(got) != text {
			t.Errorf("the testing values file changed:\n%s", got)
		}
	})
	for _, tc := range []struct {
		name, values string
		code         int
		stderr       string
	}{
		{
			name:   "a failed validation names the key and the rule, not the value",
			values: "api_key: sekret-key\nregion: eu\nnum_workers: 3\nreports: \"[{'name': 'sekret-key'}]\"\nopts: {}\n",
			code:   3,
			stderr: "error: VALUES: testing value \"reports_array.0\" fails spec.config_normalization_rules.validations[1] (ValidateAdheresToSchema): \"name\" breaks `maxLength` (spec.config_normalization_rules of DEF)\n",
		},
		{
			name:   "a string value is read as JSON first, as in the CDK",
			values: "region: eu\nnum_workers: 3\nopts: {}\nmissing_key: not-json\n",
			code:   3,
			stderr: "error: VALUES: testing value \"missing_key\" fails spec.config_normalization_rules.validations[2] (ValidateAdheresToSchema): the value is a string that is not JSON (spec.config_normalization_rules of DEF)\n",
		},
		{
			name:   "a string holding JSON of the right type passes",
			values: "api_key: k\nregion: eu\nnum_workers: 3\nopts: {}\nmissing_key: \"7\"\n",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`{"data": []}`))
			defPath := writeFile(t, "def.yaml", configNormDef)
			vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+tc.values)
			res := runCLI(t, "", "read", defPath, "--testing-values", vals)
			stderr := strings.NewReplacer("VALUES", vals, "DEF", defPath).Replace(tc.stderr)
			e2eCheckResult(t, api, res, tc.code, "", stderr)
			if tc.code != 0 {
				e2eCheckRequests(t, api)
			}
		})
	}
}
