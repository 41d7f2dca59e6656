package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/request"
	"connector/pkg/template"
)

// clock is a fake clock moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// loadAuth loads a definition whose one stream uses the given authenticator YAML.
func loadAuth(t *testing.T, authYAML string) *manifest.Authenticator {
	t.Helper()
	path := filepath.Join(t.TempDir(), "def.yaml")
	def := `
version: 6.0.0
definitions:
  authenticator:
` + authYAML + `
streams:
  - type: DeclarativeStream
    name: s
    retriever:
      type: SimpleRetriever
      requester:
        url_base: "{{ config['base_url'] }}"
        path: /data
        authenticator: {$ref: "#/definitions/authenticator"}
      record_selector: {extractor: {field_path: []}}
`
	if err := os.WriteFile(path, []byte(def), 0o600); err != nil {
		t.Fatal(err)
	}
	d, diags := manifest.Load(path)
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return d.Authenticator
}

// tokenServer answers token requests with expires_in seconds, counting them.
func tokenServer(t *testing.T, expiresIn string) (*httptest.Server, *atomic.Int32) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":%s}`, n.Add(1), expiresIn)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

const oauthYAML = `
    type: OAuthAuthenticator
    token_refresh_endpoint: "{{ config['base_url'] }}/token"
    client_id: "{{ config['client_id'] }}"
    client_secret: "{{ config['client_secret'] }}"
    refresh_token: "{{ config['refresh_token'] }}"`

func newTestOAuth(t *testing.T, srvURL string, c *clock, extra string, config map[string]any) (Authenticator, *redact.Redactor) {
	t.Helper()
	if config == nil {
		config = map[string]any{}
	}
	config["base_url"], config["client_id"], config["client_secret"], config["refresh_token"] = srvURL, "cid", "csecret", "rtok"
	r := &redact.Redactor{}
	a, err := New(loadAuth(t, oauthYAML+extra), Env{
		Globals: template.Globals{Config: config}, Client: &httpx.Client{HTTP: http.DefaultClient, MaxRetries: -1}, Redactor: r, Now: c.Now,
	})
	if err != nil {
		t.Fatal(err)
	}
	return a, r
}

// bearerOf applies a and returns the Authorization header it set.
func bearerOf(t *testing.T, a Authenticator) string {
	t.Helper()
	b := request.New("data", "GET", "http://example.test/data")
	if err := a.Apply(context.Background(), b); err != nil {
		t.Fatal(err)
	}
	req, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	return req.Header.Get("Authorization")
}

func TestRemainingTooShort(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		life, elapsed time.Duration
		want          bool
	}{
		{time.Hour, 0, false},
		{time.Hour, 59 * time.Minute, false},            // 60 s remain: not less than 60 s
		{time.Hour, 59*time.Minute + time.Second, true}, // 59 s remain
		{time.Hour, 2 * time.Hour, true},                // expired
		{10 * time.Second, 5 * time.Second, false},      // half the lifetime remains
		{10 * time.Second, 5*time.Second + time.Millisecond, true},
		{100 * time.Second, 40 * time.Second, false}, // 60 s remain, margin 50 s
		{100 * time.Second, 50*time.Second + time.Nanosecond, true},
	}
	for _, c := range cases {
		got := remainingTooShort(t0, t0.Add(c.life), t0.Add(c.elapsed))
		if got != c.want {
			t.Errorf("lifetime %s, %s elapsed: refresh %v, want %v", c.life, c.elapsed, got, c.want)
		}
	}
}

func TestOAuthRefreshesOnlyNearExpiry(t *testing.T) {
	srv, n := tokenServer(t, "3600")
	c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	a, r := newTestOAuth(t, srv.URL, c, "", nil)
	if got := bearerOf(t, a); got != "Bearer tok-1" {
		t.Fatalf("first Apply: %q", got)
	}
	c.advance(59 * time.Minute)
	if got := bearerOf(t, a); got != "Bearer tok-1" || n.Load() != 1 {
		t.Fatalf("at 59 min: %q after %d refreshes, want the first token", got, n.Load())
	}
	c.advance(time.Second)
	if got := bearerOf(t, a); got != "Bearer tok-2" || n.Load() != 2 {
		t.Fatalf("at 59 min 1 s: %q after %d refreshes, want a new token", got, n.Load())
	}
	if got := r.String("tok-1 tok-2 cid csecret rtok"); got != "**** **** **** **** ****" {
		t.Errorf("redacted %q: every credential and token must be registered", got)
	}
}

func TestOAuthRenewForcesOneRefresh(t *testing.T) {
	srv, n := tokenServer(t, "3600")
	c := &clock{now: time.Now()}
	a, _ := newTestOAuth(t, srv.URL, c, "", nil)
	bearerOf(t, a)
	ok, err := a.(Retrier).Renew(context.Background())
	if !ok || err != nil || n.Load() != 2 {
		t.Fatalf("Renew: %v %v after %d refreshes", ok, err, n.Load())
	}
	if got := bearerOf(t, a); got != "Bearer tok-2" {
		t.Errorf("after Renew: %q", got)
	}
}

// Callers that apply the authenticator while the first token request is on its way wait
// for it instead of sending their own: the token endpoint holds that request until every
// caller has started.
func TestOAuthConcurrentApplySharesOneRefresh(t *testing.T) {
	const callers = 16
	started := make(chan struct{}, callers)
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := n.Add(1)
		if i == 1 {
			for range callers {
				<-started
			}
		}
		fmt.Fprintf(w, `{"access_token":"tok-%d","expires_in":3600}`, i)
	}))
	t.Cleanup(srv.Close)
	c := &clock{now: time.Now()}
	a, _ := newTestOAuth(t, srv.URL, c, "", nil)
	var wg sync.WaitGroup
	got := make([]string, callers)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := request.New("data", "GET", "http://example.test/")
			started <- struct{}{}
			if err := a.Apply(context.Background(), b); err != nil {
				t.Error(err)
				return
			}
			req, _ := b.Build()
			got[i] = req.Header.Get("Authorization")
		}()
	}
	wg.Wait()
	if n.Load() != 1 {
		t.Errorf("%d refreshes for %d concurrent requests, want 1", n.Load(), callers)
	}
	for i, g := range got {
		if g != "Bearer tok-1" {
			t.Errorf("request %d: %q", i, g)
		}
	}
}

