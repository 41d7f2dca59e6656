package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/redact"
	"connector/pkg/request"
	"connector/pkg/template"
)

// seen is one request an endpoint received.
type seen struct {
	Method, URL, ContentType, Authorization, Body string
}

// endpoint is a local token or login endpoint: it answers with the statuses and bodies it
// was given, one per request (the last one again when they run out), and keeps every
// request.
type endpoint struct {
	*httptest.Server
	mu      sync.Mutex
	answers []answer
	got     []seen
}

type answer struct {
	status int
	body   string
}

func newEndpoint(t *testing.T, answers ...answer) *endpoint {
	e := &endpoint{answers: answers}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		e.mu.Lock()
		e.got = append(e.got, seen{r.Method, r.URL.RequestURI(), r.Header.Get("Content-Type"), r.Header.Get("Authorization"), string(body)})
		a := e.answers[min(len(e.got), len(e.answers))-1]
		e.mu.Unlock()
		w.WriteHeader(a.status)
		fmt.Fprint(w, a.body)
	}))
	t.Cleanup(e.Close)
	return e
}

func (e *endpoint) requests() []seen {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]seen(nil), e.got...)
}

// build builds an authenticator from the authenticator YAML, with config as testing values.
func build(t *testing.T, authYAML string, config map[string]any, c *clock, updated func([]Update) error) (Authenticator, *redact.Redactor, error) {
	t.Helper()
	r := &redact.Redactor{}
	if c == nil {
		c = &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	}
	a, err := New(loadAuth(t, authYAML), Env{
		Globals: template.Globals{Config: config}, Client: &httpx.Client{HTTP: http.DefaultClient, MaxRetries: -1, Redactor: r}, Redactor: r,
		Now: c.Now, ConfigUpdated: updated,
	})
	return a, r, err
}

