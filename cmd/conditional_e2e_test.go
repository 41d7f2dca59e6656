package cmd

import (
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// demoRun runs a command on def against a demo API, with the example testing values and
// the API's address, and returns the result and the API's request log.
func demoRun(t *testing.T, def string, args ...string) (cliResult, string) {
	t.Helper()
	log := &logBuffer{}
	ts := httptest.NewServer(demoapi.New(demoapi.Options{Log: log}))
	defer ts.Close()
	full := append([]string{args[0], def, "--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url=" + ts.URL}, args[1:]...)
	return runCLI(t, "", full...), log.String()
}

var conditionalDef = filepath.Join("..", "definitions", "conditional-streams.yaml")

// The demo API's first records, as it sends them.
const (
	firstAuthor = `{"id":1,"name":"Bea Lindqvist","country":"SE","active":true,"rating":4.1,"address":{"city":"Uppsala","postcode":"10037"}}`
	firstBook   = `{"id":1,"global_id":12345678901234567890,"title":"The Crimson Garden, vol. 1","author":{"id":4,"name":"Emeka Silva"},"price":6.36,"in_stock":true,"tags":["space","poetry"],"published":"2020-01-02","blurb":"<html>Salt & \"pepper\" vol. 1</html>"}`
	firstEvent  = `{"id":1,"kind":"refund","book_id":8,"quantity":2,"updated_at":"2024-01-01T00:00:00Z"}`
)

// streamCounts is "stream count" for each run of records of one stream, in the order
// written, from the envelope format.
func streamCounts(t *testing.T, stdout string) (string, map[string]string) {
	t.Helper()
	var runs []string
	counts := map[string]int{}
	first := map[string]string{}
	last := ""
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var env struct {
			Stream string          `json:"stream"`
			Data   json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if env.Stream != last {
			runs = append(runs, env.Stream)
			last = env.Stream
			first[env.Stream] = string(env.Data)
		}
		counts[env.Stream]++
	}
	var out []string
	for _, r := range runs {
		out = append(out, r+" "+itoa(counts[r]))
	}
	return strings.Join(out, ", "), first
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// With the example values (no books_by_page, no include_events) the CDK 7.28.2's
// _stream_configs keeps authors, then the streams of the second ConditionalStreams, whose
// condition `not config.get('books_by_page', False)` renders "True": books by offset. The
// first renders "False" and the third renders empty (config['include_events'] is
// undefined), both false for InterpolatedBoolean. So 250 authors, then 250 books.
func TestConditionalStreamsRead(t *testing.T) {
	res, log := demoRun(t, conditionalDef, "read", "--format", "envelope")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	wantLog := `GET /v1/basic/authors?limit=100&offset=0 200
GET /v1/basic/authors?limit=100&offset=100 200
GET /v1/basic/authors?limit=100&offset=200 200
GET /v1/basic/books?limit=100&offset=0 200
GET /v1/basic/books?limit=100&offset=100 200
GET /v1/basic/books?limit=100&offset=200 200
`
	if log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
	counts, first := streamCounts(t, res.Stdout)
	if counts != "authors 250, books 250" {
		t.Errorf("records: %s", counts)
	}
	if first["authors"] != firstAuthor || first["books"] != firstBook {
		t.Errorf("first records:\n%s\n%s\nwant:\n%s\n%s", first["authors"], first["books"], firstAuthor, firstBook)
	}
}

// books_by_page and include_events turn the other variant of books and the events on: the
// first ConditionalStreams now holds (its books by numbered pages of 50, in its place
// before the offset variant's, which is left out), and the third adds events at the end.
func TestConditionalStreamsOtherVariant(t *testing.T) {
	res, log := demoRun(t, conditionalDef, "read", "--format", "envelope", "--max-pages", "1",
		"--set", "books_by_page=true", "--set", "include_events=true")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	wantLog := `GET /v1/basic/authors?limit=100&offset=0 200
GET /v1/basic/books/pages?page=1&per_page=50 200
GET /v1/basic/events?limit=100&offset=0 200
`
	if log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
	counts, first := streamCounts(t, res.Stdout)
	if counts != "authors 100, books 50, events 100" {
		t.Errorf("records: %s", counts)
	}
	if first["books"] != firstBook || first["events"] != firstEvent {
		t.Errorf("first records:\n%s\n%s\nwant:\n%s\n%s", first["books"], first["events"], firstBook, firstEvent)
	}
}

// A stream whose ConditionalStreams does not hold is not among the streams (the CDK's
// catalog lacks it): --stream names it with the reason, exit 2, no request.
func TestConditionalStreamsLeftOutStream(t *testing.T) {
	res, log := demoRun(t, conditionalDef, "read", "--stream", "events")
	want := "error: stream \"events\" is left out: the condition of its ConditionalStreams (line 129:5) is false for the testing values\n"
	if res.Code != 2 || res.Stderr != want || log != "" {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s\nrequests:\n%s", res.Code, res.Stderr, want, log)
	}
}

// check requests the first page of authors and of the books the values chose.
func TestConditionalStreamsCheck(t *testing.T) {
	res, log := demoRun(t, conditionalDef, "check", "--format", "json", "--set", "books_by_page=true")
	want := `{"stream":"authors","ok":true,"records":100}
{"stream":"books","ok":true,"records":50}
`
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
	if wantLog := "GET /v1/basic/authors?limit=100&offset=0 200\nGET /v1/basic/books/pages?page=1&per_page=50 200\n"; log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
}

// check.stream_names may name a stream of a ConditionalStreams (validate accepts it); when
// the values leave it out, the CDK's CheckStream raises "events is not part of the catalog.
// Expected one of ['authors', 'books']." after checking the streams before it. check says
// it on that stream's line and exits 1; `airbyte check` ends as the CDK's entry point ends
// on that uncaught ValueError: a FATAL log, a system_error TRACE, exit 1.
func TestConditionalStreamsCheckNamesALeftOutStream(t *testing.T) {
	def := mutate(t, "conditional-streams.yaml", "    - books\n", "    - books\n    - events\n")
	res, log := demoRun(t, def, "check")
	want := "ok  authors  (100 records on the first page)\nok  books  (100 records on the first page)\n" +
		"FAILED  events  not among the streams: the condition of its ConditionalStreams (line 130:5) is false for the testing values\n"
	if res.Code != 1 || res.Stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nwant:\n%s\nstderr:\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
	if wantLog := "GET /v1/basic/authors?limit=100&offset=0 200\nGET /v1/basic/books?limit=100&offset=0 200\n"; log != wantLog {
		t.Errorf("requests:\n%s", log)
	}

	ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer ts.Close()
	config := writeFile(t, "config.json", `{"base_url":"`+ts.URL+`","username":"demo","password":"demo-password"}`)
	res = runCLI(t, "", "airbyte", "check", "--manifest-path", def, "--config", config)
	lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if res.Code != 1 || len(lines) != 2 {
		t.Fatalf("exit %d, stdout:\n%s", res.Code, res.Stdout)
	}
	var fatal struct {
		Log struct{ Level, Message string }
	}
	var trace struct {
		Trace struct {
			Error struct {
				Message         string `json:"message"`
				InternalMessage string `json:"internal_message"`
				FailureType     string `json:"failure_type"`
			}
		}
	}
	if json.Unmarshal([]byte(lines[0]), &fatal) != nil || json.Unmarshal([]byte(lines[1]), &trace) != nil {
		t.Fatalf("stdout:\n%s", res.Stdout)
	}
	reason := "events is not part of the catalog. Expected one of ['authors', 'books']."
	if fatal.Log.Level != "FATAL" || fatal.Log.Message != reason {
		t.Errorf("log %+v", fatal.Log)
	}
	e := trace.Trace.Error
	if e.Message != "Something went wrong in the connector. See the logs for more details." || e.InternalMessage != reason || e.FailureType != "system_error" {
		t.Errorf("trace %+v", e)
	}
}

// discover's catalog has the streams the config chose, in their order.
func TestConditionalStreamsDiscover(t *testing.T) {
	ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer ts.Close()
	config := writeFile(t, "config.json", `{"base_url":"`+ts.URL+`","username":"demo","password":"demo-password","include_events":true}`)
	res := runCLI(t, "", "airbyte", "discover", "--manifest-path", conditionalDef, "--config", config)
	var m struct {
		Catalog struct {
			Streams []struct{ Name string }
		}
	}
	if res.Code != 0 || json.Unmarshal([]byte(res.Stdout), &m) != nil {
		t.Fatalf("exit %d, stdout %s, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	var got []string
	for _, s := range m.Catalog.Streams {
		got = append(got, s.Name)
	}
	if strings.Join(got, ",") != "authors,books,events" {
		t.Errorf("streams %v", got)
	}
}

// Without testing values the conditions cannot be decided: streams lists the unconditional
// streams and says which are not listed; with them, each chosen stream is `conditional`.
func TestConditionalStreamsList(t *testing.T) {
	env := testEnv(nil)
	env.Transport = noNetwork{}
	res := runCLIEnv(t, env, "", "streams", conditionalDef)
	want := "STREAM   KIND    PAGINATION                      PARTITIONS  INCREMENTAL  PRIMARY KEY\n" +
		"authors  static  OffsetIncrement, page size 100  -           -            id\n"
	wantErr := "note: the streams of the ConditionalStreams at line 121:5, 125:5, 129:5 are not listed: their conditions read the testing values, and spec.connection_specification of ../definitions/conditional-streams.yaml requires username, password; pass --testing-values FILE\n"
	if res.Code != 0 || res.Stdout != want || res.Stderr != wantErr {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	res = runCLIEnv(t, env, "", "streams", conditionalDef, "--testing-values", filepath.Join("..", "testing-values.example.yaml"),
		"--set", "include_events=true", "--format", "json")
	want = `{"name":"authors","dynamic":false,"pagination":{"type":"OffsetIncrement","text":"OffsetIncrement, page size 100"},"partitioning":null,"incremental":null,"primary_key":[["id"]]}
{"name":"books","dynamic":false,"conditional":true,"pagination":{"type":"OffsetIncrement","text":"OffsetIncrement, page size 100"},"partitioning":null,"incremental":null,"primary_key":[["id"]]}
{"name":"events","dynamic":false,"conditional":true,"pagination":{"type":"OffsetIncrement","text":"OffsetIncrement, page size 100"},"partitioning":null,"incremental":null,"primary_key":[["id"]]}
`
	if res.Code != 0 || res.Stdout != want || res.Stderr != "" {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
}

// A condition that fails at run time is an invalid definition for those values (exit 3),
// at the ConditionalStreams' place; one both variants hold for is refused the same way.
func TestConditionalStreamsConditionErrors(t *testing.T) {
	def := mutate(t, "conditional-streams.yaml", `"{{ config['include_events'] }}"`, `"{{ (config['include_events'] | int) / 0 }}"`)
	res, log := demoRun(t, def, "read", "--set", "include_events=true")
	want := "error: " + def + ":129:5: ConditionalStreams: condition: evaluating `{{ (config['include_events'] | int) / 0 }}`: division by zero\n"
	if res.Code != 3 || res.Stderr != want || log != "" {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", res.Code, res.Stderr, want)
	}
	def = mutate(t, "conditional-streams.yaml", `"{{ not config.get('books_by_page', False) }}"`, `"{{ true }}"`)
	res, _ = demoRun(t, def, "read", "--set", "books_by_page=true")
	want = "error: " + def + ":125:5: ConditionalStreams: the stream name \"books\" is used twice: the conditions of this ConditionalStreams and of the one at line 121:5 both hold for the testing values\n"
	if res.Code != 3 || res.Stderr != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", res.Code, res.Stderr, want)
	}
}

// validate reports what the CDK's schema refuses in a ConditionalStreams at its place.
func TestConditionalStreamsValidate(t *testing.T) {
	def := mutate(t, "conditional-streams.yaml", "  - type: ConditionalStreams\n    condition: \"{{ config['include_events'] }}\"\n    streams:\n      - $ref: \"#/definitions/streams/events\"\n",
		"  - type: ConditionalStreams\n    condition: true\n    streams:\n      - name: events\n        retriever: {}\n")
	res := runCLI(t, "", "validate", def)
	want := def + ":130:16: error: `condition` must be a string (a template), not a boolean\n" +
		"  hint: the CDK's schema refuses anything else; write it as text, such as \"{{ config['sandbox'] }}\"\n" +
		def + ":132:9: error: a stream of a ConditionalStreams is missing the required field `type`\n" +
		"  hint: write `type: DeclarativeStream`: the CDK gives the streams of a ConditionalStreams no default type and refuses the definition\n"
	if res.Code != 3 || !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", res.Code, res.Stderr, want)
	}
}

// airbyte catalog without --config decides the ConditionalStreams with the spec's defaults
// (none here: books by offset, no events); with a config, by its values. A read of that
// catalog reads those streams.
func TestConditionalStreamsCatalog(t *testing.T) {
	names := func(stdout string) string {
		var c struct {
			Streams []struct {
				Stream struct{ Name string }
			}
		}
		if err := json.Unmarshal([]byte(stdout), &c); err != nil {
			t.Fatalf("%v: %s", err, stdout)
		}
		var out []string
		for _, s := range c.Streams {
			out = append(out, s.Stream.Name)
		}
		return strings.Join(out, ",")
	}
	res := runCLI(t, "", "airbyte", "catalog", conditionalDef)
	if res.Code != 0 || names(res.Stdout) != "authors,books" {
		t.Errorf("exit %d, streams %s, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	ts := httptest.NewServer(demoapi.New(demoapi.Options{}))
	defer ts.Close()
	config := writeFile(t, "config.json", `{"base_url":"`+ts.URL+`","username":"demo","password":"demo-password","include_events":true}`)
	res = runCLI(t, "", "airbyte", "catalog", conditionalDef, "--config", config, "--stream", "events")
	if res.Code != 0 || names(res.Stdout) != "events" {
		t.Fatalf("exit %d, streams %s, stderr %s", res.Code, res.Stdout, res.Stderr)
	}
	catalog := writeFile(t, "catalog.json", res.Stdout)
	read := runCLI(t, "", "airbyte", "read", "--manifest-path", conditionalDef, "--config", config, "--catalog", catalog)
	if read.Code != 0 || strings.Count(read.Stdout, `"type":"RECORD"`) != 500 {
		t.Errorf("read: exit %d, %d records", read.Code, strings.Count(read.Stdout, `"type":"RECORD"`))
	}
}
