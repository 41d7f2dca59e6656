package redact

import (
	"encoding/base64"
	"net/url"
	"strings"
	"testing"
)

func TestPlaceholdersNameEachSecret(t *testing.T) {
	var r Redactor
	r.Label("demo", "username")
	r.Label("demo-password", "password")
	r.Label("k3y-value", "api_key")
	r.Add("demo", "demo-password", "k3y-value")
	r.AddAs("access_token", "tok-one-123", "tok-two-456")
	r.AddAs("", "no-name-given")
	basic := base64.StdEncoding.EncodeToString([]byte("demo:demo-password"))
	tests := []struct{ text, want string }{
		{"GET /items?key=k3y-value&x=1", "GET /items?key=****api_key****&x=1"},
		{"key=" + url.QueryEscape("k3y-value"), "key=****api_key****"},
		{`{"password":"demo-password","user":"demo"}`, `{"password":"****password****","user":"****username****"}`},
		{"Authorization: Basic " + basic, "Authorization: Basic ****username+password****"},
		{"Bearer tok-one-123 then tok-two-456", "Bearer ****access_token**** then ****access_token_2****"},
		{"no-name-given", "****secret****"},
		{"nothing secret here", "nothing secret here"},
	}
	for _, tt := range tests {
		if got := r.Placeholders(tt.text); got != tt.want {
			t.Errorf("Placeholders(%q) = %q, want %q", tt.text, got, tt.want)
		}
		if got := r.String(tt.text); strings.Contains(got, "****api_key") {
			t.Errorf("String(%q) = %q names a secret", tt.text, got)
		}
	}
}

// A run that replays a recording has the placeholders as its secrets: each is named after
// itself, so the run's requests mask to exactly what the recording holds, in every form.
func TestPlaceholdersOfPlaceholdersAreThemselves(t *testing.T) {
	var rec, replay Redactor
	rec.Label("demo", "username")
	rec.Label("demo-password", "password")
	rec.Add("demo", "demo-password")
	replay.Label("****username****", "another_name")
	replay.Add("****username****", "****password****")
	for _, form := range []func(u, p string) string{
		func(u, p string) string { return "Basic " + base64.StdEncoding.EncodeToString([]byte(u+":"+p)) },
		func(u, p string) string { return "user=" + url.QueryEscape(u) + "&pw=" + url.QueryEscape(p) },
		func(u, p string) string { return `{"u":"` + u + `","p":"` + p + `"}` },
	} {
		recorded := rec.Placeholders(form("demo", "demo-password"))
		live := replay.Placeholders(form("****username****", "****password****"))
		if recorded != live {
			t.Errorf("recorded %q, replayed %q", recorded, live)
		}
	}
}

func TestDerivedPlaceholder(t *testing.T) {
	var r Redactor
	r.Add("hunter2-pw")
	r.Derive("/v1/5f4dcc3b5aa765d61d8327deb882cf99/items", "/v1/0d107d09f5bbe40cade3de5c71e9e9b7/items")
	if got := r.Placeholders("GET /v1/5f4dcc3b5aa765d61d8327deb882cf99/items"); got != "GET /v1/****derived****/items" {
		t.Errorf("got %q", got)
	}
}

func TestPlaceholderName(t *testing.T) {
	for s, want := range map[string]string{"****api_key****": "api_key", "****a.b+c****": "a.b+c"} {
		if got, ok := PlaceholderName(s); !ok || got != want {
			t.Errorf("PlaceholderName(%q) = %q, %v", s, got, ok)
		}
	}
	for _, s := range []string{"****", "********", "****a b****", "x****a****", "plain"} {
		if _, ok := PlaceholderName(s); ok {
			t.Errorf("PlaceholderName(%q) says it is one", s)
		}
	}
	if got := Placeholder("weird key/é"); got != "****weird_key___****" {
		t.Errorf("Placeholder = %q", got)
	}
}

func TestHeaderPlaceholders(t *testing.T) {
	var r Redactor
	r.Label("tok-123456", "bearer_token")
	r.Add("tok-123456")
	tests := []struct{ name, value, want string }{
		{"Authorization", "Bearer tok-123456", "Bearer ****bearer_token****"},
		{"Authorization", "Bearer unknown-token", "Bearer ****"},
		{"Authorization", "Token tok-123456, extra=abcdef", "Token ****"},
		{"Cookie", "session=tok-123456", "****"},
		{"Set-Cookie", "tok-123456", "****bearer_token****"},
		{"X-Api-Key", "tok-123456", "****bearer_token****"},
		{"Accept", "application/json", "application/json"},
	}
	for _, tt := range tests {
		if got := r.HeaderPlaceholders(tt.name, tt.value); got != tt.want {
			t.Errorf("HeaderPlaceholders(%q, %q) = %q, want %q", tt.name, tt.value, got, tt.want)
		}
	}
}
