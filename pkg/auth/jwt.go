package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// jwtAuth is the JwtAuthenticator: for each request it signs a token whose header and
// claims are those of the definition, with iat and nbf the current second and exp
// token_duration later, and puts it (after header_prefix and a space) in the Authorization
// header or the request_option. The token is byte for byte the one PyJWT 2.10 builds for
// the reference implementation: header keys sorted, claims in the reference's order, JSON
// as Python's json.dumps writes it with separators (",", ":").
type jwtAuth struct {
	env    Env
	alg    string
	sign   func(msg []byte) ([]byte, error)
	header string // base64url of the JSON header, fixed for the run
	// detached is a header "b64": false (RFC 7797): the payload is signed as it is and left
	// out of the token.
	detached bool
	claims   *record.Object // the claims before iat, exp and nbf
	duration *int64
	prefix   string
	opt      *request.Option
}

// jwtKind is JwtAuthenticator: a token signed for each request.
var jwtKind = kind{
	make: func(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
		j, err := newJWT(a, env, vars)
		if err != nil {
			return nil, err // not a typed nil in the interface
		}
		return j, nil
	},
	secrets: func(a *manifest.Authenticator) credentials {
		return credentials{templates: []*template.Template{a.JWT.SecretKey, a.JWT.Passphrase}}
	},
}

func newJWT(a *manifest.Authenticator, env Env, vars map[string]any) (*jwtAuth, error) {
	d := a.JWT
	fail := func(format string, args ...any) error {
		return &ConfigError{Msg: env.redact(fmt.Sprintf("%s: ", a.Type) + fmt.Sprintf(format, args...))}
	}
	if d.Algorithm == "" {
		return nil, fail("no algorithm")
	}
	r := renderer{typ: a.Type, vars: vars}
	value := func(t *template.Template, field string) (any, error) {
		s, err := r.render(t, field)
		if err != nil {
			return nil, err
		}
		return pyInterpolated(s), nil
	}
	secret, err := r.render(d.SecretKey, "secret_key")
	if err != nil {
		return nil, err
	}
	env.secret(secret)
	pass, err := r.render(d.Passphrase, "passphrase")
	if err != nil {
		return nil, err
	}
	env.secret(pass)
	// The reference reads the key as a Python literal first: a key such as 12345 is a
	// number, which it cannot sign with.
	if v := pyInterpolated(secret); v != nil {
		sv, ok := v.(string)
		if !ok {
			return nil, fail("failed to sign token: the secret key is %s, not a string", pyTypeName(v))
		}
		secret = sv
	}
	j := &jwtAuth{env: env, alg: d.Algorithm, duration: d.TokenDuration}
	if pass != "" && pyInterpolated(pass) != nil {
		return nil, fail("a secret key encrypted with a passphrase is not supported yet; decrypt the key (openssl pkcs8 -in key.pem -nocrypt) and leave passphrase empty")
	}
	if d.Base64EncodeSecretKey {
		secret = base64.StdEncoding.EncodeToString([]byte(secret))
		env.secret(secret)
	}
	if j.sign, err = jwtSigner(d.Algorithm, secret); err != nil {
		return nil, fail("failed to sign token: %v", err)
	}

	// The header: PyJWT starts from {"typ": "JWT", "alg": ...} and adds the authenticator's
	// headers (the additional ones, then kid, typ, cty, alg); keys are sorted.
	hdr := map[string]any{"typ": "JWT", "alg": d.Algorithm}
	extra, err := jwtEntries(d.AdditionalHeaders, r, "additional_jwt_headers")
	if err != nil {
		return nil, err
	}
	for _, k := range extra.Keys() {
		if slices.Contains([]string{"kid", "alg", "typ", "cty"}, k) {
			return nil, fail("'kid', 'alg', 'typ', 'cty' are reserved headers and should not be set as part of 'additional_jwt_headers'")
		}
		v, _ := extra.Get(k)
		hdr[k] = v
	}
	for _, f := range []struct {
		name string
		t    *template.Template
	}{{"kid", d.Kid}, {"typ", d.Typ}, {"cty", d.Cty}} {
		if f.t == nil || f.t.Source() == "" {
			continue
		}
		if hdr[f.name], err = value(f.t, f.name); err != nil {
			return nil, err
		}
	}
	if kid, ok := hdr["kid"]; ok {
		if _, isStr := kid.(string); !isStr {
			return nil, fail("failed to sign token: Key ID header parameter must be a string (kid %s renders %s)", sourceOf(d.Kid), pyTypeName(kid))
		}
	}
	if !pyTruthy(hdr["typ"]) {
		delete(hdr, "typ")
	}
	if b64, ok := hdr["b64"]; ok {
		j.detached = b64 == false
		delete(hdr, "b64")
		if j.detached {
			hdr["b64"] = false
		}
	}
	hj, err := pyJSON(hdr, true)
	if err != nil {
		return nil, fail("failed to sign token: the header: %v", err)
	}
	j.header = base64.RawURLEncoding.EncodeToString(hj)

	// The claims: the additional ones in written order, then iss, sub, aud.
	if j.claims, err = jwtEntries(d.AdditionalPayload, r, "additional_jwt_payload"); err != nil {
		return nil, err
	}
	for _, k := range j.claims.Keys() {
		if slices.Contains([]string{"iss", "sub", "aud", "iat", "exp", "nbf"}, k) {
			return nil, fail("'iss', 'sub', 'aud', 'iat', 'exp', 'nbf' are reserved properties and should not be set as part of 'additional_jwt_payload'")
		}
	}
	for _, f := range []struct {
		name string
		t    *template.Template
	}{{"iss", d.Iss}, {"sub", d.Sub}, {"aud", d.Aud}} {
		if f.t == nil || f.t.Source() == "" {
			continue
		}
		v, err := value(f.t, f.name)
		if err != nil {
			return nil, err
		}
		j.claims.Set(f.name, v)
	}
	if d.HeaderPrefix != nil && d.HeaderPrefix.Source() != "" {
		p, err := value(d.HeaderPrefix, "header_prefix")
		if err != nil {
			return nil, err
		}
		if pyTruthy(p) {
			j.prefix = template.ToString(p)
		}
	}
	if d.Inject == nil {
		j.opt = &request.Option{Place: manifest.InjectHeader, Name: "Authorization"}
	} else if j.opt, err = injectOption(d.Inject, vars); err != nil {
		return nil, fmt.Errorf("%s.request_option: %w", a.Type, err)
	}
	// A token that cannot be encoded is known now rather than at the first request.
	if _, err := j.token(); err != nil {
		return nil, fail("%v", err)
	}
	return j, nil
}

