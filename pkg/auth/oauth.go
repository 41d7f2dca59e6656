package auth

import (
	"context"
	"errors"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// maxRefreshMargin caps how early a token is refreshed before it expires.
const maxRefreshMargin = 60 * time.Second

// oauth is the partial, refresh-based OAuthAuthenticator. It is the one token source of the
// connector: every stream shares it, and its mutex makes concurrent Apply calls wait for a
// single refresh instead of starting one each.
type oauth struct {
	env Env
	def *manifest.OAuth

	// Rendered once from the definition and the testing values.
	endpoint               string
	grant                  string
	clientID, clientSecret string
	scopes                 []string
	headers                [][2]string
	body                   *record.Object
	form                   bool
	// triedForm says a JSON body was refused once and the form tried; typed says the
	// refresh_request_headers chose the body's Content-Type, which is then kept.
	triedForm, typed bool
	// assertion signs the JWT of the profile assertion flow (use_profile_assertion).
	assertion *jwtAuth

	mu           sync.Mutex
	refreshToken string    // the one the next refresh sends (rotated by the updater)
	token        string    // current access token, "" before the first fetch
	expiry       time.Time // zero when the provider gave no expiry
	obtained     time.Time // when the token was fetched (or loaded)
}

// oauthKind is OAuthAuthenticator: an access token fetched from token_refresh_endpoint (or
// given by the testing values), cached and refreshed before it expires.
var oauthKind = kind{
	make: newOAuth,
	secrets: func(a *manifest.Authenticator) credentials {
		o := a.OAuth
		c := credentials{templates: []*template.Template{o.ClientID, o.ClientSecret, o.RefreshToken, o.AccessTokenValue},
			trees: []*manifest.Tree{o.RefreshRequestBody}}
		if o.ProfileAssertion != nil {
			c.inner = append(c.inner, o.ProfileAssertion)
		}
		return c
	},
	tokens: func(a *manifest.Authenticator) []TokenPath {
		o := a.OAuth
		out := []TokenPath{tokenPath("access_token", o.AccessTokenName)}
		refresh := o.RefreshTokenName
		if o.Updater != nil {
			refresh = o.Updater.RefreshTokenName
		}
		if refresh != "" {
			out = append(out, tokenPath("refresh_token", refresh))
		}
		return out
	},
}

func newOAuth(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
	d := a.OAuth
	render := renderer{typ: a.Type, vars: vars, trim: true}.render
	if d.TokenRefreshEndpoint == nil {
		// The access token flow: the token as the testing values give it, never refreshed.
		tok, err := render(d.AccessTokenValue, "access_token_value")
		if err != nil {
			return nil, err
		}
		if tok == "" {
			return nil, &ConfigError{Msg: fmt.Sprintf("%s has no token_refresh_endpoint, so access_token_value (%s) is the token, and it is empty in the testing values; set it",
				a.Type, sourceOf(d.AccessTokenValue))}
		}
		env.secret(tok)
		return accessToken{bearer{token: tok}}, nil
	}
	o := &oauth{env: env, def: d, grant: "refresh_token", form: env.FormTokenRequests}
	var err error
	if o.endpoint, err = render(d.TokenRefreshEndpoint, "token_refresh_endpoint"); err != nil {
		return nil, err
	}
	if o.endpoint == "" {
		return nil, fmt.Errorf("%s: token_refresh_endpoint renders empty; check the testing values", a.Type)
	}
	if d.GrantType != nil {
		g, err := render(d.GrantType, "grant_type")
		if err != nil {
			return nil, err
		}
		if g != "" {
			o.grant = g
		}
	}
	if d.UseProfileAssertion {
		if o.assertion, err = newProfileAssertion(d.ProfileAssertion, env); err != nil {
			return nil, err
		}
		o.grant = jwtBearerGrant
	}
	if o.clientID, err = render(d.ClientID, "client_id"); err != nil {
		return nil, err
	}
	if o.clientSecret, err = render(d.ClientSecret, "client_secret"); err != nil {
		return nil, err
	}
	if o.refreshToken, err = render(d.RefreshToken, "refresh_token"); err != nil {
		return nil, err
	}
	env.secret(o.clientID, o.clientSecret, o.refreshToken)
	if o.grant == "refresh_token" && o.refreshToken == "" {
		// The seed: with the refresh_token grant, the end user must provide a refresh token.
		return nil, &ConfigError{Msg: fmt.Sprintf("the OAuth grant type refresh_token needs a refresh token, but refresh_token (%s) is empty in the testing values; set it, or use grant_type client_credentials",
			sourceOf(d.RefreshToken))}
	}
	for i, t := range d.Scopes {
		s, err := render(t, fmt.Sprintf("scopes[%d]", i))
		if err != nil {
			return nil, err
		}
		if s != "" {
			o.scopes = append(o.scopes, s)
		}
	}
	if d.RefreshRequestHeaders != nil {
		obj, err := renderObject(d.RefreshRequestHeaders, request.NewScope(vars, env.Redactor))
		if err != nil {
			return nil, fmt.Errorf("%s.refresh_request_headers: %w", a.Type, err)
		}
		for _, k := range obj.Keys() {
			v, _ := obj.Get(k)
			val := template.ToString(v)
			o.headers = append(o.headers, [2]string{k, val})
			if http.CanonicalHeaderKey(k) == "Content-Type" {
				mt, _, _ := mime.ParseMediaType(val)
				o.form = mt == "application/x-www-form-urlencoded"
				o.typed = true
			}
			if http.CanonicalHeaderKey(k) == "Authorization" || secretName(k) {
				env.secret(val, strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(val, "Basic "), "Bearer ")))
			}
		}
	}
	if d.RefreshRequestBody != nil {
		if o.body, err = renderObject(d.RefreshRequestBody, request.NewScope(vars, env.Redactor)); err != nil {
			return nil, fmt.Errorf("%s.refresh_request_body: %w", a.Type, err)
		}
		for _, k := range o.body.Keys() {
			if secretName(k) {
				v, _ := o.body.Get(k)
				env.secret(template.ToString(v))
			}
		}
	}
	if err := o.loadInitial(render); err != nil {
		return nil, err
	}
	return o, nil
}

