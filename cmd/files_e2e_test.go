package cmd

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// definitions/response-to-file.yaml against the demo API's CSV export of 6 authors: the
// plain stream and the gzipped one (preserve_na_values), their exact requests and records.
// The records are those pandas' documented read_csv gives for the CDK's arguments (see
// testdata/response-to-file-cdk/README.md: the CDK's reference install has no pandas).
func TestResponseToFileDefinition(t *testing.T) {
	api := newRecorder(t, demoapi.Handler(demoapi.Options{Records: 6}).ServeHTTP)
	def, err := os.ReadFile(filepath.Join("..", "definitions", "response-to-file.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	res := e2eRead(t, api, string(def), "")
	const plain = `{"id":"1","name":"Bea Lindqvist","country":"SE","active":"true","rating":"4.1","city":"Uppsala","postcode":"10037","note":null}
{"id":"2","name":"Cyril Moreau","country":"FR","active":"true","rating":"5.2","city":"Lyon","postcode":"10074","note":"said \"hi\", then left"}
{"id":"3","name":"Dana Tanaka","country":"JP","active":"true","rating":"3.3","city":"Osaka","postcode":"10111","note":null}
{"id":"4","name":"Emeka Silva","country":"PT","active":"false","rating":"4.4","city":"Porto","postcode":"10148","note":"line one\nline two"}
{"id":"5","name":"Farah Novak","country":"CZ","active":"true","rating":"5.5","city":"Brno","postcode":"10185","note":null}
{"id":"6","name":"Goran Haddad","country":"LB","active":"true","rating":"3.6","city":"Beirut","postcode":"10222","note":null}
`
	const preserved = `{"id":"1","name":"Bea Lindqvist","country":"SE","active":"true","rating":"4.1","city":"Uppsala","postcode":"10037","note":"NA"}
{"id":"2","name":"Cyril Moreau","country":"FR","active":"true","rating":"5.2","city":"Lyon","postcode":"10074","note":"said \"hi\", then left"}
{"id":"3","name":"Dana Tanaka","country":"JP","active":"true","rating":"3.3","city":"Osaka","postcode":"10111","note":"null"}
{"id":"4","name":"Emeka Silva","country":"PT","active":"false","rating":"4.4","city":"Porto","postcode":"10148","note":"line one\nline two"}
{"id":"5","name":"Farah Novak","country":"CZ","active":"true","rating":"5.5","city":"Brno","postcode":"10185","note":null}
{"id":"6","name":"Goran Haddad","country":"LB","active":"true","rating":"3.6","city":"Beirut","postcode":"10222","note":"NA"}
`
	e2eCheckResult(t, api, res, 0, plain+preserved, "")
	e2eCheckRequests(t, api,
		e2eRequest{Method: "GET", URL: "/v1/public/exports/authors.csv"},
		e2eRequest{Method: "GET", URL: "/v1/public/exports/authors.csv?gzip=true"})
}

// A ResponseToFileExtractor's errors: a row longer than the first, with its line; a gzip
// body that inflates past --max-body, with the limit named.
func TestResponseToFileInline(t *testing.T) {
	t.Run("a row longer than the header's first data row fails with the line", func(t *testing.T) {
		api := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("a,b\n1,2\n3,4,5\n")) })
		res := e2eRead(t, api, e2eOneStream("url_base: "+api.URL+"\npath: /x\n", "extractor: {type: ResponseToFileExtractor}"), "")
		// Nothing of the page is written, as pandas fails on its first chunk of 100 rows.
		e2eCheckResult(t, api, res, 1, "",
			"error: stream items, page 1: GET http://API/x answered 200 with a body that ResponseToFileExtractor cannot read: line 3: 3 cells where 2 are expected (pandas refuses the row: \"Expected 2 fields in line 3, saw 3\") (0 records written before the failure)\n")
	})
	t.Run("the records of one body are not capped by --max-body: none is held", func(t *testing.T) {
		body := "n\n" + strings.Repeat("1\n", 20) // 20 records; 1KiB would cap a JSON page at 8
		api := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) })
		res := e2eRead(t, api, e2eOneStream("url_base: "+api.URL+"\npath: /x\n", "extractor: {type: ResponseToFileExtractor}"), "", "--max-body", "1KiB")
		e2eCheckResult(t, api, res, 0, strings.Repeat(`{"n":"1"}`+"\n", 20), "")
	})
	t.Run("a gzip body that inflates past --max-body", func(t *testing.T) {
		big := e2eGzip("a\n" + strings.Repeat(strings.Repeat("x", 199)+"\n", 10000))
		api := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(big)) })
		res := e2eRead(t, api, e2eOneStream("url_base: "+api.URL+"\npath: /x\n", "extractor: {type: ResponseToFileExtractor}"), "", "--max-body", "1MiB")
		// The records are written a batch of 1000 at a time, as they are read: the five
		// batches read before the limit are out.
		row := `{"a":"` + strings.Repeat("x", 199) + `"}` + "\n"
		e2eCheckResult(t, api, res, 1, strings.Repeat(row, 5000),
			"error: stream items, page 1: GET http://API/x answered 200, but the compressed content expands to more than 1 MiB, the body limit (--max-body raises it) (5000 records written before the failure)\n")
	})
}

// The CDK's ResponseToFileExtractor saves the demo API's plain and gzipped exports as the
// same text (testdata/response-to-file-cdk/saved.csv, made by the CDK); both streams read
// from it the records of records.jsonl, which follow pandas' documented read_csv.
func TestResponseToFileCDKGolden(t *testing.T) {
	dir := filepath.Join("testdata", "response-to-file-cdk")
	saved, err := os.ReadFile(filepath.Join(dir, "saved.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if string(saved) != string(demoapi.ExportCSV(250)) {
		t.Fatal("the demo API's export is no longer what the CDK saved: make the golden again (README.md)")
	}
	want, err := os.ReadFile(filepath.Join(dir, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	api := newRecorder(t, demoapi.Handler(demoapi.Options{Records: 250}).ServeHTTP)
	def, err := os.ReadFile(filepath.Join("..", "definitions", "response-to-file.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	// The gzipped stream, made to read as the plain one (preserve_na_values off).
	gz := strings.Replace(string(def), "preserve_na_values: true", "preserve_na_values: false", 1)
	for _, stream := range []string{"authors_csv", "authors_csv_gzip"} {
		res := e2eRead(t, api, gz, "", "--stream", stream)
		e2eCheckResult(t, api, res, 0, string(want), "")
	}
}
