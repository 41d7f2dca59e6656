package manifest

import "testing"

func TestErrorHandlerModel(t *testing.T) {
	src := `version: 6.0.0
definitions:
  handler:
    type: CompositeErrorHandler
    error_handlers:
      - type: DefaultErrorHandler
        max_retries: 3
        response_filters:
          - type: HttpResponseFilter
            action: IGNORE
            http_codes: [403, 404]
            error_message: "{{ response.message }}"
          - action: FAIL
            failure_type: config_error
            predicate: "{{ headers['x-error'] == 'auth' }}"
      - max_time: "{{ config['max_time'] }}"
        backoff_strategies:
          - {type: ExponentialBackoffStrategy, factor: 2}
          - {type: ConstantBackoffStrategy, backoff_time_in_seconds: 1.5}
          - {type: WaitTimeFromHeader, header: Retry-After, regex: "[0-9]+", max_waiting_time_in_seconds: 300}
          - {type: WaitUntilTimeFromHeader, header: X-RateLimit-Reset, min_wait: 1}
streams:
  - name: items
    retriever:
      requester:
        url_base: https://api.example.com
        error_handler: "#/definitions/handler"
        authenticator:
          type: SessionTokenAuthenticator
          login_requester:
            url_base: https://api.example.com
            path: /login
            error_handler:
              response_filters:
                - {action: RETRY, http_codes: [400]}
          session_token_path: [token]
          request_authentication: {type: Bearer}
      record_selector:
        extractor: {field_path: []}
`
	def, diags := Parse("d.yaml", []byte(src))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	h := def.Streams[0].Requester.ErrorHandler
	if h == nil || h.Type != CompositeErrorHandler || len(h.Handlers) != 2 {
		t.Fatalf("handler %+v", h)
	}
	first, second := h.Handlers[0], h.Handlers[1]
	if first.Type != DefaultErrorHandler || first.MaxRetries.Source() != "3" || len(first.Filters) != 2 {
		t.Errorf("first %+v", first)
	}
	f := first.Filters[0]
	if f.Action != ActionIgnore || len(f.HTTPCodes) != 2 || f.HTTPCodes[1] != 404 || f.ErrorMessage.Source() != "{{ response.message }}" {
		t.Errorf("filter %+v", f)
	}
	if g := first.Filters[1]; g.Action != ActionFail || g.FailureType != "config_error" || g.Predicate == nil || !g.Predicate.Reads("headers") {
		t.Errorf("filter %+v", g)
	}
	if second.MaxTime == nil || len(second.Backoff) != 4 {
		t.Fatalf("second %+v", second)
	}
	b := second.Backoff
	if b[0].Factor.Source() != "2" || b[1].Seconds.Source() != "1.5" || b[2].Regex.Source() != "[0-9]+" ||
		b[2].MaxWaiting.Source() != "300" || b[3].MinWait.Source() != "1" || b[3].Header.Source() != "X-RateLimit-Reset" {
		t.Errorf("backoff %+v %+v %+v %+v", b[0], b[1], b[2], b[3])
	}
	login := def.Authenticator.Session.Login.ErrorHandler
	if login == nil || len(login.Filters) != 1 || login.Filters[0].Action != ActionRetry {
		t.Errorf("login error handler %+v", login)
	}
}

func TestErrorHandlerDiagnostics(t *testing.T) {
	tests := []struct{ handler, want string }{
		{"response_filters: [{action: RETRY}]",
			"missing-field: HttpResponseFilter has an `action` but nothing to match, so it never applies (the Airbyte CDK ignores it the same way)"},
		{"response_filters: [{action: RESET_PAGINATON, http_codes: [400]}]",
			"type: `action` must be one of SUCCESS, FAIL, RETRY, IGNORE, RATE_LIMITED, RESET_PAGINATION, not `RESET_PAGINATON`"},
		{"response_filters: [{action: IGNORE, predicate: \"{{ respons.x }}\"}]",
			"template: in `predicate`: unknown variable `respons`"},
		{"max_retries: many", "type: `max_retries` must be an integer or a template, not `many`"},
		{"backoff_strategies: [{type: LinearBackoff}]", "unsupported-component: LinearBackoff is not supported yet (backoff_strategies)"},
		{"{type: CompositeErrorHandler, error_handlers: []}", "missing-field: CompositeErrorHandler is missing the required field `error_handlers`"},
		{"{type: CustomErrorHandler, class_name: x.Y}", "python-component: CustomErrorHandler runs Python code (error_handler)"},
		{"backoff_strategies: [{type: ConstantBackoffStrategy}]", "missing-field: ConstantBackoffStrategy is missing the required field `backoff_time_in_seconds`"},
		{"response_filters: [{action: IGNORE, http_codes: [404], error_mesage: x}]",
			"unknown-field: unknown field `error_mesage` in HttpResponseFilter; it is ignored"},
	}
	for _, tt := range tests {
		h := tt.handler
		if h[0] != '{' {
			h = "{" + h + "}"
		}
		src := "version: 1\nstreams:\n  - name: s\n    retriever:\n      requester:\n        url_base: http://x\n" +
			"        error_handler: " + h + "\n      record_selector: {extractor: {field_path: []}}\n"
		_, diags := Parse("d.yaml", []byte(src))
		var got []string
		for _, d := range diags {
			got = append(got, d.Code+": "+d.Message)
		}
		found := false
		for _, g := range got {
			if g == tt.want {
				found = true
			}
		}
		if !found {
			t.Errorf("%s:\n got %q\nwant %q", tt.handler, got, tt.want)
		}
	}
}
