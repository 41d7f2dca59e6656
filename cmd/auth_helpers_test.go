package cmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// authClock is a clock tests move by hand, shared with the demo API.
type authClock struct {
	mu  sync.Mutex
	now time.Time
}

func newAuthClock() *authClock { return &authClock{now: time.Now().UTC().Truncate(time.Second)} }

func (c *authClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *authClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// authDemo is the demo API behind a recorder, remembering every token it issued.
type authDemo struct {
	api *demoapi.Server
	*recorder
	mu     sync.Mutex
	issued []string
}

// newAuthDemo serves the demo API with opts, recording requests and issued tokens.
func newAuthDemo(t *testing.T, opts demoapi.Options) *authDemo {
	t.Helper()
	d := &authDemo{api: demoapi.New(opts)}
	d.recorder = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, "/oauth/") && !strings.HasPrefix(r.URL.Path, "/auth/") {
			d.api.ServeHTTP(w, r)
			return
		}
		rec := httptest.NewRecorder()
		d.api.ServeHTTP(rec, r)
		d.collect(rec.Body.Bytes())
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes())
	})
	return d
}

func (d *authDemo) collect(body []byte) {
	var m struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
		Data         struct {
			Session struct {
				Token string `json:"token"`
			} `json:"session"`
		} `json:"data"`
	}
	if json.Unmarshal(body, &m) != nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, s := range []string{m.AccessToken, m.RefreshToken, m.Data.Session.Token} {
		if s != "" {
			d.issued = append(d.issued, s)
		}
	}
}

// tokens returns every token the server handed out.
func (d *authDemo) tokens() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.issued...)
}

// authCountPath counts the requests received on a path (query ignored).
func authCountPath(reqs []recorded, path string) int {
	n := 0
	for _, r := range reqs {
		p, _, _ := strings.Cut(r.URL, "?")
		if p == path {
			n++
		}
	}
	return n
}

// authDemoValues copies testing-values.example.yaml into a temporary folder with base_url set to
// url, and returns its path.
func authDemoValues(t *testing.T, url string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testing-values.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("base_url: http://127.0.0.1:8787"), []byte("base_url: "+url), 1)
	if !bytes.Contains(data, []byte(url)) {
		t.Fatal("testing-values.example.yaml has no base_url line to replace")
	}
	return writeFile(t, "values.yaml", string(data))
}

// definition is the path of a file in the repository's definitions folder.
func authDefinition(name string) string { return filepath.Join("..", "definitions", name) }
