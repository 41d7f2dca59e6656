package cmd

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The table of issue 14: every secret, in every form a server or the tool can produce, in
// every output of the tool. The secrets have the characters that escaping changes.
const (
	redPassword     = `pa"ss\word99`       // a session login's password
	redClientSecret = `cl"ient\sec'ret7`   // an OAuth client secret
	redAccessToken  = `at-Xyz&123<tok>`    // the token the OAuth endpoint issues
	redBearer       = `Abc&Def1234`        // a bearer token
	redBasicPass    = `hunter2-Wq9/+`      // a password a template base64-encodes
	redPin          = `back\slash99`       // a secret a template fails to read as a number
	redSessionToken = `sess-T0ken/&"value` // the token a login returns
)

// redForms are encodings a secret may leak in, written with the standard library.
func redForms(s string) map[string]string {
	jsonPlain := func(s string) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	jsonHTML, _ := json.Marshal(s)
	return map[string]string{
		"raw":           s,
		"json":          jsonPlain(s),
		"json html":     string(jsonHTML),
		"json in json":  jsonPlain(jsonPlain(s)),
		"go quote":      strconv.Quote(s),
		"query":         url.QueryEscape(s),
		"path":          url.PathEscape(s),
		"html":          html.EscapeString(s),
		"base64":        base64.StdEncoding.EncodeToString([]byte(s)),
		"base64 url":    base64.RawURLEncoding.EncodeToString([]byte(s)),
		"base64 pair":   base64.StdEncoding.EncodeToString([]byte("someone:" + s)),
		"base64 pair 2": base64.StdEncoding.EncodeToString([]byte(s + ":someone")),
	}
}

// assertRedacted fails when text holds a secret in any form, or any 5-byte piece of it.
func assertRedacted(t *testing.T, where, text string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		for name, f := range redForms(s) {
			if strings.Contains(text, strings.Trim(f, `"`)) {
				t.Errorf("%s holds %q as %s (%s):\n%s", where, s, name, f, text)
			}
		}
		for i := 0; i+5 <= len(s); i++ {
			if utf8.RuneStart(s[i]) && strings.Contains(text, s[i:i+5]) {
				t.Errorf("%s holds the piece %q of %q:\n%s", where, s[i:i+5], s, text)
				break
			}
		}
		for _, run := range base64Run.FindAllString(text, -1) {
			for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
				run = strings.TrimRight(run, "=")
				dec, err := enc.DecodeString(run[:len(run)-len(run)%4*btoi(len(run)%4 == 1)])
				if err == nil && strings.Contains(string(dec), s) {
					t.Errorf("%s holds %q in the base64 %s:\n%s", where, s, run, text)
				}
			}
		}
	}
}

var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{8,}=*`)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// reflector is a careless API: /login and /token answer a session token and an access token;
// /ok/... answers one record; /reflect/... answers 400 with the request reflected in every
// form a server might use: its headers JSON-encoded (with and without HTML escaping), quoted
// the Go way and the Python way, URL-encoded and base64-encoded, and its body as received and
// JSON-encoded.
func reflector(t *testing.T) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch {
		case r.URL.Path == "/login":
			w.Write([]byte(`{"token":` + mustJSON(redSessionToken) + `}`))
		case r.URL.Path == "/token":
			w.Write([]byte(`{"access_token":` + mustJSON(redAccessToken) + `,"expires_in":3600}`))
		case strings.HasPrefix(r.URL.Path, "/ok/"):
			w.Write([]byte(`{"data":[{"id":1}]}`))
		default:
			keys := make([]string, 0, len(r.Header))
			for k := range r.Header {
				if k == "Authorization" || strings.HasPrefix(k, "X-") {
					keys = append(keys, k)
				}
			}
			sort.Strings(keys)
			var b strings.Builder
			for _, k := range keys {
				v := r.Header.Get(k)
				plain := strings.NewReplacer(`\u0026`, "&", `\u003c`, "<", `\u003e`, ">").Replace(mustJSON(v))
				fmt.Fprintf(&b, "%s json=%s jsonhtml=%s go=%q py=%s url=%s b64=%s | ", k, plain, mustJSON(v), v, pyQuote(v),
					url.QueryEscape(v), base64.StdEncoding.EncodeToString([]byte(v)))
			}
			fmt.Fprintf(&b, "body=%s json=%s query=%s", body, mustJSON(string(body)), r.URL.RawQuery)
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(b.String()))
		}
	})
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// pyQuote is Python's repr of a str.
func pyQuote(s string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s) + "'"
}

// redDef is a one-stream definition: the requester's authenticator and extra requester
// fields are given; the stream reads PATH under the API.
func redDef(authenticator, requesterExtra, path string) string {
	return `version: 6.5.0
