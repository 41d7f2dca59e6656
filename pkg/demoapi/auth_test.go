package demoapi

import (
	"bytes"
	"reflect"
	"strings"
	"testing"
	"time"
)

const onePage = `{"data":[` + book1 + `],"meta":{"offset":0,"limit":1,"total":3}}` + "\n"

func unauthorizedBody(message string) string {
	return `{"error":"unauthorized","message":"` + message + `"}` + "\n"
}

// Static credentials: each area accepts its credential where it belongs and
// refuses a missing, wrong or misplaced one.
func TestStaticCredentials(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	h := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		name    string
		r       req
		status  int
		message string // for 401
	}{
		{"public", req{url: "/v1/public/books?limit=1"}, 200, ""},
		{"basic", req{url: "/v1/basic/books?limit=1", user: DemoUsername, password: DemoPassword}, 200, ""},
		{"basic empty password", req{url: "/v1/basic/books?limit=1", user: DemoReaderUsername, password: ""}, 200, ""},
		{"basic reader with a password", req{url: "/v1/basic/books?limit=1", user: DemoReaderUsername, password: "x"}, 401, "invalid username or password"},
		{"basic wrong password", req{url: "/v1/basic/books?limit=1", user: DemoUsername, password: "nope"}, 401, "invalid username or password"},
		{"basic demo empty password", req{url: "/v1/basic/books?limit=1", user: DemoUsername, basic: true}, 401, "invalid username or password"},
		{"basic missing", req{url: "/v1/basic/books?limit=1"}, 401, "missing Basic credentials in the Authorization header"},
		{"bearer", req{url: "/v1/bearer/books?limit=1", header: h("Authorization", "Bearer "+DemoBearerToken)}, 200, ""},
		{"bearer lower-case scheme", req{url: "/v1/bearer/books?limit=1", header: h("Authorization", "bearer "+DemoBearerToken)}, 200, ""},
		{"bearer wrong", req{url: "/v1/bearer/books?limit=1", header: h("Authorization", "Bearer nope")}, 401, "invalid bearer token"},
		{"bearer as basic", req{url: "/v1/bearer/books?limit=1", user: DemoBearerToken}, 401, "missing Authorization: Bearer header"},
		{"api key header", req{url: "/v1/apikey-header/books?limit=1", header: h("X-API-Key", DemoAPIKey)}, 200, ""},
		{"api key header wrong", req{url: "/v1/apikey-header/books?limit=1", header: h("X-API-Key", "nope")}, 401, "invalid API key"},
		{"api key header in query", req{url: "/v1/apikey-header/books?limit=1&api_key=" + DemoAPIKey}, 401, "missing API key: send it in the X-API-Key header"},
		{"api key query", req{url: "/v1/apikey-query/books?limit=1&api_key=" + DemoAPIKey}, 200, ""},
		{"api key query wrong", req{url: "/v1/apikey-query/books?limit=1&api_key=nope"}, 401, "invalid API key"},
		{"api key query missing", req{url: "/v1/apikey-query/books?limit=1", header: h("X-API-Key", DemoAPIKey)}, 401, "missing API key: send it as the api_key query parameter"},
		{"api key form", req{method: "POST", url: "/v1/apikey-form/books", header: h("Content-Type", formType), body: "api_key=" + DemoAPIKey + "&limit=1"}, 200, ""},
		{"api key form wrong", req{method: "POST", url: "/v1/apikey-form/books", header: h("Content-Type", formType), body: "api_key=nope"}, 401, "invalid API key"},
		{"api key form as GET", req{url: "/v1/apikey-form/books?api_key=" + DemoAPIKey}, 401, "missing API key: send it as the api_key field of a POST form body"},
		{"api key json", req{method: "POST", url: "/v1/apikey-json/books", header: h("Content-Type", jsonType), body: `{"api_key":"` + DemoAPIKey + `","limit":1}`}, 200, ""},
		{"api key json wrong", req{method: "POST", url: "/v1/apikey-json/books", header: h("Content-Type", jsonType), body: `{"api_key":"nope"}`}, 401, "invalid API key"},
		{"api key json as form", req{method: "POST", url: "/v1/apikey-json/books", header: h("Content-Type", formType), body: "api_key=" + DemoAPIKey}, 401, `missing API key: send it as \"api_key\" in a POST JSON body`},
		{"api key json nested", req{method: "POST", url: "/v1/apikey-json-nested/books?limit=1", header: h("Content-Type", jsonType), body: `{"auth":{"key":"` + DemoAPIKey + `"}}`}, 200, ""},
		{"api key json nested flat", req{method: "POST", url: "/v1/apikey-json-nested/books", header: h("Content-Type", jsonType), body: `{"api_key":"` + DemoAPIKey + `"}`}, 401, `missing API key: send it as {\"auth\": {\"key\": ...}} in a POST JSON body`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.do(tt.r)
			if tt.status == 200 {
				r.want(t, 200, onePage)
				return
			}
			r.want(t, tt.status, unauthorizedBody(tt.message))
		})
	}
}

