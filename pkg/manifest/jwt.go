package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/record"
	"connector/pkg/template"
)

// JWTAuth signs a JSON Web Token for each request (JwtAuthenticator).
const JWTAuth = "JwtAuthenticator"

// JWTAlgorithms are the signing algorithms of the JwtAuthenticator schema; the value says
// whether this tool can sign with it (ES256K needs the secp256k1 curve, which Go's standard
// library does not have).
var JWTAlgorithms = map[string]bool{
	"HS256": true, "HS384": true, "HS512": true,
	"ES256": true, "ES256K": false, "ES384": true, "ES512": true,
	"RS256": true, "RS384": true, "RS512": true,
	"PS256": true, "PS384": true, "PS512": true,
	"EdDSA": true,
}

// JWT is a JwtAuthenticator. The token is signed anew for each request with iat and nbf set
// to the current second and exp TokenDuration later, as the reference implementation does.
type JWT struct {
	SecretKey *template.Template
	// Base64EncodeSecretKey signs with the base64 text of the secret key instead of the key.
	Base64EncodeSecretKey bool
	Algorithm             string
	// TokenDuration is token_duration in seconds (default 1200); nil when written as null
	// (exp is then the issue time).
	TokenDuration *int64
	// HeaderPrefix, when it renders non-empty, is written before the token and a space.
	HeaderPrefix *template.Template
	// Kid, Typ and Cty are jwt_headers; Typ defaults to JWT. Nil when absent.
	Kid, Typ, Cty *template.Template
	// Iss, Sub and Aud are jwt_payload; nil when absent.
	Iss, Sub, Aud *template.Template
	// AdditionalHeaders and AdditionalPayload are additional_jwt_headers and
	// additional_jwt_payload, in written order.
	AdditionalHeaders, AdditionalPayload []JWTEntry
	// Passphrase decrypts an encrypted PEM secret key; nil when absent.
	Passphrase *template.Template
	// Inject is request_option; nil means the Authorization header.
	Inject *RequestOption
}

// JWTEntry is one entry of additional_jwt_headers or additional_jwt_payload: the key is a
// template, a string value is a template, and any other value is used as written (a nested
// mapping as a *record.Object in written order), as the reference implementation does.
type JWTEntry struct {
	Key   *template.Template
	Value *template.Template // set for a string value
	Raw   any                // set for any other value
}

// jwtReserved are the names the reference refuses in the additional mappings.
var jwtReserved = map[string][]string{
	"additional_jwt_headers": {"kid", "alg", "typ", "cty"},
	"additional_jwt_payload": {"iss", "sub", "aud", "iat", "exp", "nbf"},
}

// jwt reads a JwtAuthenticator.
func (l *loader) jwt(c *comp, uses *[]optionUse) *JWT {
	j := &JWT{}
	if c.require("secret_key") != nil {
		l.credential(l.stringTemplate(c, "secret_key", authVars, &j.SecretKey), "the JWT secret key (`secret_key`)", "secret_key", false)
	}
	l.credential(l.stringTemplate(c, "passphrase", authVars, &j.Passphrase), "the JWT key passphrase (`passphrase`)", "passphrase", true)
	j.Base64EncodeSecretKey, _ = l.boolField(c, "base64_encode_secret_key")
	if a := c.require("algorithm"); a != nil {
		can, known := JWTAlgorithms[a.Value]
		switch {
		case a.Kind != yaml.ScalarNode || !known:
			names := make([]string, 0, len(JWTAlgorithms))
			for n := range JWTAlgorithms {
				names = append(names, n)
			}
			hint := ""
			if s := suggest(a.Value, names); s != "" && a.Kind == yaml.ScalarNode {
				hint = fmt.Sprintf("did you mean `%s`?", s)
			}
			l.at(a, c.fieldPath("algorithm"), diag.CodeType, fmt.Sprintf("`algorithm` must be one of HS256, HS384, HS512, ES256, ES256K, ES384, ES512, RS256, RS384, RS512, PS256, PS384, PS512, EdDSA, not %s", describe(a)), hint)
		case !can:
			l.unsupported(a, c.fieldPath("algorithm"), JWTAuth+" algorithm "+a.Value, "the secp256k1 curve is not in Go's standard library")
		default:
			j.Algorithm = a.Value
		}
	}
	d := int64(1200)
	j.TokenDuration = &d
	if v := c.vals["token_duration"]; isNull(v) && v != nil {
		j.TokenDuration = nil
	} else if v := c.get("token_duration"); v != nil {
		n, err := strconv.ParseInt(strings.TrimSpace(v.Value), 10, 64)
		if v.Kind != yaml.ScalarNode || err != nil {
			l.at(v, c.fieldPath("token_duration"), diag.CodeType, fmt.Sprintf("`token_duration` must be a whole number of seconds, not %s", describe(v)), "")
		} else {
			d = n
		}
	}
	l.stringTemplate(c, "header_prefix", authVars, &j.HeaderPrefix)
	if h := l.jwtPart(c, "jwt_headers", "JwtHeaders"); h != nil {
		l.stringTemplate(h, "kid", authVars, &j.Kid)
		l.stringTemplate(h, "typ", authVars, &j.Typ)
		l.stringTemplate(h, "cty", authVars, &j.Cty)
		if v := h.vals["typ"]; v == nil {
			j.Typ, _ = template.Compile("JWT", authVars)
		}
	} else {
		j.Typ, _ = template.Compile("JWT", authVars)
	}
	if p := l.jwtPart(c, "jwt_payload", "JwtPayload"); p != nil {
		l.stringTemplate(p, "iss", authVars, &j.Iss)
		l.stringTemplate(p, "sub", authVars, &j.Sub)
		l.stringTemplate(p, "aud", authVars, &j.Aud)
	}
	j.AdditionalHeaders = l.jwtEntries(c, "additional_jwt_headers")
	j.AdditionalPayload = l.jwtEntries(c, "additional_jwt_payload")
	if ro := c.get("request_option"); ro != nil {
		j.Inject = l.requestOption(ro, c.fieldPath("request_option"), c.params, false, nil, "the authenticator", uses)
	}
	return j
}

