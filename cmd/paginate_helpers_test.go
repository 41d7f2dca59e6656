package cmd

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// pgAnswer is one scripted response. "$API" in the body or a header value is replaced by the
// server's URL (for absolute next-page links).
type pgAnswer struct {
	body   string
	header map[string]string
	status int // 0: 200
}

// pgAPI answers the n-th request with the n-th answer. A request beyond the script
// fails the test: the connector asked for a page that should not exist.
func pgAPI(t *testing.T, answers ...pgAnswer) *recorder {
	t.Helper()
	var mu sync.Mutex
	n := 0
	var api *recorder
	api = newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		i := n
		n++
		mu.Unlock()
		if i >= len(answers) {
			t.Errorf("unexpected request %d: %s %s", i+1, r.Method, r.URL.RequestURI())
			http.Error(w, `{"error":"no more pages in the script"}`, http.StatusInternalServerError)
			return
		}
		a := answers[i]
		for k, v := range a.header {
			w.Header().Set(k, strings.ReplaceAll(v, "$API", api.URL))
		}
		w.Header().Set("Content-Type", "application/json")
		if a.status != 0 {
			w.WriteHeader(a.status)
		}
		w.Write([]byte(strings.ReplaceAll(a.body, "$API", api.URL)))
	})
	return api
}

// pgItems is a page of n records with ids from, from+1, … under "data", plus extra top-level
// JSON members (`"meta":{…}`).
func pgItems(from, n int, extra ...string) pgAnswer {
	recs := make([]string, n)
	for i := range recs {
		recs[i] = fmt.Sprintf(`{"id":%d}`, from+i)
	}
	body := `{"data":[` + strings.Join(recs, ",") + `]`
	for _, e := range extra {
		body += "," + e
	}
	return pgAnswer{body: body + "}"}
}

// pgIDs is the stdout of `read` for records with these ids.
func pgIDs(list ...int) string {
	var b strings.Builder
	for _, id := range list {
		fmt.Fprintf(&b, "{\"id\":%d}\n", id)
	}
	return b.String()
}

// pgStream is the part of a test definition that varies: everything else is one stream
// "items" at {{ config['base_url'] }}/items.
type pgStream struct {
	method    string // default GET
	path      string // default /items
	requester string // more requester fields (YAML, unindented)
	filter    string // a record_filter condition
	fieldPath string // default [data]
	paginator string // the paginator component (YAML, unindented); "" leaves it out
}

func pgIndent(s string, n int) string {
	pad := strings.Repeat(" ", n)
	var out []string
	for _, line := range strings.Split(strings.Trim(s, "\n"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		out = append(out, pad+line)
	}
	return strings.Join(out, "\n") + "\n"
}

// pgDef writes the definition of one stream and returns its path.
func pgDef(t *testing.T, s pgStream) string {
	t.Helper()
	if s.method == "" {
		s.method = "GET"
	}
	if s.path == "" {
		s.path = "/items"
	}
	if s.fieldPath == "" {
		s.fieldPath = "[data]"
	}
	var b strings.Builder
	b.WriteString(`version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
`)
	fmt.Fprintf(&b, "        path: %q\n        http_method: %s\n", s.path, s.method)
	if s.requester != "" {
		b.WriteString(pgIndent(s.requester, 8))
	}
	fmt.Fprintf(&b, "      record_selector:\n        type: RecordSelector\n        extractor: {type: DpathExtractor, field_path: %s}\n", s.fieldPath)
	if s.filter != "" {
		fmt.Fprintf(&b, "        record_filter: {type: RecordFilter, condition: %q}\n", s.filter)
	}
	if s.paginator != "" {
		b.WriteString("      paginator:\n")
		b.WriteString(pgIndent(s.paginator, 8))
	}
	b.WriteString(`spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url]
    properties:
      base_url: {type: string}
      api_key: {type: string, airbyte_secret: true}
`)
	return writeFile(t, "def.yaml", b.String())
}

// pgRun runs `connector read` (or another command) on def against api, with the testing
// values base_url and api_key.
func pgRun(t *testing.T, api *recorder, def string, args ...string) cliResult {
	t.Helper()
	creds := writeFile(t, "creds.yaml", "base_url: "+api.URL+"\napi_key: secret-key-123\n")
	cmd := "read"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	return runCLI(t, "", append([]string{cmd, def, "--testing-values", creds}, args...)...)
}

// pgSent lists the requests an API received, one line each: "METHOD /path?query", then
// " | Name: value" for each named header present, then " | body: …" when there was a body.
func pgSent(api *recorder, headers ...string) string {
	var lines []string
	for _, r := range api.requests() {
		line := r.Method + " " + r.URL
		for _, h := range headers {
			if v := r.Header.Values(h); len(v) > 0 {
				line += " | " + h + ": " + strings.Join(v, ",")
			}
		}
		if r.Body != "" {
			line += " | body: " + r.Body
		}
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// pgExpect checks a read: exit 0, the records on stdout and the exact requests.
func pgExpect(t *testing.T, res cliResult, api *recorder, wantStdout string, wantRequests []string, headers ...string) {
	t.Helper()
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got, want := pgSent(api, headers...), strings.Join(wantRequests, "\n"); got != want {
		t.Errorf("requests:\n%s\nwant:\n%s", got, want)
	}
	if res.Stdout != wantStdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, wantStdout)
	}
}