// applied applies a to a GET of https://api.test/data and returns the request as built.
func applied(t *testing.T, a Authenticator) *httpx.Request {
	t.Helper()
	b := request.New("data", "GET", "https://api.test/data")
	if err := a.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	req, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func TestStaticAuthenticators(t *testing.T) {
	config := map[string]any{"user": "alice", "pass": "pw:é 1", "token": "tok-123", "where": "X-Key"}
	for _, tt := range []struct {
		name, yaml, typ string
		url             string
		header          http.Header
		secrets         string // what the redactor prints for "alice pw:é 1 tok-123"
	}{
		{"no authentication", `
    type: NoAuth`, "NoAuth", "https://api.test/data", http.Header{}, "alice pw:é 1 tok-123"},
		{"Basic: user and password exactly as written", `
    type: BasicHttpAuthenticator
    username: "{{ config.user }}"
    password: "{{ config.pass }}"`, "BasicHttpAuthenticator", "https://api.test/data",
			http.Header{"Authorization": {"Basic YWxpY2U6cHc6w6kgMQ=="}}, "**** **** tok-123"},
		{"Bearer", `
    type: BearerAuthenticator
    api_token: "{{ config.token }}"`, "BearerAuthenticator", "https://api.test/data",
			http.Header{"Authorization": {"Bearer tok-123"}}, "alice pw:é 1 ****"},
		{"an API key in a header named by a template", `
    type: ApiKeyAuthenticator
    api_token: "{{ config.token }}"
    inject_into: {type: RequestOption, inject_into: header, field_name: "{{ config.where }}"}`, "ApiKeyAuthenticator", "https://api.test/data",
			http.Header{"X-Key": {"tok-123"}}, "alice pw:é 1 ****"},
		{"OAuth without token_refresh_endpoint: access_token_value as a bearer token, as the CDK's access token flow (ticktick)", `
    type: OAuthAuthenticator
    client_id: "{{ config.user }}"
    client_secret: "{{ config.nope) }}"
    grant_type: client_credentials
    access_token_value: "{{ config.token }}"`, "OAuthAuthenticator", "https://api.test/data",
			http.Header{"Authorization": {"Bearer tok-123"}}, "alice pw:é 1 ****"},
		{"an API key in the query", `
    type: ApiKeyAuthenticator
    api_token: "{{ config.token }}"
    inject_into: {type: RequestOption, inject_into: request_parameter, field_name: api_key}`, "ApiKeyAuthenticator", "https://api.test/data?api_key=tok-123",
			http.Header{}, "alice pw:é 1 ****"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a, r, err := build(t, tt.yaml, config, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != tt.typ {
				t.Errorf("Name() = %s, want %s", a.Name(), tt.typ)
			}
			req := applied(t, a)
			if req.URL != tt.url || !reflect.DeepEqual(req.Header, tt.header) {
				t.Errorf("request %s %v, want %s %v", req.URL, req.Header, tt.url, tt.header)
			}
			if got := r.String("alice pw:é 1 tok-123"); got != tt.secrets {
				t.Errorf("redacted %q, want %q", got, tt.secrets)
			}
		})
	}
	if a, err := New(nil, Env{}); err != nil || a.Name() != "NoAuth" {
		t.Errorf("New(nil) = %v, %v", a, err)
	}
}

// Testing values that cannot work are found before any request, with a message that says
// which field and what to do.
func TestAuthenticatorConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		config     map[string]any
		want       string
		authErr    bool
	}{
		{"an empty Bearer token", `
    type: BearerAuthenticator
    api_token: "{{ config.token }}"`, map[string]any{}, "authentication failed: BearerAuthenticator: api_token {{ config.token }} renders empty; set it in the testing values", true},
		{"an empty API key", `
    type: ApiKeyAuthenticator
    api_token: "{{ config.token }}"
    inject_into: {type: RequestOption, inject_into: header, field_name: X-Key}`, map[string]any{"token": ""},
			"authentication failed: ApiKeyAuthenticator: api_token {{ config.token }} renders empty; set it in the testing values", true},
		{"an API key option without a name", `
    type: ApiKeyAuthenticator
    api_token: "{{ config.token }}"
    inject_into: {type: RequestOption, inject_into: header, field_name: "{{ config.none }}"}`, map[string]any{"token": "k-1"},
			"ApiKeyAuthenticator: the request option has an empty field name", false},
		{"an empty token endpoint", `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config.endpoint }}"
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    refresh_token: "{{ config.refresh }}"`, map[string]any{"endpoint": "  "},
			"OAuthAuthenticator: token_refresh_endpoint renders empty; check the testing values", false},
		{"no refresh token for the refresh_token grant", `
    type: OAuthAuthenticator
    token_refresh_endpoint: https://auth.test/token
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    refresh_token: "{{ config.refresh }}"`, map[string]any{"id": "cid", "secret": "csecret"},
			"the OAuth grant type refresh_token needs a refresh token, but refresh_token ({{ config.refresh }}) is empty in the testing values; set it, or use grant_type client_credentials", false},
		{"an empty access token in the access token flow", `
    type: OAuthAuthenticator
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    access_token_value: "{{ config.access }}"`, map[string]any{"id": "cid", "secret": "csecret"},
			"OAuthAuthenticator has no token_refresh_endpoint, so access_token_value ({{ config.access }}) is the token, and it is empty in the testing values; set it", false},
		{"a stored expiry that is not a date", `
    type: OAuthAuthenticator
    token_refresh_endpoint: https://auth.test/token
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    refresh_token: "{{ config.refresh }}"
    access_token_value: "{{ config.access }}"
    token_expiry_date: "{{ config.expiry }}"`, map[string]any{"id": "cid", "secret": "csecret", "refresh": "rtok", "access": "atok", "expiry": "next tuesday"},
			`OAuthAuthenticator: the stored token expiry "next tuesday": not a date (write it as RFC 3339, e.g. 2026-01-02T15:04:05Z)`, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := build(t, tt.yaml, tt.config, nil, nil)
			if err == nil || err.Error() != tt.want {
				t.Fatalf("error %v\nwant  %s", err, tt.want)
			}
			if IsAuthError(err) != tt.authErr {
				t.Errorf("IsAuthError = %v, want %v", IsAuthError(err), tt.authErr)
			}
			var ce *ConfigError
			if strings.HasPrefix(tt.name, "no refresh token") && !errors.As(err, &ce) {
				t.Errorf("%T, want a *ConfigError", err)
			}
		})
	}
}

const refreshYAML = `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config.base }}/token"
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    refresh_token: "{{ config.refresh }}"`

func refreshConfig(base string) map[string]any {
	return map[string]any{"base": base, "id": "cid", "secret": "csecret", "refresh": "rtok"}
}

