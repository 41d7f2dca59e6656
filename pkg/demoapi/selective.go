package demoapi

import (
	"net/http"
	"strings"
)

// The area "any" accepts the credentials of several areas, whichever the request carries:
// Basic (as in basic), a Bearer token (as in bearer) or an X-API-Key header (as in
// apikey-header). It serves definitions whose SelectiveAuthenticator lets the testing values
// choose the authenticator, one path for all of them.
func init() {
	areas["any"] = checkAny
}

func checkAny(s *Server, r *http.Request, q *request) *apiError {
	h := r.Header.Get("Authorization")
	switch {
	case strings.HasPrefix(h, "Basic "):
		return checkBasic(s, r, q)
	case strings.HasPrefix(h, "Bearer "):
		return checkBearer(s, r, q)
	case r.Header.Get("X-API-Key") != "":
		return checkAPIKeyHeader(s, r, q)
	}
	return unauthorized("missing credentials: send Basic credentials, a Bearer token or an X-API-Key header")
}
