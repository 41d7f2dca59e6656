package serve

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"connector/pkg/demoapi"
	"connector/pkg/resolve"
	"connector/pkg/session"
)

// The API of the CDK's manifest server, answered by this engine against the demo API.

// manifestJSON is a definition of definitions/ as the JSON the Builder sends.
func manifestJSON(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../../definitions/" + name)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := yaml.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// setup starts the demo API and a server; it returns the server's URL and the demo API's.
func setup(t *testing.T, cfg Config) (string, string, *bytes.Buffer) {
	t.Helper()
	api := httptest.NewServer(demoapi.New(demoapi.Options{}))
	t.Cleanup(api.Close)
	var log bytes.Buffer
	var mu sync.Mutex
	cfg.AccessLog = writerFunc(func(b []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return log.Write(b)
	})
	srv := httptest.NewServer(New(cfg))
	t.Cleanup(srv.Close)
	return srv.URL, api.URL, &log
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// post sends body (JSON) and returns the status and the answer.
func post(t *testing.T, url, path string, body any, header ...string) (int, string, http.Header) {
	t.Helper()
	var b []byte
	switch x := body.(type) {
	case string:
		b = []byte(x)
	default:
		var err error
		if b, err = json.Marshal(body); err != nil {
			t.Fatal(err)
		}
	}
	req, _ := http.NewRequest("POST", url+path, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out), resp.Header
}

func config(api string, token string) map[string]any {
	return map[string]any{"base_url": api, "bearer_token": token}
}

func TestHealthAndCapabilities(t *testing.T) {
	url, _, _ := setup(t, Config{})
	for path, want := range map[string]string{"/health/": `{"status":"ok"}`, "/capabilities/": `{"custom_code_execution":false}`} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || string(b) != want {
			t.Errorf("%s: %d %s, want %s", path, resp.StatusCode, b, want)
		}
	}
}

func TestCheck(t *testing.T) {
	url, api, log := setup(t, Config{})
	m := manifestJSON(t, "bearer-auth.yaml")
	status, body, _ := post(t, url, "/v1/manifest/check", map[string]any{"manifest": m, "config": config(api, "demo-bearer-token")})
	if status != 200 || body != `{"success":true,"message":null}` {
		t.Errorf("check: %d %s", status, body)
	}
	// A wrong token: FAILED with the CDK's words, the token itself masked wherever it would show.
	status, body, _ = post(t, url, "/v1/manifest/check", map[string]any{"manifest": m, "config": config(api, "wrong-token-secret")})
	want := `{"success":false,"message":"'Stream books is not available: authentication failed: 401 Unauthorized from GET ` + api + `/v1/bearer/books?offset=0\u0026limit=100: {\"error\":\"unauthorized\",\"message\":\"invalid bearer token\"}'"}`
	if status != 200 || body != want {
		t.Errorf("check with a wrong token: %d\n%s\nwant\n%s", status, body, want)
	}
	// A config that does not match the spec: FAILED, as the CDK's entry point answers.
	status, body, _ = post(t, url, "/v1/manifest/check", map[string]any{"manifest": m, "config": map[string]any{"base_url": api}})
	if status != 200 || !strings.HasPrefix(body, `{"success":false,"message":"Config validation error: `) {
		t.Errorf("check without the token: %d %s", status, body)
	}
	if strings.Contains(log.String(), "wrong-token-secret") || strings.Count(log.String(), "\n") != 3 {
		t.Errorf("access log:\n%s", log.String())
	}
}

func TestDiscover(t *testing.T) {
	url, api, _ := setup(t, Config{})
	status, body, _ := post(t, url, "/v1/manifest/discover", map[string]any{"manifest": manifestJSON(t, "bearer-auth.yaml"), "config": config(api, "demo-bearer-token")})
	want := `{"catalog":{"streams":[{"name":"books","json_schema":{},"supported_sync_modes":["full_refresh"],"source_defined_primary_key":[["id"]],"is_resumable":false,"is_file_based":false}]}}`
	if status != 200 || body != want {
		t.Errorf("discover: %d\n%s\nwant\n%s", status, body, want)
	}
}

func TestMalformedRequests(t *testing.T) {
	url, api, _ := setup(t, Config{MaxBody: 1 << 16})
	m := manifestJSON(t, "bearer-auth.yaml")
	cases := []struct {
		name, path string
		body       any
		status     int
		want       string
	}{
		{"not JSON", "/v1/manifest/check", `{"manifest": `, 422, `{"detail":[{"type":"json_invalid","loc":["body",13],"msg":"JSON decode error","input":{},"ctx":{"error":"unexpected EOF"}}]}`},
		{"not an object", "/v1/manifest/check", `[1]`, 422, `{"detail":[{"type":"model_attributes_type","loc":["body"],"msg":"Input should be a valid dictionary or object to extract fields from","input":[1]}]}`},
		{"missing config", "/v1/manifest/discover", map[string]any{"manifest": map[string]any{"a": 1}}, 422, `{"detail":[{"type":"missing","loc":["body","config"],"msg":"Field required","input":{"manifest":{"a":1}}}]}`},
		{"manifest not an object", "/v1/manifest/check", map[string]any{"manifest": "x", "config": map[string]any{}}, 422, `{"detail":[{"type":"model_attributes_type","loc":["body","manifest"],"msg":"Input should be a valid dictionary or object to extract fields from","input":"x"}]}`},
		{"record_limit too high", "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books", "record_limit": 5001}, 422, `{"detail":[{"type":"less_than_equal","loc":["body","record_limit"],"msg":"Input should be less than or equal to 5000","input":5001,"ctx":{"le":5000}}]}`},
		{"page_limit zero", "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books", "page_limit": 0}, 422, `{"detail":[{"type":"greater_than_equal","loc":["body","page_limit"],"msg":"Input should be greater than or equal to 1","input":0,"ctx":{"ge":1}}]}`},
		{"stream_name a number", "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": 5}, 422, `{"detail":[{"type":"string_type","loc":["body","stream_name"],"msg":"Input should be a valid string","input":5}]}`},
		{"too large", "/v1/manifest/check", `{"manifest":{"x":"` + strings.Repeat("a", 1<<16) + `"}}`, 413, `{"detail":"the request body is larger than 65536 bytes (a limit of connector serve)"}`},
		{"custom code", "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books", "custom_components_code": "import os"}, 400, `{"detail":"Error reading stream: ` + customCodeNotPermitted + `"}`},
		{"invalid manifest", "/v1/manifest/discover", map[string]any{"manifest": map[string]any{"type": "DeclarativeSource", "streams": "nope"}, "config": map[string]any{}}, 400, ``},
	}
	for _, c := range cases {
		status, body, _ := post(t, url, c.path, c.body)
		if status != c.status || c.want != "" && body != c.want {
			t.Errorf("%s: %d %s\nwant %d %s", c.name, status, body, c.status, c.want)
		}
		if c.want == "" && !strings.HasPrefix(body, `{"detail":"Error discovering streams: `) {
			t.Errorf("%s: %s", c.name, body)
		}
	}
}

