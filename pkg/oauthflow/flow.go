package oauthflow

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"connector/pkg/extract"
)

// Flow is one run of the authorization-code flow: the client credentials, the redirect URI
// and the state sent to the provider.
type Flow struct {
	Spec         *Spec
	ClientID     string
	ClientSecret string
	// Inputs are the user inputs read from the testing values, by name.
	Inputs      map[string]string
	RedirectURI string
	// State is sent with the consent URL and expected back on the callback. Templates that
	// use PKCE derive the challenge from it ({{ {{state_value}} | codeChallengeS256 }}) and
	// send it as the verifier, so it is kept for the exchange.
	State string
	// UserAgent is sent with the token request when set.
	UserAgent string
	// Refused, when set, hears of each callback Wait refused because its state is not
	// State (a stale or forged redirect); the wait goes on.
	Refused func()
}

// MissingInputError names a testing value the flow needs and did not find.
type MissingInputError struct {
	What string
	Path []string
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("the testing values have no %s at %s (the path spec.advanced_auth gives)", e.What, strings.Join(e.Path, "."))
}

// Start reads the client credentials and user inputs from the testing values and draws a
// state within the specification's length bounds.
func (s *Spec) Start(config map[string]any, redirectURI string) (*Flow, error) {
	f := &Flow{Spec: s, RedirectURI: redirectURI, Inputs: map[string]string{}}
	var ok bool
	if f.ClientID, ok = lookupString(config, s.ClientIDPath); !ok {
		return nil, &MissingInputError{What: "client id", Path: s.ClientIDPath}
	}
	if f.ClientSecret, ok = lookupString(config, s.ClientSecretPath); !ok {
		return nil, &MissingInputError{What: "client secret", Path: s.ClientSecretPath}
	}
	for _, in := range s.UserInputs {
		v, ok := lookupString(config, in.Path)
		if !ok && in.Required {
			return nil, &MissingInputError{What: "value for " + in.Name, Path: in.Path}
		}
		f.Inputs[in.Name] = v
	}
	state, err := randomState(s.stateMin, s.stateMax)
	if err != nil {
		return nil, err
	}
	f.State = state
	return f, nil
}

func randomState(lo, hi int) (string, error) {
	n := lo
	if hi > lo {
		extra, err := rand.Int(rand.Reader, big.NewInt(int64(hi-lo+1)))
		if err != nil {
			return "", err
		}
		n += int(extra.Int64())
	}
	b := make([]byte, n)
	for i := range b {
		c, err := rand.Int(rand.Reader, big.NewInt(int64(len(stateChars))))
		if err != nil {
			return "", err
		}
		b[i] = stateChars[c.Int64()]
	}
	return string(b), nil
}

// vars are the template variables of the flow; code is empty before the callback.
func (f *Flow) vars(code string) map[string]any {
	s, k := f.Spec, f.Spec.keys
	v := map[string]any{}
	for name, val := range s.input {
		if _, isString := val.(string); isString {
			v[name] = val
		} else {
			v[name] = ""
		}
	}
	for name, val := range f.Inputs {
		v[name] = val
	}
	set := func(base, key, value string, encode bool) {
		v[key] = value
		v[base+"_key"] = key
		v[base+"_value"] = value
		if encode {
			value = url.QueryEscape(value)
		}
		v[base+"_param"] = key + "=" + value
	}
	set("client_id", k.clientID, f.ClientID, false)
	set("client_secret", k.clientSecret, f.ClientSecret, false)
	set("auth_code", k.authCode, code, false)
	set("state", k.state, f.State, false)
	set("redirect_uri", k.redirectURI, f.RedirectURI, true)
	set("scope", k.scope, s.scope, true)
	v["state"] = f.State
	v["scopes_param"], v["scopes_value"] = v["scope_param"], v["scope_value"]
	v["optional_scopes_value"] = s.optionalScopes
	v["optional_scopes_param"] = "optional_scopes=" + url.QueryEscape(s.optionalScopes)
	return v
}