// jwtPart opens jwt_headers or jwt_payload, whose fields the reference fixes
// (additionalProperties: false): an unknown one is an error.
func (l *loader) jwtPart(c *comp, f, typ string) *comp {
	v := c.get(f)
	if v == nil {
		return nil
	}
	pc, ok := l.component(v, c.fieldPath(f), c.params, typ)
	if !ok {
		return nil
	}
	for i := 0; i+1 < len(pc.n.Content); i += 2 {
		k := pc.n.Content[i]
		if fieldSets[typ][k.Value] {
			continue
		}
		l.at(k, pc.fieldPath(k.Value), diag.CodeUnknownField, fmt.Sprintf("unknown field `%s` in %s", k.Value, f),
			fmt.Sprintf("%s has only %s; put other claims in additional_%s", f, strings.Join(fields[typ], ", "), f))
	}
	return pc
}

// jwtEntries reads additional_jwt_headers or additional_jwt_payload.
func (l *loader) jwtEntries(c *comp, f string) []JWTEntry {
	m := c.get(f)
	if isEmpty(m) {
		return nil
	}
	if m.Kind != yaml.MappingNode {
		l.at(m, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a mapping, not %s", f, kindName(m)), "")
		return nil
	}
	out := make([]JWTEntry, 0, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		p := join(c.fieldPath(f), k.Value)
		for _, r := range jwtReserved[f] {
			if k.Value == r {
				l.at(k, p, diag.CodeType, fmt.Sprintf("`%s` is reserved and cannot be set in %s", r, f),
					"the authenticator sets it: "+strings.Join(jwtReserved[f], ", ")+" are reserved")
			}
		}
		// The templates compile later, into the entry in place (out never grows past its
		// capacity).
		out = append(out, JWTEntry{})
		e := &out[len(out)-1]
		l.tmpl(k, p, f, authVars, &e.Key)
		if isString(v) {
			l.tmpl(v, p, f, authVars, &e.Value)
		} else {
			e.Raw = orderedValue(v)
		}
	}
	return out
}

// orderedValue is toValue with mappings kept in written order.
func orderedValue(n *yaml.Node) any {
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.AliasNode:
		return orderedValue(n.Alias)
	case yaml.MappingNode:
		o := &record.Object{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			o.Set(n.Content[i].Value, orderedValue(n.Content[i+1]))
		}
		return o
	case yaml.SequenceNode:
		s := make([]any, len(n.Content))
		for i, c := range n.Content {
			s[i] = orderedValue(c)
		}
		return s
	}
	return toValue(n)
}

// profileAssertion reads the JwtAuthenticator of an OAuthAuthenticator's
// profile_assertion.
func (l *loader) profileAssertion(c *comp) *Authenticator {
	n := c.get("profile_assertion")
	if n == nil {
		return nil
	}
	pc, ok := l.component(n, c.fieldPath("profile_assertion"), c.params, JWTAuth)
	if !ok {
		return nil
	}
	if pc.typ != JWTAuth {
		l.at(n, pc.path, diag.CodeType, fmt.Sprintf("`profile_assertion` must be a JwtAuthenticator, not %s", pc.typ), "")
		return nil
	}
	pc.checkFields(JWTAuth)
	return &Authenticator{Type: JWTAuth, Pos: pos(n), Parameters: pc.params.values(), JWT: l.jwt(pc, nil)}
}
