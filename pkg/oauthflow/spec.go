// Package oauthflow runs the declarative OAuth 2.0 authorization-code flow that a definition
// describes in spec.advanced_auth: it renders the consent URL, receives the provider's
// redirect on a local callback, exchanges the code at the token endpoint and maps the token
// response to paths in the testing values.
package oauthflow

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"

	"connector/pkg/template"
)

// Defaults of the Airbyte declarative OAuth specification.
const (
	defaultStateMin = 7
	defaultStateMax = 24
	maxStateLen     = 1024
	// stateChars are the characters a generated state is made of (all URL-safe).
	stateChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_"
)

// Spec is a parsed spec.advanced_auth.
type Spec struct {
	// PredicateKey and PredicateValue say which value of the testing values selects this
	// flow (e.g. credentials.auth_type = "oauth2.0"); empty when the flow always applies.
	PredicateKey   []string
	PredicateValue string
	// ClientIDPath and ClientSecretPath locate the client credentials in the testing values
	// (complete_oauth_server_output_specification; default client_id and client_secret).
	ClientIDPath, ClientSecretPath []string
	// UserInputs are the other testing values the templates may read
	// (oauth_user_input_from_connector_config_specification), by name.
	UserInputs []Field
	// Outputs map the token response to the testing values
	// (complete_oauth_output_specification).
	Outputs []Output

	input          map[string]any // oauth_connector_input_specification as written
	consentURL     *template.Template
	accessTokenURL *template.Template
	headers        []pair
	params         []pair
	extract        []string
	keys           keyNames
	scope          string
	optionalScopes string
	stateMin       int
	stateMax       int
	expiryKey      string
}

// Field is a named value at a path in the testing values.
type Field struct {
	Name     string
	Path     []string
	Required bool
}

// Output is one value taken from the token response and written to the testing values.
type Output struct {
	Name     string
	Response []string // path_in_oauth_response (default: the name)
	Config   []string // path_in_connector_config (default: the name)
	Required bool
}

// keyNames are the parameter names the provider uses (the *_key renames).
type keyNames struct {
	clientID, clientSecret, scope, state, authCode, redirectURI string
}

type pair struct{ key, value *template.Template }

// ErrNoAdvancedAuth is returned by Parse for a definition without spec.advanced_auth.
var ErrNoAdvancedAuth = errors.New("the definition has no spec.advanced_auth: connector oauth needs " +
	"spec.advanced_auth.oauth_config_specification.oauth_connector_input_specification " +
	"(consent_url, access_token_url, extract_output) to run an OAuth 2.0 flow")

const inputSpecPath = "spec.advanced_auth.oauth_config_specification.oauth_connector_input_specification"

// Parse reads spec.advanced_auth and compiles its templates.
func Parse(adv map[string]any) (*Spec, error) {
	if adv == nil {
		return nil, ErrNoAdvancedAuth
	}
	if t, ok := adv["auth_flow_type"]; ok && t != "oauth2.0" {
		return nil, fmt.Errorf("spec.advanced_auth.auth_flow_type is %v: connector oauth runs only oauth2.0 flows", t)
	}
	s := &Spec{PredicateValue: str(adv["predicate_value"])}
	s.PredicateKey = strList(adv["predicate_key"])
	cfg, _ := adv["oauth_config_specification"].(map[string]any)
	in, _ := cfg["oauth_connector_input_specification"].(map[string]any)
	if in == nil {
		return nil, fmt.Errorf("%s is missing: connector oauth needs its consent_url, access_token_url and extract_output", inputSpecPath)
	}
	s.input = in
	for _, name := range []string{"consent_url", "access_token_url"} {
		if str(in[name]) == "" {
			return nil, fmt.Errorf("%s.%s is missing", inputSpecPath, name)
		}
	}
	s.keys = keyNames{
		clientID:     keyOr(in, "client_id_key", "client_id"),
		clientSecret: keyOr(in, "client_secret_key", "client_secret"),
		scope:        keyOr(in, "scope_key", "scope"),
		state:        keyOr(in, "state_key", "state"),
		authCode:     keyOr(in, "auth_code_key", "code"),
		redirectURI:  keyOr(in, "redirect_uri_key", "redirect_uri"),
	}
	s.expiryKey = keyOr(in, "token_expiry_key", "expires_in")
	s.scope = str(in["scope"])
	sep := map[string]string{"comma": ",", "plus": "+"}[str(in["scopes_join_strategy"])]
	if sep == "" {
		sep = " "
	}
	if list := scopeList(in["scopes"]); len(list) > 0 {
		s.scope = strings.Join(list, sep)
	}
	s.optionalScopes = strings.Join(scopeList(in["optional_scopes"]), sep)
	var err error
	if s.stateMin, s.stateMax, err = stateBounds(in["state"]); err != nil {
		return nil, err
	}
	s.extract = strList(in["extract_output"])
	if len(s.extract) == 0 {
		s.extract = []string{"refresh_token"}
	}

	s.ClientIDPath, s.ClientSecretPath = []string{"client_id"}, []string{"client_secret"}
	if server, ok := cfg["complete_oauth_server_output_specification"].(map[string]any); ok {
		for _, f := range fields(server) {
			switch f.Name {
			case "client_id":
				s.ClientIDPath = f.Path
			case "client_secret":
				s.ClientSecretPath = f.Path
			}
		}
	}
	if user, ok := cfg["oauth_user_input_from_connector_config_specification"].(map[string]any); ok {
		s.UserInputs = fields(user)
	}
	if out, ok := cfg["complete_oauth_output_specification"].(map[string]any); ok {
		for _, f := range fields(out) {
			props, _ := out["properties"].(map[string]any)
			prop, _ := props[f.Name].(map[string]any)
			resp := strList(prop["path_in_oauth_response"])
			if len(resp) == 0 {
				resp = []string{f.Name}
			}
			s.Outputs = append(s.Outputs, Output{Name: f.Name, Response: resp, Config: f.Path, Required: f.Required})
		}
	}
	if err := s.compile(); err != nil {
		return nil, err
	}
	return s, nil
}

