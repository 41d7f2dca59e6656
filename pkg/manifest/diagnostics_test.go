package manifest

import (
	"fmt"
	"strings"
	"testing"

	"connector/pkg/diag"
)

// want is one expected diagnostic: "LINE:COL code message", and its hint.
type want struct {
	at, code, msg, hint string
	// prefix: only the start of the message is fixed (its end comes from the template
	// compiler).
	prefix bool
}

func TestDiagnostics(t *testing.T) {
	tests := []struct {
		file string
		want []want
	}{
		{"yaml_error.yaml", []want{{at: "4:1", code: diag.CodeYAML, msg: "invalid YAML: did not find expected '-' indicator"}}},
		{"ref_missing.yaml", []want{{at: "12:15", code: diag.CodeRef, msg: "reference `#/definitions/requestr` not found",
			hint: "did you mean `#/definitions/requester`?"}}},
		{"ref_cycle.yaml", []want{{at: "6:11", code: diag.CodeRef,
			msg: "reference cycle: #/definitions/a → #/definitions/b → #/definitions/a"}}},
		// The top level refuses unknown fields (the CDK schema's additionalProperties: false);
		// `page_sise` in OffsetIncrement is only a warning, not counted here.
		{"unknown_field.yaml", []want{{at: "2:1", code: diag.CodeUnknownField, msg: "unknown field `descripton` in DeclarativeSource",
			hint: "did you mean `description`?"}}},
		{"missing_field.yaml", []want{
			{at: "3:5", code: diag.CodeMissingField, msg: "DeclarativeStream is missing the required field `name`"},
			{at: "10:11", code: diag.CodeMissingField, msg: "DpathExtractor is missing the required field `field_path`",
				hint: "write `field_path: []` to select the whole response body"},
		}},
		{"type_error.yaml", []want{
			{at: "9:22", code: diag.CodeType, msg: "`http_method` must be GET or POST, not `PUT`"},
			{at: "12:23", code: diag.CodeType, msg: "`field_path` must be a list, not a string"},
		}},
		{"unsupported.yaml", []want{
			{at: "28:13", code: diag.CodeUnsupported, msg: "RecordExpander is not supported yet (record_expander)"},
		}},
		{"python_component.yaml", []want{
			{at: "6:7", code: diag.CodePython, msg: "CustomErrorHandler runs Python code (error_handler)",
				hint: "class_name: source_x.components.Handler — " + pythonHint},
			{at: "28:9", code: diag.CodePython, msg: "CustomPartitionRouter runs Python code (partition_router)",
				hint: "class_name: source_example.components.Router — " + pythonHint},
		}},
		{"template_error.yaml", []want{
			{at: "9:23", code: diag.CodeTemplate, msg: "in `path`: unclosed tag `{{`: missing `}}`"},
			{at: "17:29", code: diag.CodeTemplate, msg: "in `cursor_value`: unknown variable `respons`", hint: "did you mean `response`?"},
		}},
		{"option_conflict.yaml", []want{{at: "12:9", code: diag.CodeOptionConflict,
			msg:  "both `request_body_json` and `request_body_data` are set; a request has one body",
			hint: "keep `request_body_json` for a JSON body or `request_body_data` for a form body"}}},
		{"credential_literal.yaml", []want{{at: "12:21", code: diag.CodeCredentialLiteral,
			msg:  "the password is written in the definition; credentials must come from the testing values",
			hint: "write `{{ config['password'] }}` and put the value in the testing values"}}},
		{"mixed_authenticators.yaml", []want{{at: "22:11", code: diag.CodeMixedAuthenticators,
			msg:  "stream `posts` uses ApiKeyAuthenticator (line 22:11), but stream `users` uses BearerAuthenticator (line 10:11); one authenticator applies to every stream",
			hint: "define the authenticator once under `definitions` and `$ref` it from every requester"}}},
		{"decoders.yaml", []want{
			{at: "13:45", code: diag.CodeUnsupported, msg: "the encoding \"shift_jis\" is not supported yet",
				hint: "write utf-8, utf-8-sig, latin-1, ascii, cp1252, utf-16, utf-16-le or utf-16-be"},
			{at: "13:67", code: diag.CodeType, msg: "`delimiter` must be one character, not \";;\"", hint: "write one character, e.g. \",\", \";\" or \"\\t\""},
			{at: "20:45", code: diag.CodeType, msg: "XmlDecoder cannot decode what a GzipDecoder or ZipfileDecoder holds",
				hint: "write CsvDecoder, GzipDecoder, JsonDecoder, JsonItemsDecoder or JsonlDecoder"},
			{at: "27:16", code: diag.CodeMissingField, msg: "ZipfileDecoder is missing the required field `decoder`"},
			{at: "42:16", code: diag.CodeType,
				msg:  "a paginator cannot read the responses of a GzipDecoder of CsvDecoder: the Airbyte CDK paginates only JsonDecoder, XmlDecoder and a GzipDecoder of JsonDecoder responses",
				hint: "remove the paginator (NoPagination) or use one of those decoders"},
		}},
		{"grant_type.yaml", []want{{at: "14:23", code: diag.CodeGrantType,
			msg:  "OAuth grant type `password` is not supported: only refresh_token and client_credentials can be defined here",
			hint: "other grant types need code-based connector development"}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := "testdata/" + tt.file
			def, diags := Load(path)
			if def != nil {
				t.Errorf("definition returned despite errors")
			}
			var got []diag.Diagnostic
			for _, d := range diags {
				if d.Severity == diag.Error {
					got = append(got, d)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d errors, want %d:\n%v", len(got), len(tt.want), diag.List(got))
			}
			for i, w := range tt.want {
				d := got[i]
				at := fmt.Sprintf("%d:%d", d.Line, d.Column)
				if d.File != path || !strings.HasPrefix(at, w.at) || (len(w.at) > 0 && !strings.HasSuffix(w.at, ":") && at != w.at) {
					t.Errorf("error %d at %s:%s, want %s:%s", i, d.File, at, path, w.at)
				}
				if d.Code != w.code {
					t.Errorf("error %d code %q, want %q", i, d.Code, w.code)
				}
				if w.prefix {
					if !strings.HasPrefix(d.Message, w.msg) || len(d.Message) == len(w.msg) {
						t.Errorf("error %d message %q, want it to start with %q", i, d.Message, w.msg)
					}
					continue
				}
				if d.Message != w.msg {
					t.Errorf("error %d message\n got %q\nwant %q", i, d.Message, w.msg)
				}
				if d.Hint != w.hint {
					t.Errorf("error %d hint %q, want %q", i, d.Hint, w.hint)
				}
			}
		})
	}
}

// TestDiagnosticDetails checks the fields scripts read: path and component.
func TestDiagnosticDetails(t *testing.T) {
	_, diags := Load("testdata/python_component.yaml")
	if len(diags) < 2 {
		t.Fatalf("got %v", diags)
	}
	if d := diags[0]; d.Path != "streams[0].retriever.requester.error_handler" || d.Component != "CustomErrorHandler" {
		t.Errorf("first: path %q component %q", d.Path, d.Component)
	}
	if d := diags[1]; d.Path != "streams[1].retriever.partition_router" || d.Component != "CustomPartitionRouter" {
		t.Errorf("second: path %q component %q", d.Path, d.Component)
	}
}

// A problem inside a component shared through $ref is reported once, where it is written.
func TestSharedProblemReportedOnce(t *testing.T) {
	src := `
definitions:
  req:
    url_base: https://x.test
    http_methd: GET
streams:
  - name: a
    retriever:
      requester: {$ref: "#/definitions/req", path: /a}
      record_selector: {extractor: {field_path: []}}
  - name: b
    retriever:
      requester: {$ref: "#/definitions/req", path: /b}
      record_selector: {extractor: {field_path: []}}
`
	_, diags := Parse("d.yaml", []byte(src))
	if len(diags) != 1 {
		t.Fatalf("got %d diagnostics:\n%v", len(diags), diags)
	}
	d := diags[0]
	if d.Line != 5 || d.Column != 5 || d.Code != diag.CodeUnknownField || d.Hint != "did you mean `http_method`?" {
		t.Errorf("got %s [%s] hint %q", d, d.Code, d.Hint)
	}
}

func TestTemplatePositions(t *testing.T) {
	// The unknown variable `respons` is at the same place in each spelling of the value.
	cases := []struct {
		name, value string
		line, col   int
	}{
		{"plain", `cursor_value: x{{ respons.a }}`, 1, 19},
		{"double", `cursor_value: "x{{ respons.a }}"`, 1, 20},
		{"double escape", `cursor_value: "\"x{{ respons.a }}"`, 1, 22},
		{"single", `cursor_value: 'x''{{ respons.a }}'`, 1, 22},
		{"literal block", "cursor_value: |\n  x\n  {{ respons.a }}", 3, 6},
		{"folded block", "cursor_value: >-\n  x\n  {{ respons.a }}", 3, 6},
		{"plain multiline", "cursor_value: x\n  y {{ respons.a }}", 2, 8},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := &loader{src: []byte(c.value), seen: map[string]bool{}}
			root := l.decode()
			n := root.Content[1]
			off := strings.Index(n.Value, "respons")
			line, col := l.offsetPos(n, off)
			if line != c.line || col != c.col {
				t.Errorf("value %q: got %d:%d, want %d:%d", n.Value, line, col, c.line, c.col)
			}
		})
	}
}

