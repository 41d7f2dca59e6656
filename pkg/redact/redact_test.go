package redact

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The secrets of the form table: quotes, backslashes, HTML-special characters, URL-special
// characters, spaces and non-ASCII text all change under some encoding.
var tableSecrets = []string{
	`pa"ss\word99`,
	`Abc&Def1234`,
	`back\slash99`,
	`s3cr3t/+&=value`,
	`sp ace <tok>`,
	"é-ünï-🔑-key",
	`it's-a-key`,
}

// forms are encodings a secret meets in printed text, each written here independently of
// the redactor: the standard library's encoders, and small emulations of Python's.
var forms = []struct {
	name string
	enc  func(string) string
}{
	{"raw", func(s string) string { return s }},
	{"json (Go, HTML-escaped)", func(s string) string { b, _ := json.Marshal(s); return string(b) }},
	{"json (no HTML escaping)", jsonPlain},
	{"json with escaped slashes", func(s string) string { return strings.ReplaceAll(jsonPlain(s), "/", `\/`) }},
	{"json ensure_ascii (Python)", pyJSONDumps},
	{"json in json", func(s string) string { return jsonPlain(jsonPlain(s)) }},
	{"Go %q", strconv.Quote},
	{"Go %+q", strconv.QuoteToASCII},
	{"Python repr", pyRepr},
	{"query escape", url.QueryEscape},
	{"path escape", url.PathEscape},
	{"percent-encode everything, lower-case hex", percentAll},
	{"query escape twice", func(s string) string { return url.QueryEscape(url.QueryEscape(s)) }},
	{"json inside a query", func(s string) string { return url.QueryEscape(jsonPlain(s)) }},
	{"html entities", html.EscapeString},
	{"base64", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }},
	{"base64 url alphabet, unpadded", func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }},
	{"Basic user:secret", func(s string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte("someone:"+s)) }},
	{"base64 secret:x", func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s + ":x")) }},
	{"base64 of a JSON body", func(s string) string {
		return base64.StdEncoding.EncodeToString([]byte(`{"user":"bob","password":` + jsonPlain(s) + `}`))
	}},
	{"base64 glued to other base64", func(s string) string {
		return "QUJD" + base64.StdEncoding.EncodeToString([]byte("ab"+s+"yz"))
	}},
}

func jsonPlain(s string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	return strings.TrimSuffix(b.String(), "\n")
}

// pyJSONDumps is Python's json.dumps(s): non-ASCII as \uXXXX (surrogate pairs beyond the BMP).
func pyJSONDumps(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r < 0x80:
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			r -= 0x10000
			fmt.Fprintf(&b, `\u%04x\u%04x`, 0xD800+(r>>10), 0xDC00+(r&0x3FF))
		}
	}
	b.WriteByte('"')
	return b.String()
}

