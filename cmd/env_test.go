package cmd

import (
	"net/http"
	"sync"
	"testing"
	"time"
)

// carrier is an Env.Transport that forwards every request to the real transport and
// remembers it.
type carrier struct {
	mu   sync.Mutex
	reqs []string
}

func (c *carrier) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, r.Method+" "+r.URL.String())
	c.mu.Unlock()
	return http.DefaultTransport.RoundTrip(r)
}

func (c *carrier) carried() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.reqs...)
}

// TestEnvReachesTheRead: the requests of a read go through Env.Transport, and the
// timestamps it writes come from Env.Now.
func TestEnvReachesTheRead(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`[{"id":1}]`))
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items\n", e2eWholeBody))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	tr := &carrier{}
	env := testEnv(nil)
	env.Transport = tr
	env.Now = func() time.Time { return resT0 } // 1772366400000 ms
	res := runCLIEnv(t, env, "", "read", def, "--testing-values", vals, "--format", "airbyte")
	e2eCheckResult(t, api, res, 0,
		`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1772366400000,"stream_status":{"stream_descriptor":{"name":"items"},"status":"STARTED"}}}`+"\n"+
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1772366400000,"stream_status":{"stream_descriptor":{"name":"items"},"status":"RUNNING"}}}`+"\n"+
			`{"type":"RECORD","record":{"stream":"items","data":{"id":1},"emitted_at":1772366400000}}`+"\n"+
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1772366400000,"stream_status":{"stream_descriptor":{"name":"items"},"status":"COMPLETE"}}}`+"\n"+
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":1.0}}}`+"\n",
		"")
	if got, want := tr.carried(), []string{"GET " + api.URL + "/items"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("Env.Transport carried %q, want %q", got, want)
	}
	e2eCheckRequests(t, api, e2eGet("/items"))
}

// TestEnvReachesTheOAuthExchange: the code exchange of connector oauth goes through
// Env.Transport (the consent and the callback are the browser's, not connector's).
func TestEnvReachesTheOAuthExchange(t *testing.T) {
	t.Parallel()
	p := provider(t, "", http.StatusOK, `{"access_token":"at-123456","refresh_token":"rt-654321","expires_in":3600,"token_type":"Bearer"}`)
	values := writeOAuthValues(t, p.URL)
	tr := &carrier{}
	env := fixedClock()
	env.Transport = tr
	run := startOAuth(t, env, oauthDef, "--testing-values", values)
	if status, page := browse(t, run.consentURL(t)); status != http.StatusOK {
		t.Errorf("callback answered %d %q", status, page)
	}
	if code, stderr := run.wait(t); code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if got, want := tr.carried(), []string{"POST " + p.URL + "/oauth/code/token"}; len(got) != 1 || got[0] != want[0] {
		t.Errorf("Env.Transport carried %q, want %q", got, want)
	}
}
