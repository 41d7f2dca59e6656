package har

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/redact"
)

// api answers a token request with a token, and data requests that carry it with a page
// that names the offset asked for; /gzip answers gzip-compressed.
func api(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch r.URL.Path {
		case "/token":
			if !strings.Contains(string(body), `"client_secret":"s3cret-value"`) {
				w.WriteHeader(401)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Session-Token", "header-token-9012")
			io.WriteString(w, `{"access_token":"issued-token-1234","token_type":"Bearer","expires_in":3600,"data":{"session":{"value":"deep-session-5678"}}}`)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			zw := gzip.NewWriter(w)
			io.WriteString(zw, `{"echo":"issued-token-1234"}`)
			zw.Close()
		default:
			if r.Header.Get("Authorization") != "Bearer issued-token-1234" {
				w.WriteHeader(401)
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"offset":"`+r.URL.Query().Get("offset")+`","seen":"issued-token-1234"}`)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// session sends what a run sends: a token request, then data requests with the token.
func session(t *testing.T, client *httpx.Client, base string, offsets ...string) []string {
	t.Helper()
	ctx := context.Background()
	resp, err := client.Do(ctx, &httpx.Request{Kind: "token", Method: "POST", URL: base + "/token",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"client_secret":"s3cret-value"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var bodies []string
	bodies = append(bodies, string(resp.Body))
	for _, off := range offsets {
		resp, err := client.Do(ctx, &httpx.Request{Kind: "data", Stream: "items", Method: "GET",
			URL: base + "/items?offset=" + off + "&limit=2", Header: http.Header{"Authorization": {"Bearer issued-token-1234"}}})
		if err != nil {
			return append(bodies, "error: "+err.Error())
		}
		bodies = append(bodies, string(resp.Body))
	}
	return bodies
}

func TestRecordThenReplay(t *testing.T) {
	srv := api(t)
	path := filepath.Join(t.TempDir(), "rec.har")
	var red redact.Redactor
	red.Label("s3cret-value", "client_secret")
	red.Add("s3cret-value")
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	meta := &Meta{Command: "read", Definition: "def.yaml", Started: start,
		Values: MaskValues(map[string]any{"client_secret": "s3cret-value", "n": 5}, &red).(map[string]any)}
	rec, err := Create(path, http.DefaultTransport, Options{Creator: Creator{Name: "connector", Version: "test"},
		Meta: meta, Redactor: &red, Now: func() time.Time { return start },
		Tokens: []TokenPath{{Name: "session_token", Path: []string{"data", "session", "value"}}}})
	if err != nil {
		t.Fatal(err)
	}
	live := session(t, &httpx.Client{HTTP: &http.Client{Transport: rec}, MaxRetries: -1}, srv.URL, "0", "2")
	if _, err := (&httpx.Client{HTTP: &http.Client{Transport: rec}}).Do(context.Background(),
		&httpx.Request{Kind: "data", Method: "GET", URL: srv.URL + "/gzip"}); err != nil {
		t.Fatal(err)
	}
	n, err := rec.Close()
	if err != nil || n != 4 {
		t.Fatalf("Close: %d entries, %v", n, err)
	}
	data, _ := os.ReadFile(path)
	text := string(data)
	for _, secret := range []string{"s3cret-value", "issued-token-1234", "deep-session-5678", "header-token-9012"} {
		if strings.Contains(text, secret) {
			t.Errorf("the recording holds %q:\n%s", secret, text)
		}
	}
	for _, want := range []string{`"client_secret": "****client_secret****"`, `"Bearer ****access_token****"`,
		`\"session\":{\"value\":\"****session_token****\"}`, `{"name": "X-Session-Token", "value": "****x-session-token****"}`, `\"token_type\":\"Bearer\"`, `"text": "{\"echo\":\"****access_token****\"}"`, `"_kind": "token"`, `"_stream": "items"`} {
		if !strings.Contains(text, want) {
			t.Errorf("the recording lacks %s:\n%s", want, text)
		}
	}

	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Log.Entries) != 4 || !a.Log.Connector.Started.Equal(start) {
		t.Fatalf("loaded %d entries, started %v", len(a.Log.Entries), a.Log.Connector.Started)
	}
	// The replay's secret is the placeholder of the testing value; the token is the one
	// the recorded answer hands out.
	var rred redact.Redactor
	rred.Add("****client_secret****")
	rp := NewReplayer(a, "rec.har", &rred)
	srv.Close()
	client := &httpx.Client{HTTP: &http.Client{Transport: rp}, MaxRetries: -1}
	ctx := context.Background()
	resp, err := client.Do(ctx, &httpx.Request{Kind: "token", Method: "POST", URL: srv.URL + "/token",
		Header: http.Header{"Content-Type": {"application/json"}}, Body: []byte(`{"client_secret":"****client_secret****"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(resp.Body), `"access_token":"****access_token****"`) {
		t.Fatalf("replayed token answer %s", resp.Body)
	}
	rred.Add("****access_token****")
	resp, err = client.Do(ctx, &httpx.Request{Kind: "data", Method: "GET", URL: srv.URL + "/items?limit=2&offset=0",
		Header: http.Header{"Authorization": {"Bearer ****access_token****"}}})
	if err != nil || !strings.Contains(string(resp.Body), `"offset":"0"`) || !strings.Contains(live[1], `"offset":"0"`) {
		t.Fatalf("replayed page: %s %v", resp.Body, err)
	}
	_, err = client.Do(ctx, &httpx.Request{Kind: "data", Method: "GET", URL: srv.URL + "/items?offset=3&limit=2",
		Header: http.Header{"Authorization": {"Bearer ****access_token****"}}})
	var ne *httpx.NetError
	if !errors.As(err, &ne) || !ne.Permanent {
		t.Fatalf("an unrecorded request: %v", err)
	}
	want := "request 3: query offset=3, recorded offset=2 (no recorded request matches; the nearest is entry 3 of rec.har)"
	if ne.Err != want {
		t.Errorf("error %q\nwant  %q", ne.Err, want)
	}
	if f := rp.Failure(); f == nil || f.N != 3 {
		t.Errorf("Failure = %v", f)
	}
	if u := rp.Unused(); len(u) != 2 || u[0].Entry != 3 || u[1].Entry != 4 {
		t.Errorf("Unused = %+v", u)
	}
	if !rp.Now().After(start) {
		t.Errorf("the clock did not follow the recording: %v", rp.Now())
	}
	rp.Sleep(ctx, time.Hour)
	if rp.Now().Sub(start) < time.Hour {
		t.Errorf("Sleep did not move the clock: %v", rp.Now())
	}
}

func TestMaskValues(t *testing.T) {
	var red redact.Redactor
	red.Label("s3cret", "nested.key")
	red.Label("4242", "pin")
	red.Add("s3cret", "4242")
	got := MaskValues(map[string]any{"nested": map[string]any{"key": "s3cret", "list": []any{"a s3cret b", true}},
		"pin": int64(4242), "n": 7.5, "none": nil}, &red)
	want := map[string]any{"nested": map[string]any{"key": "****nested.key****", "list": []any{"a ****nested.key**** b", true}},
		"pin": "****pin****", "n": 7.5, "none": nil}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MaskValues = %v\nwant %v", got, want)
	}
}

func TestDifferences(t *testing.T) {
	rec := newShape("POST", "http://api/v1/items?limit=100&offset=300&key=****api_key****",
		[]NameValue{{"Content-Type", "application/json"}, {"X-Trace", "a"}, {"User-Agent", "connector/dev"}}, `{"page":{"n":3},"q":"x"}`, true)
	tests := []struct {
		name, method, url string
		headers           []NameValue
		body              string
		want              []string
	}{
		{"same, parameters in another order, another version", "POST", "http://api/v1/items?offset=300&key=****api_key****&limit=100",
			[]NameValue{{"content-type", "application/json"}, {"X-Trace", "a"}, {"User-Agent", "connector/1.2"}}, `{"page":{"n":3},"q":"x"}`, nil},
		{"offset", "POST", "http://api/v1/items?limit=100&offset=200&key=****api_key****",
			[]NameValue{{"Content-Type", "application/json"}, {"X-Trace", "a"}}, `{"page":{"n":3},"q":"x"}`,
			[]string{"query offset=200, recorded offset=300"}},
		{"everything", "GET", "https://other/v2/items?limit=100&extra=1",
			[]NameValue{{"Content-Type", "application/json"}, {"X-Trace", "b"}}, `{"page":{"n":4},"q":"x"}`,
			[]string{"method GET, recorded POST", "host https://other, recorded http://api", "path /v2/items, recorded /v1/items",
				"query extra=1 not recorded", "query key missing, recorded key=****api_key****", "query offset missing, recorded offset=300",
				"header X-Trace: b, recorded X-Trace: a", "body $.page.n: got 4, recorded 3"}},
	}
	for _, tt := range tests {
		live := newShape(tt.method, tt.url, tt.headers, tt.body, true)
		got, _ := differences(&rec, &live)
		if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
			t.Errorf("%s:\n%s\nwant\n%s", tt.name, strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
		}
		if equal(&rec, &live) != (len(tt.want) == 0) {
			t.Errorf("%s: equal = %v", tt.name, !(len(tt.want) == 0))
		}
	}
}

func TestPlaceholderStandsForAnyText(t *testing.T) {
	for _, tt := range []struct {
		rec, live string
		same      bool
	}{
		{"http://****username****.example.com/x", "http://demo.example.com/x", true},
		{"http://****username****.example.com/x", "http://****username****.example.com/x", true},
		{"a ****x**** b ****y**** c", "a 1 b 2 c", true},
		{"a ****x**** b", "a  b", false},
		{"a ****x**** b", "a 1 c", false},
		{"no placeholder", "no placeholders", false},
	} {
		if got := same(tt.rec, tt.live); got != tt.same {
			t.Errorf("same(%q, %q) = %v", tt.rec, tt.live, got)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(content), 0o600)
		return p
	}
	tests := []struct {
		path, want string
	}{
		{filepath.Join(dir, "missing.har"), "cannot read the recording " + filepath.Join(dir, "missing.har") + ": no such file or directory"},
		{dir, "cannot read the recording " + dir + ": is a directory"},
		{write("empty.har", ""), "empty.har is not a recording of connector: the file is empty or cut short"},
		{write("bad.har", `{"log": {"version": "1.2",`), "bad.har is not a recording of connector: the file is empty or cut short"},
		{write("syntax.har", `{"log": ]`), "syntax.har is not a recording of connector: invalid JSON at byte 9: invalid character ']' looking for beginning of value"},
		{write("other.har", `{"log": {"version": "1.2", "creator": {"name": "Firefox"}, "entries": []}}`), `other.har is not a recording of connector: no "_connector" field in the log: the file was not recorded with connector --record`},
		{write("v11.har", `{"log": {"version": "1.1", "entries": []}}`), `v11.har is not a recording of connector: HAR version "1.1"; connector reads version 1.2`},
		{write("type.har", `{"log": {"version": 1.2}}`), "type.har is not a recording of connector: log.version must be a JSON string, not a JSON number"},
		{write("list.har", `[]`), "list.har is not a recording of connector: the file is a JSON array, not an object holding a HAR log"},
		{write("noreq.har", `{"log": {"version": "1.2", "_connector": {"started": "2025-01-01T00:00:00Z"}, "entries": [{"request": {}, "response": {"status": 200}}]}}`),
			"noreq.har is not a recording of connector: entry 1 has no request method or URL"},
	}
	for _, tt := range tests {
		_, err := Load(tt.path)
		if err == nil {
			t.Errorf("%s: loaded", tt.path)
			continue
		}
		got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
		want := strings.ReplaceAll(tt.want, dir+string(filepath.Separator), "")
		if got != want {
			t.Errorf("got  %s\nwant %s", got, want)
		}
	}
}

// The writer keeps the order in which requests were sent, even when their answers end in
// another order.
func TestEntriesInSendingOrder(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
		io.WriteString(w, r.URL.Path)
	}))
	defer srv.Close()
	path := filepath.Join(t.TempDir(), "rec.har")
	rec, err := Create(path, http.DefaultTransport, Options{Meta: &Meta{Command: "read", Started: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: rec}
	done := make(chan struct{})
	go func() {
		resp, err := c.Get(srv.URL + "/slow")
		if err == nil {
			io.ReadAll(resp.Body)
			resp.Body.Close()
		}
		close(done)
	}()
	for rec.seq.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	resp, err := c.Get(srv.URL + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body)
	resp.Body.Close()
	close(release)
	<-done
	if _, err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	a, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range a.Log.Entries {
		got = append(got, e.Response.Content.Text)
	}
	if strings.Join(got, " ") != "/slow /fast" {
		t.Errorf("entries %v, want /slow then /fast", got)
	}
	data, _ := os.ReadFile(path)
	if !bytes.HasPrefix(data, []byte("{\n  \"log\": {\n    \"version\": \"1.2\",")) {
		t.Errorf("the file starts %q", data[:40])
	}
}
