package manifest

import (
	"strings"
	"testing"

	"connector/pkg/diag"
)

// TestUnknownFieldsFollowTheCDKSchema pins every difference found between our unknown-field
// checks and the `additionalProperties` of the CDK's declarative_component_schema.yaml (7.28.2):
// only the top level (and ConfigNormalizationRules) refuse unknown fields there; every other
// component ignores them, so here they are warnings. Fields of the schema this tool does not
// act on are refused when they change requests or records, else accepted with a warning. What
// the CDK refuses too stays an error.
func TestUnknownFieldsFollowTheCDKSchema(t *testing.T) {
	tests := []struct {
		name string
		// top is laid at the top level; requester, extractor and handler into the stream.
		top, requester, extractor, handler string
		want                               []string // "severity code: message", in order; nil: no diagnostic
	}{
		{name: "hubspot's spec.documentationUrl is ignored, as by the CDK's Spec",
			top:  "spec:\n  type: Spec\n  documentationUrl: https://docs.airbyte.com/integrations/sources/hubspot\n  connection_specification: {type: object}\n",
			want: []string{"warning unknown-field: unknown field `documentationUrl` in Spec; it is ignored"}},
		{name: "a near miss in a nested component is a warning with its hint",
			requester: "    url_base: http://x\n    http_methd: GET\n",
			want:      []string{"warning unknown-field: unknown field `http_methd` in HttpRequester; it is ignored"}},
		{name: "a near miss in an HttpResponseFilter is a warning",
			handler: "      response_filters: [{action: IGNORE, http_codes: [404], error_mesage: x}]\n",
			want:    []string{"warning unknown-field: unknown field `error_mesage` in HttpResponseFilter; it is ignored"}},
		{name: "an unknown top-level field stays an error (additionalProperties: false)",
			top:  "schema: {}\n",
			want: []string{"error unknown-field: unknown field `schema` in DeclarativeSource"}},
		{name: "class_name beside a type that is not Custom is ignored, as by the CDK",
			requester: "    type: HttpRequester\n    class_name: SimpleRetriever\n    url_base: http://x\n",
			want:      []string{"warning unknown-field: unknown field `class_name` in HttpRequester; it is ignored"}},
		{name: "field_name and field_path together stay errors with the CDK's reasons (workable.yaml)",
			requester: "    url_base: http://x\n    authenticator: {type: ApiKeyAuthenticator, api_token: \"{{ config.k }}\", inject_into: {type: RequestOption, inject_into: request_parameter, field_name: k, field_path: [k]}}\n",
			want: []string{
				"error option-conflict: both `field_name` and `field_path` are set (the Airbyte CDK refuses it too: \"Only one of field_name or field_path can be provided to RequestOption\")",
				"error type: `field_path` is only valid with `inject_into: body_json` (the Airbyte CDK refuses it too: \"Nested field injection is only supported for body JSON injection\")"}},
		{name: "stream_groups is a known top-level field",
			top: "stream_groups:\n  g: {streams: [], action: {type: BlockSimultaneousSyncsAction}}\n"},
		{name: "record_expander is a known DpathExtractor field, refused as unsupported",
			extractor: "{field_path: [], record_expander: {type: RecordExpander, expand_records_from_field: [a]}}",
			want:      []string{"error unsupported-component: RecordExpander is not supported yet (record_expander)"}},
		{name: "send_refresh_request_as_query_params: true changes the refresh request, refused",
			requester: "    url_base: http://x\n    authenticator: {type: OAuthAuthenticator, client_id: \"{{ config.a }}\", client_secret: \"{{ config.b }}\", refresh_token: \"{{ config.c }}\", token_refresh_endpoint: http://x/t, send_refresh_request_as_query_params: true}\n",
			want:      []string{"error unsupported-component: OAuthAuthenticator send_refresh_request_as_query_params is not supported yet (send_refresh_request_as_query_params)"}},
		{name: "send_refresh_request_as_query_params: false and the refresh_token_error fields are accepted",
			requester: "    url_base: http://x\n    authenticator: {type: OAuthAuthenticator, client_id: \"{{ config.a }}\", client_secret: \"{{ config.b }}\", refresh_token: \"{{ config.c }}\", token_refresh_endpoint: http://x/t, send_refresh_request_as_query_params: false, refresh_token_error_status_codes: [400], refresh_token_error_key: error, refresh_token_error_values: [invalid_grant]}\n"},
		{name: "jitter_range_in_seconds is accepted",
			handler: "      backoff_strategies: [{type: ConstantBackoffStrategy, backoff_time_in_seconds: 1, jitter_range_in_seconds: 2}, {type: ExponentialBackoffStrategy, jitter_range_in_seconds: 1}]\n"},
		{name: "CheckStream config_overrides is accepted with a warning",
			top:  "check: {type: CheckStream, stream_names: [s], config_overrides: {wait: 1}}\n",
			want: []string{"warning unsupported-component: `config_overrides` of CheckStream is not applied: `check` uses the testing values as they are"}},
		{name: "an HttpResponseFilter with an action and no condition is a warning: the CDK builds it and it never matches",
			handler: "      response_filters: [{action: IGNORE}]\n",
			want:    []string{"warning missing-field: HttpResponseFilter has an `action` but nothing to match, so it never applies (the Airbyte CDK ignores it the same way)"}},
		{name: "a Jinja test that does not exist stays an error",
			requester: "    url_base: http://x\n    path: \"{{ 'a' if config.x is frobnicated else 'b' }}\"\n",
			want:      []string{"error template: in `path`: unknown test `frobnicated`"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			requester := tt.requester
			if requester == "" {
				requester = "    url_base: http://x\n"
			}
			if tt.handler != "" {
				requester += "    error_handler:\n" + tt.handler
			}
			extractor := tt.extractor
			if extractor == "" {
				extractor = "{field_path: []}"
			}
			src := "version: 1\n" + tt.top + "streams:\n  - name: s\n    retriever:\n      requester:\n" +
				indent(requester, "    ") + "      record_selector: {extractor: " + extractor + "}\n"
			_, diags := Parse("d.yaml", []byte(src))
			var got []string
			for _, d := range diags {
				got = append(got, string(d.Severity)+" "+d.Code+": "+d.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("source:\n%s\n got %q\nwant %q", src, got, tt.want)
			}
		})
	}
}

func indent(s, by string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = by + l
		}
	}
	return strings.Join(lines, "")
}