func TestBasicChallenge(t *testing.T) {
	e := newEnv(t, Options{})
	r := e.get("/v1/basic/books")
	if got := r.header.Get("WWW-Authenticate"); got != `Basic realm="bookshop"` {
		t.Fatalf("WWW-Authenticate %q", got)
	}
}

// token asks a token endpoint and returns the decoded answer.
type tokenAnswer struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    int    `json:"expires_in"`
	ExpiresAt    string `json:"expires_at"`
	RefreshToken string `json:"refresh_token"`
	Scope        string `json:"scope"`
}

func (e *env) token(path, contentType, body string) (response, tokenAnswer) {
	e.t.Helper()
	r := e.do(req{method: "POST", url: path, header: map[string]string{"Content-Type": contentType}, body: body})
	var a tokenAnswer
	if r.status == 200 {
		r.decode(e.t, &a)
	}
	return r, a
}

func jsonGrant(grant, refresh string, extra ...string) string {
	s := `{"client_id":"` + DemoClientID + `","client_secret":"` + DemoClientSecret + `","grant_type":"` + grant + `"`
	if refresh != "" {
		s += `,"refresh_token":"` + refresh + `"`
	}
	for _, x := range extra {
		s += "," + x
	}
	return s + "}"
}

func (e *env) oauthData(token string) response {
	return e.do(req{url: "/v1/oauth/books?limit=1", header: map[string]string{"Authorization": "Bearer " + token}})
}

func TestOAuthRefreshToken(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	r, a := e.token("/oauth/token", jsonType, jsonGrant("refresh_token", DemoRefreshToken))
	r.want(t, 200, `{"access_token":"demo-access-000001","token_type":"Bearer","expires_in":3600,"refresh_token":"demo-refresh-token"}`+"\n")
	e.oauthData(a.AccessToken).want(t, 200, onePage)

	e.clock.Advance(time.Hour - time.Second)
	e.oauthData(a.AccessToken).wantStatus(t, 200)
	e.clock.Advance(time.Second)
	e.oauthData(a.AccessToken).want(t, 401, `{"error":"token_expired","message":"access token expired at 2026-01-02T16:04:05Z"}`+"\n")

	// The refresh token is reusable on this endpoint; form bodies work too.
	r, b := e.token("/oauth/token", formType, "grant_type=refresh_token&refresh_token="+DemoRefreshToken+
		"&client_id="+DemoClientID+"&client_secret="+DemoClientSecret+"&scopes=books:read&scopes=profile")
	r.want(t, 200, `{"access_token":"demo-access-000002","token_type":"Bearer","expires_in":3600,"refresh_token":"demo-refresh-token","scope":"books:read profile"}`+"\n")
	e.oauthData(b.AccessToken).wantStatus(t, 200)

	e.oauthData("demo-bearer-token").want(t, 401, unauthorizedBody("unknown access token"))
	e.get("/v1/oauth/books").want(t, 401, unauthorizedBody("missing Authorization: Bearer header with an access token from /oauth/token"))

	got := e.srv.Stats()
	if got.RefreshTokenGrants != 2 || got.ClientCredentialsGrants != 0 || got.Unauthorized != 3 || got.DataRequests != 3 {
		t.Fatalf("stats %+v", got)
	}
}

