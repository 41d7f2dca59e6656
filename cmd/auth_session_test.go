package cmd

import (
	"net/http"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

func TestSessionWithoutExpirationLogsInBeforeEveryDataRequest(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{Records: 250})
	vals := authDemoValues(t, demo.URL)
	res := runCLI(t, "", "read", authDefinition("session-token-no-expiration.yaml"), "--testing-values", vals, "--stream", "books")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := strings.Count(res.Stdout, "\n"); got != 250 {
		t.Errorf("%d records, want 250", got)
	}
	reqs := demo.requests()
	var seq []string
	for _, r := range reqs {
		seq = append(seq, r.Method+" "+strings.SplitN(r.URL, "?", 2)[0])
	}
	want := "GET /auth/login,GET /v1/session/books,GET /auth/login,GET /v1/session/books,GET /auth/login,GET /v1/session/books"
	if strings.Join(seq, ",") != want {
		t.Errorf("requests %s\nwant %s", strings.Join(seq, ","), want)
	}
	// Each data request carries the token of the login just before it.
	for i := 0; i+1 < len(reqs); i += 2 {
		if reqs[i].Header.Get("Authorization") != "Basic ZGVtbzpkZW1vLXBhc3N3b3Jk" {
			t.Errorf("login %d Authorization %q", i/2+1, reqs[i].Header.Get("Authorization"))
		}
	}
	if st := demo.api.Stats(); st.Logins != 3 || st.DataRequests != 3 || st.Unauthorized != 0 {
		t.Errorf("stats %+v, want 3 logins for 3 data requests", st)
	}
	toks := demo.tokens()
	for i, tok := range toks {
		if got := reqs[2*i+1].Header.Get("Authorization"); got != "Bearer "+tok {
			t.Errorf("data request %d sent %q, want the token of login %d", i+1, got, i+1)
		}
	}
}

func TestSessionWithExpirationLogsInOnce(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{Records: 250})
	vals := authDemoValues(t, demo.URL)
	res := runCLI(t, "", "read", authDefinition("session-token.yaml"), "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	reqs := demo.requests()
	login := reqs[0]
	if login.Method != "POST" || login.URL != "/auth/login" || login.Header.Get("Content-Type") != "application/json" ||
		login.Body != `{"username":"demo","password":"demo-password"}` {
		t.Errorf("login request %+v", login)
	}
	if st := demo.api.Stats(); st.Logins != 1 || st.DataRequests != 6 {
		t.Errorf("stats %+v, want one login for 6 data requests (2 streams × 3 pages)", st)
	}
	tok := demo.tokens()[0]
	for _, r := range reqs[1:] {
		if r.Header.Get("X-Session-Token") != tok {
			t.Errorf("%s sent X-Session-Token %q, want %q", r.URL, r.Header.Get("X-Session-Token"), tok)
		}
	}
}

// sessionDef is a session token definition against /login and /data of a recorder.
func sessionDef(t *testing.T, extra string) string {
	return authDef(t, `
    type: SessionTokenAuthenticator
    login_requester:
      type: HttpRequester
      url_base: "{{ config['base_url'] }}"
      path: /login
      http_method: POST
      request_body_data:
        user: "{{ config['user'] }}"
        password: "{{ config['password'] }}"
    session_token_path: [auth, token]
`+extra)
}

func TestSessionTokenAsQueryParameter(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/login" {
			w.Write([]byte(`{"auth":{"token":"sess-QQQ"}}`))
			return
		}
		authDataPage(w, r, r.URL.Query().Get("sid") == "sess-QQQ")
	})
	def := sessionDef(t, `    expiration_duration: "7200"
    request_authentication:
      type: ApiKey
      inject_into: {type: RequestOption, inject_into: request_parameter, field_name: sid}`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nuser: alice\npassword: 'p&ss w0rd'\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	reqs := api.requests()
	if len(reqs) != 4 || reqs[0].Body != "user=alice&password=p%26ss+w0rd" ||
		reqs[0].Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Fatalf("requests %+v", reqs)
	}
	if reqs[1].URL != "/data?sid=sess-QQQ&offset=0&limit=2" {
		t.Errorf("data URL %s", reqs[1].URL)
	}
}

func TestSessionTokenMissingAtPath(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"auth":{"other":"x"}}`))
	})
	def := sessionDef(t, `    request_authentication: {type: Bearer}`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\nuser: alice\npassword: hunter22\n")
	res := runCLI(t, "", "check", def, "--testing-values", vals)
	want := "FAILED  users  authentication failed: session login: 200 OK from POST " + api.URL + "/login: no session token at session_token_path auth.token\n"
	if res.Code != 1 || res.Stdout != want {
		t.Errorf("exit %d, stdout %q\nwant %q\nstderr:\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
	if n := authCountPath(api.requests(), "/data"); n != 0 {
		t.Errorf("%d data requests without a session token", n)
	}
}

func TestSessionLoginRefused(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{})
	vals := authDemoValues(t, demo.URL)
	res := runCLI(t, "", "read", authDefinition("session-token.yaml"), "--testing-values", vals, "--set", "password=wrong-pass")
	if res.Code != 1 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	want := "authentication failed: session login: 401 Unauthorized from POST " + demo.URL + "/auth/login"
	if !strings.Contains(res.Stderr, want) || strings.Contains(res.Stderr, "wrong-pass") {
		t.Errorf("stderr:\n%s\nwant it to contain %s and no password", res.Stderr, want)
	}
}