// The token requests as sent: a JSON body by default, a form when the refresh request
// headers ask for one, with the names, scopes and extra fields the definition gives.
func TestOAuthTokenRequests(t *testing.T) {
	for _, tt := range []struct {
		name, yaml string
		config     map[string]any
		want       seen
		redacted   string // what the redactor prints for "cid csecret rtok Basic Y2lkOmNzZWNyZXQ= aud-1"
	}{
		{"refresh_token grant, JSON", refreshYAML, nil,
			seen{Method: "POST", URL: "/token", ContentType: "application/json",
				Body: `{"client_id":"cid","client_secret":"csecret","refresh_token":"rtok","grant_type":"refresh_token"}`},
			"**** **** **** Basic **** aud-1"}, // base64 of a secret is masked whole
		{"client_credentials, a form, other names, scopes, extra fields and headers", `
    type: OAuthAuthenticator
    token_refresh_endpoint: "  {{ config.base }}/oauth/token?v=2  "
    grant_type: client_credentials
    client_id: "{{ config.id }}"
    client_secret: "{{ config.secret }}"
    client_id_name: app_id
    client_secret_name: app_secret
    scopes: [read, "{{ config.scope }}", "{{ config.none }}"]
    refresh_request_headers:
      Content-Type: application/x-www-form-urlencoded
      Authorization: "Basic {{ (config.id ~ ':' ~ config.secret) | base64encode }}"
    refresh_request_body:
      audience: "{{ config.audience }}"
      empty: "{{ config.none }}"`, map[string]any{"scope": "write", "audience": "aud-1"},
			seen{Method: "POST", URL: "/oauth/token?v=2", ContentType: "application/x-www-form-urlencoded",
				Authorization: "Basic Y2lkOmNzZWNyZXQ=",
				Body:          "app_id=cid&app_secret=csecret&grant_type=client_credentials&scopes=read&scopes=write&audience=aud-1"},
			"**** **** rtok **** aud-1"}, // rtok is not read; audience is not a credential
		{"refresh_request_body naming a field the authenticator sets (basecamp): the authenticator's wins, as in the CDK", refreshYAML + `
    refresh_request_body:
      type: refresh
      refresh_token: "{{ config.audience }}"`, map[string]any{"audience": "aud-1"},
			seen{Method: "POST", URL: "/token", ContentType: "application/json",
				Body: `{"client_id":"cid","client_secret":"csecret","refresh_token":"rtok","grant_type":"refresh_token","type":"refresh"}`},
			"**** **** **** Basic **** ****"}, // aud-1 fills a refresh_token field: a secret
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, answer{200, `{"access_token":"at-1","expires_in":3600}`})
			config := refreshConfig(e.URL)
			for k, v := range tt.config {
				config[k] = v
			}
			a, r, err := build(t, tt.yaml, config, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != "OAuthAuthenticator" {
				t.Errorf("Name() = %s", a.Name())
			}
			if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-1" {
				t.Errorf("data request Authorization %q", got)
			}
			if got := e.requests(); !reflect.DeepEqual(got, []seen{tt.want}) {
				t.Errorf("token requests\n%+v\nwant\n%+v", got, []seen{tt.want})
			}
			if got := r.String("cid csecret rtok Basic Y2lkOmNzZWNyZXQ= aud-1"); got != tt.redacted {
				t.Errorf("redacted %q, want %q", got, tt.redacted)
			}
		})
	}
}

const updaterYAML = refreshYAML + `
    refresh_token_updater:
      refresh_token_name: new_refresh
      refresh_token_config_path: [credentials, refresh_token]`

