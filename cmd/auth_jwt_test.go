package cmd

import (
	"crypto"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// jwtParts splits a compact JWT and decodes its claims.
func jwtParts(t *testing.T, tok string) (header, claims string, input string, sig []byte) {
	t.Helper()
	p := strings.Split(tok, ".")
	if len(p) != 3 {
		t.Fatalf("not a JWT: %q", tok)
	}
	h, err1 := base64.RawURLEncoding.DecodeString(p[0])
	c, err2 := base64.RawURLEncoding.DecodeString(p[1])
	s, err3 := base64.RawURLEncoding.DecodeString(p[2])
	if err1 != nil || err2 != nil || err3 != nil {
		t.Fatalf("not base64url: %q", tok)
	}
	return string(h), string(c), p[0] + "." + p[1], s
}

// TestJwtAuthenticatorSignsEachRequest: the API receives `Authorization: Bearer <JWT>`, an
// HS256 token over the definition's header and claims that the shared key verifies, with
// iat and nbf the time of the request and exp token_duration later; neither the key nor the
// token appears in anything the command prints.
func TestJwtAuthenticatorSignsEachRequest(t *testing.T) {
	const key = "hmac-secret-key-0123"
	var auths []string
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		auths = append(auths, r.Header.Get("Authorization"))
		if r.URL.Query().Get("page") == "" {
			w.Write([]byte(`{"data":[{"id":1}],"next":2}`))
			return
		}
		w.Write([]byte(`{"data":[{"id":2}]}`))
	})
	def := e2eOneStream(`
type: HttpRequester
url_base: "{{ config['base_url'] }}"
path: /items
authenticator:
  type: JwtAuthenticator
  secret_key: "{{ config['jwt_key'] }}"
  algorithm: HS256
  token_duration: 600
  header_prefix: Bearer
  jwt_headers: {kid: "{{ config['kid'] }}"}
  jwt_payload: {iss: "{{ config['issuer'] }}", aud: api.example}
  additional_jwt_payload: {scope: read}
`, e2eDataPath) + `      paginator:
        type: DefaultPaginator
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
`
	before := time.Now().Unix()
	res := e2eRead(t, api, def, "jwt_key: "+key+"\nkid: k1\nissuer: svc@example\n")
	after := time.Now().Unix()
	e2eCheckResult(t, api, res, 0, "{\"id\":1}\n{\"id\":2}\n", "")
	if len(auths) != 2 {
		t.Fatalf("%d requests", len(auths))
	}
	for _, a := range auths {
		tok, ok := strings.CutPrefix(a, "Bearer ")
		if !ok {
			t.Fatalf("Authorization %q", a)
		}
		h, c, input, sig := jwtParts(t, tok)
		if h != `{"alg":"HS256","kid":"k1","typ":"JWT"}` {
			t.Errorf("header %s", h)
		}
		m := hmac.New(sha256.New, []byte(key))
		m.Write([]byte(input))
		if !hmac.Equal(sig, m.Sum(nil)) {
			t.Errorf("the signature does not verify with the key")
		}
		var claims struct {
			Scope, Iss, Aud string
			Iat, Exp, Nbf   int64
		}
		if err := json.Unmarshal([]byte(c), &claims); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(c, `{"scope":"read","iss":"svc@example","aud":"api.example","iat":`) ||
			claims.Iat < before || claims.Iat > after || claims.Nbf != claims.Iat || claims.Exp != claims.Iat+600 {
			t.Errorf("claims %s (run between %d and %d)", c, before, after)
		}
	}

	// paginate-trace prints each request; the key and the tokens are masked.
	api2 := newRecorder(t, e2eAnswer(`{"data":[{"id":1}]}`))
	vals := writeFile(t, "values.yaml", "base_url: "+api2.URL+"\njwt_key: "+key+"\nkid: k1\nissuer: svc@example\n")
	tr := runCLI(t, "", "paginate-trace", writeFile(t, "def.yaml", def), "--testing-values", vals)
	sent := api2.requests()
	if len(sent) != 1 {
		t.Fatalf("%d requests; stderr %s", len(sent), tr.Stderr)
	}
	tok := strings.TrimPrefix(sent[0].Header.Get("Authorization"), "Bearer ")
	out := tr.Stdout + tr.Stderr
	if strings.Contains(out, key) || strings.Contains(out, tok) || strings.Contains(out, strings.Split(tok, ".")[2]) {
		t.Errorf("the key or the token is printed:\n%s", out)
	}
}

