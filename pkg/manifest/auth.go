package manifest

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// streamAuth records which authenticator a stream's requester resolves to.
type streamAuth struct {
	name      string
	path      string
	requester *yaml.Node
	node      *yaml.Node // nil: no authenticator (NoAuth)
	params    *params
}

type authKey struct {
	n *yaml.Node
	p *params
}

// credential is a field that must read the testing values (seed rule).
type credential struct {
	p          *pendingTemplate
	what       string
	field      string
	allowEmpty bool
	// runtime accepts a value read from anything known only at run time (a response, a
	// partition), not only the testing values: a request option named like a credential may
	// carry a token an API returned.
	runtime bool
}

func (l *loader) credential(p *pendingTemplate, what, field string, allowEmpty bool) {
	if p != nil {
		l.creds = append(l.creds, &credential{p: p, what: what, field: field, allowEmpty: allowEmpty})
	}
}

// apiConstant says whether a credential field's literal cannot be a secret: empty, at most
// three characters, or a lower-case word of letters and underscores (`x`, `api`,
// `anystring`, `api_token`) — a constant the API documents. Anything else (`abc123`,
// `sk_live_…`, `Bearer …`) could be a credential.
func apiConstant(v string) bool {
	v = strings.TrimSpace(v)
	if len(v) <= 3 {
		return true
	}
	for _, c := range v {
		if !(c >= 'a' && c <= 'z' || c == '_') {
			return false
		}
	}
	return true
}

// checkCredentials reports credential fields written as literals (after compilation).
func (l *loader) checkCredentials() {
	for _, c := range l.creds {
		if !c.p.ok || (c.allowEmpty && strings.TrimSpace(c.p.src) == "") {
			continue
		}
		t := *c.p.dst
		if t != nil && (t.Reads("config") || c.runtime && !t.ReadsOnly("parameters")) {
			continue
		}
		key := c.field
		if i := strings.LastIndex(key, "."); i >= 0 {
			key = key[i+1:]
		}
		if t != nil && t.IsLiteral() && apiConstant(t.Source()) {
			// bamboo-hr's `password: x`, mailchimp's `username: anystring`: the API takes the
			// key in one field and any constant in the other. No secret can be that.
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeCredentialLiteral, Path: c.p.path,
				Line: c.p.node.Line, Column: c.p.node.Column,
				Message: fmt.Sprintf("%s is the constant %q written in the definition: read as a fixed value of the API, not a credential", c.what, t.Source()),
				Hint:    fmt.Sprintf("if it is a credential, write `{{ config['%s'] }}` and put the value in the testing values", key)})
			continue
		}
		l.at(c.p.node, c.p.path, diag.CodeCredentialLiteral,
			fmt.Sprintf("%s is written in the definition; credentials must come from the testing values", c.what),
			fmt.Sprintf("write `{{ config['%s'] }}` and put the value in the testing values", key))
	}
}

