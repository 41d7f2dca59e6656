package cmd

import (
	"net/http"
	"strings"
	"testing"
)

// legacyAPI answers like Metabase: user/current accepts the session "good-secret-1", session
// returns {"id": "fresh-secret-9"}, items serves two pages.
func legacyAPI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/user/current":
		if r.Header.Get("X-Session") != "good-secret-1" {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"error":"unauthenticated"}`))
			return
		}
		w.Write([]byte(`{"id":1}`))
	case "/api/session":
		w.Write([]byte(`{"id":"fresh-secret-9"}`))
	case "/api/items":
		if r.URL.Query().Get("page") == "1" {
			w.Write([]byte(`{"data":[{"id":1}]}`))
		} else {
			w.Write([]byte(`{"data":[]}`))
		}
	}
}

const legacyRequester = `
type: HttpRequester
url_base: "{{ config['base_url'] }}/api/"
path: items
authenticator:
  type: LegacySessionTokenAuthenticator
  username: "{{ config['username'] }}"
  password: "{{ config['password'] }}"
  header: X-Session
  session_token: "{{ config.get('session_token', '') }}"
  session_token_response_key: id
  login_url: session
  validate_session_url: user/current
`

const legacyPaginator = `      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: PageIncrement, page_size: 1, start_from_page: 1}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
`

// The CDK 7.28.2 sends the same requests (logserver.py), except that it validates the
// session token twice before each data request (it evaluates the header twice); this
// validates it once.
func TestLegacySessionTokenAuthenticator(t *testing.T) {
	validate := func(tok string) e2eRequest {
		return e2eRequest{Method: "GET", URL: "/api/user/current", Headers: map[string]string{"X-Session": tok}}
	}
	login := e2eRequest{Method: "POST", URL: "/api/session", Body: `{"username": "user-secret-2", "password": "pass-secret-3"}`,
		Headers: map[string]string{"Content-Type": "application/json", "X-Session": ""}}
	page := func(n, tok string) e2eRequest {
		return e2eRequest{Method: "GET", URL: "/api/items?page=" + n, Headers: map[string]string{"X-Session": tok}}
	}
	creds := "username: user-secret-2\npassword: pass-secret-3\n"
	tests := []struct {
		name, values string
		want         []e2eRequest
	}{
		{"valid session token", "session_token: good-secret-1\n" + creds,
			[]e2eRequest{validate("good-secret-1"), page("1", "good-secret-1"), validate("good-secret-1"), page("2", "good-secret-1")}},
		// 401 on the check: one login for the run, the check still made before each request.
		{"rejected session token", "session_token: bad-secret-4\n" + creds,
			[]e2eRequest{validate("bad-secret-4"), login, page("1", "fresh-secret-9"), validate("bad-secret-4"), page("2", "fresh-secret-9")}},
		{"no session token", creds, []e2eRequest{login, page("1", "fresh-secret-9"), page("2", "fresh-secret-9")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, legacyAPI)
			def := e2eOneStream(legacyRequester, e2eDataPath) + legacyPaginator
			res := e2eRead(t, api, def, tt.values)
			e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
			e2eCheckRequests(t, api, tt.want...)
		})
	}

	t.Run("no valid token and no password", func(t *testing.T) {
		api := newRecorder(t, legacyAPI)
		def := e2eOneStream(legacyRequester, e2eDataPath) + legacyPaginator
		res := e2eRead(t, api, def, "session_token: bad-secret-4\nusername: user-secret-2\n")
		if res.Code != 1 || !strings.Contains(res.Stderr, "LegacySessionTokenAuthenticator: the session token is not valid (or not set), and there is no username and password to log in with") {
			t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
		}
		e2eCheckRequests(t, api, validate("bad-secret-4"))
	})

	t.Run("trace shows the login and the check, secrets masked", func(t *testing.T) {
		api := newRecorder(t, legacyAPI)
		def := e2eOneStream(legacyRequester, e2eDataPath) + legacyPaginator
		defPath := writeFile(t, "def.yaml", def)
		vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nsession_token: bad-secret-4\n"+creds)
		res := runCLI(t, "", "paginate-trace", defPath, "--testing-values", vals)
		for _, s := range []string{"bad-secret-4", "user-secret-2", "pass-secret-3", "fresh-secret-9"} {
			if strings.Contains(res.Stdout+res.Stderr, s) {
				t.Errorf("%s printed:\n%s%s", s, res.Stdout, res.Stderr)
			}
		}
		for _, w := range []string{"(validate)", "(login)", "X-Session: ****", `{"username": "****", "password": "****"}`} {
			if !strings.Contains(res.Stdout, w) {
				t.Errorf("the trace lacks %q:\n%s", w, res.Stdout)
			}
		}
	})

	t.Run("validate", func(t *testing.T) {
		def := e2eOneStream(strings.Replace(legacyRequester, `"{{ config['password'] }}"`, "hunter2", 1), e2eWholeBody)
		res := runCLI(t, "", "validate", writeFile(t, "def.yaml", def))
		if res.Code != 3 || !strings.Contains(res.Stderr, "error: the password is written in the definition") {
			t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
		}
	})
}

// request_body gives the body request_body_json / request_body_data give, as the CDK 7.28.2
// sends it (logserver.py): same content type (none for plain text) and the same content
// (the CDK's JSON has spaces after , and :).
func TestRequestBody(t *testing.T) {
	tests := []struct {
		name, body, contentType, want string
	}{
		{"json object", `{type: RequestBodyJsonObject, value: {a: "{{ config['x'] }}", n: {b: 1}, empty: ""}}`,
			"application/json", `{"a":"X1","n":{"b":1}}`},
		{"url-encoded form", `{type: RequestBodyUrlEncodedForm, value: {a: "{{ config['x'] }}", b: "c d&e"}}`,
			"application/x-www-form-urlencoded", `a=X1&b=c+d%26e`},
		{"plain text", `{type: RequestBodyPlainText, value: "hello {{ config['x'] }}"}`, "", `hello X1`},
		{"graphql", `{type: RequestBodyGraphQL, value: {variables: {v: "{{ config['x'] }}"}, query: "query { a }", operationName: null}}`,
			"application/json", `{"query":"query { a }","variables":{"v":"X1"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
			def := e2eOneStream("url_base: \"{{ config['base_url'] }}\"\nhttp_method: POST\nrequest_body: "+tt.body+"\n", e2eWholeBody)
			res := e2eRead(t, api, def, "x: X1\n")
			e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
			e2eCheckRequests(t, api, e2eRequest{Method: "POST", URL: "/", Body: tt.want, Headers: map[string]string{"Content-Type": tt.contentType}})
		})
	}
}

