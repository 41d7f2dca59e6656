package dev

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve serves the page of ws as connector dev does, on a loopback port.
func servePage(t *testing.T, ws *Workspace, token string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.Config.Handler = NewServer(ws, srv.Listener.Addr().String(), "127.0.0.1", token)
	srv.Start()
	t.Cleanup(func() {
		// The page's event stream stays open: end it, or Close waits for it.
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

func get(t *testing.T, url, host string, header map[string]string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if host != "" {
		req.Host = host
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestServerRefusesOtherHostsAndCallsWithoutTheToken(t *testing.T) {
	p := newProject(t, "definitions/bearer-auth.yaml")
	ws := p.start(t, Config{})
	waitView(t, ws, "a result", settled)
	srv := servePage(t, ws, "tok123")
	port := srv.Listener.Addr().String()[strings.LastIndex(srv.Listener.Addr().String(), ":"):]
	ok := map[string]string{TokenHeader: "tok123"}
	for _, tc := range []struct {
		path, host string
		header     map[string]string
		status     int
	}{
		{"/", "", nil, 200},
		{"/app.js", "", nil, 200},
		{"/style.css", "", nil, 200},
		{"/api/view", "", ok, 200},
		{"/api/view", "localhost" + port, ok, 200},
		{"/api/view", "[::1]" + port, ok, 200},
		// DNS rebinding: a name that resolves here, sent by a page of that name.
		{"/api/view", "attacker.example" + port, ok, 421},
		{"/", "attacker.example" + port, nil, 421},
		{"/api/view", "127.0.0.1:1", ok, 421},
		{"/api/view", "", nil, 403},
		{"/api/view", "", map[string]string{TokenHeader: "tok12"}, 403},
		{"/api/view?token=tok123", "", nil, 403}, // the query carries the token for events only
		{"/nothing", "", ok, 404},
	} {
		resp, body := get(t, srv.URL+tc.path, tc.host, tc.header)
		if resp.StatusCode != tc.status {
			t.Errorf("GET %s (Host %q): %d %s, want %d", tc.path, tc.host, resp.StatusCode, body, tc.status)
		}
		if tc.status == 200 && !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
			t.Errorf("GET %s: no Content-Security-Policy", tc.path)
		}
	}
	_, page := get(t, srv.URL+"/", "", nil)
	if strings.Contains(page, "tok123") || !strings.Contains(page, `<script src="app.js"`) {
		t.Errorf("the page holds the token or not its script")
	}
	// The page's files are all there is to it: nothing from elsewhere.
	for _, f := range []string{"/", "/app.js", "/style.css"} {
		_, body := get(t, srv.URL+f, "", nil)
		if strings.Contains(body, "https://") || strings.Contains(body, "@import") {
			t.Errorf("%s refers to something outside the page", f)
		}
	}
}

func TestServerCommandsAndEvents(t *testing.T) {
	p := newProject(t, "definitions/incremental-datetime.yaml")
	ws := p.start(t, Config{})
	first := waitView(t, ws, "a result", settled)
	srv := servePage(t, ws, "tok")

	post := func(path, contentType, body string, token string) (int, string) {
		req, _ := http.NewRequest("POST", srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", contentType)
		req.Header.Set(TokenHeader, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := post("/api/choose", "text/plain", `{"stream":"events"}`, "tok"); code != 415 {
		t.Errorf("a form post: %d %s", code, body)
	}
	if code, _ := post("/api/choose", "application/json", `{"stream":"events"}`, "bad"); code != 403 {
		t.Errorf("a bad token: %d", code)
	}
	if code, body := post("/api/choose", "application/json", `{"stream":"nope"}`, "tok"); code != 400 || body != `{"error":"unknown stream \"nope\""}` {
		t.Errorf("an unknown stream: %d %s", code, body)
	}

	// The event stream sends the current view at once, then every new one.
	req, _ := http.NewRequest("GET", srv.URL+"/api/events?token=tok", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	events := bufio.NewReader(resp.Body)
	next := func() *View {
		t.Helper()
		for {
			line, err := events.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if data, ok := strings.CutPrefix(line, "data: "); ok {
				v := &View{}
				if err := json.Unmarshal([]byte(data), v); err != nil {
					t.Fatal(err)
				}
				return v
			}
		}
	}
	if v := next(); v.Seq < first.Seq {
		t.Fatalf("first event: view %d, want at least %d", v.Seq, first.Seq)
	}
	if code, body := post("/api/read", "application/json", `{"from_state":true}`, "tok"); code != 202 {
		t.Fatalf("read from state: %d %s", code, body)
	}
	for {
		v := next()
		if settled(v) && v.Results[0].From == "read" {
			break
		}
	}
	if code, _ := post("/api/choose", "application/json", `{"stream":"events","limits":{"records":3}}`, "tok"); code != 202 {
		t.Fatalf("choose: %d", code)
	}
	for {
		v := next()
		if settled(v) && v.Limits.Records == 3 && v.Results[0].Limits.Records == 3 {
			break
		}
	}
}

func TestHostAllowed(t *testing.T) {
	s := NewServer(nil, "0.0.0.0:8123", "devbox.local", "t")
	for host, want := range map[string]bool{
		"127.0.0.1:8123": true, "localhost:8123": true, "LOCALHOST:8123": true, "[::1]:8123": true,
		"192.168.1.20:8123": true, "devbox.local:8123": true,
		"127.0.0.1:8124": false, "127.0.0.1": false, "evil.example:8123": false, "devbox.local.evil.example:8123": false, "": false,
	} {
		if got := s.hostAllowed(host); got != want {
			t.Errorf("Host %q: allowed %v, want %v", host, got, want)
		}
	}
}