// accessToken is an OAuthAuthenticator in the access token flow: a bearer token.
type accessToken struct{ bearer }

func (accessToken) Name() string { return manifest.OAuthAuth }

// loadInitial takes the access token the testing values already hold, when its expiry is
// still in the future: the refresh_token_updater paths first, then access_token_value and
// token_expiry_date.
func (o *oauth) loadInitial(render func(*template.Template, string) (string, error)) error {
	var tok, exp string
	if u := o.def.Updater; u != nil {
		tok = configString(o.env.Globals.Config, u.AccessTokenConfigPath)
		exp = configString(o.env.Globals.Config, u.TokenExpiryDateConfigPath)
	}
	var err error
	if tok == "" {
		if tok, err = render(o.def.AccessTokenValue, "access_token_value"); err != nil {
			return err
		}
	}
	if exp == "" {
		if exp, err = render(o.def.TokenExpiryDate, "token_expiry_date"); err != nil {
			return err
		}
	}
	if tok == "" {
		return nil
	}
	o.env.secret(tok)
	now := o.env.Now()
	if exp == "" {
		// Without an expiry the token can only be trusted when nothing could replace it.
		if o.grant == "refresh_token" && o.refreshToken == "" {
			o.token, o.obtained = tok, now
		}
		return nil
	}
	expiry, err := parseStoredExpiry(exp, o.def.TokenExpiryDateFormat)
	if err != nil {
		return fmt.Errorf("OAuthAuthenticator: the stored token expiry %q: %w", exp, err)
	}
	if expiry.After(now) {
		o.token, o.expiry, o.obtained = tok, expiry, now
	}
	return nil
}

// Apply sets Authorization: Bearer with a valid access token, fetching one first when there
// is none or when it is about to expire.
func (o *oauth) Apply(ctx context.Context, b *request.Builder) error {
	o.mu.Lock()
	if o.stale(o.env.Now()) {
		if err := o.refresh(ctx); err != nil {
			o.mu.Unlock()
			return err
		}
	}
	tok := o.token
	o.mu.Unlock()
	return b.SetHeader("Authorization", "Bearer "+tok, "the authenticator")
}