type: DeclarativeSource
check:
  type: CheckStream
  stream_names: [items]
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      base_url: {type: string}
      user: {type: string}
      password: {type: string, airbyte_secret: true}
      client_id: {type: string}
      client_secret: {type: string, airbyte_secret: true}
      bearer: {type: string, airbyte_secret: true}
      pin: {type: string, airbyte_secret: true}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config.base_url }}"
        path: ` + path + `
        authenticator:
` + e2eIndent(authenticator, 10) + requesterExtra + `
      record_selector:
        type: RecordSelector
        extractor:
          type: DpathExtractor
          field_path: [data]
`
}

// TestSecretsInEveryFormAndOutput runs each hostile case through every command and output
// format and looks for every secret in every form.
func TestSecretsInEveryFormAndOutput(t *testing.T) {
	t.Parallel()
	api := reflector(t)
	values := writeFile(t, "values.yaml", fmt.Sprintf(
		"base_url: %s\nuser: bob\npassword: %s\nclient_id: the-client-id\nclient_secret: %s\nbearer: %s\npin: %s\n",
		api.URL, mustJSON(redPassword), mustJSON(redClientSecret), mustJSON(redBearer), mustJSON(redPin)))
	secrets := []string{redPassword, redClientSecret, redAccessToken, redBearer, redBasicPass, redPin, redSessionToken}

	session := `type: SessionTokenAuthenticator
login_requester:
  type: HttpRequester
  url_base: "{{ config.base_url }}"
  path: /login
  http_method: POST
  authenticator: {type: NoAuth}
  request_body_json:
    username: "{{ config.user }}"
    password: "{{ config.password }}"
session_token_path: [token]
request_authentication:
  type: ApiKey
  inject_into: {type: RequestOption, inject_into: header, field_name: X-Session}
`
	oauth := `type: OAuthAuthenticator
token_refresh_endpoint: "{{ config.base_url }}/token"
grant_type: client_credentials
client_id: "{{ config.client_id }}"
client_secret: "{{ config.client_secret }}"
`
	bearer := `type: BearerAuthenticator
