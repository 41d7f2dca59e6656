package demoapi

import (
	"crypto/sha256"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

func TestAuthorizeAndCodeExchange(t *testing.T) {
	ts := httptest.NewServer(New(Options{}))
	defer ts.Close()
	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	const verifier = "a-verifier-of-some-length-0123456789abcdefgh"
	sum := sha256.Sum256([]byte(verifier))
	challenge := base64.RawURLEncoding.EncodeToString(sum[:])
	redirect := "http://127.0.0.1:9/callback"

	authorize := func(q url.Values) url.Values {
		t.Helper()
		resp, err := noFollow.Get(ts.URL + "/oauth/authorize?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Fatalf("authorize: %s", resp.Status)
		}
		loc, _ := url.Parse(resp.Header.Get("Location"))
		if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirect {
			t.Fatalf("redirected to %s", loc)
		}
		return loc.Query()
	}
	exchange := func(code, v string) (int, string) {
		form := url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirect}, "code_verifier": {v},
			"client_id": {DemoClientID}, "client_secret": {DemoClientSecret}}
		resp, err := http.PostForm(ts.URL+"/oauth/code/token", form)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}

	base := url.Values{"client_id": {DemoClientID}, "redirect_uri": {redirect}, "state": {"st-1"}, "response_type": {"code"},
		"code_challenge": {challenge}, "code_challenge_method": {"S256"}, "scope": {"books:read"}}
	back := authorize(base)
	if back.Get("state") != "st-1" || back.Get("code") == "" {
		t.Fatalf("callback query %v", back)
	}
	if status, body := exchange(back.Get("code"), "wrong-verifier"); status != 400 || !strings.Contains(body, "code_verifier does not match the code_challenge") {
		t.Errorf("wrong verifier: %d %s", status, body)
	}

	back = authorize(base)
	status, body := exchange(back.Get("code"), verifier)
	if status != 200 || !strings.Contains(body, `"access_token":"demo-access-`) || !strings.Contains(body, `"refresh_token":"demo-refresh-token"`) {
		t.Errorf("exchange: %d %s", status, body)
	}
	if status, body := exchange(back.Get("code"), verifier); status != 400 || !strings.Contains(body, "already used") {
		t.Errorf("second use of a code: %d %s", status, body)
	}

	denied := url.Values{"client_id": {DemoDenyClientID}, "redirect_uri": {redirect}, "state": {"st-2"}}
	back = authorize(denied)
	if back.Get("error") != "access_denied" || back.Get("state") != "st-2" || back.Get("code") != "" {
		t.Errorf("deny client: %v", back)
	}
	base.Set("deny", "1")
	if back = authorize(base); back.Get("error") != "access_denied" {
		t.Errorf("deny=1: %v", back)
	}

	resp, err := noFollow.Get(ts.URL + "/oauth/authorize?client_id=demo-client&redirect_uri=" + url.QueryEscape("https://evil.example/cb"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("non-loopback redirect_uri: %s", resp.Status)
	}
}