// token makes an HS256 JWT with claims, signed with secret.
func token(secret, claims string) string {
	enc := base64.RawURLEncoding
	head := enc.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + enc.EncodeToString([]byte(claims))
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(head))
	return head + "." + enc.EncodeToString(mac.Sum(nil))
}

func TestJWT(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	url, api, _ := setup(t, Config{JWTSecret: "jwt-secret", Now: func() time.Time { return now }})
	body := map[string]any{"manifest": manifestJSON(t, "bearer-auth.yaml"), "config": config(api, "demo-bearer-token")}
	cases := []struct {
		name, auth string
		status     int
		want       string
	}{
		{"no token", "", 401, `{"detail":"Bearer token required"}`},
		{"not bearer", "Basic abc", 401, `{"detail":"Bearer token required"}`},
		{"another secret", "Bearer " + token("other", `{"sub":"x"}`), 401, `{"detail":"Invalid token"}`},
		{"expired", "Bearer " + token("jwt-secret", `{"exp":1799999999}`), 401, `{"detail":"Invalid token"}`},
		{"not yet valid", "Bearer " + token("jwt-secret", `{"nbf":1800000100}`), 401, `{"detail":"Invalid token"}`},
		{"garbage", "Bearer a.b.c", 401, `{"detail":"Invalid token"}`},
		{"valid", "Bearer " + token("jwt-secret", `{"exp":1800000100,"iat":1799999000}`), 200, `{"success":true,"message":null}`},
	}
	for _, c := range cases {
		var h []string
		if c.auth != "" {
			h = []string{"Authorization", c.auth}
		}
		status, got, header := post(t, url, "/v1/manifest/check", body, h...)
		if status != c.status || got != c.want {
			t.Errorf("%s: %d %s, want %d %s", c.name, status, got, c.status, c.want)
		}
		if status == 401 && header.Get("WWW-Authenticate") != "Bearer" {
			t.Errorf("%s: WWW-Authenticate %q", c.name, header.Get("WWW-Authenticate"))
		}
	}
	// Health needs no token.
	if resp, err := http.Get(url + "/health/"); err != nil || resp.StatusCode != 200 {
		t.Errorf("health: %v %v", resp, err)
	}
}