api_token: "{{ config.bearer }}"
`
	noAuth := "type: NoAuth\n"
	basicHeader := `
        request_headers:
          Authorization: "Basic {{ (config.user ~ ':' ~ config.password) | base64encode }}"`
	pinParam := `
        request_parameters:
          n: "{{ int(config.pin) }}"`
	basicValues := writeFile(t, "basic.yaml", fmt.Sprintf("base_url: %s\nuser: bob\npassword: %s\n", api.URL, mustJSON(redBasicPass)))

	cases := []struct {
		name, def, values string
	}{
		{"session login", redDef(session, "", "/reflect/items"), values},
		{"session login, trace of a success", redDef(session, "", "/ok/items"), values},
		{"oauth client secret", redDef(oauth, "", "/reflect/items"), values},
		{"oauth, trace of a success", redDef(oauth, "", "/ok/items"), values},
		{"bearer reflected with escapes", redDef(bearer, "", "/reflect/items"), values},
		{"basic header built by a template", redDef(noAuth, basicHeader, "/reflect/items"), basicValues},
		{"basic header built by a template, success", redDef(noAuth, basicHeader, "/ok/items"), basicValues},
		{"template error on a secret", redDef(noAuth, pinParam, "/ok/items"), values},
	}
	for _, c := range cases {
		def := writeFile(t, "def.yaml", c.def)
		for _, args := range [][]string{
			{"read", def},
			{"read", def, "--format", "airbyte"},
			{"read", def, "--format", "envelope"},
			{"check", def},
			{"check", def, "--format", "json"},
			{"paginate-trace", def},
			{"paginate-trace", def, "--format", "json"},
		} {
			res := runCLI(t, "", append(args, "--testing-values", c.values)...)
			where := c.name + ": " + strings.Join(args[:1], " ") + " " + strings.Join(args[2:], " ")
			want := 0
			if strings.Contains(c.def, "/reflect/") || strings.Contains(c.def, "int(config.pin)") {
				want = 1
			}
			if res.Code != want {
				t.Errorf("%s: exit %d, want %d\n%s", where, res.Code, want, res.Stderr)
			}
			assertRedacted(t, where+" (stdout)", res.Stdout, secrets...)
			assertRedacted(t, where+" (stderr)", res.Stderr, secrets...)
		}
	}
}

// TestDerivedSecretInTrace: the header a template builds from a secret shows as
// `Basic ****` in the trace, while the values that do not depend on a secret stay readable.
func TestDerivedSecretInTrace(t *testing.T) {
	t.Parallel()
	api := reflector(t)
	values := writeFile(t, "basic.yaml", fmt.Sprintf("base_url: %s\nuser: bob\npassword: %s\n", api.URL, mustJSON(redBasicPass)))
	def := writeFile(t, "def.yaml", redDef("type: NoAuth\n", `
        request_headers:
          Authorization: "Basic {{ (config.user ~ ':' ~ config.password) | base64encode }}"
          X-Signature: "{{ (config.password ~ 'salt') | hash('md5') }}"
          X-User: "{{ config.user }}"`, "/ok/items"))
	res := runCLI(t, "", "paginate-trace", def, "--testing-values", values)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	for _, want := range []string{"Authorization: Basic ****", "X-Signature: ****", "X-User: bob"} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("the trace lacks %q:\n%s", want, res.Stdout)
		}
	}
	// The API received the real values.
	got := api.requests()[0].Header
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte("bob:"+redBasicPass)); got.Get("Authorization") != want {
		t.Errorf("Authorization sent = %q, want %q", got.Get("Authorization"), want)
	}
}

// TestOAuthExchangeFailureIsRedacted: a provider that refuses the code exchange and echoes
// the request's Basic credentials in every form; nothing of the client secret or the
// Basic header reaches stderr.
func TestOAuthExchangeFailureIsRedacted(t *testing.T) {
	t.Parallel()
	const secret = `cl"ient&secret\7`
	p := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/oauth/authorize":
			q := r.URL.Query()
			back, _ := url.Parse(q.Get("redirect_uri"))
			back.RawQuery = url.Values{"code": {"the-code-123"}, "state": {q.Get("state")}}.Encode()
			http.Redirect(w, r, back.String(), http.StatusFound)
		case "/oauth/code/token":
			a := r.Header.Get("Authorization")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			desc := fmt.Sprintf("bad client: %s (%q), decoded %s", a, a, decodedBasic(a))
			fmt.Fprintf(w, `{"error":"invalid_client","error_description":%s}`, mustJSON(desc))
		}
	})
	values := writeFile(t, "values.yaml", fmt.Sprintf("base_url: %s\nclient_id: cid-Q7w9z\nclient_secret: %s\n", p.URL, mustJSON(secret)))
	run := startOAuth(t, fixedClock(), oauthDef, "--testing-values", values)
	browse(t, run.consentURL(t))
	code, stderr := run.wait(t)
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "invalid_client") {
		t.Errorf("stderr does not say why the exchange failed:\n%s", stderr)
	}
	// The consent URL is printed raw on purpose (it carries the client id); everything
	// after it must be clean.
	_, after, _ := strings.Cut(stderr, "Waiting for the redirect")
	assertRedacted(t, "connector oauth stderr", after, secret, "cid-Q7w9z", "the-code-123")
}

func decodedBasic(h string) string {
	b, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(h, "Basic "))
	return string(b)
}