func TestOAuthStoredToken(t *testing.T) {
	srv, n := tokenServer(t, "3600")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	extra := `
    access_token_value: "{{ config['access'] }}"
    token_expiry_date: "{{ config['expiry'] }}"`
	cases := []struct {
		expiry string
		want   string
	}{
		{"2026-05-01T13:00:00Z", "Bearer stored"},
		{"2026-05-01T14:00:00+02:00", "Bearer tok-1"}, // 12:00 UTC: expired now
		{"2026-05-01 12:30:00", "Bearer stored"},      // no zone: UTC
		{"2026-05-01T11:59:59Z", "Bearer tok-1"},
	}
	for _, tc := range cases {
		n.Store(0)
		a, _ := newTestOAuth(t, srv.URL, &clock{now: now}, extra, map[string]any{"access": "stored", "expiry": tc.expiry})
		if got := bearerOf(t, a); got != tc.want {
			t.Errorf("expiry %s: %q, want %q", tc.expiry, got, tc.want)
		}
	}
}

func TestOAuthDatedExpiry(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"access_token":"tok","expires_at":"2026-05-01 13:00:00"}`)
	}))
	defer srv.Close()
	c := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	a, _ := newTestOAuth(t, srv.URL, c, `
    expires_in_name: expires_at
    token_expiry_date_format: "%Y-%m-%d %H:%M:%S"`, nil)
	bearerOf(t, a)
	o := a.(*oauth)
	if want := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC); !o.expiry.Equal(want) {
		t.Errorf("expiry %s, want %s (a date without zone is UTC)", o.expiry, want)
	}
}

func TestParseExpiryDate(t *testing.T) {
	cases := []struct {
		value, format string
		want          time.Time
		bad           bool
	}{
		{"2026-01-02T15:04:05Z", "%Y-%m-%dT%H:%M:%SZ", time.Date(2026, 1, 2, 15, 4, 5, 0, time.UTC), false},
		{"2026-01-02T15:04:05.250+0200", "%Y-%m-%dT%H:%M:%S.%f%z", time.Date(2026, 1, 2, 13, 4, 5, 250e6, time.UTC), false},
		{"02 Mar 2026 10:00", "%d %b %Y %H:%M", time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC), false},
		{"1767225600", "%s", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"2026-01-02", "%Y-%m-%dT%H", time.Time{}, true},
		{"2026-02-30", "%Y-%m-%d", time.Time{}, true},
		{"2026-01-02 extra", "%Y-%m-%d", time.Time{}, true},
	}
	for _, c := range cases {
		got, err := template.ParseTime(c.value, c.format)
		if c.bad {
			if err == nil {
				t.Errorf("%q with %q: no error", c.value, c.format)
			}
			continue
		}
		if err != nil || !got.Equal(c.want) {
			t.Errorf("%q with %q: %s %v, want %s", c.value, c.format, got, err, c.want)
		}
	}
}

func TestOAuthFailedRefreshIsAuthError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(400)
		fmt.Fprint(w, `{"error":"invalid_grant","hint":"rtok csecret"}`)
	}))
	defer srv.Close()
	a, _ := newTestOAuth(t, srv.URL, &clock{now: time.Now()}, "", nil)
	err := a.Apply(context.Background(), request.New("data", "GET", "http://example.test/"))
	want := `authentication failed: OAuth token refresh: 400 Bad Request from POST ` + srv.URL + `/token: {"error":"invalid_grant","hint":"**** ****"}`
	if !IsAuthError(err) || err.Error() != want {
		t.Errorf("error %v\nwant %s", err, want)
	}
}

// A refresh whose client_id renders empty is refused before any request, as the CDK's
// get_client_id refuses it; an empty client_secret is sent, as the CDK sends it.
func TestOAuthEmptyClientID(t *testing.T) {
	srv, n := tokenServer(t, "3600")
	for _, tt := range []struct {
		name, id, secret string
		sent             int32
		err              string
	}{
		{"no client id", "", "csecret", 0, "the OAuth token refresh needs a client id, but client_id ({{ config['client_id'] }}) renders empty with the testing values; set it (the Airbyte CDK refuses this refresh too)"},
		{"no client secret", "cid", "", 1, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			n.Store(0)
			config := map[string]any{"base_url": srv.URL, "client_id": tt.id, "client_secret": tt.secret, "refresh_token": "rtok"}
			a, err := New(loadAuth(t, oauthYAML), Env{Globals: template.Globals{Config: config},
				Client: &httpx.Client{HTTP: http.DefaultClient, MaxRetries: -1}, Redactor: &redact.Redactor{}, Now: time.Now})
			if err != nil {
				t.Fatal(err)
			}
			err = a.Apply(context.Background(), request.New("data", "GET", "http://example.test/"))
			var ce *ConfigError
			switch {
			case tt.err == "" && err != nil:
				t.Errorf("error %v", err)
			case tt.err != "" && (!errors.As(err, &ce) || err.Error() != tt.err):
				t.Errorf("error %v\nwant the ConfigError %s", err, tt.err)
			}
			if n.Load() != tt.sent {
				t.Errorf("%d token requests, want %d", n.Load(), tt.sent)
			}
		})
	}
}
