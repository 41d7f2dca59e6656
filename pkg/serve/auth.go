package serve

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
)

// authorize checks a request's bearer token when the server has a JWT secret, as the CDK's
// server does with PyJWT: an HS256 token signed with the secret, not expired (exp), already
// valid (nbf), with a numeric iat when it has one, and no audience (the server expects
// none). Without a secret every request passes.
func (s *Server) authorize(r *http.Request) *httpError {
	if s.cfg.JWTSecret == "" {
		return nil
	}
	bearer := http.Header{"Www-Authenticate": {"Bearer"}}
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return &httpError{status: http.StatusUnauthorized, detail: "Bearer token required", header: bearer}
	}
	if err := verifyHS256(token, []byte(s.cfg.JWTSecret), s.cfg.Now().Unix()); err != nil {
		return &httpError{status: http.StatusUnauthorized, detail: "Invalid token", header: bearer}
	}
	return nil
}

// verifyHS256 checks a compact JWS signed with HMAC-SHA256 and its time claims at now.
func verifyHS256(token string, secret []byte, now int64) error {
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		return errors.New("not three parts")
	}
	var header struct {
		Alg string `json:"alg"`
	}
	if err := decodePart(parts[0], &header); err != nil || header.Alg != "HS256" {
		return errors.New("not an HS256 token")
	}
	sig, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(parts[2], "="))
	if err != nil {
		return err
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(parts[0] + "." + parts[1]))
	if !hmac.Equal(sig, mac.Sum(nil)) {
		return errors.New("bad signature")
	}
	var claims map[string]any
	if err := decodePart(parts[1], &claims); err != nil || claims == nil {
		return errors.New("the payload is not a JSON object")
	}
	number := func(name string) (float64, bool, error) {
		v, ok := claims[name]
		if !ok {
			return 0, false, nil
		}
		n, isNum := v.(json.Number)
		if !isNum {
			return 0, true, errors.New(name + " is not a number")
		}
		f, err := n.Float64()
		return f, true, err
	}
	if exp, ok, err := number("exp"); err != nil || ok && float64(now) >= exp {
		return errors.New("expired")
	}
	if nbf, ok, err := number("nbf"); err != nil || ok && float64(now) < nbf {
		return errors.New("not yet valid")
	}
	if _, _, err := number("iat"); err != nil {
		return err
	}
	if _, ok := claims["aud"]; ok {
		return errors.New("an audience the server does not expect")
	}
	return nil
}

func decodePart(s string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return err
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}
