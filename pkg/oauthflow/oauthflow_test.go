package oauthflow

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/internal/testcorpus"
)

func TestTicktickConsentURLAndExchange(t *testing.T) {
	// The whole definition uses components connector does not support yet; its
	// spec.advanced_auth is read as is.
	data, err := os.ReadFile(testcorpus.File(t, "ticktick.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec struct {
			AdvancedAuth map[string]any `yaml:"advanced_auth"`
		}
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	spec, err := Parse(doc.Spec.AdvancedAuth)
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"authorization": map[string]any{"auth_type": "Oauth", "client_id": "tick-id", "client_secret": "tick-secret"}}
	flow, err := spec.Start(config, "http://127.0.0.1:5555/callback")
	if err != nil {
		t.Fatal(err)
	}
	if n := len(flow.State); n < defaultStateMin || n > defaultStateMax {
		t.Errorf("state length %d outside the default bounds", n)
	}
	consent, err := flow.ConsentURL()
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(consent)
	want := url.Values{"scope": {"tasks: read"}, "client_id": {"tick-id"}, "state": {flow.State},
		"redirect_uri": {"http://127.0.0.1:5555/callback"}, "response_type": {"code"}}
	if u.Host != "ticktick.com" || u.Path != "/oauth/authorize" || !reflect.DeepEqual(u.Query(), want) {
		t.Errorf("consent URL %s, query %v", consent, u.Query())
	}

	req, err := flow.ExchangeRequest(context.Background(), "the-code")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(req.Body)
	wantBody := "code=the-code&grant_type=authorization_code&redirect_uri=http%3A%2F%2F127.0.0.1%3A5555%2Fcallback&scope=tasks%253A%2520read"
	if req.Method != "POST" || req.URL.String() != "https://ticktick.com/oauth/token" || string(body) != wantBody {
		t.Errorf("exchange %s %s %s", req.Method, req.URL, body)
	}
	if got, want := req.Header.Get("Authorization"), "Basic "+base64.StdEncoding.EncodeToString([]byte("tick-id:tick-secret")); got != want {
		t.Errorf("Authorization = %q, want %q", got, want)
	}
	writes, err := spec.Writes(map[string]any{"access_token": "tok", "token_type": "bearer"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(writes, []Write{{Path: []string{"authorization", "client_access_token"}, Value: "tok"}}) {
		t.Errorf("writes = %+v", writes)
	}
}

func parse(t *testing.T, in map[string]any, extra map[string]any) *Spec {
	t.Helper()
	cfg := map[string]any{"oauth_connector_input_specification": in}
	for k, v := range extra {
		cfg[k] = v
	}
	s, err := Parse(map[string]any{"auth_flow_type": "oauth2.0", "oauth_config_specification": cfg})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRenamedKeysScopesAndJSONExchange(t *testing.T) {
	s := parse(t, map[string]any{
		"consent_url":          "https://p.example/auth?{{client_id_param}}&{{scope_param}}&{{state_key}}={{state}}&{{redirect_uri_param}}",
		"access_token_url":     "https://p.example/token",
		"access_token_params":  map[string]any{"{{client_id_key}}": "{{app_id}}", "{{auth_code_key}}": "{{auth_code_value}}", "secret": "{{client_secret_value}}"},
		"client_id_key":        "app_id",
		"state_key":            "nonce",
		"auth_code_key":        "grant",
		"redirect_uri_key":     "callback",
		"scopes":               []any{map[string]any{"scope": "a"}, map[string]any{"scope": "b"}},
		"scopes_join_strategy": "comma",
		"state":                map[string]any{"min": int64(10), "max": int64(10)},
		"extract_output":       []any{"data.token"},
	}, nil)
	f, err := s.Start(map[string]any{"client_id": "id-1", "client_secret": "sec-1"}, "http://127.0.0.1:1/callback")
	if err != nil {
		t.Fatal(err)
	}
	if len(f.State) != 10 {
		t.Errorf("state %q, want 10 characters", f.State)
	}
	consent, _ := f.ConsentURL()
	want := "https://p.example/auth?app_id=id-1&scope=a%2Cb&nonce=" + f.State + "&callback=http%3A%2F%2F127.0.0.1%3A1%2Fcallback"
	if consent != want {
		t.Errorf("consent URL\n got %s\nwant %s", consent, want)
	}
	req, _ := f.ExchangeRequest(context.Background(), "c-1")
	body, _ := io.ReadAll(req.Body)
	if string(body) != `{"app_id":"id-1","grant":"c-1","secret":"sec-1"}` || req.Header.Get("Content-Type") != "application/json" {
		t.Errorf("exchange body %s, Content-Type %q", body, req.Header.Get("Content-Type"))
	}
	writes, err := s.Writes(map[string]any{"data": map[string]any{"token": "t"}}, time.Now())
	if err != nil || !reflect.DeepEqual(writes, []Write{{Path: []string{"token"}, Value: "t"}}) {
		t.Errorf("writes %+v, %v", writes, err)
	}
	_, err = s.Writes(map[string]any{"data": map[string]any{}, "error": "x"}, time.Now())
	var me *MissingOutputError
	if !errors.As(err, &me) || err.Error() != "the token response has no data.token (expected by spec.advanced_auth); it has: data, error" {
		t.Errorf("err = %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		adv  map[string]any
		want string
	}{
		{nil, ErrNoAdvancedAuth.Error()},
		{map[string]any{"auth_flow_type": "oauth1.0"}, "spec.advanced_auth.auth_flow_type is oauth1.0: connector oauth runs only oauth2.0 flows"},
		{map[string]any{"oauth_config_specification": map[string]any{}}, inputSpecPath + " is missing: connector oauth needs its consent_url, access_token_url and extract_output"},
		{map[string]any{"oauth_config_specification": map[string]any{"oauth_connector_input_specification": map[string]any{"consent_url": "x"}}}, inputSpecPath + ".access_token_url is missing"},
		{map[string]any{"oauth_config_specification": map[string]any{"oauth_connector_input_specification": map[string]any{
			"consent_url": "x", "access_token_url": "y", "state": map[string]any{"min": int64(9), "max": int64(3)}}}}, inputSpecPath + ".state: min 9 is greater than max 3"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.adv)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Parse(%v) = %v, want %q", tt.adv, err, tt.want)
		}
	}
	_, err := Parse(map[string]any{"oauth_config_specification": map[string]any{"oauth_connector_input_specification": map[string]any{
		"consent_url": "{{ nope }}", "access_token_url": "y"}}})
	if err == nil || !strings.HasPrefix(err.Error(), inputSpecPath+".consent_url: ") {
		t.Errorf("unknown variable: %v", err)
	}
}

// advancedAuth reads spec.advanced_auth of a corpus definition as is.
func advancedAuth(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(testcorpus.File(t, name))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Spec struct {
			AdvancedAuth map[string]any `yaml:"advanced_auth"`
		}
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Spec.AdvancedAuth
}

// The templates of the flow read the user inputs that
// oauth_user_input_from_connector_config_specification declares as top-level variables, by
// their names there, with the testing value at their path_in_connector_config (the Airbyte
// platform merges these inputs into the flow's variables): zendesk's `{{subdomain}}` is the
// top-level subdomain, monday's the one under credentials.
func TestUserInputsAreTopLevelVariables(t *testing.T) {
	tests := []struct {
		file                string
		config              map[string]any
		consent, tokenURLAt string
	}{
		{"zendesk-support.yaml",
			map[string]any{"subdomain": "acme", "credentials": map[string]any{"client_id": "id", "client_secret": "sec"}},
			"https://acme.zendesk.com/oauth/authorizations/new?response_type=code&client_id=id&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback&scope=read&state=",
			"https://acme.zendesk.com/oauth/tokens?grant_type=authorization_code&code=c-1&client_id=id&client_secret=sec&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback&scope=read"},
		{"monday.yaml",
			map[string]any{"credentials": map[string]any{"client_id": "id", "client_secret": "sec", "subdomain": "acme"}},
			"https://auth.monday.com/oauth2/authorize?client_id=id&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback&scope=me%3Aread+boards%3Aread+workspaces%3Aread+users%3Aread+account%3Aread+updates%3Aread+assets%3Aread+tags%3Aread+teams%3Aread&state=",
			"https://auth.monday.com/oauth2/token?client_id=id&client_secret=sec&code=c-1&redirect_uri=http%3A%2F%2F127.0.0.1%3A1%2Fcallback"},
	}
	for _, tt := range tests {
		spec, err := Parse(advancedAuth(t, tt.file))
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		f, err := spec.Start(tt.config, "http://127.0.0.1:1/callback")
		if err != nil {
			t.Fatalf("%s: %v", tt.file, err)
		}
		consent, err := f.ConsentURL()
		want := tt.consent + f.State
		if tt.file == "monday.yaml" {
			want += "&subdomain=acme"
		}
		if err != nil || consent != want {
			t.Errorf("%s: consent URL\n got %s (%v)\nwant %s", tt.file, consent, err, want)
		}
		req, err := f.ExchangeRequest(context.Background(), "c-1")
		if err != nil || req.URL.String() != tt.tokenURLAt {
			t.Errorf("%s: token URL\n got %v (%v)\nwant %s", tt.file, req.URL, err, tt.tokenURLAt)
		}
	}
	// A name that is neither a flow variable nor a declared input stays unknown.
	_, err := Parse(map[string]any{"oauth_config_specification": map[string]any{"oauth_connector_input_specification": map[string]any{
		"consent_url": "https://{{ subdomain }}.example/auth", "access_token_url": "https://x/token"}}})
	if err == nil || !strings.Contains(err.Error(), "unknown variable `subdomain`") {
		t.Errorf("undeclared input: %v", err)
	}
}

// Every corpus definition with a declarative OAuth flow has its templates compiled by Parse.
func TestCorpusOAuthFlowsParse(t *testing.T) {
	n := 0
	for _, f := range testcorpus.Definitions(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Spec struct {
				AdvancedAuth map[string]any `yaml:"advanced_auth"`
			}
		}
		if err := yaml.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		cfg, _ := doc.Spec.AdvancedAuth["oauth_config_specification"].(map[string]any)
		if _, declarative := cfg["oauth_connector_input_specification"]; !declarative {
			continue
		}
		n++
		if _, err := Parse(doc.Spec.AdvancedAuth); err != nil {
			t.Errorf("%s: %v", filepath.Base(f), err)
		}
	}
	if n < 4 {
		t.Errorf("only %d declarative OAuth flows in the corpus", n)
	}
}