func TestOAuthClientCredentials(t *testing.T) {
	e := newEnv(t, Options{Records: 3, AccessTokenTTL: 10 * time.Minute})
	r, a := e.token("/oauth/token", jsonType, jsonGrant("client_credentials", "", `"scopes":["books:read","authors:read"]`))
	r.want(t, 200, `{"access_token":"demo-access-000001","token_type":"Bearer","expires_in":600,"scope":"books:read authors:read"}`+"\n")
	e.oauthData(a.AccessToken).wantStatus(t, 200)
	e.clock.Advance(10 * time.Minute)
	e.oauthData(a.AccessToken).wantStatus(t, 401)

	// client_secret_basic: credentials in the Authorization header.
	r = e.do(req{method: "POST", url: "/oauth/token", header: map[string]string{"Content-Type": formType},
		body: "grant_type=client_credentials", user: DemoClientID, password: DemoClientSecret})
	r.wantStatus(t, 200)

	reqs := e.srv.TokenRequests()
	want := []TokenRequest{
		{Endpoint: "/oauth/token", ContentType: "json", GrantType: "client_credentials", ClientID: DemoClientID, Scopes: []string{"books:read", "authors:read"}, Status: 200},
		{Endpoint: "/oauth/token", ContentType: "form", GrantType: "client_credentials", ClientID: DemoClientID, Status: 200},
	}
	if !reflect.DeepEqual(reqs, want) {
		t.Fatalf("token requests\n%+v\nwant\n%+v", reqs, want)
	}
	if s := e.srv.Stats(); s.ClientCredentialsGrants != 2 {
		t.Fatalf("stats %+v", s)
	}
}