func TestUnknownFieldFarFromAnyIsWarning(t *testing.T) {
	src := `
streams:
  - name: a
    retriever:
      requester: {url_base: "https://x.test", request_params: {a: b}}
      record_selector: {extractor: {field_path: []}}
`
	def, diags := Parse("d.yaml", []byte(src))
	if def == nil || len(diags) != 1 || diags[0].Severity != diag.Warning || diags[0].Code != diag.CodeUnknownField {
		t.Fatalf("got %v", diags)
	}
}

// The Airbyte protocol's documentationUrl is a URI: a documentation_url without a scheme is
// a warning (the SPEC message leaves it out); an absolute one is quiet.
func TestDocumentationURLIsAbsolute(t *testing.T) {
	for _, tt := range []struct{ url, want string }{
		{"https://docs.example.com/a b", ""},
		{"docs.example.com/source", "11:22 warning type `documentation_url` \"docs.example.com/source\" is not an absolute URL: the Airbyte protocol's documentationUrl is a URI, so `connector airbyte spec` leaves it out"},
		{"https://docs example.com", "11:22 warning type `documentation_url` \"https://docs example.com\" is not an absolute URL: the Airbyte protocol's documentationUrl is a URI, so `connector airbyte spec` leaves it out"},
	} {
		src := `
streams:
  - name: a
    retriever:
      requester: {url_base: "https://x.test"}
      record_selector: {extractor: {field_path: []}}
spec:
  type: Spec
  connection_specification:
    type: object
  documentation_url: "` + tt.url + `"
`
		def, diags := Parse("d.yaml", []byte(src))
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%d:%d %s %s %s", d.Line, d.Column, d.Severity, d.Code, d.Message))
		}
		if strings.Join(got, "\n") != tt.want || def == nil || def.SpecJSON.DocumentationURL != tt.url {
			t.Errorf("%s: got %q, want %q", tt.url, got, tt.want)
		}
	}
}

