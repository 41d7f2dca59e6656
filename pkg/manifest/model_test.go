package manifest

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"connector/internal/testcorpus"
	"connector/pkg/diag"
)

func mustLoad(t *testing.T, file string, src string) *Definition {
	t.Helper()
	var def *Definition
	var diags diag.List
	if src == "" {
		def, diags = Load(file)
	} else {
		def, diags = Parse(file, []byte(src))
	}
	if diags.HasErrors() || def == nil {
		t.Fatalf("load %s:\n%v", file, diags)
	}
	return def
}

func src(t interface{ Source() string }) string {
	if t == nil || reflect.ValueOf(t).IsNil() {
		return "<nil>"
	}
	return t.Source()
}

func TestModelRefsParametersDefaults(t *testing.T) {
	def := mustLoad(t, "testdata/valid_basic.yaml", "")
	if len(def.Streams) != 2 {
		t.Fatalf("streams: %d", len(def.Streams))
	}
	users, orders := def.Streams[0], def.Streams[1]
	if users.Name != "users" || orders.Name != "orders" {
		t.Errorf("names from $parameters: %q %q", users.Name, orders.Name)
	}
	if def.Stream("orders") != orders || def.Stream("nope") != nil {
		t.Errorf("Stream lookup")
	}
	if !reflect.DeepEqual(def.CheckStreams, []string{"users"}) {
		t.Errorf("check streams %v", def.CheckStreams)
	}
	r := users.Requester
	if src(r.URLBase) != "https://api.example.com/v1" || src(r.Path) != "/users" || r.Method != "GET" {
		t.Errorf("requester %s %s %s", src(r.URLBase), src(r.Path), r.Method)
	}
	if src(orders.Requester.Path) != "/orders" {
		t.Errorf("orders path %s", src(orders.Requester.Path))
	}
	if r.Parameters["sort_by"] != "created" || orders.Requester.Parameters["sort_by"] != "updated" {
		t.Errorf("parameters %v / %v", r.Parameters, orders.Requester.Parameters)
	}
	if r.Params == nil || r.Params.Kind != KindMap || len(r.Params.Entries) != 1 ||
		src(r.Params.Entries[0].Key) != "sort" || src(r.Params.Entries[0].Value.Template) != "{{ parameters.sort_by }}" {
		t.Errorf("request_parameters %+v", r.Params)
	}
	if len(users.Selector.FieldPath) != 1 || src(users.Selector.FieldPath[0]) != "{{ parameters.data_key }}" ||
		users.Selector.Parameters["data_key"] != "data" {
		t.Errorf("selector %+v", users.Selector)
	}
	p := users.Paginator
	if p == nil || p.Strategy.Type != OffsetIncrement || src(p.Strategy.PageSize) != "50" || !p.Strategy.InjectOnFirstRequest {
		t.Fatalf("paginator %+v", p)
	}
	if p.PageSizeOption.InjectInto != InjectParameter || src(p.PageSizeOption.FieldName) != "limit" ||
		p.PageTokenOption.InjectInto != InjectParameter || src(p.PageTokenOption.FieldName) != "offset" {
		t.Errorf("options %+v %+v", p.PageSizeOption, p.PageTokenOption)
	}
	a := def.Authenticator
	if a == nil || a.Type != APIKeyAuth || src(a.APIToken) != "{{ config['api_key'] }}" || a.Inject.InjectInto != InjectHeader ||
		src(a.Inject.FieldName) != "X-Api-Key" || a.Pos != (Pos{8, 5}) {
		t.Errorf("authenticator %+v", a)
	}
	if users.Requester.Authenticator == nil || users.Requester.Authenticator.Type != APIKeyAuth {
		t.Errorf("requester authenticator %+v", users.Requester.Authenticator)
	}
	if def.ConnectionSpec["required"].([]any)[0] != "api_key" {
		t.Errorf("spec %v", def.ConnectionSpec)
	}
	if users.PrimaryKey != "id" {
		t.Errorf("primary key %v", users.PrimaryKey)
	}
}

