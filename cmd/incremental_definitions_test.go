package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// incrementalRun reads an incremental example of definitions/ against the in-process demo
// API with a state file, the clock standing still (so a per-partition state's
// lookback_window, the read's duration, is 0): the requests the API received, in order.
func incrementalRun(t *testing.T, file, statePath string, args ...string) (cliResult, []string) {
	t.Helper()
	api := newRecorder(t, demoapi.New(demoapi.Options{}).ServeHTTP)
	all := append([]string{"read", filepath.Join("..", "definitions", file),
		"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url=" + api.URL,
		"--state", statePath}, args...)
	res := runCLIEnv(t, fixedClock(), "", all...)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	var urls []string
	for _, r := range api.requests() {
		urls = append(urls, r.Method+" "+r.URL)
	}
	return res, urls
}

// jsonLines is the records as the demo API serves them, one a line.
func jsonLines[T any](t *testing.T, get func(int) T, ids ...int) string {
	t.Helper()
	var b strings.Builder
	for _, id := range ids {
		line, err := json.Marshal(get(id))
		if err != nil {
			t.Fatal(err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.String()
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func wantRequests(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func atTime(s string) time.Time {
	t, err := time.Parse(demoapi.TimeFormat, s)
	if err != nil {
		panic(err)
	}
	return t
}

// incremental-datetime.yaml: the first run reads January to June 2024 a month at a time
// (two pages a month) and saves the newest updated_at; the second run, with that state,
// asks only from that value on (inclusive: the event at the state value comes again).
func TestIncrementalDatetimeDefinition(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "state.json")
	res, reqs := incrementalRun(t, "incremental-datetime.yaml", statePath)
	months := [][2]string{
		{"01-01", "01-31"}, {"02-01", "02-29"}, {"03-01", "03-31"}, {"04-01", "04-30"}, {"05-01", "05-31"}, {"06-01", "06-30"},
	}
	var want []string
	for _, m := range months {
		for _, off := range []string{"0", "25"} {
			want = append(want, "GET /v1/public/events?offset="+off+"&limit=25&since=2024-"+m[0]+"T00%3A00%3A00Z&until=2024-"+m[1]+"T23%3A59%3A59Z")
		}
	}
	wantRequests(t, "run 1 requests", reqs, want)
	ids := demoapi.EventsBetween(demoapi.DefaultEvents, atTime("2024-01-01T00:00:00Z"), atTime("2024-06-30T23:59:59Z"))
	if len(ids) != 249 || ids[248] != 249 {
		t.Fatalf("events of January to June: %d, the last %d", len(ids), ids[len(ids)-1])
	}
	if want := jsonLines(t, demoapi.Event, ids...); res.Stdout != want {
		t.Errorf("run 1 stdout: %d bytes, want %d (events 1 to 249)", len(res.Stdout), len(want))
	}
	const state = `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-06-30T12:52:40Z"}}}
]
`
	if got := readFile(t, statePath); got != state {
		t.Errorf("state file after run 1:\n%s\nwant:\n%s", got, state)
	}
	if want := `events: state {"updated_at":"2024-06-30T12:52:40Z"} (saved in ` + statePath + ")\n"; res.Stderr != want {
		t.Errorf("run 1 stderr:\n%s\nwant:\n%s", res.Stderr, want)
	}

	res, reqs = incrementalRun(t, "incremental-datetime.yaml", statePath)
	wantRequests(t, "run 2 requests", reqs, []string{
		"GET /v1/public/events?offset=0&limit=25&since=2024-06-30T12%3A52%3A40Z&until=2024-06-30T23%3A59%3A59Z",
	})
	if want := jsonLines(t, demoapi.Event, 249); res.Stdout != want {
		t.Errorf("run 2 stdout:\n%s\nwant:\n%s", res.Stdout, want)
	}
	if got := readFile(t, statePath); got != state {
		t.Errorf("state file after run 2:\n%s\nwant:\n%s", got, state)
	}
}

// incremental-substream.yaml: the first run reads the reviews of authors 1 to 3, January to
// June a month at a time, and saves one value per author; the second run, one author more,
// reads each known author from its own value and the new author 4 from the greatest value
// (minus a lookback_window of 0 seconds: the clock stands still).
func TestIncrementalSubstreamDefinition(t *testing.T) {
	statePath := filepath.Join(t.TempDir(), "state.json")
	res, reqs := incrementalRun(t, "incremental-substream.yaml", statePath, "--stream", "author_reviews")
	months := [][2]string{
		{"01-01", "01-31"}, {"02-01", "02-29"}, {"03-01", "03-31"}, {"04-01", "04-30"}, {"05-01", "05-31"}, {"06-01", "06-30"},
	}
	want := []string{"GET /v1/public/authors?limit=3"}
	var records []int
	for _, a := range []string{"1", "2", "3"} {
		for _, m := range months {
			want = append(want, "GET /v1/public/authors/"+a+"/reviews?since=2024-"+m[0]+"T00%3A00%3A00Z&until=2024-"+m[1]+"T23%3A59%3A59Z")
		}
	}
	wantRequests(t, "run 1 requests", reqs, want)
	for a := 1; a <= 3; a++ {
		records = append(records, demoapi.ReviewsOf(demoapi.DefaultEvents, a, atTime("2024-01-01T00:00:00Z"), atTime("2024-06-30T23:59:59Z"))...)
	}
	if want := jsonLines(t, demoapi.Review, 1, 51, 101, 151, 201, 2, 52, 102, 152, 202, 3, 53, 103, 153, 203); res.Stdout != want || len(records) != 15 {
		t.Errorf("run 1 stdout:\n%s\nwant:\n%s", res.Stdout, want)
	}
	const partitions = `{"partition":{"author_id":1,"parent_slice":{}},"cursor":{"updated_at":"2024-05-26T12:36:40Z"}},` +
		`{"partition":{"author_id":2,"parent_slice":{}},"cursor":{"updated_at":"2024-05-27T06:10:45Z"}},` +
		`{"partition":{"author_id":3,"parent_slice":{}},"cursor":{"updated_at":"2024-05-27T23:44:50Z"}}`
	state := `{"use_global_cursor":false,"states":[` + partitions + `],"state":{"updated_at":"2024-05-27T23:44:50Z"},"lookback_window":0,"parent_state":{}}`
	file := "[\n" + `{"type":"STREAM","stream":{"stream_descriptor":{"name":"author_reviews"},"stream_state":` + state + "}}\n]\n"
	if got := readFile(t, statePath); got != file {
		t.Errorf("state file after run 1:\n%s\nwant:\n%s", got, file)
	}
	if want := "author_reviews: state " + state[:157] + "… (saved in " + statePath + ")\n"; res.Stderr != want {
		t.Errorf("run 1 stderr:\n%s\nwant:\n%s", res.Stderr, want)
	}

	res, reqs = incrementalRun(t, "incremental-substream.yaml", statePath, "--stream", "author_reviews", "--set", "review_authors=4")
	wantRequests(t, "run 2 requests", reqs, []string{
		"GET /v1/public/authors?limit=4",
		"GET /v1/public/authors/1/reviews?since=2024-05-26T12%3A36%3A40Z&until=2024-06-26T12%3A36%3A39Z",
		"GET /v1/public/authors/1/reviews?since=2024-06-26T12%3A36%3A40Z&until=2024-06-30T23%3A59%3A59Z",
		"GET /v1/public/authors/2/reviews?since=2024-05-27T06%3A10%3A45Z&until=2024-06-27T06%3A10%3A44Z",
		"GET /v1/public/authors/2/reviews?since=2024-06-27T06%3A10%3A45Z&until=2024-06-30T23%3A59%3A59Z",
		"GET /v1/public/authors/3/reviews?since=2024-05-27T23%3A44%3A50Z&until=2024-06-27T23%3A44%3A49Z",
		"GET /v1/public/authors/3/reviews?since=2024-06-27T23%3A44%3A50Z&until=2024-06-30T23%3A59%3A59Z",
		"GET /v1/public/authors/4/reviews?since=2024-05-27T23%3A44%3A50Z&until=2024-06-27T23%3A44%3A49Z",
		"GET /v1/public/authors/4/reviews?since=2024-06-27T23%3A44%3A50Z&until=2024-06-30T23%3A59%3A59Z",
	})
	if want := jsonLines(t, demoapi.Review, 201, 202, 203, 204); res.Stdout != want {
		t.Errorf("run 2 stdout:\n%s\nwant:\n%s", res.Stdout, want)
	}
	state = `{"use_global_cursor":false,"states":[` + partitions +
		`,{"partition":{"author_id":4,"parent_slice":{}},"cursor":{"updated_at":"2024-05-28T17:18:55Z"}}],` +
		`"state":{"updated_at":"2024-05-28T17:18:55Z"},"lookback_window":0,"parent_state":{}}`
	file = "[\n" + `{"type":"STREAM","stream":{"stream_descriptor":{"name":"author_reviews"},"stream_state":` + state + "}}\n]\n"
	if got := readFile(t, statePath); got != file {
		t.Errorf("state file after run 2:\n%s\nwant:\n%s", got, file)
	}
}
