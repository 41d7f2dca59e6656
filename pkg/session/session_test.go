package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/har"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/run"
	"connector/pkg/values"
)

// A session built from values, as a face builds one: a definition's text, testing values,
// the streams asked for, an environment; then read through pkg/run against a local API.

// api is a local API: /items answers one record; /token answers an OAuth token with a
// rotated refresh token. Every request is written down as "METHOD /path auth-header body".
type api struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

func serveAPI(t *testing.T) *api {
	t.Helper()
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.got = append(a.got, strings.TrimSpace(fmt.Sprintf("%s %s %s %s", r.Method, r.URL.RequestURI(), r.Header.Get("Authorization"), body)))
		a.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/token":
			io.WriteString(w, `{"access_token":"access-secret-new","expires_in":3600,"refresh_token":"refresh-secret-next"}`)
		case "/items":
			io.WriteString(w, `{"data":[{"id":1}]}`)
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// definition is a definition of the streams items and other at config.base_url with the
// given authenticator (YAML at the requester's level) and spec properties.
func definition(authenticator, properties string) string {
	return `version: 6.5.0
type: DeclarativeSource
definitions:
  retriever:
    type: SimpleRetriever
    requester:
      type: HttpRequester
      url_base: "{{ config['base_url'] }}"
      path: /items
      authenticator:
` + authenticator + `
    record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - {type: DeclarativeStream, name: items, retriever: {$ref: "#/definitions/retriever"}}
  - {type: DeclarativeStream, name: other, retriever: {$ref: "#/definitions/retriever"}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url]
    properties:
      base_url: {type: string}
` + properties
}

const bearer = `        type: BearerAuthenticator
        api_token: "{{ config['api_key'] }}"`

const bearerSpec = `      api_key: {type: string, airbyte_secret: true}
`

// valuesFile writes testing values to values.yaml in a temporary folder.
func valuesFile(t *testing.T, vals string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte(vals), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// open loads def and values (YAML text) and opens a session.
func open(t *testing.T, def, vals string, in Inputs, env Env) (*Session, error) {
	t.Helper()
	return openFile(t, def, valuesFile(t, vals), in, env)
}

// openFile is open with the values of a file.
func openFile(t *testing.T, def, path string, in Inputs, env Env) (*Session, error) {
	t.Helper()
	d, err := Load(context.Background(), "def.yaml", []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	v, err := values.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	in.DefName, in.Def, in.Values = "def.yaml", d, v
	return Open(in, env)
}

// readAll reads the session's streams and returns the records, as stream:JSON.
func readAll(t *testing.T, s *Session) []string {
	t.Helper()
	out := &collect{}
	o := s.Options()
	o.Out = out
	for _, st := range s.Streams {
		if res := run.Stream(context.Background(), o, st); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	return out.lines
}

type collect struct{ lines []string }

func (c *collect) Records(stream string, recs []record.Record) error {
	for _, r := range recs {
		b, err := r.AppendJSON(nil)
		if err != nil {
			return err
		}
		c.lines = append(c.lines, stream+":"+string(b))
	}
	return nil
}

func (c *collect) EndPage() error { return nil }

func TestLoad(t *testing.T) {
	d, err := Load(context.Background(), "def.yaml", []byte(definition(bearer, bearerSpec)))
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Streams) != 2 || d.Streams[0].Name != "items" {
		t.Errorf("streams %v", d.Streams)
	}
	_, err = Load(context.Background(), "broken.yaml", []byte("version: 6.5.0\ntype: DeclarativeSource\nstreams: 3\n"))
	var de *DefinitionError
	if !errors.As(err, &de) || de.Name != "broken.yaml" || len(de.Diags) == 0 {
		t.Fatalf("error %v, want a *DefinitionError of broken.yaml", err)
	}
	if want := "broken.yaml: " + de.Diags[0].Message; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Load(ctx, "def.yaml", []byte(definition(bearer, bearerSpec))); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled load: %v", err)
	}
}

// Open builds the client and the authenticator from the values; a read through its
// options sends the credentials; the streams asked for are the ones read, in order.
func TestOpenAndRead(t *testing.T) {
	a := serveAPI(t)
	s, err := open(t, definition(bearer, bearerSpec), "base_url: "+a.URL+"\napi_key: key-secret-1\n", Inputs{Streams: []string{"other", "items"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := readAll(t, s)
	if want := `other:{"id":1},items:{"id":1}`; strings.Join(got, ",") != want {
		t.Errorf("records %v, want %s", got, want)
	}
	if want := "GET /items Bearer key-secret-1"; strings.Join(a.requests(), ",") != want+","+want {
		t.Errorf("requests %v", a.requests())
	}
	if s.Now().IsZero() {
		t.Error("the session has no clock")
	}
}

// The typed errors of Open, with their exact messages.
func TestOpenErrors(t *testing.T) {
	tests := []struct {
		name, def, vals string
		in              Inputs
		check           func(error) bool
		want            string
	}{{
		name:  "an unknown stream",
		def:   definition(bearer, bearerSpec),
		vals:  "base_url: https://api.test\napi_key: k\n",
		in:    Inputs{Streams: []string{"items", "nope"}},
		check: func(err error) bool { var e *ArgumentError; return errors.As(err, &e) },
		want:  `unknown stream "nope"; the definition has: items, other`,
	}, {
		name: "values the spec refuses",
		def:  definition(bearer, bearerSpec),
		vals: "api_key: k\n",
		check: func(err error) bool {
			var e *ValuesError
			return errors.As(err, &e) && e.Def == "def.yaml" && len(e.Diags) > 0
		},
		want: `{values}: missing required testing value "base_url"`,
	}, {
		name: "a refresh_token_updater without its initial token",
		def: definition(`        type: OAuthAuthenticator
        token_refresh_endpoint: "{{ config['base_url'] }}/token"
        client_id: "{{ config['client_id'] }}"
        client_secret: "{{ config['client_secret'] }}"
        refresh_token: "{{ config['credentials']['refresh_token'] }}"
        refresh_token_updater: {}`, ""),
		vals:  "base_url: https://api.test\nclient_id: id\nclient_secret: cs\ncredentials:\n  refresh_token: rt\n",
		check: func(err error) bool { var e *InvalidError; return errors.As(err, &e) && errors.Unwrap(err) != nil },
		want:  "{values}: the OAuth refresh_token_updater needs an initial access token and its expiry in the testing values; missing: credentials.access_token, credentials.token_expiry_date",
	}, {
		name: "a refused rotation",
		def: definition(`        type: OAuthAuthenticator
        token_refresh_endpoint: "{{ config['base_url'] }}/token"
        client_id: "{{ config['client_id'] }}"
        client_secret: "{{ config['client_secret'] }}"
        refresh_token: "{{ config['credentials']['refresh_token'] }}"
        refresh_token_updater: {}`, ""),
		vals:  "base_url: https://api.test\nclient_id: id\nclient_secret: cs\ncredentials:\n  refresh_token: rt\n",
		in:    Inputs{CheckRotation: func() error { return errors.New("the rotated token would be lost") }},
		check: func(err error) bool { return err != nil },
		want:  "the rotated token would be lost",
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := valuesFile(t, tt.vals)
			_, err := openFile(t, tt.def, path, tt.in, Env{})
			if err == nil || !tt.check(err) {
				t.Fatalf("error %v (%T)", err, err)
			}
			if want := strings.ReplaceAll(tt.want, "{values}", path); err.Error() != want {
				t.Errorf("error:\n  %s\nwant:\n  %s", err, want)
			}
		})
	}
}

// The values the spec marks secret are masked wherever the run's text goes; so are the
// values under credential-like keys once a recording is asked for.
func TestSecretsAreRegistered(t *testing.T) {
	vals := "base_url: https://api.test\napi_key: key-secret-1\nnote: plain-value\nother:\n  password: pass-secret-2\n  client_id: client-secret-3\n"
	red := &redact.Redactor{}
	s, err := open(t, definition(bearer, bearerSpec), vals, Inputs{}, Env{Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	got := red.String("key-secret-1 plain-value pass-secret-2")
	if strings.Contains(got, "key-secret-1") || !strings.Contains(got, "plain-value") || !strings.Contains(got, "pass-secret-2") {
		t.Errorf("without a recording: %s (want only the spec's secret masked)", got)
	}

	red = &redact.Redactor{}
	rec := &Recording{Path: filepath.Join(t.TempDir(), "run.har")}
	s, err = open(t, definition(bearer, bearerSpec), vals, Inputs{Record: rec}, Env{Redactor: red})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	got = red.String("key-secret-1 plain-value pass-secret-2 client-secret-3")
	for _, secret := range []string{"key-secret-1", "pass-secret-2", "client-secret-3"} {
		if strings.Contains(got, secret) {
			t.Errorf("with a recording, %s is not masked: %s", secret, got)
		}
	}
	if !strings.Contains(got, "plain-value") {
		t.Errorf("a plain value is masked: %s", got)
	}
}

// A recording keeps every exchange of the run, and no secret: not in the requests, not in
// the values it describes.
func TestRecording(t *testing.T) {
	a := serveAPI(t)
	path := filepath.Join(t.TempDir(), "run.har")
	clock := func() time.Time { return time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC) }
	vals := "base_url: " + a.URL + "\napi_key: key-secret-1\nother:\n  password: pass-secret-2\n"
	s, err := open(t, definition(bearer, bearerSpec), vals, Inputs{
		Streams: []string{"items"},
		Record:  &Recording{Path: path, Creator: har.Creator{Name: "connector", Version: "test"}, State: []byte(`{"items":{"token":"key-secret-1"}}`)},
	}, Env{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, s)
	n, err := s.Close()
	if err != nil || n != 1 {
		t.Fatalf("Close = %d, %v; want 1 request recorded", n, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"key-secret-1", "pass-secret-2"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the recording holds %s", secret)
		}
	}
	arch, err := har.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(arch.Log.Entries) != 1 || arch.Log.Entries[0].Request.URL != a.URL+"/items" {
		t.Errorf("entries %+v", arch.Log.Entries)
	}
	_, err = open(t, definition(bearer, bearerSpec), vals, Inputs{Record: &Recording{Path: filepath.Join(t.TempDir(), "no", "such", "run.har")}}, Env{})
	var ae *ArgumentError
	if !errors.As(err, &ae) {
		t.Errorf("a recording in a folder that does not exist: error %v (%T), want an *ArgumentError", err, err)
	}
}

const rotating = `        type: OAuthAuthenticator
        token_refresh_endpoint: "{{ config['base_url'] }}/token"
        client_id: "{{ config['client_id'] }}"
        client_secret: "{{ config['client_secret'] }}"
        refresh_token: "{{ config['credentials']['refresh_token'] }}"
        refresh_token_updater: {}`

const rotatingValues = "client_id: id-1\nclient_secret: cs-1\ncredentials:\n  refresh_token: refresh-secret-old\n  access_token: access-secret-old\n  token_expiry_date: \"2001-01-01T00:00:00Z\"\n"

// Rotated tokens go to the WriteTokens file, or, without one (or in a replay), stay in the
// values of the run; either way OnConfigUpdate hears the new config.
func TestRotatedTokens(t *testing.T) {
	for _, tt := range []struct {
		name      string
		toFile    bool
		replaying bool
	}{{"written to the file", true, false}, {"kept in memory", false, false}, {"a replay writes nothing", true, true}} {
		t.Run(tt.name, func(t *testing.T) {
			a := serveAPI(t)
			path := valuesFile(t, "base_url: "+a.URL+"\n"+rotatingValues)
			in := Inputs{Replaying: tt.replaying, Streams: []string{"items"}}
			if tt.toFile {
				in.WriteTokens = path
			}
			s, err := openFile(t, definition(rotating, ""), path, in, Env{})
			if err != nil {
				t.Fatal(err)
			}
			var heard any
			s.OnConfigUpdate = func(c map[string]any) { heard = c["credentials"].(map[string]any)["refresh_token"] }
			readAll(t, s)
			want := []string{`POST /token  {"client_id":"id-1","client_secret":"cs-1","refresh_token":"refresh-secret-old","grant_type":"refresh_token"}`, "GET /items Bearer access-secret-new"}
			if got := a.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("requests:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
			}
			if heard != "refresh-secret-next" {
				t.Errorf("OnConfigUpdate heard %v", heard)
			}
			if v, _ := s.Values.Get([]string{"credentials", "refresh_token"}); v != "refresh-secret-next" {
				t.Errorf("the run's values hold %v", v)
			}
			data, _ := os.ReadFile(path)
			written := strings.Contains(string(data), "refresh-secret-next")
			if written != (tt.toFile && !tt.replaying) {
				t.Errorf("the file holds the new token: %v; want %v:\n%s", written, tt.toFile && !tt.replaying, data)
			}
		})
	}
}

// dynamicDef is a definition whose streams are made from GET /tables: one per table, at
// /items/NAME.
func dynamicDef() string {
	return `version: 6.5.0
type: DeclarativeSource
definitions:
  requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", http_method: GET}
  table:
    type: DeclarativeStream
    name: placeholder
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
dynamic_streams:
  - type: DynamicDeclarativeStream
    name: tables
    stream_template: {$ref: "#/definitions/table"}
    components_resolver:
      type: HttpComponentsResolver
      retriever:
        type: SimpleRetriever
        requester: {$ref: "#/definitions/requester", path: /tables}
        record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [tables]}}
      components_mapping:
        - {type: ComponentMappingDefinition, field_path: [name], value: "t_{{ components_values['name'] }}"}
        - {type: ComponentMappingDefinition, field_path: [retriever, requester, path], value: "/items/{{ components_values['name'] }}"}
spec:
  type: Spec
  connection_specification: {type: object, properties: {base_url: {type: string}}}
`
}

// Resolve makes the dynamic streams through the run's client and selects the streams
// asked for among all of them; an unknown one is an ArgumentError naming them all.
func TestResolve(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.URL.RequestURI())
		mu.Unlock()
		io.WriteString(w, `{"tables":[{"name":"a"},{"name":"b"}],"data":[{"id":1}]}`)
	}))
	defer srv.Close()
	s, err := open(t, dynamicDef(), "base_url: "+srv.URL+"\n", Inputs{Streams: []string{"t_b", "items"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Streams != nil {
		t.Errorf("streams selected before Resolve: %v", s.Streams)
	}
	if err := s.Resolve(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, st := range s.Streams {
		names = append(names, st.Name)
	}
	if strings.Join(names, ",") != "t_b,items" {
		t.Errorf("streams %v", names)
	}
	recs := readAll(t, s)
	if strings.Join(recs, ",") != `t_b:{"id":1},items:{"id":1}` {
		t.Errorf("records %v", recs)
	}
	if strings.Join(got, ",") != "/tables,/items/b,/items" {
		t.Errorf("requests %v", got)
	}

	s, err = open(t, dynamicDef(), "base_url: "+srv.URL+"\n", Inputs{Streams: []string{"t_c"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Resolve(context.Background(), nil)
	var ae *ArgumentError
	if !errors.As(err, &ae) || err.Error() != `unknown stream "t_c"; the definition has: items, t_a, t_b` {
		t.Errorf("error %v", err)
	}
	// Without dynamic streams there is nothing to resolve.
	plain, err := open(t, definition(bearer, bearerSpec), "base_url: https://api.test\napi_key: k\n", Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Resolve(context.Background(), nil); err != nil || len(plain.Streams) != 2 {
		t.Errorf("Resolve = %v, streams %v", err, plain.Streams)
	}
}

// With TemplateClock the templates' now_utc() reads the run's clock until Close.
func TestTemplateClock(t *testing.T) {
	a := serveAPI(t)
	def := strings.Replace(definition(bearer, bearerSpec), "      path: /items\n",
		"      path: /items\n      request_parameters: {at: \"{{ now_utc().strftime('%Y-%m-%d') }}\"}\n", 1)
	clock := func() time.Time { return time.Date(2021, 7, 9, 10, 0, 0, 0, time.UTC) }
	s, err := open(t, def, "base_url: "+a.URL+"\napi_key: key-secret-1\n", Inputs{Streams: []string{"items"}, TemplateClock: true}, Env{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, s)
	if _, err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if got := a.requests(); len(got) != 1 || got[0] != "GET /items?at=2021-07-09 Bearer key-secret-1" {
		t.Errorf("requests %v", got)
	}
	var none *Session
	if n, err := none.Close(); n != 0 || err != nil {
		t.Errorf("closing no session: %d, %v", n, err)
	}
}

// spec.config_normalization_rules change the values in memory before the run, and their
// validations refuse values with the rule named.
func TestConfigNormalization(t *testing.T) {
	rules := `  config_normalization_rules:
    type: ConfigNormalizationRules
    transformations:
      - {type: ConfigRemapField, field_path: [region], map: {eu: europe}}
    validations:
      - type: DpathValidator
        field_path: [workers]
        validation_strategy: {type: ValidateAdheresToSchema, base_schema: {type: integer, maximum: 4}}
`
	def := definition(bearer, bearerSpec+"      region: {type: string}\n      workers: {type: integer}\n") + rules
	a := serveAPI(t)
	def = strings.Replace(def, "      path: /items\n", "      path: /items\n      request_parameters: {region: \"{{ config['region'] }}\"}\n", 1)
	s, err := open(t, def, "base_url: "+a.URL+"\napi_key: key-secret-1\nregion: eu\n", Inputs{Streams: []string{"items"}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, s)
	if got := a.requests(); len(got) != 1 || got[0] != "GET /items?region=europe Bearer key-secret-1" {
		t.Errorf("requests %v", got)
	}
	path := valuesFile(t, "base_url: "+a.URL+"\napi_key: k\nregion: eu\nworkers: 9\n")
	_, err = openFile(t, def, path, Inputs{}, Env{})
	var ie *InvalidError
	if want := path + `: testing value "workers" fails spec.config_normalization_rules.validations[0] (ValidateAdheresToSchema): the value breaks ` + "`maximum`" + ` (spec.config_normalization_rules of def.yaml)`; !errors.As(err, &ie) || err.Error() != want {
		t.Errorf("error:\n  %v\nwant:\n  %s", err, want)
	}
}

// A recording of an OAuth run keeps no token: the tokens the authenticator obtained are
// masked in the token answer and in the data request.
func TestRecordingOAuth(t *testing.T) {
	a := serveAPI(t)
	path := filepath.Join(t.TempDir(), "run.har")
	oauth := `        type: OAuthAuthenticator
        token_refresh_endpoint: "{{ config['base_url'] }}/token"
        client_id: "{{ config['client_id'] }}"
        client_secret: "{{ config['client_secret'] }}"
        refresh_token: "{{ config['refresh_token'] }}"`
	s, err := open(t, definition(oauth, ""), "base_url: "+a.URL+"\nclient_id: client-id-1\nclient_secret: client-secret-2\nrefresh_token: refresh-secret-3\n",
		Inputs{Streams: []string{"items"}, Record: &Recording{Path: path}}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	readAll(t, s)
	if n, err := s.Close(); err != nil || n != 2 {
		t.Fatalf("Close = %d, %v; want 2 requests recorded", n, err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"client-id-1", "client-secret-2", "refresh-secret-3", "access-secret-new", "refresh-secret-next"} {
		if strings.Contains(string(data), secret) {
			t.Errorf("the recording holds %s", secret)
		}
	}
}

// A stream group may name a stream that dynamic_streams make: the group applies to it once
// it is made, by name, as the CDK matches a group's streams.
func TestResolveGivesDynamicStreamsTheirGroup(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"tables":[{"name":"a"},{"name":"b"}],"data":[{"id":1}]}`)
	}))
	defer srv.Close()
	def := strings.Replace(dynamicDef(), "streams:\n  - type: DeclarativeStream\n", `  t_b:
    $ref: "#/definitions/table"
    name: t_b
streams:
  - type: DeclarativeStream
`, 1) + "stream_groups:\n  g: {streams: [\"#/definitions/t_b\", \"#/streams/0\"], action: {type: BlockSimultaneousSyncsAction}}\n"
	s, err := open(t, def, "base_url: "+srv.URL+"\n", Inputs{}, Env{})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Resolve(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, st := range s.Streams {
		got = append(got, st.Name+":"+st.Group)
	}
	if strings.Join(got, ",") != "items:g,t_a:,t_b:g" {
		t.Errorf("groups %v", got)
	}
}
