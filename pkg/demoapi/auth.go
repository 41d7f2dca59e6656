package demoapi

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// areaCheck authenticates a data request for one /v1/{area}/ prefix.
type areaCheck func(s *Server, r *http.Request, q *request) *apiError

var areas = map[string]areaCheck{
	"public":             func(*Server, *http.Request, *request) *apiError { return nil },
	"basic":              checkBasic,
	"bearer":             checkBearer,
	"apikey-header":      checkAPIKeyHeader,
	"apikey-query":       checkAPIKeyQuery,
	"apikey-form":        checkAPIKeyForm,
	"apikey-json":        checkAPIKeyJSON,
	"apikey-json-nested": checkAPIKeyJSONNested,
	"oauth":              checkOAuth,
	"session":            checkSession,
}

func unauthorized(message string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: "unauthorized", message: message}
}

func expired(message string) *apiError {
	return &apiError{status: http.StatusUnauthorized, code: "token_expired", message: message}
}

func same(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }

// basicAccountOK accepts demo/demo-password and reader with an empty password.
func basicAccountOK(user, pass string) bool {
	return (same(user, DemoUsername) && same(pass, DemoPassword)) ||
		(same(user, DemoReaderUsername) && pass == "")
}

func checkBasic(_ *Server, r *http.Request, _ *request) *apiError {
	challenge := map[string]string{"WWW-Authenticate": `Basic realm="bookshop"`}
	user, pass, ok := r.BasicAuth()
	if !ok {
		e := unauthorized("missing Basic credentials in the Authorization header")
		e.header = challenge
		return e
	}
	if !basicAccountOK(user, pass) {
		e := unauthorized("invalid username or password")
		e.header = challenge
		return e
	}
	return nil
}