// A token endpoint that rotates the refresh token: the new one is sent next time, and the
// new tokens and expiry are written back through ConfigUpdated.
func TestOAuthRotationWritesBack(t *testing.T) {
	e := newEndpoint(t,
		answer{200, `{"access_token":"at-1","new_refresh":"r-2","expires_in":3600}`},
		answer{200, `{"access_token":"at-2","expires_in":"60"}`})
	config := refreshConfig(e.URL)
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	var updates [][]Update
	a, r, err := build(t, updaterYAML, config, c, func(u []Update) error {
		updates = append(updates, u)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-1" {
		t.Fatalf("first token %q", got)
	}
	c.advance(time.Hour)
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-2" {
		t.Fatalf("second token %q", got)
	}
	bodies := []string{}
	for _, s := range e.requests() {
		bodies = append(bodies, s.Body)
	}
	want := []string{
		`{"client_id":"cid","client_secret":"csecret","refresh_token":"rtok","grant_type":"refresh_token"}`,
		`{"client_id":"cid","client_secret":"csecret","refresh_token":"r-2","grant_type":"refresh_token"}`,
	}
	if !reflect.DeepEqual(bodies, want) {
		t.Errorf("token request bodies\n%q\nwant\n%q", bodies, want)
	}
	wantUpdates := [][]Update{
		{{Path: []string{"credentials", "refresh_token"}, Value: "r-2"},
			{Path: []string{"credentials", "access_token"}, Value: "at-1"},
			{Path: []string{"credentials", "token_expiry_date"}, Value: "2026-01-01T01:00:00Z"}},
		{{Path: []string{"credentials", "refresh_token"}, Value: "r-2"},
			{Path: []string{"credentials", "access_token"}, Value: "at-2"},
			{Path: []string{"credentials", "token_expiry_date"}, Value: "2026-01-01T01:01:00Z"}},
	}
	if !reflect.DeepEqual(updates, wantUpdates) {
		t.Errorf("updates\n%v\nwant\n%v", updates, wantUpdates)
	}
	if got := r.String("at-1 at-2 r-2"); got != "**** **** ****" {
		t.Errorf("redacted %q", got)
	}
}

// The tokens the updater wrote last time are used while they are valid, without a request.
func TestOAuthStoredTokensOfTheUpdater(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"access_token":"at-new","expires_in":3600}`})
	for _, tt := range []struct {
		expiry string
		want   string
		asked  int
	}{
		{"2026-01-01T00:30:00Z", "Bearer at-stored", 0},
		{"1767225600", "Bearer at-new", 1}, // epoch seconds: 2026-01-01T00:00:00Z, expired now
		{"2026-01-01 00:10:00+00:00", "Bearer at-stored", 0},
	} {
		e.mu.Lock()
		e.got = nil
		e.mu.Unlock()
		config := refreshConfig(e.URL)
		config["credentials"] = map[string]any{"access_token": "at-stored", "token_expiry_date": tt.expiry}
		a, _, err := build(t, updaterYAML, config, nil, func([]Update) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		if got := applied(t, a).Header.Get("Authorization"); got != tt.want || len(e.requests()) != tt.asked {
			t.Errorf("expiry %s: %q after %d token requests, want %q after %d", tt.expiry, got, len(e.requests()), tt.want, tt.asked)
		}
	}
}

// A stored access token without an expiry cannot be trusted when a refresh could replace
// it: a token is fetched.
func TestOAuthStoredTokenWithoutExpiry(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"access_token":"at-new"}`})
	config := refreshConfig(e.URL)
	config["access"] = "at-stored"
	a, _, err := build(t, refreshYAML+`
    access_token_value: "{{ config.access }}"`, config, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-new" || len(e.requests()) != 1 {
		t.Errorf("%q after %d token requests, want a new token", got, len(e.requests()))
	}
}

