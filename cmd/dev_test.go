package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// lockedBuffer is a buffer a test reads while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// waitText waits until the buffer holds text, and returns what it holds.
func waitText(t *testing.T, b *lockedBuffer, text string) string {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		s := b.String()
		if strings.Contains(s, text) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in:\n%s", text, s)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// devFiles are a definition of definitions/ and the example testing values, copied into a
// folder of the test, the values' base_url that of a demo API of the test.
func devFiles(t *testing.T, definition string) (def, values string) {
	t.Helper()
	demo := httptest.NewServer(demoapi.Handler(demoapi.Options{}))
	t.Cleanup(demo.Close)
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "definitions", definition))
	if err != nil {
		t.Fatal(err)
	}
	vals, err := os.ReadFile(filepath.Join("..", "testing-values.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	def, values = filepath.Join(dir, definition), filepath.Join(dir, "values.yaml")
	saveFile(t, def, string(src))
	saveFile(t, values, strings.Replace(string(vals), "base_url: http://127.0.0.1:8787", "base_url: "+demo.URL, 1))
	return def, values
}

// saveFile saves a file as many editors do: a new file renamed over the old one.
func saveFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path+".new", []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".new", path); err != nil {
		t.Fatal(err)
	}
}

func editFile(t *testing.T, path, old, new string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || !strings.Contains(string(b), old) {
		t.Fatalf("%s has no %q (%v)", path, old, err)
	}
	saveFile(t, path, strings.Replace(string(b), old, new, 1))
}

// startDev runs `connector dev` in-process until stop, which returns its exit code.
func startDev(t *testing.T, args ...string) (stdout, stderr *lockedBuffer, stop func() int) {
	t.Helper()
	stdout, stderr = &lockedBuffer{}, &lockedBuffer{}
	env := testEnv(nil)
	env.Stdout, env.Stderr = stdout, stderr
	ctx, cancel := context.WithCancel(context.Background())
	code := make(chan int, 1)
	go func() { code <- Execute(ctx, append([]string{"dev"}, args...), env) }()
	var once sync.Once
	result := 0
	stop = func() int {
		once.Do(func() {
			cancel()
			result = <-code
		})
		return result
	}
	t.Cleanup(func() { stop() })
	return stdout, stderr, stop
}

func TestDevNoBrowserSummarisesEverySave(t *testing.T) {
	def, values := devFiles(t, "offset-pagination.yaml")
	stdout, stderr, stop := startDev(t, def, "--testing-values", values, "--no-browser")
	waitText(t, stdout, "books  250 records, 3 pages, no warnings; schema: none declared (11 fields inferred)\n")

	editFile(t, def, "page_size: 100", "page_size: 50")
	waitText(t, stdout, "books  250 records, 5 pages, no warnings")

	editFile(t, def, "            field_name: offset", "            field_nme: offset")
	out := waitText(t, stdout, "1 error: fix and save to read again\n")
	if !regexp.MustCompile(regexp.QuoteMeta(def) + `:\d+:\d+: error: RequestOption is missing the required field ` + "`field_name`").MatchString(out) {
		t.Errorf("the error has no position:\n%s", out)
	}
	if code := stop(); code != exitInterrupted {
		t.Errorf("exit %d after Ctrl-C, want %d", code, exitInterrupted)
	}
	if want := "watching " + def + " and " + values + "; every save reads every stream again (Ctrl-C to stop)\n"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr:\n%s\nwant it to begin with:\n%s", stderr.String(), want)
	}
	if strings.Contains(stdout.String()+stderr.String(), "demo-") {
		t.Error("a testing value was printed")
	}
}

