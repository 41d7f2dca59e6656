package cmd

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// copyFile copies src to dst.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A folder of definitions, each with its recording in testdata/ (or none), tested at once:
// a line each, a count, exit 1 when one failed, and the JUnit report of the same run.
func TestConnectorTestMany(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	td := filepath.Join(dir, "testdata")
	if err := os.Mkdir(td, 0o755); err != nil {
		t.Fatal(err)
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	inTD := func(name string) string { return filepath.Join(td, name) }

	// Passes: its recording and the records of the recorded read.
	offset := recordDemo(t, "offset-pagination.yaml")
	copyFile(t, offset.def, in("offset-pagination.yaml"))
	copyFile(t, offset.har, inTD("offset-pagination.har"))
	os.WriteFile(inTD("offset-pagination.jsonl"), []byte(offset.live.Stdout), 0o600)
	// Fails: one record more is expected than the read gives.
	page := recordDemo(t, "page-pagination.yaml")
	copyFile(t, page.def, in("page-pagination.yaml"))
	copyFile(t, page.har, inTD("page-pagination.har"))
	os.WriteFile(inTD("page-pagination.jsonl"), []byte(page.live.Stdout+`{"id":0}`+"\n"), 0o600)
	pageRecords := strings.Count(page.live.Stdout, "\n")
	// Fails: its recording is not one.
	copyFile(t, offset.def, in("broken.yaml"))
	os.WriteFile(inTD("broken.har"), []byte(`{"log": {"version": "1.2", "entries": [`), 0o600)
	// Skipped: no recording.
	copyFile(t, offset.def, in("no-auth.yaml"))

	defs := []string{in("broken.yaml"), in("no-auth.yaml"), in("offset-pagination.yaml"), in("page-pagination.yaml")}
	report := filepath.Join(dir, "report.xml")
	res := runCLI(t, "", append([]string{"test", "--junit", report}, defs...)...)
	failPage := "record " + strconv.Itoa(pageRecords+1) + ": got none (the read ended after " + strconv.Itoa(pageRecords) + ` records), expected {"id":0}`
	failBroken := inTD("broken.har") + " is not a recording of connector: the file is empty or cut short"
	skip := "no recording (looked for " + inTD("no-auth.har") + ")"
	want := "FAIL  " + defs[0] + ": " + failBroken + "\n" +
		"SKIP  " + defs[1] + ": " + skip + "\n" +
		"PASS  " + defs[2] + ": 250 records as expected in " + inTD("offset-pagination.jsonl") + " (3 requests replayed from " + inTD("offset-pagination.har") + ")\n" +
		"FAIL  " + defs[3] + ": " + failPage + "\n" +
		"1 passed, 2 failed, 1 skipped\n"
	if res.Code != 1 || res.Stdout != want || res.Stderr != "error: "+failBroken+"\n" {
		t.Fatalf("exit %d\nstdout\n%s\nwant\n%s\nstderr\n%s", res.Code, res.Stdout, want, res.Stderr)
	}

	// The report, read back as a CI system reads it.
	var doc struct {
		XMLName  xml.Name `xml:"testsuites"`
		Tests    int      `xml:"tests,attr"`
		Failures int      `xml:"failures,attr"`
		Skipped  int      `xml:"skipped,attr"`
		Suites   []struct {
			Name      string `xml:"name,attr"`
			Tests     int    `xml:"tests,attr"`
			Failures  int    `xml:"failures,attr"`
			Errors    int    `xml:"errors,attr"`
			Skipped   int    `xml:"skipped,attr"`
			Time      string `xml:"time,attr"`
			Timestamp string `xml:"timestamp,attr"`
			Cases     []struct {
				Name      string `xml:"name,attr"`
				Classname string `xml:"classname,attr"`
				Time      string `xml:"time,attr"`
				Failure   *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(report)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `<?xml version="1.0" encoding="UTF-8"?>`+"\n") {
		t.Errorf("the report does not start with the XML declaration:\n%s", data)
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		t.Fatalf("the report is not XML: %v\n%s", err, data)
	}
	if doc.Tests != 4 || doc.Failures != 2 || doc.Skipped != 1 || len(doc.Suites) != 1 {
		t.Fatalf("testsuites: %d tests, %d failures, %d skipped, %d suites\n%s", doc.Tests, doc.Failures, doc.Skipped, len(doc.Suites), data)
	}
	suite := doc.Suites[0]
	if suite.Name != "connector test" || suite.Tests != 4 || suite.Failures != 2 || suite.Errors != 0 || suite.Skipped != 1 || suite.Time == "" || suite.Timestamp == "" || len(suite.Cases) != 4 {
		t.Fatalf("testsuite: %+v", suite)
	}
	wantCases := []struct{ failure, skipped string }{{failure: failBroken}, {skipped: skip}, {}, {failure: failPage}}
	for i, c := range suite.Cases {
		w := wantCases[i]
		if c.Name != defs[i] || c.Classname != filepath.ToSlash(dir) || c.Time == "" {
			t.Errorf("testcase %d: %q classname %q time %q", i, c.Name, c.Classname, c.Time)
		}
		var failure, skipped string
		if c.Failure != nil {
			failure = c.Failure.Message
			if c.Failure.Text != failure {
				t.Errorf("testcase %d: failure text %q, message %q", i, c.Failure.Text, failure)
			}
		}
		if c.Skipped != nil {
			skipped = c.Skipped.Message
		}
		if failure != w.failure || skipped != w.skipped {
			t.Errorf("testcase %d: failure %q skipped %q, want %q %q", i, failure, skipped, w.failure, w.skipped)
		}
	}

	// --require-recordings: the definition without one fails.
	res = runCLI(t, "", "test", "--require-recordings", defs[1], defs[2])
	want = "FAIL  " + defs[1] + ": " + skip + "\n" +
		"PASS  " + defs[2] + ": 250 records as expected in " + inTD("offset-pagination.jsonl") + " (3 requests replayed from " + inTD("offset-pagination.har") + ")\n" +
		"1 passed, 1 failed\n"
	if res.Code != 1 || res.Stdout != want || res.Stderr != "" {
		t.Errorf("--require-recordings: exit %d\nstdout\n%s\nwant\n%s\nstderr\n%s", res.Code, res.Stdout, want, res.Stderr)
	}

	// --update writes each definition's expected records.
	res = runCLI(t, "", "test", "--update", defs[2], defs[3])
	want = "UPDATED  " + defs[2] + ": 250 records written to " + inTD("offset-pagination.jsonl") + " (3 requests replayed from " + inTD("offset-pagination.har") + ")\n" +
		"UPDATED  " + defs[3] + ": " + strconv.Itoa(pageRecords) + " records written to " + inTD("page-pagination.jsonl") + " (6 requests replayed from " + inTD("page-pagination.har") + ")\n" +
		"2 updated, 0 failed\n"
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("--update: exit %d\nstdout\n%s\nwant\n%s\nstderr\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
	if got, _ := os.ReadFile(inTD("page-pagination.jsonl")); string(got) != page.live.Stdout {
		t.Error("--update did not write the records of the replay")
	}
	res = runCLI(t, "", "test", defs[2], defs[3])
	if res.Code != 0 || !strings.HasSuffix(res.Stdout, "\n2 passed, 0 failed\n") {
		t.Errorf("after --update: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}

// The repository's own definitions: those with a recording pass, the others are skipped.
func TestConnectorTestDefinitions(t *testing.T) {
	t.Parallel()
	defs, err := filepath.Glob(filepath.Join("..", "definitions", "*.yaml"))
	if err != nil || len(defs) < 2 {
		t.Fatalf("definitions: %v %v", defs, err)
	}
	res := runCLI(t, "", append([]string{"test"}, defs...)...)
	hars, _ := filepath.Glob(filepath.Join("..", "definitions", "testdata", "*.har"))
	want := strconv.Itoa(len(hars)) + " passed, 0 failed, " + strconv.Itoa(len(defs)-len(hars)) + " skipped\n"
	if res.Code != 0 || !strings.HasSuffix(res.Stdout, want) || strings.Count(res.Stdout, "\nPASS  ") != len(hars) {
		t.Errorf("exit %d\n%s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}
}

func TestConnectorTestManyUsage(t *testing.T) {
	t.Parallel()
	a, b := filepath.Join("..", "definitions", "bearer-auth.yaml"), filepath.Join("..", "definitions", "no-auth.yaml")
	tests := []struct {
		args   []string
		stderr string
	}{
		{[]string{"test"}, "error: test needs at least one definition file\nRun 'connector test --help' for usage.\n"},
		{[]string{"test", a, b, "--replay", "x.har"}, "error: --replay names the recording of one definition, and 2 are given: leave it out and each is replayed from its own, DIR/testdata/NAME.har\n"},
		{[]string{"test", a, b, "--expect", "x.jsonl"}, "error: --expect names the expected records of one definition, and 2 are given: leave it out and each is compared with its own, DIR/testdata/NAME.jsonl\n"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", tt.args...)
		if res.Code != 2 || res.Stdout != "" || res.Stderr != tt.stderr {
			t.Errorf("%v: exit %d\nstdout %s\nstderr %s\nwant\n%s", tt.args, res.Code, res.Stdout, res.Stderr, tt.stderr)
		}
	}
}

// With --replay, a definition that cannot be tested is the error it always was, and a failed
// testcase in the JUnit report.
func TestConnectorTestJUnitOfAnError(t *testing.T) {
	t.Parallel()
	def := filepath.Join("..", "definitions", "offset-pagination.yaml")
	bad := writeFile(t, "bad.har", `{"log": {"version": "1.2", "entries": [`)
	report := filepath.Join(t.TempDir(), "report.xml")
	res := runCLI(t, "", "test", def, "--replay", bad, "--junit", report)
	msg := bad + " is not a recording of connector: the file is empty or cut short"
	if res.Code != 3 || res.Stdout != "" || res.Stderr != "error: "+msg+"\n" {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", res.Code, res.Stdout, res.Stderr)
	}
	var doc struct {
		Suites []struct {
			Failures int `xml:"failures,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure struct {
					Message string `xml:"message,attr"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	data, _ := os.ReadFile(report)
	if err := xml.Unmarshal(data, &doc); err != nil || len(doc.Suites) != 1 || doc.Suites[0].Failures != 1 ||
		len(doc.Suites[0].Cases) != 1 || doc.Suites[0].Cases[0].Name != def || doc.Suites[0].Cases[0].Failure.Message != msg {
		t.Errorf("report: %v\n%s", err, data)
	}

	// An invalid definition among several: its diagnostics on stderr, its FAIL, the next one.
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "testdata"), 0o755)
	invalid := filepath.Join(dir, "invalid.yaml")
	os.WriteFile(invalid, []byte("version: 6.0.0\ntype: DeclarativeSource\nstreams:\n  - type: DeclarativeStream\n    name: x\n    retriever: 5\n"), 0o600)
	copyFile(t, filepath.Join("..", "definitions", "testdata", "bearer-auth.har"), filepath.Join(dir, "testdata", "invalid.har"))
	copyFile(t, filepath.Join("..", "definitions", "testdata", "bearer-auth.jsonl"), filepath.Join(dir, "testdata", "invalid.jsonl"))
	res = runCLI(t, "", "test", invalid, filepath.Join("..", "definitions", "bearer-auth.yaml"))
	want := "FAIL  " + invalid + ": the definition cannot be replayed (see above)\nPASS  "
	if res.Code != 1 || !strings.HasPrefix(res.Stdout, want) || !strings.HasSuffix(res.Stdout, "\n1 passed, 1 failed\n") || res.Stderr != invalid+":6:16: error: `retriever` must be a mapping (a component), not a number\n"+invalid+": invalid, 1 error\n" {
		t.Errorf("an invalid definition: exit %d\nstdout\n%s\nstderr\n%s", res.Code, res.Stdout, res.Stderr)
	}
}