// Renew fetches a new token after the API refused the current one (a 401).
func (o *oauth) Renew(ctx context.Context) (bool, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.refresh(ctx); err != nil {
		return false, err
	}
	return true, nil
}

func (o *oauth) Name() string { return manifest.OAuthAuth }

// stale reports whether the token must be fetched before use: there is none, or less than
// min(60 s, half its lifetime) of validity remains. A token without an expiry is kept until
// the API refuses it.
func (o *oauth) stale(now time.Time) bool {
	if o.token == "" {
		return true
	}
	if o.expiry.IsZero() {
		return false
	}
	return remainingTooShort(o.obtained, o.expiry, now)
}

// remainingTooShort is the refresh rule: less than min(60 s, half the lifetime) remains.
func remainingTooShort(obtained, expiry, now time.Time) bool {
	remaining := expiry.Sub(now)
	if remaining <= 0 {
		return true
	}
	margin := min(maxRefreshMargin, expiry.Sub(obtained)/2)
	return remaining < margin
}

// refusesJSON are the answers of a token endpoint that wants the form-encoded body of
// RFC 6749 (section 4.1.3) rather than JSON: Microsoft's and Spotify's answer 400.
var refusesJSON = map[int]bool{http.StatusBadRequest: true, http.StatusUnauthorized: true, http.StatusUnsupportedMediaType: true}

// send sends the token request, JSON or form-encoded as o.form says.
func (o *oauth) send(ctx context.Context) (*httpx.Response, error) {
	b, err := o.tokenRequest()
	if err != nil {
		return nil, fmt.Errorf("OAuth token request: %w", err)
	}
	req, err := b.Build()
	if err != nil {
		return nil, fmt.Errorf("OAuth token request: %w", err)
	}
	req.Unpaced = true // outside the api_budget, as the CDK sends it
	return o.env.Client.Do(ctx, req)
}