// pyRepr is Python's repr() of a str.
func pyRepr(s string) string {
	q := "'"
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		q = `"`
	}
	var b strings.Builder
	b.WriteString(q)
	for _, r := range s {
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case string(r) == q:
			b.WriteString(`\` + q)
		case r == '\n':
			b.WriteString(`\n`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\x%02x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteString(q)
	return b.String()
}

func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02x", c)
		}
	}
	return b.String()
}

// TestEveryFormIsMasked: each secret, in each form, inside a sentence, leaves no trace of
// itself: neither the form nor any 4-character piece of the raw secret survives.
func TestEveryFormIsMasked(t *testing.T) {
	var r Redactor
	r.Add(tableSecrets...)
	for _, sec := range tableSecrets {
		for _, f := range forms {
			enc := f.enc(sec)
			text := "before " + enc + " after"
			got := r.String(text)
			if !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") || !strings.Contains(got, Mask) {
				t.Errorf("%s of %q: String(%q) = %q", f.name, sec, text, got)
				continue
			}
			if strings.Contains(got, enc) {
				t.Errorf("%s of %q: the form survives in %q", f.name, sec, got)
			}
			if leak := piece(sec, got); leak != "" {
				t.Errorf("%s of %q: %q survives in %q", f.name, sec, leak, got)
			}
		}
	}
}

// piece returns a 5-byte piece of secret found in text, if any.
func piece(secret, text string) string {
	for i := 0; i+5 <= len(secret); i++ {
		if !utf8.RuneStart(secret[i]) {
			continue
		}
		if p := secret[i : i+5]; strings.Contains(text, p) {
			return p
		}
	}
	return ""
}

func TestTextWithoutSecretsIsUnchanged(t *testing.T) {
	var r Redactor
	r.Add(tableSecrets...)
	for _, s := range []string{
		"",
		"GET http://127.0.0.1:8080/v1/items?offset=100&limit=100",
		`{"data":[{"id":1,"name":"a \"quoted\" name","path":"a\/b"}]}`,
		"Basic " + base64.StdEncoding.EncodeToString([]byte("alice:not-the-secret")),
		"100% of &amp; entities + pluses %zz \\x \\u12 &#xZZ; &#99999999; \\U0011FFFF",
		strings.Repeat("\\", 300) + strings.Repeat("%", 300),
	} {
		if got := r.String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestShortValuesAreNotSecrets(t *testing.T) {
	var r Redactor
	r.Add("ab", "")
	if r.Len() != 0 || r.String("ab cd") != "ab cd" {
		t.Fatalf("short values must not be registered: %d, %q", r.Len(), r.String("ab cd"))
	}
	var nilR *Redactor
	if nilR.String("abc") != "abc" || nilR.Len() != 0 || nilR.Contains("abc") {
		t.Fatal("a nil redactor must pass text through")
	}
}

func TestLongerSecretIsMaskedWhole(t *testing.T) {
	var r Redactor
	r.Add("abc", "abcdef")
	if got := r.String("x abcdef y abc z"); got != "x **** y **** z" {
		t.Fatalf("got %q", got)
	}
}

// TestDerive: what a template computes from a secret (real) is compared with what it computes
// from the stand-in (shadow); the part that differs, widened to its word, becomes a secret.
func TestDerive(t *testing.T) {
	user, pw := "alice", "hunter2-pw"
	basic := func(p string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+p))
	}
	tests := []struct {
		name, real, shadow string
		text, want         string
	}{
		{"base64 header", basic(pw), basic(Perturb(pw)),
			"Authorization: " + basic(pw), "Authorization: Basic ****"},
		{"hash in a path", "/v1/5f4dcc3b5aa765d61d8327deb882cf99/items", "/v1/0d107d09f5bbe40cade3de5c71e9e9b7/items",
			"GET /v1/5f4dcc3b5aa765d61d8327deb882cf99/items", "GET /v1/****/items"},
		{"identical: nothing derived", "plain", "plain", "plain text", "plain text"},
		{"difference too short: whole value", "a-b", "a-c", "x a-b y", "x **** y"},
	}
	for _, tt := range tests {
		var r Redactor
		r.Add(pw)
		r.Derive(tt.real, tt.shadow)
		if got := r.String(tt.text); got != tt.want {
			t.Errorf("%s: String(%q) = %q, want %q", tt.name, tt.text, got, tt.want)
		}
	}
}

func TestDerivedValuesAreBounded(t *testing.T) {
	var r Redactor
	for i := range maxDerived + 10 {
		r.Derive(fmt.Sprintf("sig-%08d", i), "sig-xxxxxxxx")
	}
	if r.Len() != maxDerived {
		t.Fatalf("Len = %d, want %d", r.Len(), maxDerived)
	}
	if got := r.String("sig-00000000"); got != "sig-00000000" {
		t.Errorf("the oldest derived value is still masked: %q", got)
	}
	if got := r.String(fmt.Sprintf("sig-%08d", maxDerived+9)); got != Mask {
		t.Errorf("the newest derived value is not masked: %q", got)
	}
}

func TestShadow(t *testing.T) {
	var r Redactor
	r.Add("Secret-123", "other!")
	config := map[string]any{
		"api_key": "Secret-123",
		"nested":  map[string]any{"list": []any{"plain", "other!"}, "n": int64(5)},
		"plain":   "not secret",
	}
	out, changed := r.Shadow(config)
	got := out.(map[string]any)
	if !changed {
		t.Error("Shadow says nothing changed")
	}
	if _, changed := r.Shadow(map[string]any{"a": "plain"}); changed {
		t.Error("Shadow says a value without secrets changed")
	}
	if got["api_key"] != "Frpergx678" {
		t.Errorf("api_key = %v", got["api_key"])
	}
	list := got["nested"].(map[string]any)["list"].([]any)
	if list[0] != "plain" || list[1] != "bgure"+"x" {
		t.Errorf("list = %v", list)
	}
	if got["plain"] != "not secret" || config["api_key"] != "Secret-123" {
		t.Errorf("Shadow changed what it must not: %v / %v", got, config)
	}
	if config["nested"].(map[string]any)["list"].([]any)[1] != "other!" {
		t.Error("Shadow changed the original list")
	}
}

func TestHeader(t *testing.T) {
	var r Redactor
	r.Add("k3y-value")
	tests := []struct {
		name, value string
		sensitive   bool
		want        string
	}{
		{"Authorization", "Bearer anything-at-all", false, "Bearer ****"},
		{"authorization", "opaque", false, "****"},
		{"Proxy-Authorization", "Basic dXNlcjpwYXNz", false, "Basic ****"},
		{"Cookie", "session=abc; theme=dark", false, "****"},
		{"Set-Cookie", "id=1; Path=/", false, "****"},
		{"X-Api-Key", "from-the-authenticator", true, "****"},
		{"X-Custom", "prefix-k3y-value", false, "****"},
		{"Accept", "application/json", false, "application/json"},
	}
	for _, tt := range tests {
		if got := r.Header(tt.name, tt.value, tt.sensitive); got != tt.want {
			t.Errorf("Header(%q, %q, %v) = %q, want %q", tt.name, tt.value, tt.sensitive, got, tt.want)
		}
	}
}

// FuzzString: whatever the text, String never panics, and a secret planted raw in it is
// gone afterwards.
func FuzzString(f *testing.F) {
	f.Add("plain text", "s3cr3t")
	f.Add(`\u00\x%2&#x;`, `a\b"c`)
	f.Add("Basic "+base64.StdEncoding.EncodeToString([]byte("u:pw123")), "pw123")
	f.Fuzz(func(t *testing.T, text, secret string) {
		var r Redactor
		r.Add(secret)
		planted := text + secret + text
		got := r.String(planted)
		if len(secret) >= minLen && !strings.Contains(secret, "*") && strings.Contains(got, secret) {
			t.Fatalf("String(%q) = %q still holds %q", planted, got, secret)
		}
		_ = r.String(text)
	})
}

func BenchmarkString(b *testing.B) {
	var r Redactor
	r.Add("s3cr3t-api-key-123456", "alice", `pa"ss\word99`)
	line := `  → GET http://127.0.0.1:8787/v1/public/books?limit=100&offset=200&api_key=s3cr3t-api-key-123456 (data) {"user":"alice","password":"pa\"ss\\word99"}`
	b.Run("trace line", func(b *testing.B) {
		for b.Loop() {
			r.String(line)
		}
	})
	clean := "GET http://127.0.0.1:8787/v1/public/books?limit=100&offset=200"
	b.Run("url without secret", func(b *testing.B) {
		for b.Loop() {
			r.String(clean)
		}
	})
	var hostile Redactor
	hostile.Add(`\\\\%%%%&&&&++++\\\\`)
	text := strings.Repeat(`\`, 1<<16)
	b.Run("hostile 64 KiB", func(b *testing.B) {
		for b.Loop() {
			hostile.String(text)
		}
	})
}
