package cmd

import (
	"net/http"
	"strings"
	"testing"
)

// This file holds the helpers of the end-to-end tests (e2e_*_test.go): they run `connector`
// in-process against a local API and compare the exact requests it sent and the exact output.

// e2eIndent shifts a YAML block written at column 1 right by n spaces. A leading newline (the
// one after a raw string's opening backquote) is dropped.
func e2eIndent(block string, n int) string {
	block = strings.TrimPrefix(block, "\n")
	pad := strings.Repeat(" ", n)
	var b strings.Builder
	for _, line := range strings.SplitAfter(block, "\n") {
		if strings.TrimSpace(line) != "" {
			b.WriteString(pad)
		}
		b.WriteString(line)
	}
	out := b.String()
	if !strings.HasSuffix(out, "\n") {
		out += "\n"
	}
	return out
}

// e2eOneStream is a definition with one stream named items; requester and selector are the YAML
// bodies of the requester and of the record selector.
func e2eOneStream(requester, selector string) string {
	return "version: 6.0.0\ntype: DeclarativeSource\nstreams:\n" +
		"  - type: DeclarativeStream\n    name: items\n    retriever:\n      type: SimpleRetriever\n" +
		"      requester:\n" + e2eIndent(requester, 8) +
		"      record_selector:\n" + e2eIndent(selector, 8)
}

// e2eWholeBody is the record selector that takes the whole body.
const e2eWholeBody = "extractor: {type: DpathExtractor, field_path: []}"

// e2eDataPath is the record selector that takes the list under "data".
const e2eDataPath = "extractor: {type: DpathExtractor, field_path: [data]}"

// e2eAnswer is a handler that always sends body as JSON with status 200.
func e2eAnswer(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}
}

// e2eRead runs `connector read` with the definition def and testing values holding
// base_url (the local API) plus extraValues, with more arguments after them.
func e2eRead(t *testing.T, api *recorder, def, extraValues string, args ...string) cliResult {
	t.Helper()
	defPath := writeFile(t, "def.yaml", def)
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"+extraValues)
	return runCLI(t, "", append([]string{"read", defPath, "--testing-values", vals}, args...)...)
}

// e2eScrub replaces the local API's address (a random port) by http://API, so messages can be
// compared exactly.
func e2eScrub(s string, api *recorder) string {
	return scrubDates(strings.ReplaceAll(s, api.URL, "http://API"))
}

// e2eRequest is what one request must look like. Headers lists the headers to check
// (an empty value asserts the header is absent).
type e2eRequest struct {
	Method  string
	URL     string
	Headers map[string]string
	Body    string
}

// e2eCheckRequests compares what api received with want, exactly for method, URL and body and
// for the headers named in want.
func e2eCheckRequests(t *testing.T, api *recorder, want ...e2eRequest) {
	t.Helper()
	got := api.requests()
	if len(got) != len(want) {
		var urls []string
		for _, r := range got {
			urls = append(urls, r.Method+" "+r.URL)
		}
		t.Fatalf("the API received %d requests %q, want %d", len(got), urls, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Method != w.Method || g.URL != w.URL || g.Body != w.Body {
			t.Errorf("request %d: %s %s body %q\nwant %s %s body %q", i+1, g.Method, g.URL, g.Body, w.Method, w.URL, w.Body)
		}
		for name, value := range w.Headers {
			if got := g.Header.Get(name); got != value {
				t.Errorf("request %d: header %s = %q, want %q", i+1, name, got, value)
			}
		}
	}
}

// e2eCheckResult compares a command's stdout, stderr (with the API address scrubbed) and exit
// code with what is expected.
func e2eCheckResult(t *testing.T, api *recorder, res cliResult, code int, stdout, stderr string) {
	t.Helper()
	if res.Code != code {
		t.Errorf("exit code %d, want %d", res.Code, code)
	}
	if res.Stdout != stdout {
		t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, stdout)
	}
	gotErr := res.Stderr
	if api != nil {
		gotErr = e2eScrub(gotErr, api)
	}
	if gotErr != stderr {
		t.Errorf("stderr:\n%s\nwant:\n%s", gotErr, stderr)
	}
}