func TestStreamNamesAndCheck(t *testing.T) {
	src := `
check: {stream_names: [a, c]}
streams:
  - name: a
    retriever:
      requester: {url_base: "https://x.test"}
      record_selector: {extractor: {field_path: []}}
  - name: a
    retriever:
      requester: {url_base: "https://x.test"}
      record_selector: {extractor: {field_path: []}}
`
	_, diags := Parse("d.yaml", []byte(src))
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Code, d.Message))
	}
	want := []string{
		"2:27 type check names the stream `c`, which is not defined",
		"8:11 type stream name `a` is already used by the stream at line 4:11",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestSessionLoginRules(t *testing.T) {
	src := `
streams:
  - name: a
    retriever:
      requester:
        url_base: "https://x.test"
        authenticator:
          type: SessionTokenAuthenticator
          login_requester:
            url: https://x.test/login
            http_method: POST
            authenticator: {type: OAuthAuthenticator, token_refresh_endpoint: "https://x.test/t", client_id: "{{ config['a'] }}", client_secret: "{{ config['b'] }}", refresh_token: "{{ config['c'] }}"}
            request_body_json:
              username: "{{ config['user'] }}"
              password: secret123
              token_type: bearer
          session_token_path: [token]
          expiration_duration: P1X
          request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: body_json, field_name: k}}
      record_selector: {extractor: {field_path: []}}
`
	_, diags := Parse("d.yaml", []byte(src))
	var got []string
	for _, d := range diags {
		got = append(got, fmt.Sprintf("%d:%d %s %s", d.Line, d.Column, d.Code, d.Message))
	}
	want := []string{
		"12:28 type the login requester of a SessionTokenAuthenticator cannot use OAuthAuthenticator",
		"15:25 credential-literal the JSON body property `password` is written in the definition; credentials must come from the testing values",
		"18:32 type `expiration_duration` must be an ISO 8601 duration or a number of seconds, not `P1X`",
		"19:98 type `inject_into` must be one of header, request_parameter, not `body_json`",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestCredentialName(t *testing.T) {
	yes := []string{"Authorization", "X-API-KEY", "X-Api-Key", "apiKey", "api_token", "access_token", "X-Auth-Token",
		"token", "key", "password", "client_secret", "Proxy-Authorization", "X-Token", "sessionToken", "privateKey"}
	no := []string{"page_token", "next_token", "sort_key", "max_tokens", "token_type", "primary_key", "keys", "Accept", "per_page"}
	for _, n := range yes {
		if !credentialName(n) {
			t.Errorf("credentialName(%q) = false, want true", n)
		}
	}
	for _, n := range no {
		if credentialName(n) {
			t.Errorf("credentialName(%q) = true, want false", n)
		}
	}
}

// TestLiteralCredentialInRequestOptions: a request option named like a credential must read
// the testing values (or a value known only at run time), never carry a literal.
func TestLiteralCredentialInRequestOptions(t *testing.T) {
	const head = `version: 6.5.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      record_selector: {extractor: {field_path: []}}
      requester:
        url_base: https://api.example.com
        path: /items
`
	tests := []struct {
		name, fields string
		want         []string
	}{
		{"literal api key header", "        request_headers:\n          X-Api-Key: sk_live_literal456\n",
			[]string{"12:22 credential-literal the header `X-Api-Key` is written in the definition; credentials must come from the testing values (write `{{ config['x_api_key'] }}` and put the value in the testing values)"}},
		{"literal Authorization", "        request_headers:\n          Authorization: Basic dXNlcjpwdw==\n",
			[]string{"12:26 credential-literal the header `Authorization` is written in the definition; credentials must come from the testing values (write `{{ config['authorization'] }}` and put the value in the testing values)"}},
		{"numeric key parameter", "        request_parameters:\n          key: 123456789\n",
			[]string{"12:16 credential-literal the query parameter `key` is written in the definition; credentials must come from the testing values (write `{{ config['key'] }}` and put the value in the testing values)"}},
		{"nested JSON body password", "        request_body_json:\n          auth:\n            password: hunter2\n",
			[]string{"13:23 credential-literal the JSON body property `password` is written in the definition; credentials must come from the testing values (write `{{ config['password'] }}` and put the value in the testing values)"}},
		{"from parameters only", "        $parameters: {tok: abc123}\n        request_headers:\n          X-Auth-Token: \"{{ parameters.tok }}\"\n",
			[]string{"13:25 credential-literal the header `X-Auth-Token` is written in the definition; credentials must come from the testing values (write `{{ config['x_auth_token'] }}` and put the value in the testing values)"}},
		{"from the testing values", "        request_headers:\n          Authorization: \"Bearer {{ config.token }}\"\n          X-Api-Key: \"{{ config['key'] }}\"\n", nil},
		{"a token the API returned", "        request_parameters:\n          token: \"{{ next_page_token.next_page_token }}\"\n", nil},
		{"not a credential", "        request_parameters:\n          page_token: abc\n          sort_key: name\n          key_format: x\n", nil},
		{"empty value", "        request_headers:\n          X-Api-Key: \"\"\n", nil},
	}
	for _, tt := range tests {
		_, diags := Parse("def.yaml", []byte(head+tt.fields))
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%d:%d %s %s (%s)", d.Line, d.Column, d.Code, d.Message, d.Hint))
		}
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\ngot  %s\nwant %s", tt.name, strings.Join(got, "\n     "), strings.Join(tt.want, "\n     "))
		}
	}
}

// A CursorPagination template that reads what only connector gives it is a warning (the
// CDK 7's cursor_value and stop_condition see config, parameters, response, headers,
// last_record and last_page_size); what the CDK gives is not.
func TestCursorVariablesTheCDKLacks(t *testing.T) {
	for _, tt := range []struct{ cursor, stop, want string }{
		{"{{ response.next }}", "{{ not last_record }}", ""},
		{"{{ headers.link.next.url }}", "{{ last_page_size < 10 }}", ""},
		{"{{ last_records[-1]['id'] }}", "", "9:69 warning template `cursor_value` reads `last_records`, which the Airbyte CDK 7 does not give it (it fails there with \"Jinja macro has undeclared variables\"); connector does"},
		{"{{ response.next }}", "{{ stream_slice.x and next_page_token }}", "10:47 warning template `stop_condition` reads `next_page_token`, `stream_slice`, which the Airbyte CDK 7 does not give it (it fails there with \"Jinja macro has undeclared variables\"); connector does"},
	} {
		src := `
streams:
  - name: a
    retriever:
      requester: {url_base: "https://x.test"}
      record_selector: {extractor: {field_path: []}}
      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: CursorPagination, cursor_value: "` + tt.cursor + `",
                              stop_condition: "` + tt.stop + `"}
`
		_, diags := Parse("d.yaml", []byte(src))
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%d:%d %s %s %s", d.Line, d.Column, d.Severity, d.Code, d.Message))
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("%s / %s:\ngot  %q\nwant %q", tt.cursor, tt.stop, got, tt.want)
		}
	}
}