// refresh asks the token endpoint for a new access token. o.mu is held. A JSON body that
// the endpoint refuses (400, 401, 415) is sent once more form-encoded, as the CDK sends it;
// when that works, the rest of the run sends the form, and Note says so once.
func (o *oauth) refresh(ctx context.Context) error {
	if o.assertion == nil && o.clientID == "" {
		// The CDK's get_client_id refuses an empty client id when it builds the request;
		// a client secret may be empty (the CDK warns and sends it).
		return &ConfigError{Msg: fmt.Sprintf("the OAuth token refresh needs a client id, but client_id (%s) renders empty with the testing values; set it (the Airbyte CDK refuses this refresh too)",
			sourceOf(o.def.ClientID))}
	}
	resp, err := o.send(ctx)
	var se *httpx.StatusError
	if err != nil && !o.form && !o.typed && !o.triedForm && o.assertion == nil && errors.As(err, &se) && refusesJSON[se.Status] {
		o.triedForm, o.form = true, true
		first, firstErr := se.Status, err
		if resp, err = o.send(ctx); err == nil {
			if o.env.Note != nil {
				o.env.Note(fmt.Sprintf("the OAuth token endpoint %s answered %d %s to a JSON body and took the form-encoded one (RFC 6749): token requests are form-encoded for the rest of the run",
					o.env.redact(o.endpoint), first, http.StatusText(first)))
			}
		} else {
			o.form, err = false, firstErr // the endpoint's answer to the seed's request
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return o.env.redacted(statusMessage("OAuth token refresh", err))
	}
	where := fmt.Sprintf("%d %s from POST %s", resp.Status, http.StatusText(resp.Status), o.env.redact(o.endpoint))
	fail := func(format string, args ...any) error {
		return &Error{Msg: "OAuth token refresh: " + where + ": " + o.env.redact(fmt.Sprintf(format, args...))}
	}
	body, err := decodeObject(resp.Body)
	if err != nil {
		return fail("%s", notAnObject(err))
	}
	tok := template.ToString(lookupName(body, o.def.AccessTokenName))
	if v := lookupName(body, o.def.AccessTokenName); v == nil || template.IsEmpty(v) || tok == "" {
		return fail("no access token at %q in the answer", o.def.AccessTokenName)
	}
	o.env.secret(tok)
	newRefresh := ""
	for _, name := range o.refreshNames() {
		if v := lookupName(body, name); v != nil && !template.IsEmpty(v) {
			newRefresh = template.ToString(v)
			o.env.secret(newRefresh)
			break
		}
	}
	now := o.env.Now()
	expiry, err := o.expiryOf(lookupName(body, o.def.ExpiresInName), now)
	if err != nil {
		return fail("%v", err)
	}
	o.token, o.expiry, o.obtained = tok, expiry, now
	u := o.def.Updater
	if u == nil {
		return nil
	}
	if newRefresh != "" {
		o.refreshToken = newRefresh
	}
	updates := []Update{
		{Path: u.RefreshTokenConfigPath, Value: o.refreshToken},
		{Path: u.AccessTokenConfigPath, Value: tok},
	}
	if !expiry.IsZero() {
		updates = append(updates, Update{Path: u.TokenExpiryDateConfigPath, Value: expiry.UTC().Format(time.RFC3339)})
	}
	if o.env.ConfigUpdated != nil {
		if err := o.env.ConfigUpdated(updates); err != nil {
			return fmt.Errorf("the token endpoint rotated the refresh token but it could not be saved: %s", o.env.redact(err.Error()))
		}
	}
	return nil
}

// refreshNames are the response properties that may carry a rotated refresh token.
func (o *oauth) refreshNames() []string {
	if o.def.Updater != nil {
		return []string{o.def.Updater.RefreshTokenName}
	}
	return []string{o.def.RefreshTokenName}
}

// tokenRequest builds the POST to the token endpoint: a JSON body unless the
// refresh_request_headers ask for a form.
func (o *oauth) tokenRequest() (*request.Builder, error) {
	b := request.New("token", http.MethodPost, o.endpoint)
	for _, h := range o.headers {
		if err := b.SetHeader(h[0], h[1], "refresh_request_headers"); err != nil {
			return nil, err
		}
	}
	if o.assertion != nil {
		return o.assertionRequest(b)
	}
	set := func(key string, v any, source string) error {
		if o.form {
			return b.SetForm(key, formValues(v), source)
		}
		return b.SetJSON([]string{key}, v, source)
	}
	const src = "the OAuth authenticator"
	own := map[string]bool{} // the names the authenticator sets: refresh_request_body does not override them
	fields := [][2]string{
		{o.def.ClientIDName, o.clientID},
		{o.def.ClientSecretName, o.clientSecret},
	}
	if o.grant == "refresh_token" {
		fields = append(fields, [2]string{o.def.RefreshTokenName, o.refreshToken})
	}
	grant := [2]string{o.def.GrantTypeName, o.grant}
	if o.env.FormTokenRequests {
		// The Airbyte entry point sends the body the CDK sends, field for field: the grant
		// type first, then the client's id and secret and the refresh token.
		fields = append([][2]string{grant}, fields...)
	} else {
		fields = append(fields, grant)
	}
	for _, f := range fields {
		if f[1] == "" {
			continue
		}
		own[f[0]] = true
		if err := set(f[0], f[1], src); err != nil {
			return nil, err
		}
	}
	if len(o.scopes) > 0 {
		list := make([]any, len(o.scopes))
		for i, s := range o.scopes {
			list[i] = s
		}
		own["scopes"] = true
		if err := set("scopes", list, src); err != nil {
			return nil, err
		}
	}
	if o.body != nil {
		for _, k := range o.body.Keys() {
			if own[k] {
				continue // as the CDK does: the authenticator's own value wins
			}
			v, _ := o.body.Get(k)
			if err := set(k, v, "refresh_request_body"); err != nil {
				return nil, err
			}
		}
	}
	return b, nil
}

// expiryOf reads the expiry property of a token response: seconds of validity, or a date in
// token_expiry_date_format. A missing property means the expiry is unknown.
func (o *oauth) expiryOf(v any, now time.Time) (time.Time, error) {
	if v == nil || template.IsEmpty(v) {
		return time.Time{}, nil
	}
	name := o.def.ExpiresInName
	if f := o.def.TokenExpiryDateFormat; f != "" {
		t, err := template.ParseTime(template.ToString(v), f)
		if err != nil {
			return time.Time{}, fmt.Errorf("%s %q does not match token_expiry_date_format %q: %v", name, template.ToString(v), f, err)
		}
		return t, nil
	}
	secs, err := strconv.ParseFloat(strings.TrimSpace(template.ToString(v)), 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s is %q, not a number of seconds (set token_expiry_date_format when it is a date)", name, template.ToString(v))
	}
	return now.Add(time.Duration(secs * float64(time.Second))), nil
}

// parseStoredExpiry reads a token expiry kept in the testing values: RFC 3339 (what the
// updater writes), the token_expiry_date_format when set, a few common date layouts
// (without a zone: UTC), or epoch seconds.
func parseStoredExpiry(s, format string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	if format != "" {
		if t, err := template.ParseTime(s, format); err == nil {
			return t, nil
		}
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return time.Unix(n, 0).UTC(), nil
	}
	return time.Time{}, fmt.Errorf("not a date (write it as RFC 3339, e.g. 2026-01-02T15:04:05Z)")
}

// renderObject renders a mapping tree (refresh_request_headers or _body).
func renderObject(t *manifest.Tree, scope *request.Scope) (*record.Object, error) {
	v, err := request.RenderTree(t, scope)
	if err != nil {
		return nil, err
	}
	if obj, ok := v.(*record.Object); ok {
		return obj, nil
	}
	if v == nil {
		return &record.Object{}, nil
	}
	return nil, fmt.Errorf("must be a mapping, got %s", template.ToString(v))
}

// formValues turns a body value into form values: a list becomes a repeated key.
func formValues(v any) []string {
	if l, ok := v.([]any); ok {
		out := make([]string, len(l))
		for i, e := range l {
			out[i] = template.ToString(e)
		}
		return out
	}
	return []string{template.ToString(v)}
}

// notAnObject says why decodeObject refused a token or login answer.
func notAnObject(err error) string {
	var de *extract.DepthError
	if errors.As(err, &de) {
		return "the answer is " + de.Error()
	}
	return "the answer is not a JSON object"
}

// decodeObject decodes a JSON object, keeping numbers exact, with the page parser's limits
// (no deeper than extract.MaxDepth).
func decodeObject(body []byte) (map[string]any, error) {
	p, err := extract.Parse(body, nil, extract.Want{Body: true})
	if err != nil {
		return nil, err
	}
	m, ok := p.Body.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not an object")
	}
	return m, nil
}