// authenticator reads one authenticator. login is true for the authenticator of a session
// token's login requester, which may only be NoAuth, Basic, Bearer or ApiKey.
func (l *loader) authenticator(n *yaml.Node, path string, parent *params, login bool, uses *[]optionUse) *Authenticator {
	c, ok := l.component(n, path, parent, "")
	if !ok {
		return nil
	}
	if login && (c.typ == OAuthAuth || c.typ == SessionAuth || c.typ == SelectiveAuth || c.typ == LegacySessionAuth) {
		l.at(n, path, diag.CodeType, fmt.Sprintf("the login requester of a SessionTokenAuthenticator cannot use %s", c.typ),
			"use NoAuth, BasicHttpAuthenticator, BearerAuthenticator or ApiKeyAuthenticator for the login request")
		return nil
	}
	if _, known := fieldSets[c.typ]; !known || c.typ == "Bearer" || c.typ == "ApiKey" || c.typ == "refresh_token_updater" {
		l.unsupported(n, path, c.typ, "authenticator")
		return nil
	}
	key := authKey{n, c.params}
	if a, ok := l.authCache[key]; ok && !login {
		return a
	}
	c.checkFields(c.typ)
	a := &Authenticator{Type: c.typ, Pos: pos(n), Parameters: c.params.values(), Key: fingerprint(n, c.params, nil)}
	switch c.typ {
	case NoAuth:
		a = nil
	case BasicAuth:
		if c.require("username") != nil {
			l.credential(l.stringTemplate(c, "username", authVars, &a.Username), "the username", "username", false)
		}
		l.credential(l.stringTemplate(c, "password", authVars, &a.Password), "the password", "password", true)
	case BearerAuth:
		if c.require("api_token") != nil {
			l.credential(l.stringTemplate(c, "api_token", authVars, &a.APIToken), "the bearer token (`api_token`)", "api_token", false)
		}
	case APIKeyAuth:
		if c.require("api_token") != nil {
			l.credential(l.stringTemplate(c, "api_token", authVars, &a.APIToken), "the API key (`api_token`)", "api_token", false)
		}
		h, in := c.get("header"), c.get("inject_into")
		switch {
		case h != nil && in != nil:
			l.at(c.keys["inject_into"], c.fieldPath("inject_into"), diag.CodeOptionConflict, "both `header` and `inject_into` are set", "keep `inject_into` (`header` is the legacy form)")
		case in != nil:
			a.Inject = l.requestOption(in, c.fieldPath("inject_into"), c.params, false, nil, "the authenticator", uses)
		case h != nil:
			o := &RequestOption{Pos: pos(h), InjectInto: InjectHeader}
			if l.stringTemplate(c, "header", authVars, &o.FieldName) != nil {
				a.Inject = o
				if uses != nil && !strings.Contains(h.Value, "{") {
					*uses = append(*uses, optionUse{place: InjectHeader, source: "the authenticator", node: h})
				}
			}
		default:
			l.at(n, path, diag.CodeMissingField, "ApiKeyAuthenticator is missing the required field `inject_into`", "")
		}
	case OAuthAuth:
		a.OAuth = l.oauth(c)
	case SessionAuth:
		a.Session = l.session(c)
	case SelectiveAuth:
		a.Selective = l.selective(c, uses)
	case LegacySessionAuth:
		a.Legacy = l.legacy(c)
	case JWTAuth:
		a.JWT = l.jwt(c, uses)
	case RateLimitedAuth:
		a.RateLimited = l.rateLimited(c)
	}
	if !login {
		if l.authCache == nil {
			l.authCache = map[authKey]*Authenticator{}
		}
		l.authCache[key] = a
	}
	return a
}

var grantTypes = map[string]bool{"refresh_token": true, "client_credentials": true}

