package dev

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// demoSecrets are the secrets of testing-values.example.yaml: none may reach the page.
var demoSecrets = []string{"demo-password", "demo-bearer-token", "demo-api-key", "demo-client-secret",
	"demo-refresh-token", "demo-rotating-refresh-token", "demo-expired-access-token"}

// project is a definition and testing values of the repository, copied into a folder of the
// test, the values' base_url that of a demo API of the test.
type project struct {
	dir, def, values string
	api              *httptest.Server
}

func newProject(t *testing.T, definition string) *project {
	t.Helper()
	api := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	t.Cleanup(api.Close)
	dir := t.TempDir()
	p := &project{dir: dir, def: filepath.Join(dir, filepath.Base(definition)), values: filepath.Join(dir, "values.yaml"), api: api}
	src, err := os.ReadFile(filepath.Join("..", "..", definition))
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, p.def, string(src))
	vals, err := os.ReadFile(filepath.Join("..", "..", "testing-values.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, p.values, strings.Replace(string(vals), "base_url: http://127.0.0.1:8787", "base_url: "+api.URL, 1))
	return p
}

// write saves a file as an editor does: a new file renamed over the old one.
func (p *project) write(t *testing.T, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// edit replaces old by new in the definition and saves it.
func (p *project) edit(t *testing.T, old, new string) {
	t.Helper()
	src, err := os.ReadFile(p.def)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(src), old) {
		t.Fatalf("the definition has no %q", old)
	}
	p.write(t, p.def, strings.Replace(string(src), old, new, 1))
}

// start runs a workspace for the project until the test ends.
func (p *project) start(t *testing.T, cfg Config) *Workspace {
	t.Helper()
	cfg.Definition, cfg.Values = p.def, p.values
	if cfg.Poll == 0 {
		cfg.Poll = 20 * time.Millisecond
	}
	cfg.Env.Timeout = 10 * time.Second
	ws := New(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		ws.Run(ctx)
		close(done)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	return ws
}

// waitView waits for a view that ok accepts.
func waitView(t *testing.T, ws *Workspace, what string, ok func(*View) bool) *View {
	t.Helper()
	wake, stop := ws.Subscribe()
	defer stop()
	deadline := time.After(20 * time.Second)
	for {
		if v := ws.CurrentView(); v != nil && ok(v) {
			return v
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("no view with %s; the last: %s", what, ws.Current())
		}
	}
}

// settled reports a view of a round whose reads are all done.
func settled(v *View) bool {
	return !v.Reading && (v.Broken || len(v.Results) > 0 && v.Results[0].Round == v.Round)
}