func TestDevServesThePageOnLoopbackWithAToken(t *testing.T) {
	def, values := devFiles(t, "bearer-auth.yaml")
	_, stderr, stop := startDev(t, def, "--testing-values", values)
	m := regexp.MustCompile(`http://(127\.0\.0\.1:\d+)/\?token=([0-9a-f]{32})\n`).FindStringSubmatch(waitText(t, stderr, "?token="))
	if m == nil {
		t.Fatalf("no URL on stderr:\n%s", stderr.String())
	}
	addr, token := m[1], m[2]
	get := func(path, host, tok string) (int, string) {
		req, _ := http.NewRequest("GET", "http://"+addr+path, nil)
		if host != "" {
			req.Host = host
		}
		if tok != "" {
			req.Header.Set("X-Connector-Token", tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	var view struct {
		Results []struct {
			Stream  string `json:"stream"`
			Records int    `json:"records"`
		} `json:"results"`
	}
	for deadline := time.Now().Add(20 * time.Second); len(view.Results) == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no result in the view")
		}
		code, body := get("/api/view", "", token)
		if code != 200 {
			continue
		}
		if err := json.Unmarshal([]byte(body), &view); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(body, "demo-bearer-token") {
			t.Fatal("the view holds the bearer token")
		}
	}
	if r := view.Results[0]; r.Stream != "books" || r.Records != 250 {
		t.Errorf("result %+v", r)
	}
	if code, _ := get("/api/view", "", ""); code != http.StatusForbidden {
		t.Errorf("without the token: %d", code)
	}
	if code, _ := get("/api/view", "rebound.example:"+strings.Split(addr, ":")[1], token); code != http.StatusMisdirectedRequest {
		t.Errorf("another Host: %d", code)
	}
	if code, page := get("/", "", ""); code != 200 || !strings.Contains(page, "<title>connector dev</title>") {
		t.Errorf("the page: %d", code)
	}
	stop()
	if !strings.HasSuffix(stderr.String(), "connector dev stopped\n") || strings.Contains(stderr.String(), "warning") {
		t.Errorf("stderr:\n%s", stderr.String())
	}
}

func TestDevOpensTheBrowser(t *testing.T) {
	def, values := devFiles(t, "offset-pagination.yaml")
	io := newIOStreams(strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{})
	env := testEnv(nil)
	ctx, cancel := context.WithCancel(context.Background())
	var opened string
	opts := &devOptions{io: io, env: &env, defPath: def, testingValues: values, addr: "127.0.0.1:0", open: true,
		timeout: 10 * time.Second, maxBody: 1 << 20,
		openBrowser: func(url string) error {
			opened = url
			cancel()
			return nil
		}}
	if err := devRun(ctx, opts); err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/\?token=[0-9a-f]{32}$`).MatchString(opened) {
		t.Errorf("opened %q", opened)
	}
}

func TestDevFlags(t *testing.T) {
	var got *devOptions
	c := newCmdDev(newIOStreams(strings.NewReader(""), io.Discard, io.Discard), &Env{}, func(o *devOptions) error {
		got = o
		return nil
	})
	c.SetArgs([]string{"def.yaml", "--testing-values", "v.yaml", "--state", "s.json", "--open"})
	if err := c.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.defPath != "def.yaml" || got.testingValues != "v.yaml" || got.state != "s.json" || !got.open || got.noBrowser ||
		got.addr != "127.0.0.1:0" || got.timeout != 60*time.Second {
		t.Errorf("options %+v", got)
	}
}

func TestDevUsageErrors(t *testing.T) {
	def, values := devFiles(t, "offset-pagination.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "error: dev needs exactly one definition file, got 0"},
		{[]string{"missing.yaml"}, "error: cannot read definition: missing.yaml: no such file or directory"},
		{[]string{def, "--testing-values", "-"}, "error: --testing-values - (stdin) cannot be watched: give a file"},
		{[]string{def, "--testing-values", "nope.yaml"}, "error: cannot read testing values: nope.yaml: no such file or directory"},
		{[]string{def, "--testing-values", values, "--open", "--no-browser"}, "error: --open and --no-browser cannot be used together"},
		{[]string{def, "--addr", "127.0.0.1:99999"}, "error: dev cannot listen on 127.0.0.1:99999"},
	} {
		r := runCLI(t, "", append([]string{"dev"}, tc.args...)...)
		if r.Code != exitUsage || !strings.HasPrefix(r.Stderr, tc.want) {
			t.Errorf("dev %v: exit %d, stderr %q; want exit %d, %q", tc.args, r.Code, r.Stderr, exitUsage, tc.want)
		}
	}
}