func (l *loader) oauth(c *comp) *OAuth {
	o := &OAuth{
		AccessTokenName:       l.plainString(c, "access_token_name", "access_token"),
		ExpiresInName:         l.plainString(c, "expires_in_name", "expires_in"),
		ClientIDName:          l.plainString(c, "client_id_name", "client_id"),
		ClientSecretName:      l.plainString(c, "client_secret_name", "client_secret"),
		RefreshTokenName:      l.plainString(c, "refresh_token_name", "refresh_token"),
		GrantTypeName:         l.plainString(c, "grant_type_name", "grant_type"),
		TokenExpiryDateFormat: l.plainString(c, "token_expiry_date_format", ""),
	}
	if c.get("token_refresh_endpoint") == nil && c.get("access_token_value") != nil {
		// The access token flow: the CDK sends access_token_value as a bearer token and never
		// renders another field (ticktick.yaml), though it wants the client credentials
		// written.
		l.credential(l.stringTemplate(c, "access_token_value", authVars, &o.AccessTokenValue), "the access token (`access_token_value`)", "access_token", false)
		profile, _ := l.boolField(c, "use_profile_assertion")
		if !profile && (c.get("client_id") == nil || c.get("client_secret") == nil) {
			l.at(c.n, c.path, diag.CodeMissingField, "OAuthAuthenticator needs both `client_id` and `client_secret`, as the Airbyte CDK does, even when it sends `access_token_value` without a `token_refresh_endpoint`", "")
		}
		return o
	}
	if c.require("token_refresh_endpoint") != nil {
		l.stringTemplate(c, "token_refresh_endpoint", authVars, &o.TokenRefreshEndpoint)
	}
	grant := "refresh_token"
	if g := c.get("grant_type"); g != nil {
		l.stringTemplate(c, "grant_type", authVars, &o.GrantType)
		if g.Kind == yaml.ScalarNode && !strings.Contains(g.Value, "{") {
			grant = g.Value
			if !grantTypes[grant] {
				l.at(g, c.fieldPath("grant_type"), diag.CodeGrantType,
					fmt.Sprintf("OAuth grant type `%s` is not supported: only refresh_token and client_credentials can be defined here", grant),
					"other grant types need code-based connector development")
			}
		}
	}
	l.credential(l.stringTemplate(c, "client_id", authVars, &o.ClientID), "the OAuth client id", "client_id", false)
	l.credential(l.stringTemplate(c, "client_secret", authVars, &o.ClientSecret), "the OAuth client secret", "client_secret", false)
	l.credential(l.stringTemplate(c, "refresh_token", authVars, &o.RefreshToken), "the refresh token", "refresh_token", false)
	l.credential(l.stringTemplate(c, "access_token_value", authVars, &o.AccessTokenValue), "the access token (`access_token_value`)", "access_token", false)
	l.stringTemplate(c, "token_expiry_date", authVars, &o.TokenExpiryDate)
	profile, _ := l.boolField(c, "use_profile_assertion")
	if grant == "refresh_token" && !profile && c.get("refresh_token") == nil && c.get("refresh_token_updater") == nil && c.get("access_token_value") == nil {
		l.at(c.n, c.path, diag.CodeMissingField, "OAuthAuthenticator is missing the required field `refresh_token` (grant type refresh_token)", "")
	}
	if sc := c.get("scopes"); sc != nil {
		if sc.Kind != yaml.SequenceNode {
			l.at(sc, c.fieldPath("scopes"), diag.CodeType, fmt.Sprintf("`scopes` must be a list of strings, not %s", kindName(sc)), "")
		} else {
			o.Scopes = make([]*template.Template, len(sc.Content))
			for i, s := range sc.Content {
				p := fmt.Sprintf("%s[%d]", c.fieldPath("scopes"), i)
				if s.Kind != yaml.ScalarNode {
					l.at(s, p, diag.CodeType, fmt.Sprintf("a scope must be a string, not %s", kindName(s)), "")
					continue
				}
				l.tmpl(s, p, "scopes", authVars, &o.Scopes[i])
			}
		}
	}
	for _, f := range []string{"refresh_request_body", "refresh_request_headers"} {
		v := c.get(f)
		if isEmpty(v) {
			continue
		}
		if v.Kind != yaml.MappingNode {
			l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a mapping, not %s", f, kindName(v)), "")
			continue
		}
		t := l.tree(v, c.fieldPath(f), f, authVars)
		if f == "refresh_request_body" {
			o.RefreshRequestBody = t
			l.secretEntries(v, c.fieldPath(f))
		} else {
			o.RefreshRequestHeaders = t
		}
	}
	o.UseProfileAssertion = profile
	o.ProfileAssertion = l.profileAssertion(c)
	if profile && c.get("profile_assertion") == nil {
		l.at(c.n, c.path, diag.CodeMissingField, "OAuthAuthenticator is missing the required field `profile_assertion` (use_profile_assertion is true)", "")
	}
	if un := c.get("refresh_token_updater"); un != nil {
		uc, ok := l.component(un, c.fieldPath("refresh_token_updater"), c.params, "refresh_token_updater")
		if ok {
			uc.checkFields("refresh_token_updater")
			u := &TokenUpdater{
				RefreshTokenName:          l.plainString(uc, "refresh_token_name", "refresh_token"),
				AccessTokenConfigPath:     []string{"credentials", "access_token"},
				RefreshTokenConfigPath:    []string{"credentials", "refresh_token"},
				TokenExpiryDateConfigPath: []string{"credentials", "token_expiry_date"},
			}
			if p, ok := l.stringList(uc, "access_token_config_path"); ok {
				u.AccessTokenConfigPath = p
			}
			if p, ok := l.stringList(uc, "refresh_token_config_path"); ok {
				u.RefreshTokenConfigPath = p
			}
			if p, ok := l.stringList(uc, "token_expiry_date_config_path"); ok {
				u.TokenExpiryDateConfigPath = p
			}
			o.Updater = u
		}
	}
	return o
}