func TestModelOverlayAndPagination(t *testing.T) {
	def := mustLoad(t, "d.yaml", `
definitions:
  base:
    url_base: https://x.test
    http_method: POST
    request_headers: {Accept: application/json}
streams:
  - name: pages
    retriever:
      requester:
        $ref: "#/definitions/base"
        http_method: GET
        request_body_json: {filter: {ids: [1, "{{ config['id'] }}"], on: true}}
      record_selector:
        extractor: {field_path: [data, "*"]}
        record_filter: {condition: "{{ record.active }}"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: "{{ config['size'] }}", start_from_page: "1", inject_on_first_request: false}
  - name: cursor
    retriever:
      requester: "#/definitions/base"
      record_selector: {extractor: {field_path: []}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.next }}"}
  - name: nopage
    retriever:
      requester: "#/definitions/base"
      record_selector: {extractor: {field_path: []}}
      paginator: {type: NoPagination}
`)
	s := def.Streams[0]
	if s.Requester.Method != "GET" || s.Requester.Headers == nil || s.Requester.BodyJSON == nil {
		t.Fatalf("overlay: %+v", s.Requester)
	}
	if def.Streams[1].Requester.Method != "POST" {
		t.Errorf("plain string $ref: method %s", def.Streams[1].Requester.Method)
	}
	body := s.Requester.BodyJSON.Entries[0].Value
	ids := body.Entries[0].Value
	if ids.Kind != KindList || ids.Items[0].Kind != KindScalar || ids.Items[0].Scalar != 1 ||
		ids.Items[1].Kind != KindTemplate || body.Entries[1].Value.Scalar != true {
		t.Errorf("body tree %+v", body)
	}
	if src(s.Selector.Filter) != "{{ record.active }}" || len(s.Selector.FieldPath) != 2 {
		t.Errorf("selector %+v", s.Selector)
	}
	st := s.Paginator.Strategy
	if st.Type != PageIncrement || st.StartFromPage != 1 || st.InjectOnFirstRequest || src(st.PageSize) != "{{ config['size'] }}" {
		t.Errorf("page increment %+v", st)
	}
	c := def.Streams[1].Paginator
	if c.PageTokenOption.InjectInto != InjectPath || src(c.Strategy.CursorValue) != "{{ response.next }}" || c.Strategy.StopCondition == nil {
		t.Errorf("cursor %+v %+v", c.PageTokenOption, c.Strategy)
	}
	if def.Streams[2].Paginator != nil || def.Authenticator != nil {
		t.Errorf("no pagination / no auth")
	}
}

func TestModelOAuthDefaults(t *testing.T) {
	def := mustLoad(t, "d.yaml", `
streams:
  - name: a
    retriever:
      requester:
        url_base: https://x.test
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: https://x.test/token
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
          refresh_token: "{{ config['refresh_token'] }}"
          scopes: [read, write]
          refresh_token_updater: {}
      record_selector: {extractor: {field_path: []}}
`)
	o := def.Authenticator.OAuth
	if o.AccessTokenName != "access_token" || o.ExpiresInName != "expires_in" || o.ClientIDName != "client_id" ||
		o.GrantType != nil || len(o.Scopes) != 2 || o.TokenExpiryDateFormat != "" {
		t.Errorf("oauth %+v", o)
	}
	u := o.Updater
	if u == nil || u.RefreshTokenName != "refresh_token" || !reflect.DeepEqual(u.AccessTokenConfigPath, []string{"credentials", "access_token"}) ||
		!reflect.DeepEqual(u.TokenExpiryDateConfigPath, []string{"credentials", "token_expiry_date"}) {
		t.Errorf("updater %+v", u)
	}
	if err := CheckGrantType(def, map[string]any{}); err != nil {
		t.Errorf("CheckGrantType: %v", err)
	}
}