// A credential field written as a literal that cannot be a secret — empty, at most three
// characters, a lower-case word of letters and `_` — is a constant of the API (bamboo-hr's
// and chargify's `password: x`, mailchimp's `username: anystring`): a warning, and the
// definition runs. A literal that could be a secret stays the seed's error.
func TestCredentialConstantsOfTheAPI(t *testing.T) {
	for _, tt := range []struct{ field, value, want string }{
		{"password", "x", `warning credential-literal the password is the constant "x" written in the definition: read as a fixed value of the API, not a credential`},
		{"username", "anystring", `warning credential-literal the username is the constant "anystring" written in the definition: read as a fixed value of the API, not a credential`},
		{"username", "api_token", `warning credential-literal the username is the constant "api_token" written in the definition: read as a fixed value of the API, not a credential`},
		{"password", "abc123", "error credential-literal the password is written in the definition; credentials must come from the testing values"},
		{"password", "sk_live_literal456", "error credential-literal the password is written in the definition; credentials must come from the testing values"},
		{"username", "Admin", "error credential-literal the username is written in the definition; credentials must come from the testing values"},
		{"username", "Bearer sk_live_x", "error credential-literal the username is written in the definition; credentials must come from the testing values"},
	} {
		other := map[string]string{"password": "username", "username": "password"}[tt.field]
		src := fmt.Sprintf(`version: 6.5.0
streams:
  - name: items
    retriever:
      requester:
        url_base: https://api.example.com
        authenticator: {type: BasicHttpAuthenticator, %s: %q, %s: "{{ config.key }}"}
      record_selector: {extractor: {field_path: []}}
`, tt.field, tt.value, other)
		def, diags := Parse("def.yaml", []byte(src))
		var got []string
		for _, d := range diags {
			got = append(got, fmt.Sprintf("%s %s %s", d.Severity, d.Code, d.Message))
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("%s: %q:\ngot  %s\nwant %s", tt.field, tt.value, strings.Join(got, "\n     "), tt.want)
		}
		if strings.HasPrefix(tt.want, "warning") != (def != nil) {
			t.Errorf("%s: %q: the definition loaded: %v", tt.field, tt.value, def != nil)
		}
	}
}
