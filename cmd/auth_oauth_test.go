package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// authDef is a one-stream definition (offset pagination, limit 2, on /data) with the given
// authenticator written under `authenticator:` (indented by the caller at 4 spaces).
func authDef(t *testing.T, authenticator string) string {
	t.Helper()
	return writeFile(t, "def.yaml", `
version: 6.0.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [users]}
definitions:
  authenticator:
`+authenticator+`
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /data
        http_method: GET
        authenticator: {$ref: "#/definitions/authenticator"}
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: [data]}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        page_size_option: {type: RequestOption, inject_into: request_parameter, field_name: limit}
        pagination_strategy: {type: OffsetIncrement, page_size: 2}
`)
}

// authDataPage answers /data with 5 records, offset/limit paginated, when authorized says so.
func authDataPage(w http.ResponseWriter, r *http.Request, authorized bool) {
	w.Header().Set("Content-Type", "application/json")
	if !authorized {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"unauthorized"}`))
		return
	}
	off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
	var recs []string
	for i := off; i < off+2 && i < 5; i++ {
		recs = append(recs, fmt.Sprintf(`{"id":%d}`, i+1))
	}
	fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(recs, ","))
}

// tokenAPI is a token endpoint at /token and data at /data that accepts only the tokens it
// issued. tokenBody gives the answer to the n-th token request (from 1).
func tokenAPI(t *testing.T, tokenBody func(n int) (int, string)) *recorder {
	t.Helper()
	valid := map[string]bool{}
	n := 0
	var api *recorder
	api = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/token":
			api.mu.Lock()
			n++
			status, body := tokenBody(n)
			var m map[string]any
			if json.Unmarshal([]byte(body), &m) == nil {
				for _, v := range m {
					if tok, ok := v.(string); ok && strings.HasPrefix(tok, "acc-") {
						valid[tok] = true
					}
				}
			}
			api.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			w.Write([]byte(body))
		default:
			api.mu.Lock()
			ok := valid[strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")]
			api.mu.Unlock()
			authDataPage(w, r, ok)
		}
	})
	return api
}

const oauthValues = "client_id: cid-123\nclient_secret: csecret-456\nrefresh_token: rtok-789\n"

func TestOAuthTokenRequestJSONWithScopesAndBody(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(int) (int, string) { return 200, `{"access_token":"acc-AAA111","expires_in":3600}` })
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['refresh_token'] }}"
    scopes: [a:read, b:write]
    refresh_request_body: {audience: api}`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues)
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := strings.Count(res.Stdout, "\n"); got != 5 {
		t.Errorf("%d records, want 5", got)
	}
	reqs := api.requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 1 token + 3 data: %+v", len(reqs), reqs)
	}
	tok := reqs[0]
	if tok.Method != "POST" || tok.URL != "/token" || tok.Header.Get("Content-Type") != "application/json" {
		t.Errorf("token request %s %s Content-Type %q", tok.Method, tok.URL, tok.Header.Get("Content-Type"))
	}
	wantBody := `{"client_id":"cid-123","client_secret":"csecret-456","refresh_token":"rtok-789","grant_type":"refresh_token","scopes":["a:read","b:write"],"audience":"api"}`
	if tok.Body != wantBody {
		t.Errorf("token body\n got %s\nwant %s", tok.Body, wantBody)
	}
	for _, r := range reqs[1:] {
		if r.Header.Get("Authorization") != "Bearer acc-AAA111" || !strings.HasPrefix(r.URL, "/data?") {
			t.Errorf("data request %s with Authorization %q", r.URL, r.Header.Get("Authorization"))
		}
	}
}