// bearer returns the token of an "Authorization: Bearer" header.
func bearer(r *http.Request) (string, bool) {
	h := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(h, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

func checkBearer(_ *Server, r *http.Request, _ *request) *apiError {
	token, ok := bearer(r)
	if !ok {
		return unauthorized("missing Authorization: Bearer header")
	}
	if !same(token, DemoBearerToken) {
		return unauthorized("invalid bearer token")
	}
	return nil
}

func apiKey(key string, ok bool, where string) *apiError {
	if !ok || key == "" {
		return unauthorized("missing API key: send it " + where)
	}
	if !same(key, DemoAPIKey) {
		return unauthorized("invalid API key")
	}
	return nil
}

func checkAPIKeyHeader(_ *Server, r *http.Request, _ *request) *apiError {
	v := r.Header.Get("X-API-Key")
	return apiKey(v, v != "", "in the X-API-Key header")
}

func checkAPIKeyQuery(_ *Server, _ *http.Request, q *request) *apiError {
	return apiKey(q.query.Get("api_key"), q.query.Has("api_key"), "as the api_key query parameter")
}

func checkAPIKeyForm(_ *Server, _ *http.Request, q *request) *apiError {
	return apiKey(q.form.Get("api_key"), q.form.Has("api_key"), "as the api_key field of a POST form body")
}

func checkAPIKeyJSON(_ *Server, _ *http.Request, q *request) *apiError {
	v, ok := q.jsonString("api_key")
	return apiKey(v, ok, `as "api_key" in a POST JSON body`)
}

func checkAPIKeyJSONNested(_ *Server, _ *http.Request, q *request) *apiError {
	v, ok := q.jsonString("auth", "key")
	return apiKey(v, ok, `as {"auth": {"key": ...}} in a POST JSON body`)
}

func checkOAuth(s *Server, r *http.Request, _ *request) *apiError {
	token, ok := bearer(r)
	if !ok {
		return unauthorized("missing Authorization: Bearer header with an access token from /oauth/token")
	}
	return s.checkIssued(s.accessTokens, token, "access token")
}

func checkSession(s *Server, r *http.Request, q *request) *apiError {
	token := r.Header.Get("X-Session-Token")
	if token == "" {
		token = q.query.Get("session_token")
	}
	if token == "" {
		token, _ = bearer(r)
	}
	if token == "" {
		return unauthorized("missing session token: send it in X-Session-Token, ?session_token= or Authorization: Bearer")
	}
	return s.checkIssued(s.sessions, token, "session token")
}

func (s *Server) checkIssued(tokens map[string]time.Time, token, what string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := tokens[token]
	if !ok {
		return unauthorized("unknown " + what)
	}
	if !s.opts.Now().Before(exp) {
		return expired(what + " expired at " + exp.UTC().Format(time.RFC3339))
	}
	return nil
}

// issue creates a token with the given prefix, valid for ttl. Callers hold s.mu.
func (s *Server) issue(tokens map[string]time.Time, prefix string, ttl time.Duration) (string, time.Time) {
	s.issued++
	token := fmt.Sprintf("%s-%06d", prefix, s.issued)
	exp := s.opts.Now().Add(ttl)
	tokens[token] = exp
	return token, exp
}

// grantVariant selects the behaviour of a token endpoint.
type grantVariant int

const (
	grantPlain    grantVariant = iota // /oauth/token: reusable refresh token, expires_in seconds
	grantRotating                     // /oauth/rotating/token: single-use rotating refresh tokens
	grantDated                        // /oauth/dated/token: expires_at date instead of expires_in
)

// ExpiresAtFormat is the layout of expires_at from /oauth/dated/token
// (token_expiry_date_format "%Y-%m-%dT%H:%M:%SZ").
const ExpiresAtFormat = "2006-01-02T15:04:05Z"

// AllowedScopes are the scopes the token endpoints grant; others are invalid_scope.
var AllowedScopes = []string{"books:read", "authors:read", "profile"}

type tokenForm struct {
	clientID, clientSecret, grantType, refreshToken string
	scopes                                          []string
	contentType                                     string
}

func oauthError(status int, code, description string) *apiError {
	return &apiError{status: status, code: code, message: description, oauth: true}
}

func readTokenForm(r *http.Request) (*tokenForm, *apiError) {
	q, err := readRequest(r)
	if err != nil {
		err.oauth = true
		err.code = "invalid_request"
		return nil, err
	}
	f := &tokenForm{}
	switch {
	case q.json != nil:
		f.contentType = "json"
		for _, field := range []struct {
			name string
			dst  *string
		}{{"client_id", &f.clientID}, {"client_secret", &f.clientSecret}, {"grant_type", &f.grantType}, {"refresh_token", &f.refreshToken}} {
			if v, ok := q.json[field.name]; ok {
				s, ok := v.(string)
				if !ok {
					return nil, oauthError(http.StatusBadRequest, "invalid_request", field.name+" must be a string")
				}
				*field.dst = s
			}
		}
		if v, ok := q.json["scopes"]; ok {
			list, ok := v.([]any)
			if !ok {
				return nil, oauthError(http.StatusBadRequest, "invalid_request", "scopes must be a JSON array of strings")
			}
			for _, item := range list {
				s, ok := item.(string)
				if !ok {
					return nil, oauthError(http.StatusBadRequest, "invalid_request", "scopes must be a JSON array of strings")
				}
				f.scopes = append(f.scopes, s)
			}
		}
		if v, ok := q.json["scope"].(string); ok {
			f.scopes = append(f.scopes, strings.Fields(v)...)
		}
	case q.form != nil:
		f.contentType = "form"
		f.clientID = q.form.Get("client_id")
		f.clientSecret = q.form.Get("client_secret")
		f.grantType = q.form.Get("grant_type")
		f.refreshToken = q.form.Get("refresh_token")
		f.scopes = append(f.scopes, q.form["scopes"]...)
		for _, s := range q.form["scope"] {
			f.scopes = append(f.scopes, strings.Fields(s)...)
		}
	default:
		f.contentType = mediaType(r)
		return f, oauthError(http.StatusBadRequest, "invalid_request", "send a JSON or form-encoded body")
	}
	if user, pass, ok := r.BasicAuth(); ok { // client_secret_basic
		f.clientID, f.clientSecret = user, pass
	}
	return f, nil
}

// token serves the three OAuth token endpoints.
func (s *Server) token(w http.ResponseWriter, r *http.Request, variant grantVariant) {
	entry := TokenRequest{Endpoint: r.URL.Path}
	f, err := s.grant(w, r, variant)
	if f != nil {
		entry.ContentType, entry.GrantType, entry.ClientID, entry.Scopes = f.contentType, f.grantType, f.clientID, f.scopes
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

// tokenResponse is the body of a successful grant, in the order served.
type tokenResponse struct {
	AccessToken  string `json:"access_token"`
	TokenType    string `json:"token_type"`
	ExpiresIn    *int   `json:"expires_in,omitempty"`
	ExpiresAt    string `json:"expires_at,omitempty"`
	RefreshToken string `json:"refresh_token,omitempty"`
	Scope        string `json:"scope,omitempty"`
}

func (s *Server) grant(w http.ResponseWriter, r *http.Request, variant grantVariant) (*tokenForm, *apiError) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", "POST")
		return nil, oauthError(http.StatusMethodNotAllowed, "invalid_request", "use POST")
	}
	f, err := readTokenForm(r)
	if err != nil {
		return f, err
	}
	if !same(f.clientID, DemoClientID) || !same(f.clientSecret, DemoClientSecret) {
		return f, oauthError(http.StatusUnauthorized, "invalid_client", "unknown client_id or wrong client_secret")
	}
	for _, sc := range f.scopes {
		if !allowedScope(sc) {
			return f, oauthError(http.StatusBadRequest, "invalid_scope", "unknown scope "+quote(sc))
		}
	}
	resp := tokenResponse{TokenType: "Bearer", Scope: strings.Join(f.scopes, " ")}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch f.grantType {
	case "refresh_token":
		if f.refreshToken == "" {
			return f, oauthError(http.StatusBadRequest, "invalid_request", "refresh_token is required for grant_type refresh_token")
		}
		if variant == grantRotating {
			gen, ok := rotatingGeneration(f.refreshToken)
			if !ok || s.usedRotating[f.refreshToken] {
				return f, oauthError(http.StatusBadRequest, "invalid_grant", "refresh token is unknown or was already used")
			}
			s.usedRotating[f.refreshToken] = true
			resp.RefreshToken = rotatingToken(gen + 1)
		} else {
			if !same(f.refreshToken, DemoRefreshToken) {
				return f, oauthError(http.StatusBadRequest, "invalid_grant", "unknown refresh token")
			}
			resp.RefreshToken = f.refreshToken
		}
		s.stats.RefreshTokenGrants++
	case "client_credentials":
		if variant == grantRotating {
			return f, oauthError(http.StatusBadRequest, "unsupported_grant_type", "this endpoint only accepts grant_type refresh_token")
		}
		s.stats.ClientCredentialsGrants++
	case "":
		return f, oauthError(http.StatusBadRequest, "invalid_request", "grant_type is required")
	default:
		return f, oauthError(http.StatusBadRequest, "unsupported_grant_type", "grant_type must be refresh_token or client_credentials")
	}
	var exp time.Time
	resp.AccessToken, exp = s.issue(s.accessTokens, "demo-access", s.opts.AccessTokenTTL)
	if variant == grantDated {
		resp.ExpiresAt = exp.UTC().Format(ExpiresAtFormat)
	} else {
		secs := int(s.opts.AccessTokenTTL / time.Second)
		resp.ExpiresIn = &secs
	}
	writeJSON(w, http.StatusOK, resp)
	return f, nil
}

func allowedScope(sc string) bool {
	for _, a := range AllowedScopes {
		if sc == a {
			return true
		}
	}
	return false
}

// rotatingKey signs rotating refresh tokens. It is fixed (not per process) so
// that a token written to a testing values file still works after the demo
// API restarts; single use is enforced per process.
var rotatingKey = []byte("connector demo api rotating refresh tokens")

// rotatingToken returns refresh token number gen of the rotation chain; 0 is
// DemoRotatingRefreshToken.
func rotatingToken(gen int) string {
	if gen == 0 {
		return DemoRotatingRefreshToken
	}
	payload := "demo-rotated-" + strconv.Itoa(gen)
	mac := hmac.New(sha256.New, rotatingKey)
	mac.Write([]byte(payload))
	return payload + "-" + hex.EncodeToString(mac.Sum(nil))[:12]
}

func rotatingGeneration(token string) (int, bool) {
	if token == DemoRotatingRefreshToken {
		return 0, true
	}
	rest, ok := strings.CutPrefix(token, "demo-rotated-")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, "-")
	gen, err := strconv.Atoi(num)
	if !ok || err != nil || gen < 1 {
		return 0, false
	}
	return gen, hmac.Equal([]byte(rotatingToken(gen)), []byte(token))
}

// loginResponse nests the session token at data.session.token.
type loginResponse struct {
	Data struct {
		Session struct {
			Token     string `json:"token"`
			ExpiresIn int    `json:"expires_in"`
		} `json:"session"`
	} `json:"data"`
}

// login serves /auth/login: POST with a JSON or form body {username, password},
// or GET with Basic credentials.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	var user, pass string
	switch r.Method {
	case http.MethodGet:
		var ok bool
		user, pass, ok = r.BasicAuth()
		if !ok {
			s.failLogin(w, unauthorized("GET /auth/login needs Basic credentials"))
			return
		}
	case http.MethodPost:
		q, err := readRequest(r)
		if err != nil {
			err.write(w)
			return
		}
		switch {
		case q.json != nil:
			user, _ = q.jsonString("username")
			pass, _ = q.jsonString("password")
		case q.form != nil:
			user, pass = q.form.Get("username"), q.form.Get("password")
		default:
			s.failLogin(w, unauthorized("POST /auth/login needs a JSON or form body with username and password"))
			return
		}
	default:
		w.Header().Set("Allow", "GET, POST")
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST (body) or GET (Basic)")
		return
	}
	if !same(user, DemoUsername) || !same(pass, DemoPassword) {
		s.failLogin(w, &apiError{status: http.StatusUnauthorized, code: "invalid_credentials", message: "invalid username or password"})
		return
	}
	var resp loginResponse
	s.mu.Lock()
	resp.Data.Session.Token, _ = s.issue(s.sessions, "demo-session", s.opts.SessionTTL)
	s.stats.Logins++
	s.mu.Unlock()
	resp.Data.Session.ExpiresIn = int(s.opts.SessionTTL / time.Second)
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) failLogin(w http.ResponseWriter, err *apiError) {
	s.mu.Lock()
	s.stats.FailedLogins++
	s.mu.Unlock()
	err.write(w)
}