func TestRequestBodyConflicts(t *testing.T) {
	tests := []struct{ name, extra, want string }{
		{"json body and request_body_data", "request_body: {type: RequestBodyJsonObject, value: {a: b}}\nrequest_body_data: {z: '1'}\n",
			"error: both `request_body` (RequestBodyJsonObject) and `request_body_data` are set; a request has one body"},
		{"text body and request_body_json", "request_body: {type: RequestBodyPlainText, value: hi}\nrequest_body_json: {z: '1'}\n",
			"error: both `request_body` (RequestBodyPlainText) and `request_body_json` are set; a request has one body"},
		// The CDK uses request_body and ignores request_body_json.
		{"json body and request_body_json", "request_body: {type: RequestBodyJsonObject, value: {a: b}}\nrequest_body_json: {z: '1'}\n",
			"warning: `request_body_json` is ignored: `request_body` (RequestBodyJsonObject) replaces it"},
		{"a list as a form", "request_body: {type: RequestBodyUrlEncodedForm, value: [a]}\n",
			"error: the `value` of RequestBodyUrlEncodedForm must be a mapping, not a list"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := e2eOneStream("url_base: https://example.com\nhttp_method: POST\n"+tt.extra, e2eWholeBody)
			res := runCLI(t, "", "validate", writeFile(t, "def.yaml", def))
			if !strings.Contains(res.Stderr, tt.want) {
				t.Errorf("stderr lacks %q:\n%s", tt.want, res.Stderr)
			}
		})
	}
}