func TestOAuthClientCredentialsFormEncoded(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(int) (int, string) { return 200, `{"token":"acc-FORM22","ttl":"600"}` })
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    grant_type: client_credentials
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    access_token_name: token
    expires_in_name: ttl
    scopes: [a:read, b:write]
    refresh_request_headers:
      Content-Type: application/x-www-form-urlencoded`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues)
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	reqs := api.requests()
	if n := authCountPath(reqs, "/token"); n != 1 {
		t.Fatalf("%d token requests, want 1", n)
	}
	tok := reqs[0]
	if tok.Header.Get("Content-Type") != "application/x-www-form-urlencoded" {
		t.Errorf("Content-Type %q", tok.Header.Get("Content-Type"))
	}
	want := "client_id=cid-123&client_secret=csecret-456&grant_type=client_credentials&scopes=a%3Aread&scopes=b%3Awrite"
	if tok.Body != want {
		t.Errorf("token body\n got %s\nwant %s", tok.Body, want)
	}
	if reqs[1].Header.Get("Authorization") != "Bearer acc-FORM22" {
		t.Errorf("data Authorization %q", reqs[1].Header.Get("Authorization"))
	}
}

func TestOAuthRejectedRefreshFailsWithoutSecrets(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(int) (int, string) {
		return 400, `{"error":"invalid_grant","error_description":"refresh token rtok-789 is revoked"}`
	})
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['refresh_token'] }}"`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues)
	for _, cmd := range []string{"read", "check"} {
		res := runCLI(t, "", cmd, def, "--testing-values", vals)
		if res.Code != 1 {
			t.Fatalf("%s: exit %d, want 1; stderr:\n%s", cmd, res.Code, res.Stderr)
		}
		out := res.Stderr + res.Stdout
		want := "authentication failed: OAuth token refresh: 400 Bad Request from POST " + api.URL + "/token"
		if !strings.Contains(out, want) {
			t.Errorf("%s: output does not contain %q:\n%s", cmd, want, out)
		}
		for _, secret := range []string{"cid-123", "csecret-456", "rtok-789"} {
			if strings.Contains(out, secret) {
				t.Errorf("%s: output contains %s:\n%s", cmd, secret, out)
			}
		}
	}
	if n := authCountPath(api.requests(), "/data"); n != 0 {
		t.Errorf("%d data requests after a failed refresh, want 0", n)
	}
}

func TestOAuthNoTokenInResponse(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(int) (int, string) { return 200, `{"token_type":"bearer"}` })
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['refresh_token'] }}"`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues)
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	want := `authentication failed: OAuth token refresh: 200 OK from POST ` + api.URL + `/token: no access token at "access_token" in the answer`
	if res.Code != 1 || !strings.Contains(res.Stderr, want) {
		t.Fatalf("exit %d, stderr:\n%s\nwant it to contain %s", res.Code, res.Stderr, want)
	}
}