// A near miss keeps its "did you mean" hint as a warning; a definition with only warnings loads.
func TestUnknownFieldWarningHint(t *testing.T) {
	src := "version: 1\nspec:\n  documentationUrl: https://x\n  connection_specification: {type: object}\n" +
		"streams:\n  - name: s\n    retriever:\n      requester: {url_base: http://x}\n      record_selector: {extractor: {field_path: []}}\n"
	def, diags := Parse("d.yaml", []byte(src))
	if def == nil || len(diags) != 1 {
		t.Fatalf("definition %v, diagnostics %v", def != nil, diags)
	}
	d := diags[0]
	if d.Severity != diag.Warning || d.Hint != "did you mean `documentation_url`?" || d.Path != "spec.documentationUrl" || d.Line != 3 || d.Column != 3 {
		t.Errorf("got %+v", d)
	}
}

// greenhouse writes `name: "{{ options['name'] }}"` and `primary_key: "{{ options['primary_key'] }}"`
// in its SimpleRetrievers. The CDK's SimpleRetriever model has neither field (pydantic drops
// them) and create_simple_retriever takes the stream's name and primary key instead, so they
// are never rendered: they are accepted without compiling their templates.
func TestSimpleRetrieverNameAndPrimaryKeyAreNotTemplates(t *testing.T) {
	src := "version: 1\nstreams:\n  - name: s\n    retriever:\n      type: SimpleRetriever\n" +
		"      name: \"{{ options['name'] }}\"\n      primary_key: \"{{ options['primary_key'] }}\"\n" +
		"      requester: {url_base: http://x}\n      record_selector: {extractor: {field_path: []}}\n"
	if _, diags := Parse("d.yaml", []byte(src)); len(diags) > 0 {
		t.Errorf("diagnostics %v", diags)
	}
}