// TestJwtProfileAssertionInSelectiveAuthenticator is google-search-console's `Service`
// alternative: an OAuthAuthenticator whose token request carries a JWT signed with the
// service account's RS256 key (JWT bearer grant).
func TestJwtProfileAssertionInSelectiveAuthenticator(t *testing.T) {
	rk, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, _ := x509.MarshalPKCS8PrivateKey(rk)
	keyPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}))
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/token" {
			w.Write([]byte(`{"access_token":"access-tok-9","expires_in":3600}`))
			return
		}
		w.Write([]byte(`[{"id":1}]`))
	})
	info, _ := json.Marshal(map[string]string{"private_key": keyPEM, "client_email": "svc@proj.iam", "token_uri": api.URL + "/token"})
	def := e2eOneStream(`
type: HttpRequester
url_base: "{{ config['base_url'] }}"
path: /items
authenticator:
  type: SelectiveAuthenticator
  authenticator_selection_path: ["authorization", "auth_type"]
  authenticators:
    Client:
      type: OAuthAuthenticator
      client_id: "{{ config.get('authorization', {}).get('client_id') }}"
      client_secret: "{{ config.get('authorization', {}).get('client_secret') }}"
      refresh_token: "{{ config.get('authorization', {}).get('refresh_token') }}"
      token_refresh_endpoint: "{{ config['base_url'] }}/token"
    Service:
      type: OAuthAuthenticator
      token_refresh_endpoint: "{{ config['base_url'] }}/token"
      refresh_request_headers:
        Content-Type: application/x-www-form-urlencoded
      use_profile_assertion: true
      profile_assertion:
        type: JwtAuthenticator
        secret_key: "{{ json_loads(config.get('authorization', {}).get('service_account_info', {})).get('private_key') }}"
        algorithm: "RS256"
        token_duration: 3600
        jwt_payload:
          aud: "{{ json_loads(config.get('authorization', {}).get('service_account_info', {})).get('token_uri') }}"
          iss: "{{ json_loads(config.get('authorization', {}).get('service_account_info', {})).get('client_email') }}"
        additional_jwt_payload:
          scope: "https://www.googleapis.com/auth/webmasters.readonly"
`, e2eWholeBody)
	quoted, _ := json.Marshal(string(info))
	res := e2eRead(t, api, def, "authorization:\n  auth_type: Service\n  service_account_info: "+string(quoted)+"\n")
	e2eCheckResult(t, api, res, 0, "{\"id\":1}\n", "")
	got := api.requests()
	if len(got) != 2 || got[0].Method != "POST" || got[0].URL != "/token" || got[1].URL != "/items" {
		t.Fatalf("requests %+v", got)
	}
	if a := got[1].Header.Get("Authorization"); a != "Bearer access-tok-9" {
		t.Errorf("data request Authorization %q", a)
	}
	form, _ := url.ParseQuery(got[0].Body)
	if len(form) != 2 || form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Fatalf("token request body %s", got[0].Body)
	}
	h, c, input, sig := jwtParts(t, form.Get("assertion"))
	d := sha256.Sum256([]byte(input))
	if err := rsa.VerifyPKCS1v15(&rk.PublicKey, crypto.SHA256, d[:], sig); err != nil {
		t.Errorf("the assertion does not verify: %v", err)
	}
	wantClaims := `{"scope":"https://www.googleapis.com/auth/webmasters.readonly","iss":"svc@proj.iam","aud":"` + api.URL + `/token","iat":`
	if h != `{"alg":"RS256","typ":"JWT"}` || !strings.HasPrefix(c, wantClaims) {
		t.Errorf("header %s claims %s", h, c)
	}
}
