package cmd

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// nestedAPI is testdata/nested-parents-cdk/server.py in Go: categories (two pages) → forums
// (ids 1 and 2 under every category) → topics → posts. The same request always gets the
// same answer; every request is logged as "GET /path?query".
func nestedAPI(t *testing.T) (*httptest.Server, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var log []string
	forums := regexp.MustCompile(`^/categories/(\d+)/forums$`)
	topics := regexp.MustCompile(`^/forums/(\d+)/topics$`)
	posts := regexp.MustCompile(`^/topics/(\d+)/posts$`)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		log = append(log, r.Method+" "+r.URL.RequestURI())
		mu.Unlock()
		var body string
		id := func(m []string) int { n, _ := strconv.Atoi(m[1]); return n }
		switch p := r.URL.Path; {
		case p == "/categories" && r.URL.Query().Get("page") == "2":
			body = `{"data": [{"id": 3}], "next": null}`
		case p == "/categories":
			body = `{"data": [{"id": 1}, {"id": 2}], "next": 2}`
		case forums.MatchString(p):
			c := id(forums.FindStringSubmatch(p))
			body = fmt.Sprintf(`{"data": [{"id": 1, "category": %d}, {"id": 2, "category": %d}]}`, c, c)
		case topics.MatchString(p):
			f := id(topics.FindStringSubmatch(p))
			body = fmt.Sprintf(`{"data": [{"id": %d, "forum": %d}, {"id": %d, "forum": %d}]}`, f*10+1, f, f*10+2, f)
		case posts.MatchString(p):
			tp := id(posts.FindStringSubmatch(p))
			body = fmt.Sprintf(`{"data": [{"id": %d, "topic": %d}]}`, tp*100+1, tp)
		default:
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	}))
	return ts, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), log...)
	}
}

// Nested parents (categories → forums → topics, and posts one level deeper) read as the CDK
// reads them (testdata/nested-parents-cdk, made by its run.sh): the same records in the same
// order, and the same requests as many times: a request of topics, which posts names as its
// parent, is answered from the run's cache after the first (manifest.Cached, httpx.Cache),
// its grandparents are sent again. Only the order of the requests differs, as the README
// there explains: connector reads each partition as soon as its parent record is known
// (depth first), where the CDK, at concurrency 1, makes every partition of a stream before it
// reads the first.
func TestNestedParentsMatchTheCDK(t *testing.T) {
	t.Parallel()
	ts, requests := nestedAPI(t)
	defer ts.Close()
	dir := filepath.Join("testdata", "nested-parents-cdk")
	config := filepath.Join(t.TempDir(), "config.json")
	if err := os.WriteFile(config, []byte(`{"base_url": "`+ts.URL+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "airbyte", "read", "--manifest-path", filepath.Join(dir, "manifest.yaml"),
		"--config", config, "--catalog", filepath.Join(dir, "catalog.json"))
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}

	var got []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		var m struct {
			Type   string `json:"type"`
			Record struct {
				Stream string          `json:"stream"`
				Data   json.RawMessage `json:"data"`
			} `json:"record"`
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if m.Type == "RECORD" {
			got = append(got, fmt.Sprintf(`{"stream": %q, "data": %s}`, m.Record.Stream, m.Record.Data))
		}
	}
	cdkRecords, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(cdkRecords)), "\n")
	if !reflect.DeepEqual(normalizeJSONLines(t, got), normalizeJSONLines(t, want)) {
		t.Errorf("records:\n%s\nthe CDK's:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// connector's own order: each partition read as soon as its parent record is known, and
	// a request of topics (a cached stream: posts names it as its parent) sent once.
	topicsOf := func(c string) []string {
		if c != "1" {
			return []string{"GET /categories/" + c + "/forums"}
		}
		return []string{"GET /categories/" + c + "/forums", "GET /forums/1/topics", "GET /forums/2/topics"}
	}
	var wantOurs []string
	for _, page := range [][]string{{"GET /categories"}, topicsOf("1"), topicsOf("2"), {"GET /categories?page=2"}, topicsOf("3")} {
		wantOurs = append(wantOurs, page...)
	}
	// Under posts, categories and forums are grandparents: not cached, sent again.
	postsOf := func(c string) []string {
		return []string{"GET /categories/" + c + "/forums",
			"GET /topics/11/posts", "GET /topics/12/posts", "GET /topics/21/posts", "GET /topics/22/posts"}
	}
	wantOurs = append(wantOurs, "GET /categories")
	wantOurs = append(wantOurs, postsOf("1")...)
	wantOurs = append(wantOurs, postsOf("2")...)
	wantOurs = append(wantOurs, "GET /categories?page=2")
	wantOurs = append(wantOurs, postsOf("3")...)
	gotReqs := requests()
	if !reflect.DeepEqual(gotReqs, wantOurs) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(gotReqs, "\n"), strings.Join(wantOurs, "\n"))
	}

	// The CDK's requests, each as many times, in another order.
	cdkRequests, err := os.ReadFile(filepath.Join(dir, "requests.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wantCDK := strings.Split(strings.TrimSpace(string(cdkRequests)), "\n")
	sorted := append([]string(nil), gotReqs...)
	sort.Strings(sorted)
	sort.Strings(wantCDK)
	if !reflect.DeepEqual(sorted, wantCDK) {
		t.Errorf("requests, sorted:\n%s\nthe CDK's:\n%s", strings.Join(sorted, "\n"), strings.Join(wantCDK, "\n"))
	}
}

// normalizeJSONLines writes each JSON line again with encoding/json, so that spacing does not
// count.
func normalizeJSONLines(t *testing.T, lines []string) []string {
	t.Helper()
	out := make([]string, len(lines))
	for i, l := range lines {
		var v any
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatalf("%q: %v", l, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = string(b)
	}
	return out
}