func (j *jwtAuth) Name() string { return manifest.JWTAuth }

// Apply signs a new token and puts it where the definition says.
func (j *jwtAuth) Apply(_ context.Context, b *request.Builder) error {
	tok, err := j.value()
	if err != nil {
		return err
	}
	return j.opt.Inject(b, tok, "the authenticator")
}

// value is the token with its header_prefix, registered with the redactor.
func (j *jwtAuth) value() (string, error) {
	tok, err := j.token()
	if err != nil {
		return "", &Error{Msg: j.env.redact(manifest.JWTAuth + ": " + err.Error())}
	}
	if j.env.Redactor != nil {
		// Each token is new (its iat changes every second): remembered among the values
		// derived from secrets, the oldest of which are forgotten.
		j.env.Redactor.Derive(tok, "")
	}
	if j.prefix != "" {
		return j.prefix + " " + tok, nil
	}
	return tok, nil
}

// token signs the claims with iat, exp and nbf for the current second.
func (j *jwtAuth) token() (string, error) {
	now := j.env.Now().Unix()
	exp := now
	if j.duration != nil {
		exp = now + *j.duration
	}
	claims := &record.Object{}
	for _, k := range j.claims.Keys() {
		v, _ := j.claims.Get(k)
		claims.Set(k, v)
	}
	claims.Set("iat", now)
	claims.Set("exp", exp)
	claims.Set("nbf", now)
	payload, err := pyJSON(claims, false)
	if err != nil {
		return "", fmt.Errorf("failed to sign token: the payload: %v", err)
	}
	p := base64.RawURLEncoding.EncodeToString(payload)
	input := j.header + "." + p
	if j.detached {
		input = j.header + "." + string(payload)
		p = ""
	}
	sig, err := j.sign([]byte(input))
	if err != nil {
		return "", fmt.Errorf("failed to sign token: %v", err)
	}
	return j.header + "." + p + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// jwtEntries renders additional_jwt_headers or additional_jwt_payload as the reference's
// InterpolatedMapping does: keys are text, string values are read as Python literals after
// rendering, other values are kept as written.
func jwtEntries(es []manifest.JWTEntry, r renderer, field string) (*record.Object, error) {
	out := &record.Object{}
	for _, e := range es {
		k, err := r.render(e.Key, field)
		if err != nil {
			return nil, err
		}
		if e.Value == nil {
			out.Set(k, e.Raw)
			continue
		}
		s, err := r.render(e.Value, field+"."+k)
		if err != nil {
			return nil, err
		}
		out.Set(k, pyInterpolated(s))
	}
	return out, nil
}

// pyInterpolated is the value the reference gives a rendered template: None when it renders
// empty, else the text read as a Python literal when it is one (123, True, [1, 2]), else
// the text.
func pyInterpolated(s string) any {
	if s == "" {
		return nil
	}
	v, err := template.LiteralEval(s)
	if err != nil {
		return s
	}
	return v
}

// pyTruthy is Python's truth value of a literal.
func pyTruthy(v any) bool {
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != ""
	case int64:
		return x != 0
	case float64:
		return x != 0
	case []any:
		return len(x) > 0
	case *record.Object:
		return x.Len() > 0
	}
	return true
}

func pyTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "None"
	case bool:
		return "a boolean"
	case int64, json.Number:
		return "an integer"
	case float64:
		return "a float"
	case []any:
		return "a list"
	case *record.Object:
		return "a dict"
	}
	return "a string"
}

// pemRE is PyJWT's test for a PEM key or certificate, which it refuses as an HMAC secret.
var pemRE = regexp.MustCompile(`(?s)----[- ]BEGIN (CERTIFICATE|TRUSTED CERTIFICATE|PRIVATE KEY|PUBLIC KEY|ENCRYPTED PRIVATE KEY|OPENSSH PRIVATE KEY|DSA PRIVATE KEY|RSA PRIVATE KEY|RSA PUBLIC KEY|EC PRIVATE KEY|DH PARAMETERS|OPENSSH PRIVATE KEY|SSH2 PUBLIC KEY|SSH2 ENCRYPTED PRIVATE KEY|X509 CRL)[- ]----\r?\n.+?\r?\n----[- ]END `)

var sshPrefixes = []string{"ssh-ed25519", "ssh-rsa", "ssh-dss", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"}

// jwtSigner returns the signing function of alg with the secret key: the key itself for
// HMAC, a PEM private key (PKCS #1, SEC 1 or PKCS #8) for the others.
func jwtSigner(alg, secret string) (func([]byte) ([]byte, error), error) {
	hashes := map[string]crypto.Hash{"256": crypto.SHA256, "384": crypto.SHA384, "512": crypto.SHA512}
	h := hashes[strings.TrimPrefix(alg[2:], "K")]
	switch alg[:2] {
	case "HS":
		if pemRE.MatchString(secret) || hasAnyPrefix(secret, sshPrefixes) {
			return nil, errors.New("the specified key is an asymmetric key or x509 certificate and should not be used as an HMAC secret")
		}
		key := []byte(secret)
		return func(msg []byte) ([]byte, error) {
			m := hmac.New(func() hash.Hash { return h.New() }, key)
			m.Write(msg)
			return m.Sum(nil), nil
		}, nil
	case "RS", "PS":
		k, err := privateKey(secret)
		if err != nil {
			return nil, err
		}
		rk, ok := k.(*rsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s needs an RSA private key, not %s", alg, keyKind(k))
		}
		return func(msg []byte) ([]byte, error) {
			d := digest(h, msg)
			if alg[0] == 'P' {
				return rsa.SignPSS(rand.Reader, rk, h, d, &rsa.PSSOptions{SaltLength: rsa.PSSSaltLengthEqualsHash})
			}
			return rsa.SignPKCS1v15(nil, rk, h, d)
		}, nil
	case "ES":
		k, err := privateKey(secret)
		if err != nil {
			return nil, err
		}
		ek, ok := k.(*ecdsa.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("%s needs an elliptic curve private key, not %s", alg, keyKind(k))
		}
		size := (ek.Curve.Params().BitSize + 7) / 8
		return func(msg []byte) ([]byte, error) {
			r, s, err := ecdsa.Sign(rand.Reader, ek, digest(h, msg))
			if err != nil {
				return nil, err
			}
			sig := make([]byte, 2*size)
			r.FillBytes(sig[:size])
			s.FillBytes(sig[size:])
			return sig, nil
		}, nil
	case "Ed":
		if !strings.Contains(secret, "-----BEGIN PRIVATE") {
			return nil, errors.New("EdDSA needs an Ed25519 private key in PEM (-----BEGIN PRIVATE KEY-----)")
		}
		k, err := privateKey(secret)
		if err != nil {
			return nil, err
		}
		ek, ok := k.(ed25519.PrivateKey)
		if !ok {
			return nil, fmt.Errorf("EdDSA needs an Ed25519 private key, not %s", keyKind(k))
		}
		return func(msg []byte) ([]byte, error) { return ed25519.Sign(ek, msg), nil }, nil
	}
	return nil, fmt.Errorf("algorithm %s is not supported", alg)
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func digest(h crypto.Hash, msg []byte) []byte {
	d := h.New()
	d.Write(msg)
	return d.Sum(nil)
}

// privateKey reads the first PEM private key of s. A public key, a certificate or an
// encrypted key cannot sign; an Ed448 key is not in Go's standard library.
func privateKey(s string) (any, error) {
	if hasAnyPrefix(s, sshPrefixes) {
		return nil, errors.New("the secret key is an SSH public key; a private key is needed to sign")
	}
	rest := []byte(s)
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return nil, errors.New("the secret key is not a PEM private key (-----BEGIN PRIVATE KEY----- ... -----END PRIVATE KEY-----)")
		}
		switch b.Type {
		case "RSA PRIVATE KEY":
			return x509.ParsePKCS1PrivateKey(b.Bytes)
		case "EC PRIVATE KEY":
			return x509.ParseECPrivateKey(b.Bytes)
		case "PRIVATE KEY":
			k, err := x509.ParsePKCS8PrivateKey(b.Bytes)
			if err != nil && strings.Contains(err.Error(), "unknown") {
				return nil, fmt.Errorf("the private key's algorithm is not supported (Ed448 and secp256k1 are not in Go's standard library): %w", err)
			}
			return k, err
		case "ENCRYPTED PRIVATE KEY":
			return nil, errors.New("the secret key is encrypted; a passphrase-protected key is not supported yet")
		case "PUBLIC KEY", "RSA PUBLIC KEY", "CERTIFICATE":
			return nil, fmt.Errorf("the secret key is a %s; a private key is needed to sign", strings.ToLower(b.Type))
		}
	}
}