// session reads a SessionTokenAuthenticator.
func (l *loader) session(c *comp) *Session {
	s := &Session{}
	if ln := c.require("login_requester"); ln != nil {
		rc, ok := l.component(ln, c.fieldPath("login_requester"), c.params, "HttpRequester")
		if ok {
			if rc.typ != "HttpRequester" {
				l.unsupported(ln, rc.path, rc.typ, "login_requester")
			} else {
				s.Login = l.requester(rc, authVars, nil, nil)
			}
		}
	}
	if c.require("session_token_path") != nil {
		s.TokenPath, _ = l.stringList(c, "session_token_path")
	}
	if d := c.get("expiration_duration"); d != nil {
		dur, err := parseExpiration(d)
		if err != nil {
			l.at(d, c.fieldPath("expiration_duration"), diag.CodeType, fmt.Sprintf("`expiration_duration` must be an ISO 8601 duration or a number of seconds, not %s", describe(d)), "write PT1H, P1D, PT15M or 3600")
		} else {
			s.Expiration = dur
		}
	}
	l.decoder(c, "decoder")
	if ra := c.require("request_authentication"); ra != nil {
		rc, ok := l.component(ra, c.fieldPath("request_authentication"), c.params, "")
		if ok {
			switch rc.typ {
			case "Bearer":
				rc.checkFields("Bearer")
				s.RequestAuth = "Bearer"
			case "ApiKey":
				rc.checkFields("ApiKey")
				s.RequestAuth = "ApiKey"
				if in := rc.require("inject_into"); in != nil {
					s.Inject = l.requestOption(in, rc.fieldPath("inject_into"), rc.params, false, []string{InjectHeader, InjectParameter}, "the authenticator", nil)
				}
				if rc.get("api_token") != nil {
					l.stringTemplate(rc, "api_token", sessionTokenVars, &s.Token)
				}
			default:
				l.at(ra, rc.path, diag.CodeType, fmt.Sprintf("`request_authentication` must be of type Bearer or ApiKey, not %s", rc.typ), "")
			}
			if s.Token == nil {
				s.Token, _ = template.Compile("{{ session_token }}", sessionTokenVars)
			}
		}
	}
	return s
}

// secretEntries applies the credential rule to the values of a login body whose key names
// a secret (password, secret, token, api key...).
func (l *loader) secretEntries(m *yaml.Node, path string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if !secretKey(k.Value) {
			continue
		}
		if isString(v) {
			var t *template.Template
			p := l.tmpl(v, join(path, k.Value), k.Value, authVars, &t)
			l.credential(p, fmt.Sprintf("the secret `%s`", k.Value), k.Value, true)
		}
	}
}

var wordSplit = regexp.MustCompile(`[^a-z0-9]+`)

// secretKey reports a key that names a secret value: password, secret, credential, or a
// name ending in token or key (api_key, access_token; not token_type).
func secretKey(key string) bool {
	var b strings.Builder
	for i, r := range key {
		if i > 0 && r >= 'A' && r <= 'Z' {
			b.WriteByte('_')
		}
		b.WriteRune(r)
	}
	words := wordSplit.Split(strings.ToLower(b.String()), -1)
	for len(words) > 0 && words[len(words)-1] == "" {
		words = words[:len(words)-1]
	}
	if len(words) == 0 {
		return false
	}
	for _, w := range words {
		switch w {
		case "password", "passwd", "pwd", "secret", "apikey", "credential", "credentials", "passphrase":
			return true
		}
	}
	last := words[len(words)-1]
	return last == "token" || last == "key" || last == "apikey"
}

var isoDuration = regexp.MustCompile(`^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?$`)

// parseExpiration reads an ISO 8601 duration (PT1H, P1D, PT15M; a month is 30 days, a
// year 365) or a bare number of seconds, also written as a string ("7200").
func parseExpiration(n *yaml.Node) (time.Duration, error) {
	if n.Kind != yaml.ScalarNode {
		return 0, fmt.Errorf("not a scalar")
	}
	v := strings.TrimSpace(n.Value)
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(secs) * time.Second, nil
	}
	m := isoDuration.FindStringSubmatch(strings.ToUpper(v))
	if m == nil || v == "P" || strings.HasSuffix(strings.ToUpper(v), "T") {
		return 0, fmt.Errorf("not an ISO 8601 duration")
	}
	units := []time.Duration{365 * 24 * time.Hour, 30 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour, time.Minute}
	var d time.Duration
	for i, u := range units {
		if m[i+1] != "" {
			x, _ := strconv.ParseInt(m[i+1], 10, 64)
			d += time.Duration(x) * u
		}
	}
	if m[7] != "" {
		f, _ := strconv.ParseFloat(m[7], 64)
		d += time.Duration(f * float64(time.Second))
	}
	return d, nil
}

