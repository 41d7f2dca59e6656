package cmd

import (
	"regexp"
	"strings"
	"testing"
)

// TestE2ERequestOptions checks how a requester becomes a request: the URL, the
// templated parameters, headers and bodies, and the entries that are dropped.
func TestE2ERequestOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		requester string // {{ config['base_url'] }} is the local API
		values    string
		want      e2eRequest
	}{
		{
			name: "url_base and path are joined with one slash",
			requester: `
url_base: "{{ config['base_url'] }}/"
path: /items`,
			want: e2eRequest{Method: "GET", URL: "/items"},
		},
		{
			name: "a path without a leading slash",
			requester: `
url_base: "{{ config['base_url'] }}"
path: items`,
			want: e2eRequest{Method: "GET", URL: "/items"},
		},
		{
			name: "the base path is kept before a path with a leading slash",
			requester: `
url_base: "{{ config['base_url'] }}/api/v2/"
path: /items/open`,
			want: e2eRequest{Method: "GET", URL: "/api/v2/items/open"},
		},
		{
			name: "url when there is no url_base",
			requester: `
url: "{{ config['base_url'] }}/full/items?fixed=1"`,
			want: e2eRequest{Method: "GET", URL: "/full/items?fixed=1"},
		},
		{
			name: "templated request parameters, in the order written",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  sort: "{{ config['sort'] }}"
  limit: 100
  "{{ config['extra_key'] }}": "a b&c"
  since: "{{ config['since'] ~ 'T00:00:00Z' }}"`,
			values: "sort: name\nextra_key: q\nsince: 2024-01-02\n",
			want:   e2eRequest{Method: "GET", URL: "/items?sort=name&limit=100&q=a+b%26c&since=2024-01-02T00%3A00%3A00Z"},
		},
		{
			name: "parameters rendering empty or none are dropped",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  page: "{{ next_page_token['next_page_token'] }}"
  missing: "{{ config['nope'] }}"
  none: "{{ None }}"
  empty: ""
  kept: "0"`,
			want: e2eRequest{Method: "GET", URL: "/items?kept=0"},
		},
		{
			name: "a list parameter repeats the key",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  status: "{{ config['statuses'] }}"
  fields: [id, name]`,
			values: "statuses: [open, closed]\n",
			want:   e2eRequest{Method: "GET", URL: "/items?status=open&status=closed&fields=id&fields=name"},
		},
		{
			name: "templated headers; an empty one is dropped",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_headers:
  X-Tenant: "{{ config['tenant'] }}"
  Accept: application/vnd.api+json
  X-Empty: "{{ config['nope'] }}"`,
			values: "tenant: acme\n",
			want: e2eRequest{Method: "GET", URL: "/items",
				Headers: map[string]string{"X-Tenant": "acme", "Accept": "application/vnd.api+json", "X-Empty": ""}},
		},
		{
			name: "request_body_json keeps the key order as written, nested objects and types",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /search
http_method: POST
request_body_json:
  zeta: "{{ config['q'] }}"
  alpha: 10
  count: "{{ config['count'] }}"
  flag: true
  filter:
    status: open
    tags: [a, "<b>"]
    owner: "{{ config['nope'] }}"
  dropped: "{{ config['nope'] }}"`,
			values: "q: find & keep\ncount: 7\n",
			want: e2eRequest{Method: "POST", URL: "/search",
				Body:    `{"zeta":"find & keep","alpha":10,"count":7,"flag":true,"filter":{"status":"open","tags":["a","<b>"]}}`,
				Headers: map[string]string{"Content-Type": "application/json"}},
		},
		{
			name: "request_body_data is a form body",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /search
http_method: POST
request_body_data:
  query: "{{ config['q'] }}"
  page: 1
  dropped: "{{ config['nope'] }}"`,
			values: "q: a b&c=d\n",
			want: e2eRequest{Method: "POST", URL: "/search", Body: "query=a+b%26c%3Dd&page=1",
				Headers: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
		},
		{
			name: "a Content-Type header from the requester wins over the default",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /search
http_method: POST
request_headers:
  Content-Type: application/vnd.search+json
request_body_json:
  q: x`,
			want: e2eRequest{Method: "POST", URL: "/search", Body: `{"q":"x"}`,
				Headers: map[string]string{"Content-Type": "application/vnd.search+json"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			res := e2eRead(t, api, e2eOneStream(tt.requester, e2eWholeBody), tt.values)
			e2eCheckResult(t, api, res, 0, `{"id":1}`+"\n", "")
			e2eCheckRequests(t, api, tt.want)
		})
	}
}

// TestE2EOptionConflicts checks that two sources setting the same request option is an
// error naming both: statically visible ones stop before any request (exit 3), the others
// fail the stream at run time (exit 1).
func TestE2EOptionConflicts(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		requester string
		paginator string
		code      int
		stderr    string
	}{
		{
			name: "a query parameter set by the requester and by the authenticator",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  api_key: "{{ config['key'] }}"
authenticator:
  type: ApiKeyAuthenticator
  api_token: "{{ config['key'] }}"
  inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}`,
			code:   3,
			stderr: "DEF:16:90: error: query parameter `api_key` is set by the authenticator and by the requester's `request_parameters` (line 12:11)\n  hint: set it in one place only\nDEF: invalid, 1 error\n",
		},
		{
			name: "a header set by the requester and by the authenticator",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_headers:
  Authorization: "Bearer {{ config['key'] }}"
authenticator:
  type: BearerAuthenticator
  api_token: "{{ config['key'] }}"`,
			code:   1,
			stderr: "error: stream items, page 1: header \"Authorization\" is set by both the requester and the authenticator; remove one of them (0 records written before the failure)\n",
		},
		{
			name: "a templated parameter name colliding with the paginator's",
			requester: `
url_base: "{{ config['base_url'] }}"
path: /items
request_parameters:
  "{{ 'off' ~ 'set' }}": "5"`,
			paginator: `
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
pagination_strategy: {type: OffsetIncrement, page_size: 10}`,
			code:   1,
			stderr: "error: stream items, page 1: request parameter \"offset\" is set by both the requester and the paginator; remove one of them (0 records written before the failure)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			def := e2eOneStream(tt.requester, e2eWholeBody)
			if tt.paginator != "" {
				def += "      paginator:\n" + e2eIndent(tt.paginator, 8)
			}
			defPath := writeFile(t, "def.yaml", def)
			vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nkey: k-1\n")
			res := runCLI(t, "", "read", defPath, "--testing-values", vals)
			res.Stderr = strings.ReplaceAll(res.Stderr, defPath, "DEF")
			e2eCheckResult(t, api, res, tt.code, "", tt.stderr)
			if got := len(api.requests()); got != 0 {
				t.Errorf("the API received %d requests, want none", got)
			}
		})
	}
}

// TestE2EPageTokenAndSizeInOnePlace: a paginator whose page_token_option and page_size_option
// name the same query parameter (postmarkapp.yaml does) runs as the CDK's DefaultPaginator
// runs it: the token is written first and the page size overwrites it. validate warns.
func TestE2EPageTokenAndSizeInOnePlace(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := e2eOneStream(`
url_base: "{{ config['base_url'] }}"
path: /items`, e2eWholeBody) + "      paginator:\n" + e2eIndent(`
type: DefaultPaginator
page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
pagination_strategy: {type: OffsetIncrement, page_size: 2}`, 8)
	res := e2eRead(t, api, def, "")
	res.Stderr = regexp.MustCompile(`/\S*/def\.yaml`).ReplaceAllString(res.Stderr, "def.yaml")
	e2eCheckResult(t, api, res, 0, `{"id":1}`+"\n", "warning: def.yaml:15:94: query parameter `offset` is set by the page_token_option and by the page_size_option (line 16:93): the page size overwrites the page token, as in the Airbyte CDK (give the page token and the page size different names, or remove one of the options)\n")
	e2eCheckRequests(t, api, e2eRequest{Method: "GET", URL: "/items?offset=2"})

	defPath := writeFile(t, "def.yaml", def)
	v := runCLI(t, "", "validate", defPath)
	want := "DEF:15:94: warning: query parameter `offset` is set by the page_token_option and by the page_size_option (line 16:93): " +
		"the page size overwrites the page token, as in the Airbyte CDK\n"
	if got := strings.ReplaceAll(v.Stderr, defPath, "DEF"); v.Code != 0 || !strings.Contains(got, want) {
		t.Errorf("validate: exit %d, stderr:\n%s\nwant exit 0 and the line:\n%s", v.Code, got, want)
	}
}
