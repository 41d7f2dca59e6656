package cmd

import (
	"net/http"
	"testing"
)

// e2ePagedDef is a definition with the streams users (page-numbered, 2 records a page) and
// teams (one page).
const e2ePagedDef = `version: 6.0.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester:
        url_base: "{{ config['base_url'] }}"
        path: /users
      record_selector: {extractor: {field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: per_page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
  - type: DeclarativeStream
    name: teams
    retriever:
      type: SimpleRetriever
      requester:
        url_base: "{{ config['base_url'] }}"
        path: /teams
      record_selector: {extractor: {field_path: []}}
`

// e2ePagedAPI serves pages 1 to 3 of users (2, 2 and 1 records) and one page of teams; the
// users page numbered failPage answers 404.
func e2ePagedAPI(t *testing.T, failPage string) *recorder {
	pages := map[string]string{
		"1": `{"data":[{"id":1},{"id":2}]}`,
		"2": `{"data":[{"id":3},{"id":4}]}`,
		"3": `{"data":[{"id":5}]}`,
	}
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/users":
			page := r.URL.Query().Get("page")
			if page == failPage {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error":"page gone"}`))
				return
			}
			w.Write([]byte(pages[page]))
		case "/teams":
			w.Write([]byte(`[{"id":10}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
}

func e2eGet(url string) e2eRequest { return e2eRequest{Method: "GET", URL: url} }

// TestE2EReadStreams checks stream selection, the limits, and what happens when a stream
// fails: the exact requests, stdout, stderr and exit code.
func TestE2EReadStreams(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		failPage string // the users page that answers 404
		args     []string
		code     int
		stdout   string
		stderr   string
		requests []e2eRequest
	}{
		{
			name:     "every stream in definition order, every page",
			code:     0,
			stdout:   "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n{\"id\":5}\n{\"id\":10}\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2"), e2eGet("/users?page=3&per_page=2"), e2eGet("/teams")},
		},
		{
			name:     "--stream selects one stream",
			args:     []string{"--stream", "teams"},
			stdout:   "{\"id\":10}\n",
			requests: []e2eRequest{e2eGet("/teams")},
		},
		{
			name:     "--stream given twice reads in the order given",
			args:     []string{"--stream", "teams", "--stream", "users", "--max-pages", "1"},
			stdout:   "{\"id\":10}\n{\"id\":1}\n{\"id\":2}\n",
			stderr:   "users: stopped early by --max-pages 1 after 2 records and 1 page\n",
			requests: []e2eRequest{e2eGet("/teams"), e2eGet("/users?page=1&per_page=2")},
		},
		{
			name:   "an unknown --stream is a usage error listing the streams",
			args:   []string{"--stream", "user"},
			code:   2,
			stderr: "error: unknown stream \"user\"; the definition has: users, teams\n",
		},
		{
			name:     "--max-records stops each stream after N records",
			args:     []string{"--max-records", "3"},
			stdout:   "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":10}\n",
			stderr:   "users: stopped early by --max-records 3 after 3 records and 2 pages\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2"), e2eGet("/teams")},
		},
		{
			name:     "--max-pages stops each stream after N pages",
			args:     []string{"--max-pages", "2", "--stream", "users"},
			stdout:   "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n",
			stderr:   "users: stopped early by --max-pages 2 after 4 records and 2 pages\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2")},
		},
		{
			name:     "--max-pages at the natural end says nothing",
			args:     []string{"--max-pages", "3", "--stream", "users"},
			stdout:   "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n{\"id\":5}\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2"), e2eGet("/users?page=3&per_page=2")},
		},
		{
			name:     "a failing first stream: its records are written, the second is still read",
			failPage: "2",
			code:     1,
			stdout:   "{\"id\":1}\n{\"id\":2}\n{\"id\":10}\n",
			stderr: "error: stream users, page 2: 404 Not Found from GET http://API/users?page=2&per_page=2: {\"error\":\"page gone\"} (2 records written before the failure)\n" +
				"1 of 2 streams failed\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2"), e2eGet("/teams")},
		},
		{
			name:     "--fail-fast stops at the first failing stream",
			failPage: "2",
			args:     []string{"--fail-fast"},
			code:     1,
			stdout:   "{\"id\":1}\n{\"id\":2}\n",
			stderr: "error: stream users, page 2: 404 Not Found from GET http://API/users?page=2&per_page=2: {\"error\":\"page gone\"} (2 records written before the failure)\n" +
				"--fail-fast: stopped at the first failure; 1 stream not read\n",
			requests: []e2eRequest{e2eGet("/users?page=1&per_page=2"), e2eGet("/users?page=2&per_page=2")},
		},
		{
			name:   "a negative limit is a usage error",
			args:   []string{"--max-records", "-1"},
			code:   2,
			stderr: "error: --max-records must be 0 (no limit) or more\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := e2ePagedAPI(t, tt.failPage)
			res := e2eRead(t, api, e2ePagedDef, "", tt.args...)
			e2eCheckResult(t, api, res, tt.code, tt.stdout, tt.stderr)
			e2eCheckRequests(t, api, tt.requests...)
		})
	}
}

// TestE2EResponseFailures checks that a body that is not JSON and an HTTP error status fail
// the stream with a message naming the stream, the URL and the status.
func TestE2EResponseFailures(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		status  int
		body    string
		auth    string
		values  string
		stderr  string
		records string
	}{
		{
			name:   "a body that is not JSON",
			status: 200,
			body:   "<html>\n  <body>maintenance</body>\n</html>",
			stderr: "error: stream items, page 1: GET http://API/items?q=1 answered 200 with a body that is not JSON (invalid JSON at byte 0: unexpected '<'): \"<html> <body>maintenance</body> </html>\" (0 records written before the failure)\n",
		},
		{
			name:   "an empty body",
			status: 200,
			body:   "",
			stderr: "error: stream items, page 1: GET http://API/items?q=1 answered 200 with a body that is not JSON (empty response body): (empty body) (0 records written before the failure)\n",
		},
		{
			name:   "a truncated JSON body",
			status: 200,
			body:   `{"data":[{"id":1}`,
			stderr: "error: stream items, page 1: GET http://API/items?q=1 answered 200 with a body that is not JSON (invalid JSON at byte 17: unexpected end of body inside a list): \"{\\\"data\\\":[{\\\"id\\\":1}\" (0 records written before the failure)\n",
		},
		{
			name:   "a 404",
			status: 404,
			body:   `{"error":"not found"}`,
			stderr: "error: stream items, page 1: 404 Not Found from GET http://API/items?q=1: {\"error\":\"not found\"} (0 records written before the failure)\n",
		},
		{
			name:   "a 400 with a JSON body that has records",
			status: 400,
			body:   `{"data":[{"id":1}]}`,
			stderr: "error: stream items, page 1: 400 Bad Request from GET http://API/items?q=1: {\"data\":[{\"id\":1}]} (0 records written before the failure)\n",
		},
		{
			name:   "a 401 is an authentication failure, with the token redacted",
			status: 401,
			body:   `{"error":"token tok-secret is revoked"}`,
			auth:   "authenticator: {type: BearerAuthenticator, api_token: \"{{ config['token'] }}\"}",
			values: "token: tok-secret\n",
			stderr: "error: stream items, page 1: authentication failed: 401 Unauthorized from GET http://API/items?q=1: {\"error\":\"token **** is revoked\"} (0 records written before the failure)\n",
		},
		{
			name:   "a 403 with the API key redacted from the URL",
			status: 403,
			body:   `forbidden`,
			auth:   "authenticator: {type: ApiKeyAuthenticator, api_token: \"{{ config['token'] }}\", inject_into: {type: RequestOption, inject_into: request_parameter, field_name: key}}",
			values: "token: tok-secret\n",
			stderr: "error: stream items, page 1: authentication failed: 403 Forbidden from GET http://API/items?q=1&key=****: forbidden (0 records written before the failure)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(tt.status)
				w.Write([]byte(tt.body))
			})
			requester := "url_base: \"{{ config['base_url'] }}\"\npath: /items\nrequest_parameters: {q: 1}\n" + tt.auth
			res := e2eRead(t, api, e2eOneStream(requester, e2eDataPath), tt.values)
			e2eCheckResult(t, api, res, 1, "", tt.stderr)
			if got := len(api.requests()); got != 1 {
				t.Errorf("the API received %d requests, want 1 (no retry)", got)
			}
		})
	}
}