func keyKind(k any) string {
	switch k.(type) {
	case *rsa.PrivateKey:
		return "an RSA key"
	case *ecdsa.PrivateKey:
		return "an elliptic curve key"
	case ed25519.PrivateKey:
		return "an Ed25519 key"
	}
	return fmt.Sprintf("a %T", k)
}

// pyJSON writes v as Python's json.dumps(v, separators=(",", ":")) does, with
// sort_keys when sorted: non-ASCII characters escaped as \uXXXX, floats as repr.
func pyJSON(v any, sorted bool) ([]byte, error) {
	var b strings.Builder
	if err := writePyJSON(&b, v, sorted); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

func writePyJSON(b *strings.Builder, v any, sorted bool) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case string:
		template.WritePyJSONString(b, x)
	case int:
		b.WriteString(strconv.Itoa(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case json.Number:
		b.WriteString(string(x))
	case float64:
		switch {
		case math.IsNaN(x):
			b.WriteString("NaN")
		case math.IsInf(x, 1):
			b.WriteString("Infinity")
		case math.IsInf(x, -1):
			b.WriteString("-Infinity")
		default:
			b.WriteString(template.ToString(x))
		}
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writePyJSON(b, e, sorted); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case *record.Object:
		keys := x.Keys()
		m := make(map[string]any, len(keys))
		for _, k := range keys {
			m[k], _ = x.Get(k)
		}
		return writePyObject(b, keys, m, sorted)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys) // a Go map has no order: only sorted output is faithful
		return writePyObject(b, keys, x, sorted)
	default:
		return fmt.Errorf("object of type %T is not JSON serializable", v)
	}
	return nil
}

func writePyObject(b *strings.Builder, keys []string, m map[string]any, sorted bool) error {
	if sorted {
		keys = slices.Clone(keys)
		slices.Sort(keys) // code point order, as Python sorts (byte order agrees for UTF-8)
	}
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		template.WritePyJSONString(b, k)
		b.WriteByte(':')
		if err := writePyJSON(b, m[k], sorted); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// jwtBearerGrant is the grant type of the OAuth profile assertion flow (RFC 7523).
const jwtBearerGrant = "urn:ietf:params:oauth:grant-type:jwt-bearer"

// newProfileAssertion builds the JwtAuthenticator of an OAuthAuthenticator's
// profile_assertion.
func newProfileAssertion(a *manifest.Authenticator, env Env) (*jwtAuth, error) {
	if a == nil || a.JWT == nil {
		return nil, &ConfigError{Msg: "OAuthAuthenticator: use_profile_assertion is true but there is no profile_assertion"}
	}
	return newJWT(a, env, env.Globals.Vars(a.Parameters))
}

// assertionRequest completes the token request of the profile assertion flow: as the
// reference does, it sends only the grant type and the signed JWT (as `assertion`), a form
// when the refresh_request_headers ask for one, else JSON.
func (o *oauth) assertionRequest(b *request.Builder) (*request.Builder, error) {
	tok, err := o.assertion.value()
	if err != nil {
		return nil, err
	}
	const src = "the OAuth authenticator"
	for _, f := range [][2]string{{o.def.GrantTypeName, o.grant}, {"assertion", tok}} {
		if o.form {
			err = b.SetForm(f[0], []string{f[1]}, src)
		} else {
			err = b.SetJSON([]string{f[0]}, f[1], src)
		}
		if err != nil {
			return nil, err
		}
	}
	return b, nil
}