func TestOAuthErrors(t *testing.T) {
	e := newEnv(t, Options{})
	oauthErr := func(code, desc string) string {
		return `{"error":"` + code + `","error_description":"` + desc + `"}` + "\n"
	}
	tests := []struct {
		name, path, ctype, body string
		status                  int
		want                    string
	}{
		{"wrong secret", "/oauth/token", jsonType, `{"client_id":"demo-client","client_secret":"nope","grant_type":"client_credentials"}`,
			401, oauthErr("invalid_client", "unknown client_id or wrong client_secret")},
		{"wrong secret form", "/oauth/token", formType, `client_id=demo-client&client_secret=nope&grant_type=refresh_token&refresh_token=demo-refresh-token`,
			401, oauthErr("invalid_client", "unknown client_id or wrong client_secret")},
		{"wrong refresh token", "/oauth/token", jsonType, jsonGrant("refresh_token", "nope"),
			400, oauthErr("invalid_grant", "unknown refresh token")},
		{"missing refresh token", "/oauth/token", jsonType, jsonGrant("refresh_token", ""),
			400, oauthErr("invalid_request", "refresh_token is required for grant_type refresh_token")},
		{"pkce grant", "/oauth/token", jsonType, jsonGrant("authorization_code", ""),
			400, oauthErr("unsupported_grant_type", "grant_type must be refresh_token or client_credentials")},
		{"missing grant", "/oauth/token", jsonType, `{"client_id":"demo-client","client_secret":"demo-client-secret"}`,
			400, oauthErr("invalid_request", "grant_type is required")},
		{"bad scope", "/oauth/token", jsonType, jsonGrant("client_credentials", "", `"scopes":["admin"]`),
			400, oauthErr("invalid_scope", `unknown scope \"admin\"`)},
		{"scopes not a list", "/oauth/token", jsonType, jsonGrant("client_credentials", "", `"scopes":"books:read"`),
			400, oauthErr("invalid_request", "scopes must be a JSON array of strings")},
		{"no body", "/oauth/token", jsonType, ``,
			400, oauthErr("invalid_request", "send a JSON or form-encoded body")},
		{"rotating client credentials", "/oauth/rotating/token", jsonType, jsonGrant("client_credentials", ""),
			400, oauthErr("unsupported_grant_type", "this endpoint only accepts grant_type refresh_token")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := e.token(tt.path, tt.ctype, tt.body)
			r.want(t, tt.status, tt.want)
		})
	}
	e.get("/oauth/token").wantStatus(t, 405)
	if s := e.srv.Stats(); s.TokenErrors != len(tests)+1 || s.RefreshTokenGrants != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestOAuthRotation(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	r, first := e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", DemoRotatingRefreshToken))
	r.wantStatus(t, 200)
	if first.RefreshToken == DemoRotatingRefreshToken || !strings.HasPrefix(first.RefreshToken, "demo-rotated-1-") {
		t.Fatalf("refresh token not rotated: %+v", first)
	}
	e.oauthData(first.AccessToken).wantStatus(t, 200)

	invalid := `{"error":"invalid_grant","error_description":"refresh token is unknown or was already used"}` + "\n"
	r, _ = e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", DemoRotatingRefreshToken))
	r.want(t, 400, invalid)

	r, second := e.token("/oauth/rotating/token", formType, "grant_type=refresh_token&client_id="+DemoClientID+
		"&client_secret="+DemoClientSecret+"&refresh_token="+first.RefreshToken)
	r.wantStatus(t, 200)
	if !strings.HasPrefix(second.RefreshToken, "demo-rotated-2-") {
		t.Fatalf("second rotation: %+v", second)
	}
	r, _ = e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", first.RefreshToken))
	r.want(t, 400, invalid)

	// A forged generation is refused; the issued one still works once.
	r, _ = e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", "demo-rotated-3-000000000000"))
	r.want(t, 400, invalid)
	r, _ = e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", second.RefreshToken))
	r.wantStatus(t, 200)

	// The reusable demo refresh token is not part of the rotating chain.
	r, _ = e.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", DemoRefreshToken))
	r.want(t, 400, invalid)

	// A restarted server accepts a stored, unspent token of the chain.
	e2 := newEnv(t, Options{Records: 3})
	r, _ = e2.token("/oauth/rotating/token", jsonType, jsonGrant("refresh_token", second.RefreshToken))
	r.wantStatus(t, 200)

	if s := e.srv.Stats(); s.RefreshTokenGrants != 3 || s.TokenErrors != 4 {
		t.Fatalf("stats %+v", s)
	}
}

func TestOAuthDatedExpiry(t *testing.T) {
	e := newEnv(t, Options{Records: 3, AccessTokenTTL: 2 * time.Hour})
	r, a := e.token("/oauth/dated/token", jsonType, jsonGrant("refresh_token", DemoRefreshToken))
	r.want(t, 200, `{"access_token":"demo-access-000001","token_type":"Bearer","expires_at":"2026-01-02T17:04:05Z","refresh_token":"demo-refresh-token"}`+"\n")
	e.oauthData(a.AccessToken).wantStatus(t, 200)
	e.clock.Advance(2 * time.Hour)
	e.oauthData(a.AccessToken).wantStatus(t, 401)
}

