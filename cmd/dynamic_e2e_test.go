package cmd

import (
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"connector/pkg/demoapi"
)

// logBuffer collects the demo API's request log.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// dynamicRun runs a command on definitions/dynamic-streams.yaml against a demo API and
// returns the result and the API's request log.
func dynamicRun(t *testing.T, args ...string) (cliResult, string) {
	t.Helper()
	log := &logBuffer{}
	ts := httptest.NewServer(demoapi.New(demoapi.Options{Log: log}))
	defer ts.Close()
	full := append([]string{args[0], filepath.Join("..", "definitions", "dynamic-streams.yaml"),
		"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--set", "base_url=" + ts.URL,
		"--set-json", `extra_tables=[{"name":"few_events","collection":"events","page_size":50},{"name":"more_reviews","collection":"reviews"}]`},
		args[1:]...)
	return runCLI(t, "", full...), log.String()
}

// The streams made from GET /v1/basic/tables (HttpComponentsResolver) and from the testing
// values (ConfigComponentsResolver), as the CDK 7.28.2 makes them from the same definition
// and config: discover lists table_books, table_authors, table_events, table_reviews,
// few_events, more_reviews, and a read of all six gives the same 2500 records (compared
// sorted, in envelope form). The first request of each stream carries offset=0, which the
// CDK leaves out.
func TestDynamicStreamsRead(t *testing.T) {
	res, log := dynamicRun(t, "read", "--stream", "table_authors", "--stream", "few_events", "--max-pages", "2", "--format", "envelope")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	wantLog := `GET /v1/basic/tables 200
GET /v1/basic/authors?limit=100&offset=0 200
GET /v1/basic/authors?limit=100&offset=100 200
GET /v1/basic/events?limit=50&offset=0 200
GET /v1/basic/events?limit=50&offset=50 200
`
	if log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
	lines := strings.Split(strings.TrimSuffix(res.Stdout, "\n"), "\n")
	if len(lines) != 300 {
		t.Fatalf("%d records, want 300", len(lines))
	}
	first := `{"stream":"table_authors","data":{"id":1,"name":"Bea Lindqvist","country":"SE","active":true,"rating":4.1,"address":{"city":"Uppsala","postcode":"10037"},"table":"tbl_authors"}}`
	if lines[0] != first {
		t.Errorf("first record\n%s\nwant\n%s", lines[0], first)
	}
	if !strings.HasPrefix(lines[200], `{"stream":"few_events","data":{"id":1,`) || !strings.HasSuffix(lines[200], `"table":"configured"}}`) {
		t.Errorf("first few_events record: %s", lines[200])
	}
}

// check with CheckDynamicStream (stream_count: 2) checks the first two streams made.
func TestDynamicStreamsCheck(t *testing.T) {
	res, log := dynamicRun(t, "check", "--format", "json")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	want := `{"stream":"table_books","ok":true,"records":100}
{"stream":"table_authors","ok":true,"records":100}
`
	if res.Stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, want)
	}
	wantLog := "GET /v1/basic/tables 200\nGET /v1/basic/books?limit=100&offset=0 200\nGET /v1/basic/authors?limit=100&offset=0 200\n"
	if log != wantLog {
		t.Errorf("requests:\n%s\nwant:\n%s", log, wantLog)
	}
}

// paginate-trace shows the resolver's request before the streams'.
func TestDynamicStreamsTrace(t *testing.T) {
	res, _ := dynamicRun(t, "paginate-trace", "--stream", "more_reviews", "--max-pages", "1")
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	for _, want := range []string{
		"components of the dynamic streams api_tables (NoPagination)",
		"/v1/basic/tables (data)",
		"page 1: 4 records extracted",
		"stream more_reviews (OffsetIncrement limit 100;",
		"/v1/basic/reviews?offset=0&limit=100 (data)",
	} {
		if !strings.Contains(res.Stdout, want) {
			t.Errorf("trace lacks %q:\n%s", want, res.Stdout)
		}
	}
}

// --stream names a stream among the static and the resolved ones.
func TestDynamicStreamsUnknownStream(t *testing.T) {
	res, _ := dynamicRun(t, "read", "--stream", "table_nope")
	if res.Code != 2 || !strings.Contains(res.Stderr, `unknown stream "table_nope"; the definition has: table_books, table_authors, table_events, table_reviews, few_events, more_reviews`) {
		t.Errorf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
}

// streams lists the static and the resolved streams, in read order, each with its
// pagination (the page size each component gave), partitions, cursor and primary key.
func TestDynamicStreamsList(t *testing.T) {
	res, log := dynamicRun(t, "streams")
	want := `STREAM         KIND     PAGINATION                      PARTITIONS  INCREMENTAL  PRIMARY KEY
table_books    dynamic  OffsetIncrement, page size 100  -           -            id
table_authors  dynamic  OffsetIncrement, page size 100  -           -            id
table_events   dynamic  OffsetIncrement, page size 100  -           -            id
table_reviews  dynamic  OffsetIncrement, page size 100  -           -            id
few_events     dynamic  OffsetIncrement, page size 50   -           -            id
more_reviews   dynamic  OffsetIncrement, page size 100  -           -            id
`
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("exit %d, stdout:\n%s\nstderr:\n%s", res.Code, res.Stdout, res.Stderr)
	}
	if log != "GET /v1/basic/tables 200\n" {
		t.Errorf("requests:\n%s", log)
	}
}
