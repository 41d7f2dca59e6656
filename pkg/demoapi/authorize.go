package demoapi

import (
	"crypto/sha256"
	"encoding/base64"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// DemoDenyClientID is a client the consent page always refuses (error=access_denied), so
// the refusal path of an OAuth flow can be tried; ?deny=1 on /oauth/authorize does the same
// for any client.
const DemoDenyClientID = "demo-client-deny"

// CodeTTL is how long an authorization code from /oauth/authorize can be exchanged.
const CodeTTL = 10 * time.Minute

// authCode is an issued authorization code, bound to what the consent request said.
type authCode struct {
	clientID    string
	redirectURI string
	challenge   string // PKCE code_challenge (S256), empty when none was sent
	scope       string
	expires     time.Time
}

// authorize serves GET /oauth/authorize, the consent page of the authorization-code flow. It
// grants at once (there is no one to ask) and redirects to redirect_uri with code and state,
// or with error=access_denied for DemoDenyClientID and ?deny=1. Only loopback redirect URIs
// are accepted.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return
	}
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	if err != nil || redirect.Scheme != "http" || !loopback(redirect.Hostname()) {
		writeError(w, http.StatusBadRequest, "invalid_request", "redirect_uri must be an http:// URL on 127.0.0.1, localhost or [::1]")
		return
	}
	clientID := q.Get("client_id")
	if clientID != DemoClientID && clientID != DemoDenyClientID {
		writeError(w, http.StatusBadRequest, "invalid_client", "unknown client_id")
		return
	}
	if rt := q.Get("response_type"); rt != "" && rt != "code" {
		writeError(w, http.StatusBadRequest, "unsupported_response_type", "response_type must be code")
		return
	}
	challenge := q.Get("code_challenge")
	if m := q.Get("code_challenge_method"); challenge != "" && m != "" && m != "S256" {
		writeError(w, http.StatusBadRequest, "invalid_request", "code_challenge_method must be S256")
		return
	}
	back := redirect.Query()
	if st := q.Get("state"); st != "" {
		back.Set("state", st)
	}
	if clientID == DemoDenyClientID || q.Get("deny") != "" {
		back.Set("error", "access_denied")
		back.Set("error_description", "the user denied access")
	} else {
		for _, sc := range strings.Fields(q.Get("scope")) {
			if !allowedScope(sc) {
				back.Set("error", "invalid_scope")
				back.Set("error_description", "unknown scope "+quote(sc))
			}
		}
	}
	if back.Get("error") == "" {
		s.mu.Lock()
		if s.codes == nil {
			s.codes = map[string]authCode{}
		}
		code, _ := s.issue(map[string]time.Time{}, "demo-code", 0)
		s.codes[code] = authCode{clientID: clientID, redirectURI: q.Get("redirect_uri"), challenge: challenge,
			scope: q.Get("scope"), expires: s.opts.Now().Add(CodeTTL)}
		s.mu.Unlock()
		back.Set("code", code)
	}
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// codeToken serves POST /oauth/code/token: grant_type=authorization_code with code,
// redirect_uri (as sent to /oauth/authorize), the client credentials (body or Basic) and
// code_verifier when a code_challenge was sent. Codes are single-use. The access token works
// on /v1/oauth/*.
func (s *Server) codeToken(w http.ResponseWriter, r *http.Request) {
	entry := TokenRequest{Endpoint: r.URL.Path}
	f, err := s.exchangeCode(w, r)
	if f != nil {
		entry.ContentType, entry.GrantType, entry.ClientID = f.contentType, f.grantType, f.clientID
	}
	entry.Status = http.StatusOK
	s.mu.Lock()
	if err != nil {
		entry.Status = err.status
		s.stats.TokenErrors++
	}
	s.tokenLog = append(s.tokenLog, entry)
	s.mu.Unlock()
	if err != nil {
		err.write(w)
	}
}

func (s *Server) exchangeCode(w http.ResponseWriter, r *http.Request) (*tokenForm, *apiError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return nil, oauthError(http.StatusMethodNotAllowed, "invalid_request", "use POST")
	}
	q, err := readRequest(r)
	if err != nil {
		err.oauth, err.code = true, "invalid_request"
		return nil, err
	}
	get := func(name string) string {
		if q.form != nil {
			return q.form.Get(name)
		}
		v, _ := q.json[name].(string)
		return v
	}
	f := &tokenForm{contentType: "json", clientID: get("client_id"), clientSecret: get("client_secret"), grantType: get("grant_type")}
	switch {
	case q.form != nil:
		f.contentType = "form"
	case q.json == nil:
		f.contentType = mediaType(r)
		return f, oauthError(http.StatusBadRequest, "invalid_request", "send a JSON or form-encoded body")
	}
	if user, pass, ok := r.BasicAuth(); ok {
		f.clientID, f.clientSecret = user, pass
	}
	if !same(f.clientID, DemoClientID) || !same(f.clientSecret, DemoClientSecret) {
		return f, oauthError(http.StatusUnauthorized, "invalid_client", "unknown client_id or wrong client_secret")
	}
	if f.grantType != "authorization_code" {
		return f, oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be authorization_code")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	code, ok := s.codes[get("code")]
	if !ok || !s.opts.Now().Before(code.expires) || code.clientID != f.clientID {
		return f, oauthError(http.StatusBadRequest, "invalid_grant", "the authorization code is unknown, expired or already used")
	}
	delete(s.codes, get("code"))
	if get("redirect_uri") != code.redirectURI {
		return f, oauthError(http.StatusBadRequest, "invalid_grant", "redirect_uri differs from the one sent to /oauth/authorize")
	}
	if code.challenge != "" {
		sum := sha256.Sum256([]byte(get("code_verifier")))
		if get("code_verifier") == "" || !same(base64.RawURLEncoding.EncodeToString(sum[:]), code.challenge) {
			return f, oauthError(http.StatusBadRequest, "invalid_grant", "code_verifier does not match the code_challenge")
		}
	}
	secs := int(s.opts.AccessTokenTTL / time.Second)
	resp := tokenResponse{TokenType: "Bearer", ExpiresIn: &secs, RefreshToken: DemoRefreshToken, Scope: code.scope}
	resp.AccessToken, _ = s.issue(s.accessTokens, "demo-access", s.opts.AccessTokenTTL)
	writeJSON(w, http.StatusOK, resp)
	return f, nil
}