// ConsentURL renders consent_url: the page where the user grants access.
func (f *Flow) ConsentURL() (string, error) {
	u, err := f.Spec.consentURL.Render(f.vars(""))
	if err != nil {
		return "", fmt.Errorf("consent_url: %w", err)
	}
	return strings.TrimSpace(u), nil
}

// TokenError is a refusal by the token endpoint.
type TokenError struct {
	URL         string
	Status      string // empty when the provider answered 2xx with an error body
	Code        string // the OAuth error code (invalid_grant, ...)
	Description string // error_description, or an excerpt of a body that is not JSON
}

func (e *TokenError) Error() string {
	msg := "token endpoint " + e.URL + " refused the code exchange"
	if e.Status != "" {
		msg += ": " + e.Status
	}
	if e.Code != "" {
		msg += ": " + e.Code
	}
	if e.Description != "" {
		msg += ": " + e.Description
	}
	return msg
}

// maxResponse bounds the token response read.
const maxResponse = 1 << 20

// ExchangeRequest builds the code exchange: POST access_token_url with access_token_headers,
// and access_token_params form-encoded when the headers ask for it, JSON otherwise.
func (f *Flow) ExchangeRequest(ctx context.Context, code string) (*http.Request, error) {
	vars := f.vars(code)
	u, err := f.Spec.accessTokenURL.Render(vars)
	if err != nil {
		return nil, fmt.Errorf("access_token_url: %w", err)
	}
	header := http.Header{}
	for _, p := range f.Spec.headers {
		k, v, err := p.render(vars)
		if err != nil {
			return nil, fmt.Errorf("access_token_headers: %w", err)
		}
		header.Set(k, v)
	}
	params := map[string]string{}
	for _, p := range f.Spec.params {
		k, v, err := p.render(vars)
		if err != nil {
			return nil, fmt.Errorf("access_token_params: %w", err)
		}
		params[k] = v
	}
	var body []byte
	if mt, _, _ := mime.ParseMediaType(header.Get("Content-Type")); mt == "application/x-www-form-urlencoded" {
		form := url.Values{}
		for k, v := range params {
			form.Set(k, v)
		}
		body = []byte(form.Encode())
	} else {
		if body, err = json.Marshal(params); err != nil {
			return nil, err
		}
		if header.Get("Content-Type") == "" {
			header.Set("Content-Type", "application/json")
		}
	}
	if header.Get("Accept") == "" {
		header.Set("Accept", "application/json")
	}
	if f.UserAgent != "" && header.Get("User-Agent") == "" {
		header.Set("User-Agent", f.UserAgent)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSpace(u), bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("access_token_url: %w", err)
	}
	req.Header = header
	return req, nil
}

func (p pair) render(vars map[string]any) (string, string, error) {
	k, err := p.key.Render(vars)
	if err != nil {
		return "", "", err
	}
	v, err := p.value.Render(vars)
	return k, v, err
}

// Exchange trades the authorization code for tokens and returns the token response. The
// request is not retried: a code is single-use.
func (f *Flow) Exchange(ctx context.Context, client *http.Client, code string) (map[string]any, error) {
	req, err := f.ExchangeRequest(ctx, code)
	if err != nil {
		return nil, err
	}
	endpoint := req.URL.Scheme + "://" + req.URL.Host + req.URL.Path
	resp, err := client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("token endpoint %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("token endpoint %s: reading the response: %w", endpoint, err)
	}
	body := parseBody(data)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		te := &TokenError{URL: endpoint, Status: resp.Status}
		if body != nil {
			te.Code, te.Description = str(body["error"]), str(body["error_description"])
			if te.Description == "" {
				te.Description = str(body["message"])
			}
		} else {
			te.Description = excerpt(data)
		}
		return nil, te
	}
	if body == nil {
		return nil, &TokenError{URL: endpoint, Description: "the response is not a JSON object or a form: " + excerpt(data)}
	}
	if code := str(body["error"]); code != "" {
		return nil, &TokenError{URL: endpoint, Code: code, Description: str(body["error_description"])}
	}
	return body, nil
}

