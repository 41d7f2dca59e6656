package cmd

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

const oauthDef = "../definitions/declarative-oauth.yaml"

// oauthRunning is `connector oauth` running in the background, its stderr read line by line.
type oauthRunning struct {
	lines chan string
	done  chan int
	mu    sync.Mutex
	err   bytes.Buffer
}

// startOAuth starts `connector oauth args…` in env (a testEnv), in the background.
func startOAuth(t *testing.T, env Env, args ...string) *oauthRunning {
	t.Helper()
	pr, pw := io.Pipe()
	r := &oauthRunning{lines: make(chan string, 100), done: make(chan int, 1)}
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			r.mu.Lock()
			r.err.WriteString(sc.Text() + "\n")
			r.mu.Unlock()
			r.lines <- sc.Text()
		}
		close(r.lines)
	}()
	go func() {
		var out bytes.Buffer
		env.Stdin, env.Stdout, env.Stderr = strings.NewReader(""), &out, pw
		code := Execute(context.Background(), append([]string{"oauth"}, args...), env)
		pw.Close()
		r.done <- code
	}()
	return r
}

// consentURL returns the line of stderr that is the consent URL.
func (r *oauthRunning) consentURL(t *testing.T) string {
	t.Helper()
	for line := range r.lines {
		if strings.HasPrefix(line, "http") {
			return line
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no consent URL on stderr:\n%s", r.err.String())
	return ""
}

// wait returns the exit code and the whole stderr.
func (r *oauthRunning) wait(t *testing.T) (int, string) {
	t.Helper()
	var code int
	select {
	case code = <-r.done:
	case <-time.After(30 * time.Second):
		t.Fatal("connector oauth did not return")
	}
	for range r.lines {
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	return code, r.err.String()
}

// browse plays the browser: it opens the consent URL without following redirects, then
// follows the provider's Location to the callback and returns the callback's answer.
func browse(t *testing.T, consent string) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(consent)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("consent URL answered %s, want 302", resp.Status)
	}
	resp, err = c.Get(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// provider is a fake OAuth provider: /oauth/authorize redirects with code "the-code" and
// the state it received (or with the state stateOverride), /oauth/code/token answers token.
func provider(t *testing.T, stateOverride string, tokenStatus int, token string) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/authorize":
			q := r.URL.Query()
			back, _ := url.Parse(q.Get("redirect_uri"))
			state := q.Get("state")
			if stateOverride != "" {
				state = stateOverride
			}
			back.RawQuery = url.Values{"code": {"the-code"}, "state": {state}}.Encode()
			http.Redirect(w, r, back.String(), http.StatusFound)
		case "/oauth/code/token":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(tokenStatus)
			io.WriteString(w, token)
		default:
			http.NotFound(w, r)
		}
	})
}

const consentFlowValues = `# demo values
base_url: BASE
client_id: demo-client # the OAuth app
client_secret: demo-client-secret
`

func writeOAuthValues(t *testing.T, base string) string {
	t.Helper()
	path := writeFile(t, "values.yaml", strings.Replace(consentFlowValues, "BASE", base, 1))
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	return path
}

// fixedClock is a test environment whose clock stands still at 2025-03-01 12:00 UTC.
func fixedClock() Env {
	env := testEnv(nil)
	env.Now = func() time.Time { return time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC) }
	return env
}