// fingerprint is a canonical text of an authenticator as it applies to a stream: its
// resolved fields (sorted), plus the fields its $parameters fill, less the fields in skip.
// Equal fingerprints mean the same authenticator; equal without credentialFields, the same
// method.
func fingerprint(n *yaml.Node, p *params, skip map[string]bool) string {
	if n == nil {
		return NoAuth
	}
	var b strings.Builder
	canon(&b, n, skip)
	if n.Kind == yaml.MappingNode {
		typ := ""
		if t := mapGet(n, "type"); t != nil {
			typ = t.Value
		}
		var extra []string
		for f := range fieldSets[typ] {
			if f != "type" && f != "$parameters" && !skip[f] && isEmpty(mapGet(n, f)) && p.get(f) != nil {
				var e strings.Builder
				canon(&e, p.get(f), skip)
				extra = append(extra, f+"="+e.String())
			}
		}
		sort.Strings(extra)
		b.WriteString(strings.Join(extra, ","))
	}
	if t := mapGet(n, "type"); t != nil && t.Value == NoAuth {
		return NoAuth
	}
	return b.String()
}

// authDefaults are the values an authenticator field has when it is not written; a field
// written with its default does not make two authenticators different.
var authDefaults = map[string]string{
	"client_id_name": "client_id", "client_secret_name": "client_secret", "refresh_token_name": "refresh_token",
	"grant_type_name": "grant_type", "access_token_name": "access_token", "expires_in_name": "expires_in",
	"grant_type": "refresh_token", "use_profile_assertion": "false", "password": "", "http_method": "GET",
}

// credentialFields are the fields of an authenticator that say which credentials it sends,
// not how it sends them: two authenticators that differ only there are one method.
var credentialFields = map[string]bool{
	"api_token": true, "username": true, "password": true, "client_id": true, "client_secret": true,
	"refresh_token": true, "access_token_value": true, "token_expiry_date": true, "secret_key": true,
}

// canon writes a canonical text of an authenticator's node: keys sorted, $parameters, the
// keys its type does not have (leftovers of inherited $parameters such as `name`) and the
// fields written with their default left out, and the keys in skip too.
func canon(b *strings.Builder, n *yaml.Node, skip map[string]bool) {
	switch n.Kind {
	case yaml.MappingNode:
		type kv struct {
			k string
			v *yaml.Node
		}
		var kvs []kv
		known := fieldSets[""]
		if t := mapGet(n, "type"); t != nil {
			known = fieldSets[t.Value]
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i].Value, n.Content[i+1]
			if k == "$parameters" || skip[k] || known != nil && !known[k] {
				continue
			}
			if d, ok := authDefaults[k]; ok && v.Kind == yaml.ScalarNode && v.Value == d {
				continue
			}
			kvs = append(kvs, kv{n.Content[i].Value, n.Content[i+1]})
		}
		sort.Slice(kvs, func(i, j int) bool { return kvs[i].k < kvs[j].k })
		b.WriteByte('{')
		for _, e := range kvs {
			fmt.Fprintf(b, "%q:", e.k)
			canon(b, e.v, skip)
			b.WriteByte(',')
		}
		b.WriteByte('}')
	case yaml.SequenceNode:
		b.WriteByte('[')
		for _, c := range n.Content {
			canon(b, c, skip)
			b.WriteByte(',')
		}
		b.WriteByte(']')
	case yaml.AliasNode:
		canon(b, n.Alias, skip)
	default:
		fmt.Fprintf(b, "%s%q", n.Tag, n.Value)
	}
}

func authName(n *yaml.Node) string {
	if n == nil {
		return "no authenticator"
	}
	if t := mapGet(n, "type"); t != nil && t.Value != "" {
		return t.Value
	}
	return "an authenticator"
}