// lookupName finds a response property; a dotted name that is not a top-level key is read
// as a nested path.
func lookupName(m map[string]any, name string) any {
	if v, ok := m[name]; ok {
		return v
	}
	if strings.Contains(name, ".") {
		return lookupPath(m, strings.Split(name, "."))
	}
	return nil
}

// lookupPath follows keys (and integer indexes into lists); nil when anything is missing.
func lookupPath(v any, path []string) any {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			v = x[seg]
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil {
				return nil
			}
			if i < 0 {
				i += len(x)
			}
			if i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

// configString reads a string from the testing values; "" when absent.
func configString(config map[string]any, path []string) string {
	if len(path) == 0 {
		return ""
	}
	v := lookupPath(config, path)
	if v == nil || template.IsEmpty(v) {
		return ""
	}
	return strings.TrimSpace(template.ToString(v))
}

// secretName reports a header or body key whose value is a credential.
func secretName(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"secret", "password", "passwd", "token", "key", "auth", "credential", "user", "login", "email", "client_id", "clientid"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

func (e Env) secret(values ...string) {
	if e.Redactor == nil {
		return
	}
	e.Redactor.Add(values...)
}

func (e Env) redact(s string) string { return e.Redactor.String(s) }

// redacted masks the secrets in an authentication error's message.
func (e Env) redacted(err error) error {
	if ae, ok := err.(*Error); ok {
		return &Error{Msg: e.redact(ae.Msg)}
	}
	return err
}