func TestModelSession(t *testing.T) {
	def := mustLoad(t, "d.yaml", `
streams:
  - name: a
    retriever:
      requester:
        url_base: https://x.test
        authenticator:
          type: SessionTokenAuthenticator
          login_requester:
            url_base: https://x.test
            path: /login
            http_method: POST
            authenticator: {type: BasicHttpAuthenticator, username: "{{ config['u'] }}", password: ""}
            request_body_json: {api_key: "{{ config['key'] }}"}
          session_token_path: [data, token]
          expiration_duration: "7200"
          request_authentication: {type: ApiKey, inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}}
      record_selector: {extractor: {field_path: []}}
`)
	s := def.Authenticator.Session
	if s.Login.Method != "POST" || s.Login.Authenticator.Type != BasicAuth || !reflect.DeepEqual(s.TokenPath, []string{"data", "token"}) ||
		s.Expiration != 2*time.Hour || s.RequestAuth != "ApiKey" || s.Inject.InjectInto != InjectHeader || src(s.Token) != "{{ session_token }}" {
		t.Errorf("session %+v", s)
	}
}

func TestParseExpiration(t *testing.T) {
	for in, want := range map[string]time.Duration{"PT1H": time.Hour, "P1D": 24 * time.Hour, "PT15M": 15 * time.Minute,
		"P1W": 7 * 24 * time.Hour, "P1DT2H30M": 26*time.Hour + 30*time.Minute, "3600": time.Hour, "PT0.5S": 500 * time.Millisecond} {
		l := &loader{src: []byte("v: " + in), seen: map[string]bool{}}
		got, err := parseExpiration(l.decode().Content[1])
		if err != nil || got != want {
			t.Errorf("%s: %v %v, want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"P", "PT", "1h", "P1X"} {
		l := &loader{src: []byte("v: " + in), seen: map[string]bool{}}
		if _, err := parseExpiration(l.decode().Content[1]); err == nil {
			t.Errorf("%s: no error", in)
		}
	}
}

func TestSecretKey(t *testing.T) {
	for k, want := range map[string]bool{"password": true, "api_key": true, "apiKey": true, "access_token": true,
		"client_secret": true, "token_type": false, "grant_type": false, "username": false, "keyword": false} {
		if secretKey(k) != want {
			t.Errorf("secretKey(%q) = %v", k, !want)
		}
	}
}

func TestMergeParams(t *testing.T) {
	l := &loader{src: []byte("a: {x: 1, y: 2}\nb: {y: 3}"), seen: map[string]bool{}}
	root := l.decode()
	p := l.mergeParams(l.mergeParams(nil, root.Content[1]), root.Content[3])
	if !reflect.DeepEqual(p.values(), map[string]any{"x": 1, "y": 3}) {
		t.Errorf("merged %v", p.values())
	}
	if l.mergeParams(p, nil) != p {
		t.Errorf("no own parameters must keep the parent set")
	}
}

func TestDefaultType(t *testing.T) {
	l := &loader{src: []byte("a: {}\nb: {type: X}"), seen: map[string]bool{}}
	root := l.decode()
	if got := defaultType(mapGet(root.Content[1], "type"), "SimpleRetriever"); got != "SimpleRetriever" {
		t.Errorf("slot default: %s", got)
	}
	if got := defaultType(mapGet(root.Content[3], "type"), "SimpleRetriever"); got != "X" {
		t.Errorf("written: %s", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"valid_basic", "ref_cycle", "template_error", "unsupported", "mixed_authenticators"} {
		b, err := os.ReadFile("testdata/" + name + ".yaml")
		if err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a: &x [*x]"))
	f.Add([]byte("streams: [\"#/streams/0\"]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		def, diags := Parse("fuzz.yaml", b)
		for _, d := range diags {
			if strings.HasPrefix(d.Message, "internal error") {
				t.Fatalf("%s", d.Message)
			}
		}
		if def == nil && !diags.HasErrors() {
			t.Fatalf("no definition and no error")
		}
	})
}

func BenchmarkLoadStripe(b *testing.B) {
	path := testcorpus.File(b, "stripe.yaml")
	for b.Loop() {
		Load(path)
	}
}
