package cmd

import (
	"testing"
)

// TestE2EAuthenticators runs `read` with each authenticator that needs no token endpoint and
// checks the exact request the API received.
func TestE2EAuthenticators(t *testing.T) {
	t.Parallel()
	const record = `{"id":1}`
	tests := []struct {
		name   string
		auth   string // the authenticator's YAML under the requester, "" for none
		method string // http_method, GET when empty
		values string
		want   e2eRequest
	}{
		{
			name: "no authenticator",
			want: e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": ""}},
		},
		{
			name: "NoAuth",
			auth: "type: NoAuth",
			want: e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": ""}},
		},
		{
			name: "Basic",
			auth: `
type: BasicHttpAuthenticator
username: "{{ config['user'] }}"
password: "{{ config['pass'] }}"`,
			values: "user: ann\npass: s3cr:et\n",
			// base64("ann:s3cr:et")
			want: e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": "Basic YW5uOnMzY3I6ZXQ="}},
		},
		{
			name: "Basic with an empty password",
			auth: `
type: BasicHttpAuthenticator
username: "{{ config['user'] }}"
password: "{{ config['pass'] }}"`,
			values: "user: ann\npass: \"\"\n",
			// base64("ann:")
			want: e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": "Basic YW5uOg=="}},
		},
		{
			name: "Basic without a password field",
			auth: `
type: BasicHttpAuthenticator
username: "{{ config['user'] }}"`,
			values: "user: ann\n",
			want:   e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": "Basic YW5uOg=="}},
		},
		{
			name: "Bearer",
			auth: `
type: BearerAuthenticator
api_token: "{{ config['token'] }}"`,
			values: "token: tok-123\n",
			want:   e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"Authorization": "Bearer tok-123"}},
		},
		{
			name: "ApiKey into a header",
			auth: `
type: ApiKeyAuthenticator
api_token: "{{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: header, field_name: X-Api-Key}`,
			values: "key: k-1\n",
			want:   e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"X-Api-Key": "k-1", "Authorization": ""}},
		},
		{
			name: "ApiKey with the legacy header field",
			auth: `
type: ApiKeyAuthenticator
api_token: "Token {{ config['key'] }}"
header: X-Key`,
			values: "key: k-1\n",
			want:   e2eRequest{Method: "GET", URL: "/v1/items", Headers: map[string]string{"X-Key": "Token k-1"}},
		},
		{
			name: "ApiKey into a query parameter",
			auth: `
type: ApiKeyAuthenticator
api_token: "{{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}`,
			values: "key: k 1&2\n",
			want:   e2eRequest{Method: "GET", URL: "/v1/items?api_key=k+1%262"},
		},
		{
			name: "ApiKey into a form body",
			auth: `
type: ApiKeyAuthenticator
api_token: "{{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: body_data, field_name: api_key}`,
			method: "POST",
			values: "key: k-1\n",
			want: e2eRequest{Method: "POST", URL: "/v1/items", Body: "api_key=k-1",
				Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		},
		{
			name: "ApiKey into a JSON body by field_name",
			auth: `
type: ApiKeyAuthenticator
api_token: "{{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: body_json, field_name: api_key}`,
			method: "POST",
			values: "key: k-1\n",
			want: e2eRequest{Method: "POST", URL: "/v1/items", Body: `{"api_key":"k-1"}`,
				Headers: map[string]string{"Content-Type": "application/json"}},
		},
		{
			name: "ApiKey into a nested JSON body property by field_path",
			auth: `
type: ApiKeyAuthenticator
api_token: "{{ config['key'] }}"
inject_into: {type: RequestOption, inject_into: body_json, field_path: [auth, credentials, key]}`,
			method: "POST",
			values: "key: k-1\n",
			want: e2eRequest{Method: "POST", URL: "/v1/items", Body: `{"auth":{"credentials":{"key":"k-1"}}}`,
				Headers: map[string]string{"Content-Type": "application/json"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[`+record+`]`))
			requester := "url_base: \"{{ config['base_url'] }}/v1\"\npath: /items\n"
			if tt.method != "" {
				requester += "http_method: " + tt.method + "\n"
			}
			if tt.auth != "" {
				requester += "authenticator:\n" + e2eIndent(tt.auth, 2)
			}
			res := e2eRead(t, api, e2eOneStream(requester, e2eWholeBody), tt.values)
			e2eCheckResult(t, api, res, 0, record+"\n", "")
			e2eCheckRequests(t, api, tt.want)
		})
	}
}
