package auth

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/redact"
	"connector/pkg/request"
	"connector/pkg/template"
)

func TestSessionExpiration(t *testing.T) {
	var logins atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `{"session":[{"id":"sess-%d"}]}`, logins.Add(1))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		expiration string
		want       []string // X-Token at 0, 9 min, 10 min
	}{
		{"\n    expiration_duration: PT10M", []string{"sess-1", "sess-1", "sess-2"}},
		{"", []string{"sess-1", "sess-2", "sess-3"}},
	} {
		logins.Store(0)
		c := &clock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		r := &redact.Redactor{}
		a, err := New(loadAuth(t, `
    type: SessionTokenAuthenticator
    login_requester:
      url_base: "{{ config['base_url'] }}"
      path: /login
      http_method: POST
      request_body_json: {user: "{{ config['user'] }}", password: "{{ config['password'] }}"}
    session_token_path: [session, "0", id]
    request_authentication:
      type: ApiKey
      inject_into: {type: RequestOption, inject_into: header, field_name: X-Token}`+tc.expiration), Env{
			Globals: template.Globals{Config: map[string]any{"base_url": srv.URL, "user": "alice", "password": "pw-secret"}},
			Client:  &httpx.Client{HTTP: http.DefaultClient, Redactor: r}, Redactor: r, Now: c.Now,
		})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, step := range []time.Duration{0, 9 * time.Minute, time.Minute} {
			c.advance(step)
			b := request.New("data", "GET", "http://example.test/")
			if err := a.Apply(context.Background(), b); err != nil {
				t.Fatal(err)
			}
			req, _ := b.Build()
			got = append(got, req.Header.Get("X-Token"))
		}
		if fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("expiration %q: tokens %v, want %v", tc.expiration, got, tc.want)
		}
		if s := r.String("alice pw-secret sess-1"); s != "**** **** ****" {
			t.Errorf("redacted %q: login values and session tokens must be secrets", s)
		}
	}
}