// A slow API: the request's time limit holds.
func TestTimeLimit(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	}))
	defer slow.Close()
	url, _, _ := setup(t, Config{Timeout: 300 * time.Millisecond})
	start := time.Now()
	status, body, _ := post(t, url, "/v1/manifest/check", map[string]any{"manifest": manifestJSON(t, "bearer-auth.yaml"), "config": config(slow.URL, "demo-bearer-token")})
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the request took %s", took)
	}
	if status == 200 && strings.Contains(body, `"success":true`) {
		t.Errorf("%d %s", status, body)
	}
}

// Many requests at once share nothing: each answer is its own config's.
func TestConcurrentRequests(t *testing.T) {
	url, api, _ := setup(t, Config{})
	m := manifestJSON(t, "bearer-auth.yaml")
	var wg sync.WaitGroup
	errs := make(chan string, 100)
	for i := 0; i < 100; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			tok, want := "demo-bearer-token", `{"success":true,"message":null}`
			if i%2 == 1 {
				tok = fmt.Sprintf("wrong-secret-%d", i)
				want = `"success":false`
			}
			status, body, _ := post(t, url, "/v1/manifest/check", map[string]any{"manifest": m, "config": config(api, tok)})
			if status != 200 || !strings.Contains(body, want) || strings.Contains(body, "wrong-secret") {
				errs <- fmt.Sprintf("request %d: %d %s", i, status, body)
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// A test read is handed to the TestReader with the limits asked (the defaults when absent).
func TestTestReadLimits(t *testing.T) {
	var got []TestReadRequest
	var mu sync.Mutex
	url, api, log := setup(t, Config{TestRead: func(ctx context.Context, s *session.Session, req TestReadRequest) (any, error) {
		mu.Lock()
		got = append(got, req)
		mu.Unlock()
		return map[string]any{"streams": len(s.Streams)}, nil
	}})
	m := manifestJSON(t, "bearer-auth.yaml")
	status, body, _ := post(t, url, "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books"})
	if status != 200 || body != `{"streams":1}` {
		t.Errorf("%d %s", status, body)
	}
	post(t, url, "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books", "record_limit": 7, "page_limit": 2, "slice_limit": 20})
	post(t, url, "/v1/manifest/test_read", map[string]any{"manifest": m, "config": config(api, "t"), "stream_name": "books", "state": []any{map[string]any{"type": "STREAM"}}})
	want := []TestReadRequest{
		{Stream: "books", RecordLimit: 100, PageLimit: 5, SliceLimit: 5},
		{Stream: "books", RecordLimit: 7, PageLimit: 2, SliceLimit: 20},
		{Stream: "books", RecordLimit: 100, PageLimit: 5, SliceLimit: 5, State: json.RawMessage(`[{"type":"STREAM"}]`)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("requests %v, want %v", got, want)
	}
	if !strings.Contains(log.String(), `"path":"/v1/manifest/test_read","status":200,`) || !strings.Contains(log.String(), `"stream":"books"`) {
		t.Errorf("access log:\n%s", log.String())
	}
}

// An API that echoes the credential in its error: the answer and the log mask it.
func TestSecretNeverAnswered(t *testing.T) {
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"error":"token %s refused"}`, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
	}))
	defer echo.Close()
	url, _, log := setup(t, Config{})
	m := manifestJSON(t, "bearer-auth.yaml")
	for _, path := range []string{"/v1/manifest/check", "/v1/manifest/discover"} {
		status, body, _ := post(t, url, path, map[string]any{"manifest": m, "config": config(echo.URL, "very-secret-token-42")})
		if strings.Contains(body, "very-secret-token-42") || status >= 500 {
			t.Errorf("%s: %d %s", path, status, body)
		}
		if path == "/v1/manifest/check" && !strings.Contains(body, `token ****`) {
			t.Errorf("check: the echoed token is not masked: %s", body)
		}
	}
	if strings.Contains(log.String(), "very-secret-token-42") {
		t.Error("the access log has the secret")
	}
}

// A test read through the API: the Builder's StreamRead of the demo API's books, two pages
// at most, its schema inferred.
func TestTestReadReadsTheDemoAPI(t *testing.T) {
	url, api, _ := setup(t, Config{})
	status, body, _ := post(t, url, "/v1/manifest/test_read", map[string]any{
		"manifest": manifestJSON(t, "bearer-auth.yaml"), "config": config(api, "demo-bearer-token"),
		"stream_name": "books", "page_limit": 2, "record_limit": 3,
	})
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var sr struct {
		Logs   []any `json:"logs"`
		Slices []struct {
			SliceDescriptor any `json:"slice_descriptor"`
			Pages           []struct {
				Records []map[string]any `json:"records"`
				Request struct {
					URL     string            `json:"url"`
					Method  string            `json:"http_method"`
					Headers map[string]string `json:"headers"`
				} `json:"request"`
				Response struct {
					Status int `json:"status"`
				} `json:"response"`
			} `json:"pages"`
		} `json:"slices"`
		Limit          bool           `json:"test_read_limit_reached"`
		InferredSchema map[string]any `json:"inferred_schema"`
		Formats        map[string]any `json:"inferred_datetime_formats"`
	}
	if err := json.Unmarshal([]byte(body), &sr); err != nil {
		t.Fatal(err)
	}
	if len(sr.Slices) != 1 || len(sr.Slices[0].Pages) != 2 || !sr.Limit {
		t.Fatalf("slices %+v, limit reached %v", sr.Slices, sr.Limit)
	}
	pg := sr.Slices[0].Pages[1]
	if pg.Request.Method != "GET" || pg.Request.URL != api+"/v1/bearer/books?offset=100&limit=100" || pg.Response.Status != 200 {
		t.Errorf("second page: %+v", pg)
	}
	if pg.Request.Headers["Authorization"] != "Bearer ****" {
		t.Errorf("the token is not masked: %v", pg.Request.Headers)
	}
	props, _ := sr.InferredSchema["properties"].(map[string]any)
	if sr.InferredSchema["$schema"] != "http://json-schema.org/schema#" || props["id"] == nil {
		t.Errorf("inferred schema %v", sr.InferredSchema)
	}
	if strings.Contains(body, "demo-bearer-token") {
		t.Error("the token reached the answer")
	}
}

// A manifest made to exhaust the loader (a million keys nested a thousand deep) is refused
// by the definition limits at once, with a 400.
func TestManifestBomb(t *testing.T) {
	url, api, _ := setup(t, Config{})
	var b strings.Builder
	b.WriteString(`{"manifest":`)
	for i := 0; i < 1000; i++ {
		b.WriteString(`{"a":`)
	}
	b.WriteString(`1`)
	b.WriteString(strings.Repeat("}", 1000))
	b.WriteString(`,"config":{"base_url":"` + api + `"}}`)
	start := time.Now()
	status, body, _ := post(t, url, "/v1/manifest/discover", b.String())
	if status != 400 || !strings.HasPrefix(body, `{"detail":"Error discovering streams: `) || time.Since(start) > 5*time.Second {
		t.Errorf("nested: %d %.200s (%s)", status, body, time.Since(start))
	}
	wide := `{"manifest":{"type":"DeclarativeSource","x":{` + strings.Repeat(`"k":[1,2,3,4,5,6,7,8,9,0],`, 70000) + `"z":1}},"config":{}}`
	status, body, _ = post(t, url, "/v1/manifest/discover", wide)
	if status != 400 && status != 413 {
		t.Errorf("wide: %d %.200s", status, body)
	}
}

// BenchmarkServeTestRead is a test read of five pages of the demo API's books through the
// API, as the Builder asks for one.
func BenchmarkServeTestRead(b *testing.B) {
	api := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer api.Close()
	srv := httptest.NewServer(New(Config{}))
	defer srv.Close()
	raw, err := os.ReadFile("../../definitions/offset-pagination.yaml")
	if err != nil {
		b.Fatal(err)
	}
	var m any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		b.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"manifest": m, "config": map[string]any{"base_url": api.URL},
		"stream_name": "books", "page_limit": 5})
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := http.Post(srv.URL+"/v1/manifest/test_read", "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			b.Fatalf("status %d", resp.StatusCode)
		}
	}
}

