package cmd

import (
	"net/http"
	"os"
	"strings"
	"testing"

	"connector/internal/testcorpus"
)

// The real xkcd definition: with an array body, `response` is the array's
// first element ({} when empty), so `{{ not response.get("num", {}) }}` stops cleanly after
// the empty page. The CDK 7.28.2 on the same answers emits the same record and stops after
// the second request too (it sends it to /6/info.0.json: the relative cursor is
// resolved against the previous URL).
func TestCursorResponseIsFirstElementOfArrayBody(t *testing.T) {
	t.Parallel()
	src, err := os.ReadFile(testcorpus.File(t, "xkcd.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/1/info.0.json" {
			w.Write([]byte(`[{"num": 5, "title": "x"}]`))
			return
		}
		w.Write([]byte(`[]`))
	})
	def := writeFile(t, "xkcd.yaml", strings.ReplaceAll(string(src), "https://xkcd.com", api.URL))
	values := writeFile(t, "values.yaml", "comic_number: \"1\"\n")
	res := runCLI(t, "", "read", def, "--testing-values", values)
	if res.Code != 0 || res.Stdout != `{"num":5,"title":"x"}`+"\n" {
		t.Fatalf("exit %d\nstdout %q\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}
	var paths []string
	for _, r := range api.requests() {
		paths = append(paths, r.URL)
	}
	if got := strings.Join(paths, " "); got != "/1/info.0.json /1/6/info.0.json" {
		t.Errorf("requests %s", got)
	}
}