// parseBody reads a JSON object (no deeper than extract.MaxDepth, which the page parser
// checks before encoding/json decodes it), or a form-encoded body (GitHub's default answer).
func parseBody(data []byte) map[string]any {
	var m map[string]any
	if _, err := extract.Parse(data, nil, extract.Want{}); err == nil && json.Unmarshal(data, &m) == nil && m != nil {
		return m
	}
	text := strings.TrimSpace(string(data))
	if text == "" || strings.ContainsAny(text, " \n<{") || !strings.Contains(text, "=") {
		return nil
	}
	form, err := url.ParseQuery(text)
	if err != nil {
		return nil
	}
	m = map[string]any{}
	for k, v := range form {
		m[k] = v[0]
	}
	return m
}

func excerpt(data []byte) string {
	s := strings.TrimSpace(string(data))
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// Write is one value to store in the testing values.
type Write struct {
	Path  []string
	Value any
}

// MissingOutputError is a value the specification expects and the token response lacks.
type MissingOutputError struct {
	Path []string
	Has  []string // the top-level keys the response has
}

func (e *MissingOutputError) Error() string {
	return fmt.Sprintf("the token response has no %s (expected by spec.advanced_auth); it has: %s",
		strings.Join(e.Path, "."), strings.Join(e.Has, ", "))
}

// Writes maps the token response to testing-value paths: every extract_output path must be
// present; complete_oauth_output_specification says where each value goes (without it, the
// extracted values go to top-level keys of their own name). An expires_in among the outputs
// also gives token_expiry_date (now + seconds, RFC 3339 UTC).
func (s *Spec) Writes(resp map[string]any, now time.Time) ([]Write, error) {
	has := make([]string, 0, len(resp))
	for k := range resp {
		has = append(has, k)
	}
	sort.Strings(has)
	extracted := map[string]any{}
	var order []string
	for _, p := range s.extract {
		path := splitPath(p)
		v, ok := lookup(resp, path)
		if !ok || v == nil {
			return nil, &MissingOutputError{Path: path, Has: has}
		}
		key := path[len(path)-1]
		extracted[key] = plainNumber(v)
		order = append(order, key)
		if key == s.expiryKey {
			if secs, ok := seconds(v); ok {
				extracted["token_expiry_date"] = now.Add(time.Duration(secs) * time.Second).UTC().Format(time.RFC3339)
				order = append(order, "token_expiry_date")
			}
		}
	}
	var out []Write
	if len(s.Outputs) == 0 {
		for _, k := range order {
			out = append(out, Write{Path: []string{k}, Value: extracted[k]})
		}
	}
	for _, o := range s.Outputs {
		v, ok := extracted[strings.Join(o.Response, ".")]
		if !ok {
			v, ok = lookup(resp, o.Response)
		}
		if !ok || v == nil {
			if o.Required {
				return nil, &MissingOutputError{Path: o.Response, Has: has}
			}
			continue
		}
		out = append(out, Write{Path: o.Config, Value: plainNumber(v)})
	}
	return out, nil
}

// splitPath reads an extract_output path: "access_token", "data.access_token" or
// "$.data.access_token".
func splitPath(p string) []string {
	p = strings.TrimPrefix(strings.TrimPrefix(p, "$"), ".")
	return strings.Split(p, ".")
}

func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

func lookupString(config map[string]any, path []string) (string, bool) {
	v, ok := lookup(config, path)
	if !ok || v == nil {
		return "", false
	}
	s := str(v)
	return s, s != ""
}

// plainNumber turns a whole JSON number into an int64, so it is written as 3600, not 3600.0.
func plainNumber(v any) any {
	if f, ok := v.(float64); ok && f == float64(int64(f)) {
		return int64(f)
	}
	return v
}

func seconds(v any) (int64, bool) {
	switch x := v.(type) {
	case float64:
		return int64(x), true
	case string:
		var n int64
		_, err := fmt.Sscan(x, &n)
		return n, err == nil
	}
	return 0, false
}