func TestOAuthStoredTokenStillValidIsUsedWithoutRefresh(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(int) (int, string) { return 200, `{"access_token":"acc-NEW","expires_in":3600}` })
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['refresh_token'] }}"
    access_token_value: "{{ config['access_token'] }}"
    token_expiry_date: "{{ config['expiry'] }}"`)
	future := time.Now().Add(2 * time.Hour).UTC().Format(time.RFC3339)
	past := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339)

	// The stored token is valid: the API sees it, and nobody asks for another.
	api2 := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		authDataPage(w, r, r.Header.Get("Authorization") == "Bearer acc-STORED")
	})
	vals := writeFile(t, "values.yaml", "base_url: "+api2.URL+"\n"+oauthValues+"access_token: acc-STORED\nexpiry: \""+future+"\"\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if reqs := api2.requests(); len(reqs) != 3 || authCountPath(reqs, "/data") != 3 {
		t.Errorf("requests %+v, want 3 data requests and no token request", reqs)
	}

	// An expired stored token is replaced before the first data request.
	vals = writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues+"access_token: acc-STORED\nexpiry: \""+past+"\"\n")
	res = runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	reqs := api.requests()
	if len(reqs) != 4 || reqs[0].URL != "/token" || reqs[1].Header.Get("Authorization") != "Bearer acc-NEW" {
		t.Errorf("requests %+v, want a token request then 3 data requests with the new token", reqs)
	}
}

func TestOAuthRefreshOn401OneRefreshOneRetry(t *testing.T) {
	t.Parallel()
	clock := newAuthClock()
	demo := newAuthDemo(t, demoapi.Options{Now: clock.Now, AccessTokenTTL: time.Hour, Records: 60})
	vals := authDemoValues(t, demo.URL)
	def := authDefinition("oauth-refresh-token.yaml")
	// Page 1 with a fresh token; then the provider's clock jumps past the token's lifetime
	// (the provider revoked it early, as far as the connector can tell).
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--stream", "books", "--max-pages", "1")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if st := demo.api.Stats(); st.RefreshTokenGrants != 1 || st.DataRequests != 1 {
		t.Fatalf("stats after the first read %+v", st)
	}

	// One run: fetch, then expire the token on the server side between pages.
	expireAfterFirstPage := newAuthDemo(t, demoapi.Options{Now: clock.Now, AccessTokenTTL: time.Hour, Records: 250})
	var pages int
	wrapped := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/v1/") {
			pages++
			if pages == 2 {
				clock.Advance(2 * time.Hour)
			}
		}
		expireAfterFirstPage.api.ServeHTTP(w, r)
	})
	vals = authDemoValues(t, wrapped.URL)
	res = runCLI(t, "", "read", def, "--testing-values", vals, "--stream", "books")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := strings.Count(res.Stdout, "\n"); got != 250 {
		t.Errorf("%d records, want 250", got)
	}
	st := expireAfterFirstPage.api.Stats()
	if st.RefreshTokenGrants != 2 || st.Unauthorized != 1 || st.DataRequests != 3 {
		t.Errorf("stats %+v, want 2 refreshes, 1 unauthorized, 3 data requests", st)
	}
	reqs := wrapped.requests()
	var seq []string
	for _, r := range reqs {
		p, q, _ := strings.Cut(r.URL, "?")
		seq = append(seq, r.Method+" "+p+" "+q)
	}
	want := []string{
		"POST /oauth/token ",
		"GET /v1/oauth/books offset=0&limit=100",
		"GET /v1/oauth/books offset=100&limit=100",
		"POST /oauth/token ",
		"GET /v1/oauth/books offset=100&limit=100",
		"GET /v1/oauth/books offset=200&limit=100",
	}
	if strings.Join(seq, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests\n%s\nwant\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
	if reqs[2].Header.Get("Authorization") == reqs[4].Header.Get("Authorization") {
		t.Error("the retry carries the refused token")
	}
}

func TestOAuthDatedExpiryFormEncoded(t *testing.T) {
	t.Parallel()
	clock := newAuthClock()
	demo := newAuthDemo(t, demoapi.Options{Now: clock.Now, Records: 150})
	vals := authDemoValues(t, demo.URL)
	res := runCLI(t, "", "read", authDefinition("oauth-expiry-date.yaml"), "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	trs := demo.api.TokenRequests()
	if len(trs) != 1 || trs[0].Endpoint != "/oauth/dated/token" || trs[0].ContentType != "form" ||
		trs[0].GrantType != "refresh_token" || trs[0].ClientID != "demo-client" || trs[0].Status != 200 {
		t.Errorf("token requests %+v", trs)
	}
	if st := demo.api.Stats(); st.DataRequests != 2 {
		t.Errorf("stats %+v, want 2 data requests", st)
	}
}

func TestOAuthDatedExpiryWithoutZoneIsUTCAndWrittenBack(t *testing.T) {
	t.Parallel()
	api := tokenAPI(t, func(n int) (int, string) {
		return 200, fmt.Sprintf(`{"access_token":"acc-D%d","valid_until":"2099-03-04 05:06:07","refresh_token":"rtok-next-%d"}`, n, n)
	})
	def := authDef(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['credentials']['refresh_token'] }}"
    expires_in_name: valid_until
    token_expiry_date_format: "%Y-%m-%d %H:%M:%S"
    refresh_token_updater: {}`)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+oauthValues+
		"credentials:\n  refresh_token: rtok-789\n  access_token: acc-old\n  token_expiry_date: \"2001-01-01T00:00:00Z\"\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	data, err := os.ReadFile(vals)
	if err != nil {
		t.Fatal(err)
	}
	want := "credentials:\n  refresh_token: rtok-next-1\n  access_token: acc-D1\n  token_expiry_date: \"2099-03-04T05:06:07Z\"\n"
	if !strings.HasSuffix(string(data), want) {
		t.Errorf("testing values after the refresh:\n%s\nwant them to end with\n%s", data, want)
	}
}
