package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"connector/pkg/request"
)

// pyjwtCases are tokens the reference implementation (airbyte-cdk 7.28.2 JwtAuthenticator,
// PyJWT 2.10.1) built for fixed keys, testing values and a clock at 2026-01-01T00:00:00.75Z;
// testdata/jwt/pyjwt.json is written by the script in testdata/jwt/README.md.
type pyjwtCases struct {
	Keys  map[string]string `json:"keys"`
	Cases []struct {
		Name       string          `json:"name"`
		Key        string          `json:"key"`
		Definition json.RawMessage `json:"definition"`
		Config     map[string]any  `json:"config"`
		Now        int64           `json:"now"`
		Token      string          `json:"token"`
	} `json:"cases"`
}

func readPyJWT(t *testing.T) pyjwtCases {
	t.Helper()
	b, err := os.ReadFile("testdata/jwt/pyjwt.json")
	if err != nil {
		t.Fatal(err)
	}
	var c pyjwtCases
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber() // 7 stays an integer in the testing values
	if err := d.Decode(&c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestJWTMatchesPyJWT builds each reference token: byte for byte for the deterministic
// algorithms (HMAC, RSA PKCS #1 v1.5, Ed25519); for the randomized ones (ECDSA, RSA-PSS) the
// header and claims byte for byte and a signature the public key verifies.
func TestJWTMatchesPyJWT(t *testing.T) {
	ref := readPyJWT(t)
	for _, c := range ref.Cases {
		t.Run(c.Name, func(t *testing.T) {
			clk := &clock{now: time.Unix(c.Now, 750_000_000).UTC()}
			a, red, err := build(t, "    "+string(c.Definition), c.Config, clk, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := applied(t, a).Header.Get("Authorization")
			alg := c.Name[:2]
			if alg != "ES" && alg != "PS" {
				if got != c.Token {
					t.Fatalf("token\n got %s\nwant %s", got, c.Token)
				}
			} else {
				gs, ws := strings.Split(got, "."), strings.Split(c.Token, ".")
				if len(gs) != 3 || gs[0] != ws[0] || gs[1] != ws[1] {
					t.Fatalf("header and claims\n got %s\nwant %s", got, c.Token)
				}
				verify(t, c.Name, ref.Keys[c.Key], gs[0]+"."+gs[1], gs[2])
				verify(t, c.Name, ref.Keys[c.Key], ws[0]+"."+ws[1], ws[2]) // the check itself is sound
			}
			// The token, the key and the secret are masked in anything printed.
			tok := got[strings.LastIndex(got, " ")+1:]
			secret := c.Config["secret"].(string)
			if s := red.String("sent " + got + " with " + secret); strings.Contains(s, tok) || strings.Contains(s, secret) || !strings.Contains(s, "****") {
				t.Errorf("not redacted: %s", s)
			}
		})
	}
}

func verify(t *testing.T, alg, pemKey, input, sig64 string) {
	t.Helper()
	sig, err := base64.RawURLEncoding.DecodeString(sig64)
	if err != nil {
		t.Fatal(err)
	}
	k, err := privateKey(pemKey)
	if err != nil {
		t.Fatal(err)
	}
	h := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}[alg[2:]]
	d := digest(h, []byte(input))
	switch key := k.(type) {
	case *rsa.PrivateKey:
		err = rsa.VerifyPSS(&key.PublicKey, h, d, sig, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
	case *ecdsa.PrivateKey:
		n := len(sig) / 2
		if !ecdsa.Verify(&key.PublicKey, d, new(big.Int).SetBytes(sig[:n]), new(big.Int).SetBytes(sig[n:])) {
			err = errors.New("bad ECDSA signature")
		}
	}
	if err != nil {
		t.Fatalf("%s signature does not verify: %v", alg, err)
	}
}

// TestJWTNewTokenEachRequest: iat, nbf and exp follow the clock, and each token is masked.
func TestJWTNewTokenEachRequest(t *testing.T) {
	clk := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, red, err := build(t, `
    type: JwtAuthenticator
    secret_key: "{{ config['secret'] }}"
    algorithm: HS256
    token_duration: 60`, map[string]any{"secret": "k3y"}, clk, nil)
	if err != nil {
		t.Fatal(err)
	}
	claims := func() (string, string) {
		tok := applied(t, a).Header.Get("Authorization")
		p, _ := base64.RawURLEncoding.DecodeString(strings.Split(tok, ".")[1])
		return tok, string(p)
	}
	tok1, c1 := claims()
	clk.advance(90 * time.Second)
	tok2, c2 := claims()
	if c1 != `{"iat":1767225600,"exp":1767225660,"nbf":1767225600}` || c2 != `{"iat":1767225690,"exp":1767225750,"nbf":1767225690}` {
		t.Fatalf("claims %s then %s", c1, c2)
	}
	if s := red.String(tok1 + " " + tok2); s != "**** ****" {
		t.Fatalf("redacted: %s", s)
	}
}

// TestJWTRequestOption puts the token where request_option says, after header_prefix.
func TestJWTRequestOption(t *testing.T) {
	a, _, err := build(t, `
    type: JwtAuthenticator
    secret_key: "{{ config['secret'] }}"
    algorithm: HS256
    header_prefix: JWT
    request_option: {type: RequestOption, inject_into: request_parameter, field_name: assertion}`,
		map[string]any{"secret": "k3y"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := applied(t, a)
	u, _ := url.Parse(req.URL)
	if v := u.Query().Get("assertion"); !strings.HasPrefix(v, "JWT eyJ") || req.Header.Get("Authorization") != "" {
		t.Fatalf("URL %s, headers %v", req.URL, req.Header)
	}
}

// TestJWTConfigErrors: keys that cannot sign are refused before any request, naming the
// problem and never the key.
func TestJWTConfigErrors(t *testing.T) {
	ref := readPyJWT(t)
	for _, c := range []struct {
		alg, secret, want string
	}{
		{"HS256", ref.Keys["rsa_pkcs1"], "JwtAuthenticator: failed to sign token: the specified key is an asymmetric key or x509 certificate and should not be used as an HMAC secret"},
		{"RS256", "not a key", "JwtAuthenticator: failed to sign token: the secret key is not a PEM private key (-----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY-----)"},
		{"RS256", ref.Keys["ec_p256"], "JwtAuthenticator: failed to sign token: RS256 needs an RSA private key, not an elliptic curve key"},
		{"ES256", ref.Keys["rsa_pkcs8"], "JwtAuthenticator: failed to sign token: ES256 needs an elliptic curve private key, not an RSA key"},
		{"EdDSA", ref.Keys["ec_p384"], "JwtAuthenticator: failed to sign token: EdDSA needs an Ed25519 private key, not an elliptic curve key"},
		{"HS256", "12345", "JwtAuthenticator: failed to sign token: the secret key is an integer, not a string"},
	} {
		_, _, err := build(t, `
    type: JwtAuthenticator
    secret_key: "{{ config['secret'] }}"
    algorithm: `+c.alg, map[string]any{"secret": c.secret}, nil, nil)
		var ce *ConfigError
		if !errors.As(err, &ce) || err.Error() != c.want {
			t.Errorf("%s: error %v, want %s", c.alg, err, c.want)
		}
	}
}

// TestOAuthProfileAssertion: use_profile_assertion sends only the JWT bearer grant and the
// signed JWT to the token endpoint, as the reference does.
func TestOAuthProfileAssertion(t *testing.T) {
	ref := readPyJWT(t)
	tokenEP := newEndpoint(t, answer{200, `{"access_token": "at-1", "expires_in": 3600}`})
	a, red, err := build(t, `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    refresh_request_headers:
      Content-Type: application/x-www-form-urlencoded
    use_profile_assertion: true
    profile_assertion:
      type: JwtAuthenticator
      secret_key: "{{ config['key'] }}"
      algorithm: RS256
      token_duration: 3600
      jwt_payload:
        aud: "{{ config['base_url'] }}/token"
        iss: svc@example.iam
      additional_jwt_payload:
        scope: https://www.googleapis.com/auth/webmasters.readonly`,
		map[string]any{"base_url": tokenEP.URL, "key": ref.Keys["rsa_pkcs1"]}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b := request.New("data", "GET", "https://api.test/data")
	if err := a.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	got := tokenEP.requests()
	if len(got) != 1 {
		t.Fatalf("%d token requests", len(got))
	}
	form, _ := url.ParseQuery(got[0].Body)
	if got[0].ContentType != "application/x-www-form-urlencoded" || len(form) != 2 || form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		t.Fatalf("token request %+v", got[0])
	}
	p, _ := base64.RawURLEncoding.DecodeString(strings.Split(form.Get("assertion"), ".")[1])
	want := `{"scope":"https://www.googleapis.com/auth/webmasters.readonly","iss":"svc@example.iam","aud":"` + tokenEP.URL + `/token","iat":1767225600,"exp":1767229200,"nbf":1767225600}`
	if string(p) != want {
		t.Fatalf("claims %s, want %s", p, want)
	}
	req, _ := b.Build()
	if req.Header.Get("Authorization") != "Bearer at-1" {
		t.Fatalf("data request headers %v", req.Header)
	}
	if s := red.String(form.Get("assertion")); s != "****" {
		t.Fatalf("assertion not redacted: %s", s)
	}
}