// orderedManifest is a definition of definitions/ as the Builder sends it: JSON whose keys
// come in the file's order.
func orderedManifest(t *testing.T, name string) json.RawMessage {
	t.Helper()
	b, err := os.ReadFile("../../definitions/" + name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := resolve.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := resolve.Encode(m, "")
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readGolden(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// resolve answers the CDK's resolved manifest, byte for byte as its server writes it (the
// golden is the CDK's resolved_manifest of the same file).
func TestResolve(t *testing.T) {
	url, _, _ := setup(t, Config{})
	status, body, _ := post(t, url, "/v1/manifest/resolve", map[string]any{"manifest": orderedManifest(t, "substream-partition-router.yaml")})
	want := `{"manifest":` + readGolden(t, "../resolve/testdata/cdk/definitions/plain/substream-partition-router.json") + `}`
	if status != 200 || body != want {
		t.Errorf("resolve: %d\n%s\nwant\n%s", status, body, want)
	}
	cases := []struct {
		name   string
		body   any
		status int
		want   string
	}{
		{"no manifest", map[string]any{"config": map[string]any{}}, 422, `{"detail":[{"type":"missing","loc":["body","manifest"],"msg":"Field required","input":{"config":{}}}]}`},
		{"an invalid manifest", map[string]any{"manifest": map[string]any{"type": "DeclarativeSource", "streams": "nope"}}, 400, `{"detail":"Error resolving manifest: `},
		// The CDK resolves every "#/" string, in metadata and JSON schemas too, which the
		// loader leaves as they are: its error, in its words.
		{"a reference the CDK cannot resolve", map[string]any{"manifest": json.RawMessage(strings.Replace(string(orderedManifest(t, "no-auth.yaml")),
			`{`, `{"metadata":{"x":{"$ref":"#/nowhere"}},`, 1))}, 400,
			`{"detail":"Error resolving manifest: Undefined reference #/nowhere from nowhere"}`},
	}
	for _, c := range cases {
		status, body, _ := post(t, url, "/v1/manifest/resolve", c.body)
		if status != c.status || !strings.HasPrefix(body, c.want) {
			t.Errorf("%s: %d %s\nwant %d %s", c.name, status, body, c.status, c.want)
		}
	}
}

// The Builder's __should_normalize: the repeated requester parts move to definitions.linked.
func TestResolveNormalized(t *testing.T) {
	url, _, _ := setup(t, Config{})
	m := strings.Replace(string(orderedManifest(t, "substream-partition-router.yaml")), "{", `{"__should_normalize":true,`, 1)
	status, body, _ := post(t, url, "/v1/manifest/resolve", map[string]any{"manifest": json.RawMessage(m)})
	want := `{"manifest":` + readGolden(t, "../resolve/testdata/cdk/definitions/normalize/substream-partition-router.json") + `}`
	if status != 200 || body != want {
		t.Errorf("resolve: %d\n%s\nwant\n%s", status, body, want)
	}
}

// full_resolve makes the dynamic streams from the config, reading the API of an
// HttpComponentsResolver: the CDK's answer (its route run on the same definition and
// config against the demo API), with the default stream_limit and with 1.
func TestFullResolve(t *testing.T) {
	url, api, _ := setup(t, Config{})
	config := map[string]any{"base_url": api, "username": "demo", "password": "demo-password",
		"extra_tables": []any{map[string]any{"name": "cfg_books", "collection": "books", "page_size": 50}, map[string]any{"name": "cfg_authors", "collection": "authors"}}}
	m := orderedManifest(t, "dynamic-streams.yaml")
	for _, c := range []struct {
		limit  any
		golden string
	}{{nil, "testdata/full_resolve.dynamic-streams.cdk.json"}, {1, "testdata/full_resolve.dynamic-streams.limit1.cdk.json"}} {
		req := map[string]any{"manifest": m, "config": config}
		if c.limit != nil {
			req["stream_limit"] = c.limit
		}
		status, body, _ := post(t, url, "/v1/manifest/full_resolve", req)
		if want := readGolden(t, c.golden); status != 200 || body != want {
			t.Errorf("stream_limit %v: %d\n%s\nwant\n%s", c.limit, status, body, want)
		}
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		want   string
	}{
		{"stream_limit 0", map[string]any{"manifest": m, "config": config, "stream_limit": 0}, 422,
			`{"detail":[{"type":"greater_than_equal","loc":["body","stream_limit"],"msg":"Input should be greater than or equal to 1","input":0,"ctx":{"ge":1}}]}`},
		{"stream_limit 101", map[string]any{"manifest": m, "config": config, "stream_limit": 101}, 422,
			`{"detail":[{"type":"less_than_equal","loc":["body","stream_limit"],"msg":"Input should be less than or equal to 100","input":101,"ctx":{"le":100}}]}`},
		{"no config", map[string]any{"manifest": m}, 422, `{"detail":[{"type":"missing","loc":["body","config"],"msg":"Field required","input":{"manifest":`},
		{"a wrong password", map[string]any{"manifest": m, "config": map[string]any{"base_url": api, "username": "demo", "password": "wrong-secret-77"}}, 400,
			`{"detail":"Error full resolving manifest: resolving dynamic_streams: `},
	}
	for _, c := range cases {
		status, body, _ := post(t, url, "/v1/manifest/full_resolve", c.body)
		if status != c.status || !strings.HasPrefix(body, c.want) || strings.Contains(body, "wrong-secret-77") {
			t.Errorf("%s: %d %s\nwant %d %s", c.name, status, body, c.status, c.want)
		}
	}
}

// The Builder's __should_migrate and __should_normalize are taken out of every manifest, as
// the CDK's server does, before it is read: a check with them runs as without them.
func TestBuilderKeysOnEveryRoute(t *testing.T) {
	url, api, _ := setup(t, Config{})
	m := strings.Replace(string(orderedManifest(t, "bearer-auth.yaml")), "{", `{"__should_migrate":true,"__should_normalize":1,`, 1)
	status, body, _ := post(t, url, "/v1/manifest/check", map[string]any{"manifest": json.RawMessage(m), "config": config(api, "demo-bearer-token")})
	if status != 200 || body != `{"success":true,"message":null}` {
		t.Errorf("check: %d %s", status, body)
	}
	// A false one stays, and the manifest is invalid with it (the CDK's schema allows no
	// other top-level key).
	m = strings.Replace(string(orderedManifest(t, "bearer-auth.yaml")), "{", `{"__should_migrate":false,`, 1)
	status, body, _ = post(t, url, "/v1/manifest/check", map[string]any{"manifest": json.RawMessage(m), "config": config(api, "demo-bearer-token")})
	if status != 400 || !strings.Contains(body, "__should_migrate") {
		t.Errorf("check with a false key: %d %s", status, body)
	}
}