// compile compiles every template of the input specification against the flow's variables.
func (s *Spec) compile() error {
	vars := s.varNames()
	one := func(field, src string) (*template.Template, error) {
		t, err := template.Compile(src, vars)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", inputSpecPath, field, err)
		}
		return t, nil
	}
	var err error
	if s.consentURL, err = one("consent_url", str(s.input["consent_url"])); err != nil {
		return err
	}
	if s.accessTokenURL, err = one("access_token_url", str(s.input["access_token_url"])); err != nil {
		return err
	}
	mapping := func(field string) ([]pair, error) {
		m, _ := s.input[field].(map[string]any)
		var out []pair
		for _, k := range slices.Sorted(maps.Keys(m)) {
			kt, err := one(field, k)
			if err != nil {
				return nil, err
			}
			vt, err := one(field+"."+k, str(m[k]))
			if err != nil {
				return nil, err
			}
			out = append(out, pair{kt, vt})
		}
		return out, nil
	}
	if s.headers, err = mapping("access_token_headers"); err != nil {
		return err
	}
	s.params, err = mapping("access_token_params")
	return err
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// varNames lists every variable a template of the flow may read.
func (s *Spec) varNames() []string {
	set := map[string]bool{"optional_scopes_param": true, "optional_scopes_value": true, "scopes_param": true, "scopes_value": true}
	for _, base := range []string{"client_id", "client_secret", "redirect_uri", "scope", "state", "auth_code"} {
		for _, suffix := range []string{"_key", "_value", "_param"} {
			set[base+suffix] = true
		}
	}
	for k := range s.input {
		set[k] = true
	}
	k := s.keys
	for _, name := range []string{k.clientID, k.clientSecret, k.scope, k.state, k.authCode, k.redirectURI} {
		set[name] = true
	}
	for _, f := range s.UserInputs {
		set[f.Name] = true
	}
	var out []string
	for name := range set {
		if ident.MatchString(name) {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// stateBounds reads state: {min, max}.
func stateBounds(v any) (int, int, error) {
	lo, hi := defaultStateMin, defaultStateMax
	m, ok := v.(map[string]any)
	if v != nil && !ok {
		return 0, 0, fmt.Errorf("%s.state must be a mapping {min, max}", inputSpecPath)
	}
	for name, dst := range map[string]*int{"min": &lo, "max": &hi} {
		if x, ok := m[name]; ok {
			n, ok := toInt(x)
			if !ok || n < 1 || n > maxStateLen {
				return 0, 0, fmt.Errorf("%s.state.%s must be an integer from 1 to %d", inputSpecPath, name, maxStateLen)
			}
			*dst = n
		}
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("%s.state: min %d is greater than max %d", inputSpecPath, lo, hi)
	}
	return lo, hi, nil
}

// fields reads the properties of a JSON schema that carry path_in_connector_config.
func fields(schema map[string]any) []Field {
	required := map[string]bool{}
	for _, r := range strList(schema["required"]) {
		required[r] = true
	}
	props, _ := schema["properties"].(map[string]any)
	var out []Field
	for _, name := range slices.Sorted(maps.Keys(props)) {
		prop, _ := props[name].(map[string]any)
		path := strList(prop["path_in_connector_config"])
		if len(path) == 0 {
			path = []string{name}
		}
		out = append(out, Field{Name: name, Path: path, Required: required[name]})
	}
	return out
}

// scopeList reads scopes: a list of {scope: NAME} objects (Airbyte) or of strings.
func scopeList(v any) []string {
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		switch x := item.(type) {
		case string:
			out = append(out, x)
		case map[string]any:
			if sc := str(x["scope"]); sc != "" {
				out = append(out, sc)
			}
		}
	}
	return out
}

func keyOr(m map[string]any, key, def string) string {
	if v := str(m[key]); v != "" {
		return v
	}
	return def
}

func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// strList reads a list of strings, or a single string as a list of one.
func strList(v any) []string {
	switch x := v.(type) {
	case string:
		if x == "" {
			return nil
		}
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, item := range x {
			out = append(out, str(item))
		}
		return out
	}
	return nil
}

func toInt(v any) (int, bool) {
	switch x := v.(type) {
	case int:
		return x, true
	case int64:
		return int(x), true
	case float64:
		return int(x), x == float64(int(x))
	}
	return 0, false
}