// checkAuthenticators applies the one-authenticator rule and sets def.Authenticator.
func (l *loader) checkAuthenticators(def *Definition) {
	if len(l.streams) == 0 {
		return
	}
	first := l.streams[0]
	fp := fingerprint(first.node, first.params, credentialFields)
	for _, s := range l.streams[1:] {
		if fingerprint(s.node, s.params, credentialFields) == fp {
			continue // one method; each stream sends the credentials its own requester names
		}
		at := s.node
		if at == nil {
			at = s.requester
		}
		where := func(x *streamAuth) string {
			n := x.node
			if n == nil {
				n = x.requester
			}
			if n == nil {
				return authName(x.node)
			}
			return fmt.Sprintf("%s (line %d:%d)", authName(x.node), n.Line, n.Column)
		}
		l.at(at, s.path+".retriever.requester.authenticator", diag.CodeMixedAuthenticators,
			fmt.Sprintf("stream `%s` uses %s, but stream `%s` uses %s; one authenticator applies to every stream",
				s.name, where(s), first.name, where(first)),
			"define the authenticator once under `definitions` and `$ref` it from every requester")
		break
	}
	for _, s := range append(def.Streams[:len(def.Streams):len(def.Streams)], def.templates()...) {
		if s.Requester != nil && s.Requester.Authenticator != nil {
			def.Authenticator = s.Requester.Authenticator
			break
		}
	}
}

// optionUse is a statically known request option name (the value of node) and who sets it.
type optionUse struct {
	place, source string
	node          *yaml.Node
}

// checkStaticConflicts reports two sources of one stream setting the same request
// parameter or body field (headers are left to run time: the authenticator's win).
func (l *loader) checkStaticConflicts() {
	type placed struct{ place, name string }
	for _, uses := range l.conflicts {
		// Only a place that two sources set can hold a conflict (a large request body
		// alone costs no index of its keys).
		sources := map[string]map[string]bool{}
		for _, u := range uses {
			if sources[u.place] == nil {
				sources[u.place] = map[string]bool{}
			}
			sources[u.place][u.source] = true
		}
		first := map[placed]int{}
		for i, u := range uses {
			if u.place == InjectHeader || len(sources[u.place]) < 2 {
				continue
			}
			k := placed{u.place, u.node.Value}
			j, ok := first[k]
			if !ok {
				first[k] = i
				continue
			}
			prev := uses[j]
			if prev.source == u.source {
				continue
			}
			if pagerPair(prev.source, u.source) {
				// The CDK's DefaultPaginator writes the token, then the page size, into one
				// mapping: the page size wins, and no error is raised.
				l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeOptionConflict, Line: u.node.Line, Column: u.node.Column,
					Message: fmt.Sprintf("%s `%s` is set by %s and by %s (line %d:%d): the page size overwrites the page token, as in the Airbyte CDK",
						placeName(u.place), u.node.Value, u.source, prev.source, prev.node.Line, prev.node.Column),
					Hint: "give the page token and the page size different names, or remove one of the options"})
				continue
			}
			l.at(u.node, "", diag.CodeOptionConflict,
				fmt.Sprintf("%s `%s` is set by %s and by %s (line %d:%d)", placeName(u.place), u.node.Value, u.source, prev.source, prev.node.Line, prev.node.Column),
				"set it in one place only")
		}
	}
}

// pagerPair says whether two sources are the page token and page size options of one
// paginator.
func pagerPair(a, b string) bool {
	const token, size = "the page_token_option", "the page_size_option"
	return a == token && b == size || a == size && b == token
}

func placeName(p string) string {
	switch p {
	case InjectParameter:
		return "query parameter"
	case InjectBodyData:
		return "form field"
	case InjectBodyJSON:
		return "JSON body field"
	}
	return "header"
}

// CheckGrantType checks a templated OAuth grant_type once the testing values are known:
// only refresh_token and client_credentials can be defined without code.
func CheckGrantType(def *Definition, config map[string]any) error {
	if def == nil || def.Authenticator == nil || def.Authenticator.OAuth == nil || def.Authenticator.OAuth.GrantType == nil ||
		def.Authenticator.OAuth.UseProfileAssertion {
		return nil
	}
	t := def.Authenticator.OAuth.GrantType
	g, err := t.Render(template.Globals{Config: config}.Vars(def.Authenticator.Parameters))
	if err != nil {
		return fmt.Errorf("evaluate the OAuth grant_type: %w", err)
	}
	if g == "" {
		g = "refresh_token"
	}
	if !grantTypes[g] {
		return fmt.Errorf("OAuth grant type %q is not supported: only refresh_token and client_credentials can be defined; other grant types need code-based connector development", g)
	}
	return nil
}
