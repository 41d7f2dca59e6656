// Package junit writes a JUnit XML report, the test report format CI systems (GitLab,
// Jenkins, GitHub Actions' test reporters, CircleCI) read: a testsuites element holding one
// testsuite of testcases, each passed, failed (with a message) or skipped.
package junit

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"time"
)

// Suite is one run of tests.
type Suite struct {
	Name string
	// Start is when the run began; Time how long it took.
	Start time.Time
	Time  time.Duration
	Cases []Case
}

// Case is the test of one thing.
type Case struct {
	Name      string
	Classname string
	Time      time.Duration
	// Failure is the message of a failed test ("" when it did not fail); Detail its text.
	Failure, Detail string
	// Skipped is why the test did not run ("" when it ran).
	Skipped string
}

// The XML elements, as CI systems read them (the schema of Ant's JUnit task, which they share).
type (
	testsuites struct {
		XMLName  xml.Name    `xml:"testsuites"`
		Name     string      `xml:"name,attr"`
		Tests    int         `xml:"tests,attr"`
		Failures int         `xml:"failures,attr"`
		Errors   int         `xml:"errors,attr"`
		Skipped  int         `xml:"skipped,attr"`
		Time     string      `xml:"time,attr"`
		Suites   []testsuite `xml:"testsuite"`
	}
	testsuite struct {
		Name      string     `xml:"name,attr"`
		Tests     int        `xml:"tests,attr"`
		Failures  int        `xml:"failures,attr"`
		Errors    int        `xml:"errors,attr"`
		Skipped   int        `xml:"skipped,attr"`
		Time      string     `xml:"time,attr"`
		Timestamp string     `xml:"timestamp,attr"`
		Cases     []testcase `xml:"testcase"`
	}
	testcase struct {
		Name      string   `xml:"name,attr"`
		Classname string   `xml:"classname,attr"`
		Time      string   `xml:"time,attr"`
		Failure   *failure `xml:"failure"`
		Skipped   *skipped `xml:"skipped"`
	}
	failure struct {
		Message string `xml:"message,attr"`
		Type    string `xml:"type,attr"`
		Text    string `xml:",chardata"`
	}
	skipped struct {
		Message string `xml:"message,attr"`
	}
)

// Marshal is the report of one suite: an XML declaration and an indented testsuites element
// with the counts of its testsuite, ending with a newline.
func Marshal(s Suite) ([]byte, error) {
	ts := testsuite{
		Name:      s.Name,
		Tests:     len(s.Cases),
		Time:      seconds(s.Time),
		Timestamp: s.Start.UTC().Format("2006-01-02T15:04:05"),
	}
	for _, c := range s.Cases {
		tc := testcase{Name: c.Name, Classname: c.Classname, Time: seconds(c.Time)}
		switch {
		case c.Failure != "":
			detail := c.Detail
			if detail == "" {
				detail = c.Failure
			}
			tc.Failure = &failure{Message: c.Failure, Type: "FAIL", Text: detail}
			ts.Failures++
		case c.Skipped != "":
			tc.Skipped = &skipped{Message: c.Skipped}
			ts.Skipped++
		}
		ts.Cases = append(ts.Cases, tc)
	}
	doc := testsuites{
		Name: s.Name, Tests: ts.Tests, Failures: ts.Failures, Skipped: ts.Skipped, Time: ts.Time,
		Suites: []testsuite{ts},
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	enc := xml.NewEncoder(&b)
	enc.Indent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	b.WriteString("\n")
	return b.Bytes(), nil
}

// seconds is a duration as JUnit writes it: seconds, to the millisecond.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%.3f", d.Seconds())
}