// A token without an expiry is kept until the API refuses it; then Renew fetches another.
func TestOAuthTokenWithoutExpiryIsKeptUntilRenewed(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"access_token":"at-1"}`}, answer{200, `{"access_token":"at-2"}`})
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, _, err := build(t, refreshYAML, refreshConfig(e.URL), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	applied(t, a)
	c.advance(1000 * time.Hour)
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-1" || len(e.requests()) != 1 {
		t.Fatalf("%q after %d token requests", got, len(e.requests()))
	}
	if ok, err := a.(Retrier).Renew(context.Background()); !ok || err != nil {
		t.Fatalf("Renew: %v, %v", ok, err)
	}
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-2" || len(e.requests()) != 2 {
		t.Errorf("%q after %d token requests", got, len(e.requests()))
	}
}

// Token answers that cannot be used are authentication errors naming the endpoint, the
// status and the problem, with every secret masked.
func TestOAuthRefreshFailures(t *testing.T) {
	for _, tt := range []struct {
		name, extra string
		ans         answer
		want        string
	}{
		{"a refused refresh", "", answer{401, `{"error":"invalid_client","client_secret":"csecret"}`},
			`authentication failed: OAuth token refresh: 401 Unauthorized from POST URL/token: {"error":"invalid_client","client_secret":"****"}`},
		{"an answer that is not an object", "", answer{200, `["at-1"]`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: the answer is not a JSON object`},
		{"an answer that is not JSON", "", answer{200, `<html>`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: the answer is not a JSON object`},
		{"an answer nested too deep", "", answer{200, `{"a":` + strings.Repeat("[", 600) + strings.Repeat("]", 600) + `}`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: the answer is JSON nested deeper than 512 levels at byte 516, a limit of connector`},
		{"no access token", "", answer{200, `{"token":"at-1"}`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: no access token at "access_token" in the answer`},
		{"an empty access token", "", answer{200, `{"access_token":""}`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: no access token at "access_token" in the answer`},
		{"an expiry that is not a number", "", answer{200, `{"access_token":"at-1","expires_in":"soon"}`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: expires_in is "soon", not a number of seconds (set token_expiry_date_format when it is a date)`},
		{"an expiry that does not match its format", `
    token_expiry_date_format: "%Y-%m-%d"`, answer{200, `{"access_token":"at-1","expires_in":"01/02/2026"}`},
			`authentication failed: OAuth token refresh: 200 OK from POST URL/token: expires_in "01/02/2026" does not match token_expiry_date_format "%Y-%m-%d": `},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.ans)
			a, _, err := build(t, refreshYAML+tt.extra, refreshConfig(e.URL), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Apply(context.Background(), request.New("data", "GET", "https://api.test/"))
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), e.URL, "URL")
			}
			exact := !strings.HasSuffix(tt.want, ": ")
			if !IsAuthError(err) || exact && got != tt.want || !exact && !strings.HasPrefix(got, tt.want) {
				t.Errorf("error %s\nwant  %s", got, tt.want)
			}
			if ok, err := a.(Retrier).Renew(context.Background()); ok || !IsAuthError(err) {
				t.Errorf("Renew after a failure: %v, %v", ok, err)
			}
		})
	}
}

// A dotted access_token_name that is not a key of the answer is a path into it, and an
// expiry in a date format is read as such.
func TestOAuthNestedAnswer(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"data":{"token":"at-1","exp":["2026-01-01 02:00"]}}`})
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, _, err := build(t, refreshYAML+`
    access_token_name: data.token
    expires_in_name: data.exp.0
    token_expiry_date_format: "%Y-%m-%d %H:%M"`, refreshConfig(e.URL), c, nil)
	if err != nil {
		t.Fatal(err)
	}
	applied(t, a)
	c.advance(time.Hour + 59*time.Minute)
	if got := applied(t, a).Header.Get("Authorization"); got != "Bearer at-1" || len(e.requests()) != 1 {
		t.Errorf("at 01:59: %q after %d token requests", got, len(e.requests()))
	}
	c.advance(time.Second)
	if applied(t, a); len(e.requests()) != 2 {
		t.Errorf("at 02:00 (less than 60 s left): %d token requests, want 2", len(e.requests()))
	}
}

// Refreshed tokens that cannot be saved end the read with an error that says so.
func TestOAuthRotationThatCannotBeSaved(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"access_token":"at-1","new_refresh":"r-2"}`})
	a, _, err := build(t, updaterYAML, refreshConfig(e.URL), nil, func([]Update) error {
		return errors.New("open creds.yaml: permission denied (writing r-2)")
	})
	if err != nil {
		t.Fatal(err)
	}
	err = a.Apply(context.Background(), request.New("data", "GET", "https://api.test/"))
	want := "the token endpoint rotated the refresh token but it could not be saved: open creds.yaml: permission denied (writing ****)"
	if err == nil || err.Error() != want {
		t.Errorf("error %v\nwant  %s", err, want)
	}
}

// A token endpoint that cannot be reached is an authentication error; a cancelled read
// is the context's error.
func TestOAuthEndpointUnreachableOrCancelled(t *testing.T) {
	e := newEndpoint(t, answer{200, `{}`})
	url := e.URL
	e.Close()
	a, _, err := build(t, refreshYAML, refreshConfig(url), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = a.Apply(context.Background(), request.New("data", "GET", "https://api.test/"))
	host := strings.TrimPrefix(url, "http://")
	want := "authentication failed: OAuth token refresh: POST URL/token: connection refused by HOST (is the server running?)"
	if got := strings.ReplaceAll(strings.ReplaceAll(fmt.Sprint(err), url, "URL"), host, "HOST"); !IsAuthError(err) || got != want {
		t.Errorf("error %s\nwant  %s", got, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Apply(ctx, request.New("data", "GET", "https://api.test/")); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

const sessionYAML = `
    type: SessionTokenAuthenticator
    login_requester:
      type: HttpRequester
      url_base: "{{ config.base }}"
      path: /login
      http_method: POST
      authenticator:
        type: BasicHttpAuthenticator
        username: "{{ config.app }}"
        password: "{{ config.app_secret }}"
      request_headers:
        X-Login-Token: "{{ config.login_token }}"
        X-Region: "{{ config.region }}"
      request_body_json:
        user: "{{ config.user }}"
        password: "{{ config.password }}"
    session_token_path: [data, sessions, "0", id]
    expiration_duration: PT1H`

func sessionConfig(base string) map[string]any {
	return map[string]any{"base": base, "app": "app-1", "app_secret": "app-s3cret", "login_token": "lt-999",
		"region": "eu-west", "user": "alice", "password": "pw-s3cret"}
}

// The login request as sent, the token at session_token_path as a Bearer token or an API
// key, and every login value and the token itself registered as secrets.
func TestSessionLogin(t *testing.T) {
	e := newEndpoint(t, answer{200, `{"data":{"sessions":[{"id":"sess-1"}]}}`})
	for _, tt := range []struct {
		name, auth string
		url        string
		header     http.Header
	}{
		{"Bearer", `
    request_authentication: {type: Bearer}`, "https://api.test/data", http.Header{"Authorization": {"Bearer sess-1"}}},
		{"an API key in the query, written with a template", `
    request_authentication:
      type: ApiKey
      api_token: "Session {{ session_token }}"
      inject_into: {type: RequestOption, inject_into: request_parameter, field_name: session}`,
			"https://api.test/data?session=Session+sess-1", http.Header{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e.mu.Lock()
			e.got = nil
			e.mu.Unlock()
			a, r, err := build(t, sessionYAML+tt.auth, sessionConfig(e.URL), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a.Name() != "SessionTokenAuthenticator" {
				t.Errorf("Name() = %s", a.Name())
			}
			req := applied(t, a)
			if req.URL != tt.url || !reflect.DeepEqual(req.Header, tt.header) {
				t.Errorf("data request %s %v, want %s %v", req.URL, req.Header, tt.url, tt.header)
			}
			applied(t, a) // within the hour: no second login
			want := []seen{{Method: "POST", URL: "/login", ContentType: "application/json",
				Authorization: "Basic YXBwLTE6YXBwLXMzY3JldA==", Body: `{"user":"alice","password":"pw-s3cret"}`}}
			if got := e.requests(); !reflect.DeepEqual(got, want) {
				t.Errorf("login requests\n%+v\nwant\n%+v", got, want)
			}
			if got := r.String("app-1 app-s3cret lt-999 eu-west alice pw-s3cret sess-1"); got != "**** **** **** eu-west **** **** ****" {
				t.Errorf("redacted %q", got)
			}
		})
	}
}

func TestSessionLoginFailures(t *testing.T) {
	for _, tt := range []struct {
		name string
		ans  answer
		want string
	}{
		{"a refused login", answer{403, `{"error":"bad password pw-s3cret"}`},
			`authentication failed: session login: 403 Forbidden from POST URL/login: {"error":"bad password ****"}`},
		{"no token at the path", answer{200, `{"data":{"sessions":[]}}`},
			`authentication failed: session login: 200 OK from POST URL/login: no session token at session_token_path data.sessions.0.id`},
		{"an answer that is not an object", answer{200, `"sess-1"`},
			`authentication failed: session login: 200 OK from POST URL/login: the answer is not a JSON object, so there is no token at session_token_path data.sessions.0.id`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.ans)
			a, _, err := build(t, sessionYAML+`
    request_authentication: {type: Bearer}`, sessionConfig(e.URL), nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = a.Apply(context.Background(), request.New("data", "GET", "https://api.test/"))
			if err == nil || !IsAuthError(err) || strings.ReplaceAll(err.Error(), e.URL, "URL") != tt.want {
				t.Errorf("error %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// A token endpoint that refuses the seed's JSON body (400, 401 or 415) gets the same request
// form-encoded once, as the CDK sends it (Microsoft's and Spotify's endpoints want RFC 6749's
// form); the form is kept for the rest of the run, and said once. The Airbyte entry point
// sends the form from the start.
func TestOAuthFormEncodedWhenJSONIsRefused(t *testing.T) {
	const form = "client_id=cid&client_secret=csecret&refresh_token=rtok&grant_type=refresh_token"
	const json = `{"client_id":"cid","client_secret":"csecret","refresh_token":"rtok","grant_type":"refresh_token"}`
	// The order of CDK 7.28.2's body (its refresh requests as a local API saw them, in the
	// comparison of the Airbyte catalogue's definitions against the CDK).
	const cdkForm = "grant_type=refresh_token&client_id=cid&client_secret=csecret&refresh_token=rtok"
	for _, tt := range []struct {
		name      string
		formFirst bool
		answers   []answer
		want      []seen
		err       string
		notes     int
	}{
		{"400 to JSON, then the form, kept for the next refresh", false,
			[]answer{{400, `{"error":"invalid_request"}`}, {200, `{"access_token":"at-1","expires_in":60}`}, {200, `{"access_token":"at-2","expires_in":60}`}},
			[]seen{{Method: "POST", URL: "/token", ContentType: "application/json", Body: json},
				{Method: "POST", URL: "/token", ContentType: "application/x-www-form-urlencoded", Body: form},
				{Method: "POST", URL: "/token", ContentType: "application/x-www-form-urlencoded", Body: form}}, "", 1},
		{"415 to JSON and 400 to the form: the answer to JSON is the error", false,
			[]answer{{415, `{"error":"json"}`}, {400, `{"error":"form"}`}},
			[]seen{{Method: "POST", URL: "/token", ContentType: "application/json", Body: json},
				{Method: "POST", URL: "/token", ContentType: "application/x-www-form-urlencoded", Body: form}},
			`authentication failed: OAuth token refresh: 415 Unsupported Media Type from POST URL/token: {"error":"json"}`, 0},
		{"a 403 is no reason to change the body", false,
			[]answer{{403, `{"error":"forbidden"}`}},
			[]seen{{Method: "POST", URL: "/token", ContentType: "application/json", Body: json}},
			`authentication failed: OAuth token refresh: 403 Forbidden from POST URL/token: {"error":"forbidden"}`, 0},
		{"the Airbyte entry point: the form from the first request", true,
			[]answer{{200, `{"access_token":"at-1","expires_in":60}`}, {200, `{"access_token":"at-2","expires_in":60}`}},
			[]seen{{Method: "POST", URL: "/token", ContentType: "application/x-www-form-urlencoded", Body: cdkForm},
				{Method: "POST", URL: "/token", ContentType: "application/x-www-form-urlencoded", Body: cdkForm}}, "", 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newEndpoint(t, tt.answers...)
			c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
			r := &redact.Redactor{}
			var notes []string
			a, err := New(loadAuth(t, refreshYAML), Env{
				Globals: template.Globals{Config: refreshConfig(e.URL)}, Client: &httpx.Client{HTTP: http.DefaultClient, MaxRetries: -1, Redactor: r},
				Redactor: r, Now: c.Now, FormTokenRequests: tt.formFirst, Note: func(s string) { notes = append(notes, s) },
			})
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 2; i++ {
				b := request.New("data", "GET", "https://api.test/data")
				err = a.Apply(context.Background(), b)
				if err != nil {
					break
				}
				c.advance(2 * time.Minute) // past the expiry: the next request refreshes
			}
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), e.URL, "URL")
			}
			if got != tt.err {
				t.Errorf("error %q, want %q", got, tt.err)
			}
			if reqs := e.requests(); !reflect.DeepEqual(reqs, tt.want) {
				t.Errorf("token requests\n%+v\nwant\n%+v", reqs, tt.want)
			}
			if len(notes) != tt.notes {
				t.Errorf("notes %q, want %d", notes, tt.notes)
			}
			const note = "the OAuth token endpoint URL/token answered 400 Bad Request to a JSON body and took the form-encoded one (RFC 6749): token requests are form-encoded for the rest of the run"
			if len(notes) == 1 && strings.ReplaceAll(notes[0], e.URL, "URL") != note {
				t.Errorf("note %q\nwant %q", notes[0], note)
			}
		})
	}
}