func TestSessionToken(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	login := `{"username":"` + DemoUsername + `","password":"` + DemoPassword + `"}`
	r := e.do(req{method: "POST", url: "/auth/login", header: map[string]string{"Content-Type": jsonType}, body: login})
	r.want(t, 200, `{"data":{"session":{"token":"demo-session-000001","expires_in":1800}}}`+"\n")
	const tok = "demo-session-000001"

	e.do(req{url: "/v1/session/books?limit=1", header: map[string]string{"X-Session-Token": tok}}).want(t, 200, onePage)
	e.get("/v1/session/books?limit=1&session_token="+tok).want(t, 200, onePage)
	e.do(req{url: "/v1/session/books?limit=1", header: map[string]string{"Authorization": "Bearer " + tok}}).want(t, 200, onePage)
	e.do(req{url: "/v1/session/books", header: map[string]string{"X-Session-Token": "nope"}}).want(t, 401, unauthorizedBody("unknown session token"))
	e.get("/v1/session/books").want(t, 401,
		unauthorizedBody("missing session token: send it in X-Session-Token, ?session_token= or Authorization: Bearer"))

	e.clock.Advance(30 * time.Minute)
	e.do(req{url: "/v1/session/books", header: map[string]string{"X-Session-Token": tok}}).want(t, 401,
		`{"error":"token_expired","message":"session token expired at 2026-01-02T15:34:05Z"}`+"\n")

	// GET with Basic, and a form body, log in too.
	r = e.do(req{url: "/auth/login", user: DemoUsername, password: DemoPassword})
	r.want(t, 200, `{"data":{"session":{"token":"demo-session-000002","expires_in":1800}}}`+"\n")
	e.do(req{url: "/v1/session/books?limit=1", header: map[string]string{"X-Session-Token": "demo-session-000002"}}).wantStatus(t, 200)
	e.do(req{method: "POST", url: "/auth/login", header: map[string]string{"Content-Type": formType},
		body: "username=demo&password=demo-password"}).wantStatus(t, 200)

	bad := `{"error":"invalid_credentials","message":"invalid username or password"}` + "\n"
	e.do(req{method: "POST", url: "/auth/login", header: map[string]string{"Content-Type": jsonType}, body: `{"username":"demo","password":"nope"}`}).want(t, 401, bad)
	e.do(req{url: "/auth/login", user: DemoUsername, password: "nope"}).want(t, 401, bad)
	e.get("/auth/login").want(t, 401, unauthorizedBody("GET /auth/login needs Basic credentials"))

	if s := e.srv.Stats(); s.Logins != 3 || s.FailedLogins != 3 || s.DataRequests != 4 {
		t.Fatalf("stats %+v", s)
	}
}

func TestSessionTTLOption(t *testing.T) {
	e := newEnv(t, Options{SessionTTL: time.Minute})
	r := e.do(req{url: "/auth/login", user: DemoUsername, password: DemoPassword})
	r.want(t, 200, `{"data":{"session":{"token":"demo-session-000001","expires_in":60}}}`+"\n")
	e.clock.Advance(59 * time.Second)
	e.get("/v1/session/books?session_token=demo-session-000001").wantStatus(t, 200)
	e.clock.Advance(time.Second)
	e.get("/v1/session/books?session_token=demo-session-000001").wantStatus(t, 401)
}

func TestLogRedactsCredentials(t *testing.T) {
	var log bytes.Buffer
	e := newEnv(t, Options{Records: 3, Log: &log})
	e.get("/v1/apikey-query/books?limit=1&api_key=" + DemoAPIKey)
	e.get("/v1/session/books?session_token=x")
	e.get("/")
	want := "GET /v1/apikey-query/books?api_key=%2A%2A%2A%2A&limit=1 200\n" +
		"GET /v1/session/books?session_token=%2A%2A%2A%2A 401\n" +
		"GET / 200\n"
	if log.String() != want {
		t.Fatalf("log\n%s\nwant\n%s", log.String(), want)
	}
}

func TestConcurrentRequests(t *testing.T) {
	e := newEnv(t, Options{Records: 3})
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 5 {
				e.do(req{url: "/auth/login", user: DemoUsername, password: DemoPassword})
				e.do(req{method: "POST", url: "/oauth/token", header: map[string]string{"Content-Type": jsonType},
					body: jsonGrant("client_credentials", "")})
			}
		}()
	}
	for range 8 {
		<-done
	}
	if s := e.srv.Stats(); s.Logins != 40 || s.ClientCredentialsGrants != 40 || s.Requests != 80 {
		t.Fatalf("stats %+v", s)
	}
}