func challenge(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func TestOAuthFlowExactRequests(t *testing.T) {
	t.Parallel()
	p := provider(t, "", http.StatusOK, `{"access_token":"at-123456","refresh_token":"rt-654321","expires_in":3600,"token_type":"Bearer"}`)
	values := writeOAuthValues(t, p.URL)
	run := startOAuth(t, fixedClock(), oauthDef, "--testing-values", values)

	consent := run.consentURL(t)
	u, err := url.Parse(consent)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	state := q.Get("state")
	if len(state) < 43 || len(state) > 64 || strings.Trim(state, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") != "" {
		t.Errorf("state %q: want 43 to 64 URL-safe characters", state)
	}
	redirect := q.Get("redirect_uri")
	if !strings.HasPrefix(redirect, "http://127.0.0.1:") || !strings.HasSuffix(redirect, "/callback") {
		t.Errorf("redirect_uri = %q", redirect)
	}
	want := url.Values{
		"client_id": {"demo-client"}, "redirect_uri": {redirect}, "scope": {"books:read authors:read"},
		"state": {state}, "response_type": {"code"}, "code_challenge": {challenge(state)},
		"code_challenge_method": {"S256"},
	}
	if u.Path != "/oauth/authorize" || q.Encode() != want.Encode() {
		t.Errorf("consent URL %s\n got query %s\nwant query %s", consent, q.Encode(), want.Encode())
	}

	status, page := browse(t, consent)
	if status != http.StatusOK || !strings.Contains(page, "You can close this window.") {
		t.Errorf("callback answered %d %q", status, page)
	}
	code, stderr := run.wait(t)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}

	reqs := p.requests()
	if len(reqs) != 2 {
		t.Fatalf("provider got %d requests, want 2: %+v", len(reqs), reqs)
	}
	ex := reqs[1]
	wantBody := url.Values{"code": {"the-code"}, "code_verifier": {state}, "grant_type": {"authorization_code"}, "redirect_uri": {redirect}}.Encode()
	if ex.Method != "POST" || ex.URL != "/oauth/code/token" || ex.Body != wantBody {
		t.Errorf("exchange = %s %s %q\nwant POST /oauth/code/token %q", ex.Method, ex.URL, ex.Body, wantBody)
	}
	wantHeaders := map[string]string{
		"Content-Type":  "application/x-www-form-urlencoded",
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("demo-client:demo-client-secret")),
		"Accept":        "application/json",
		"User-Agent":    "connector/dev",
	}
	for k, v := range wantHeaders {
		if got := ex.Header.Get(k); got != v {
			t.Errorf("exchange header %s = %q, want %q", k, got, v)
		}
	}

	data, _ := os.ReadFile(values)
	wantFile := strings.Replace(consentFlowValues, "BASE", p.URL, 1) + `oauth:
  access_token: at-123456
  refresh_token: rt-654321
  token_expiry_date: "2025-03-01T13:00:00Z"
`
	if string(data) != wantFile {
		t.Errorf("testing values:\n%s\nwant:\n%s", data, wantFile)
	}
	if info, _ := os.Stat(values); info.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640", info.Mode().Perm())
	}
	if !strings.Contains(stderr, "Authorized. Wrote oauth.access_token, oauth.refresh_token, oauth.token_expiry_date to "+values+".") {
		t.Errorf("stderr does not name the keys written:\n%s", stderr)
	}
	for _, secret := range []string{"at-123456", "rt-654321", "the-code", "demo-client-secret"} {
		if strings.Contains(stderr, secret) {
			t.Errorf("stderr shows %q:\n%s", secret, stderr)
		}
	}
}

