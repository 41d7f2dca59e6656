package cmd

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// The rotating tokens of definitions/rate-limited-tokens.yaml against the demo API, read twice
// in one quota window as testdata/rate-limited-cdk records the CDK doing: the same requests,
// in the same order, each with the same token, and the same records.

// cdkRequest is one line of a *.requests.jsonl file of testdata/rate-limited-cdk.
type cdkRequest struct {
	Method        string `json:"method"`
	URL           string `json:"url"`
	Authorization string `json:"authorization"`
	Status        int    `json:"status"`
}

func readCDKRequests(t *testing.T, name string) []cdkRequest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "rate-limited-cdk", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []cdkRequest
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var r cdkRequest
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, r)
	}
	return out
}

// decodeLines decodes one JSON value per line, each number in one form for its value
// (numbersByValue: the CDK writes the API's 9.10 as 9.1).
func decodeLines(t *testing.T, text string) []any {
	t.Helper()
	var out []any
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var v any
		if err := d.Decode(&v); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		out = append(out, numbersByValue(v))
	}
	return out
}

func TestRateLimitedTokensAsTheCDK(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	demo := newAuthDemo(t, demoapi.Options{Now: clock.Now})
	vals := authDemoValues(t, demo.URL)
	def := authDefinition("rate-limited-tokens.yaml")
	seen := 0
	for _, run := range []struct {
		name, note string
	}{
		{"first", ""},
		// Only token 3 has calls left: four pages, then every token is spent until the
		// window ends a minute after the first read began.
		{"second", "note: every token's quota \"core\" is spent: waiting 1m0s for the reset\n"},
	} {
		t.Run(run.name, func(t *testing.T) {
			start := clock.Now()
			res := runCLIEnv(t, clock.env(), "", "read", def, "--testing-values", vals)
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
			}
			if res.Stderr != run.note {
				t.Errorf("stderr = %q, want %q", res.Stderr, run.note)
			}
			reqs := demo.requests()[seen:]
			seen += len(reqs)
			var got []cdkRequest
			for _, r := range reqs {
				// The seed's OffsetIncrement sends offset=0 on the first page, where the CDK
				// sends none (a product rule of SPEC); everything else is the CDK's.
				u := strings.Replace(r.URL, "?offset=0&", "?", 1)
				got = append(got, cdkRequest{Method: r.Method, URL: u, Authorization: r.Header.Get("Authorization"), Status: 200})
			}
			if want := readCDKRequests(t, run.name+".requests.jsonl"); !reflect.DeepEqual(got, want) {
				t.Errorf("requests differ from the CDK's\n got: %+v\nwant: %+v", got, want)
			}
			want, err := os.ReadFile(filepath.Join("testdata", "rate-limited-cdk", run.name+".records.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if g, w := decodeLines(t, res.Stdout), decodeLines(t, string(want)); !reflect.DeepEqual(g, w) {
				for i := range min(len(g), len(w)) {
					if !reflect.DeepEqual(g[i], w[i]) {
						t.Errorf("record %d differs from the CDK's:\n got %v\nwant %v", i+1, g[i], w[i])
						break
					}
				}
				t.Errorf("records differ from the CDK's: %d records, want %d", len(g), len(w))
			}
			waited := clock.Now().Sub(start)
			if wantWait := map[string]time.Duration{"first": 0, "second": time.Minute}[run.name]; waited != wantWait {
				t.Errorf("the read waited %s, want %s", waited, wantWait)
			}
		})
	}
}

// A token the quota status calls good but the API refuses (another client spent it) gets a
// 429 that marks it spent: the retry goes at once with the next token, not after the wait the
// API asks for; and no token is ever printed, in the trace either.
func TestRateLimitedTokensRotateOn429(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	api := demoapi.New(demoapi.Options{Now: clock.Now})
	spent := false
	demo := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if !spent && r.URL.Path == "/v1/quota/books" {
			// Another client spends token 1's two calls after the quota status was read.
			spent = true
			for range 2 {
				q, _ := http.NewRequest("GET", "/v1/quota/books?limit=1", nil)
				q.Header.Set("Authorization", "Bearer "+demoapi.DemoQuotaTokens[0])
				api.ServeHTTP(httptest.NewRecorder(), q)
			}
		}
		api.ServeHTTP(w, r)
	})
	vals := authDemoValues(t, demo.URL)
	res := runCLIEnv(t, clock.env(), "", "paginate-trace", authDefinition("rate-limited-tokens.yaml"), "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	var got []string
	for _, r := range demo.requests() {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer demo-quota-token-")
		got = append(got, r.URL+" "+tok)
	}
	want := []string{
		"/v1/quota/rate_limit 1", "/v1/quota/rate_limit 2", "/v1/quota/rate_limit 3",
		"/v1/quota/books?offset=0&limit=50 1", // 429: token 1 is spent
		"/v1/quota/books?offset=0&limit=50 2",
		"/v1/quota/books?offset=50&limit=50 2",
		"/v1/quota/books?offset=100&limit=50 2",
		"/v1/quota/books?offset=150&limit=50 3",
		"/v1/quota/books?offset=200&limit=50 3",
		"/v1/quota/books?offset=250&limit=50 3",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n got %q\nwant %q", got, want)
	}
	if waited := clock.Now().Sub(time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)); waited != 100*time.Millisecond {
		t.Errorf("the read waited %s, want the 0.1 s of a rotation (the API asked for 60 s)", waited)
	}
	for _, out := range []string{res.Stdout, res.Stderr} {
		if strings.Contains(out, "demo-quota-token") {
			t.Errorf("a token was printed:\n%s", out)
		}
	}
	if !bytes.Contains([]byte(res.Stdout), []byte("Authorization: Bearer ****")) {
		t.Errorf("the trace does not show the masked Authorization header:\n%s", res.Stdout)
	}
}

// On the protocol entry point the wait for a reset is a LOG message in the CDK's words (the
// line the CDK logged in testdata/rate-limited-cdk's second read, with the wait this clock
// gives), as the platform shows it; the first read, which never waits, has none.
func TestRateLimitedTokensLogTheWaitOnTheProtocol(t *testing.T) {
	clock := &stepClock{now: time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)}
	demo := newAuthDemo(t, demoapi.Options{Now: clock.Now})
	config := writeFile(t, "config.json", `{"base_url": "`+demo.URL+`", "quota_tokens": "`+strings.Join(demoapi.DemoQuotaTokens, ",")+`"}`)
	catalog := writeFile(t, "catalog.json", `{"streams":[{"stream":{"name":"books","json_schema":{},"supported_sync_modes":["full_refresh"]},"sync_mode":"full_refresh","destination_sync_mode":"overwrite"}]}`)
	const wait = `{"type":"LOG","log":{"level":"INFO","message":"All tokens exhausted (quota: core). Waiting 60s until rate limit resets."}}`
	for i, want := range []int{0, 1} {
		res := runCLIEnv(t, clock.env(), "", "airbyte", "read", "--config", config, "--catalog", catalog,
			"--manifest-path", authDefinition("rate-limited-tokens.yaml"))
		if res.Code != 0 {
			t.Fatalf("read %d: exit %d\n%s", i+1, res.Code, res.Stdout)
		}
		if got := strings.Count(res.Stdout, wait+"\n"); got != want {
			t.Errorf("read %d: %d LOG lines of the wait, want %d:\n%s", i+1, got, want, protocolLines(res.Stdout, "LOG"))
		}
		if strings.Contains(res.Stdout, "demo-quota-token") {
			t.Errorf("read %d: a token is printed:\n%s", i+1, res.Stdout)
		}
	}
}