func TestOAuthFlowDemoAPIWithPKCEThenRead(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	defer srv.Close()
	values := writeOAuthValues(t, srv.URL)
	run := startOAuth(t, testEnv(nil), oauthDef, "--testing-values", values)
	if status, page := browse(t, run.consentURL(t)); status != http.StatusOK {
		t.Errorf("callback answered %d %q", status, page)
	}
	if code, stderr := run.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	data, _ := os.ReadFile(values)
	if !strings.Contains(string(data), "  access_token: demo-access-") || !strings.Contains(string(data), "  refresh_token: demo-refresh-token") {
		t.Errorf("tokens not written:\n%s", data)
	}
	res := runCLI(t, "", "read", oauthDef, "--testing-values", values, "--max-records", "2")
	if res.Code != 0 || strings.Count(res.Stdout, "\n") != 2 {
		t.Errorf("read with the new token: exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestOAuthFlowFailures(t *testing.T) {
	t.Parallel()
	demo := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	t.Cleanup(demo.Close) // after the parallel subtests
	tests := []struct {
		name     string
		base     func(t *testing.T) string
		extra    []string
		browse   bool
		wantCode int
		wantErr  string
	}{
		{
			name:     "access denied",
			base:     func(*testing.T) string { return demo.URL },
			extra:    []string{"--set", "client_id=" + demoapi.DemoDenyClientID},
			browse:   true,
			wantCode: 1,
			wantErr:  "error: the provider refused the authorization: access_denied (the user denied access)\n",
		},
		{
			name: "token endpoint error",
			base: func(t *testing.T) string {
				return provider(t, "", 400, `{"error":"invalid_grant","error_description":"the code has expired"}`).URL
			},
			browse:   true,
			wantCode: 1,
			wantErr:  "refused the code exchange: 400 Bad Request: invalid_grant: the code has expired\n",
		},
		{
			name: "missing output",
			base: func(t *testing.T) string {
				return provider(t, "", 200, `{"access_token":"at-123456","token_type":"Bearer"}`).URL
			},
			browse:   true,
			wantCode: 1,
			wantErr:  "error: the token response has no refresh_token (expected by spec.advanced_auth); it has: access_token, token_type\n",
		},
		{
			name:     "timeout",
			base:     func(*testing.T) string { return demo.URL },
			extra:    []string{"--timeout", "300ms"},
			wantCode: 1,
			wantErr:  "/callback within 300 ms (open the consent URL in a browser, or raise --timeout)\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			base := tt.base(t)
			values := writeOAuthValues(t, base)
			before, _ := os.ReadFile(values)
			run := startOAuth(t, testEnv(nil), append([]string{oauthDef, "--testing-values", values}, tt.extra...)...)
			consent := run.consentURL(t)
			if tt.browse {
				browse(t, consent)
			}
			code, stderr := run.wait(t)
			if code != tt.wantCode || !strings.HasSuffix(stderr, tt.wantErr) {
				t.Errorf("exit %d, stderr:\n%s\nwant exit %d and stderr ending in %q", code, stderr, tt.wantCode, tt.wantErr)
			}
			if after, _ := os.ReadFile(values); string(after) != string(before) {
				t.Errorf("testing values changed:\n%s", after)
			}
			if strings.Contains(stderr, "at-123456") {
				t.Errorf("stderr shows a token:\n%s", stderr)
			}
		})
	}
}

func TestOAuthWithoutAdvancedAuth(t *testing.T) {
	t.Parallel()
	values := writeFile(t, "values.yaml", "bearer_token: x\nbase_url: http://127.0.0.1:1\n")
	res := runCLI(t, "", "oauth", "../definitions/bearer-auth.yaml", "--testing-values", values)
	want := "error: ../definitions/bearer-auth.yaml: the definition has no spec.advanced_auth: connector oauth needs " +
		"spec.advanced_auth.oauth_config_specification.oauth_connector_input_specification (consent_url, access_token_url, extract_output) to run an OAuth 2.0 flow\n"
	if res.Code != 3 || res.Stderr != want {
		t.Errorf("exit %d, stderr %q\nwant exit 3, %q", res.Code, res.Stderr, want)
	}
}

func TestOAuthMissingClientSecret(t *testing.T) {
	t.Parallel()
	values := writeFile(t, "values.yaml", "base_url: http://127.0.0.1:1\nclient_id: demo-client\n")
	res := runCLI(t, "", "oauth", oauthDef, "--testing-values", values)
	want := "error: " + values + ": the testing values have no client secret at client_secret (the path spec.advanced_auth gives)\n"
	if res.Code != 3 || res.Stderr != want {
		t.Errorf("exit %d, stderr %q\nwant exit 3, %q", res.Code, res.Stderr, want)
	}
}

func TestOAuthFlags(t *testing.T) {
	t.Parallel()
	var got *oauthOptions
	c := newCmdOAuth(newIOStreams(nil, io.Discard, io.Discard), &Env{}, func(o *oauthOptions) error { got = o; return nil })
	c.SetArgs([]string{"def.yaml", "--testing-values", "v.yaml", "--port", "8899", "--open", "--timeout", "2m"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.defPath != "def.yaml" || got.testingValues != "v.yaml" || got.port != 8899 || !got.open || got.timeout != 2*time.Minute {
		t.Errorf("options = %+v", got)
	}
}
