package junit

import (
	"testing"
	"time"
)

func TestMarshal(t *testing.T) {
	start := time.Date(2024, 6, 30, 12, 52, 40, 0, time.FixedZone("CEST", 2*3600))
	got, err := Marshal(Suite{
		Name:  "connector test",
		Start: start,
		Time:  1234 * time.Millisecond,
		Cases: []Case{
			{Name: "a.yaml", Classname: "definitions", Time: 5 * time.Millisecond},
			{Name: "b.yaml", Classname: "definitions", Time: time.Second, Failure: `record 2 $.name: got "<a>", expected "b"`},
			{Name: "c.yaml", Classname: "definitions", Skipped: "no recording testdata/c.har"},
			{Name: "d.yaml", Classname: "definitions", Failure: "invalid", Detail: "invalid\nline 2\x00"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="connector test" tests="4" failures="2" errors="0" skipped="1" time="1.234">
  <testsuite name="connector test" tests="4" failures="2" errors="0" skipped="1" time="1.234" timestamp="2024-06-30T10:52:40">
    <testcase name="a.yaml" classname="definitions" time="0.005"></testcase>
    <testcase name="b.yaml" classname="definitions" time="1.000">
      <failure message="record 2 $.name: got &#34;&lt;a&gt;&#34;, expected &#34;b&#34;" type="FAIL">record 2 $.name: got &#34;&lt;a&gt;&#34;, expected &#34;b&#34;</failure>
    </testcase>
    <testcase name="c.yaml" classname="definitions" time="0.000">
      <skipped message="no recording testdata/c.har"></skipped>
    </testcase>
    <testcase name="d.yaml" classname="definitions" time="0.000">
      <failure message="invalid" type="FAIL">invalid&#xA;line 2` + "\uFFFD" + `</failure>
    </testcase>
  </testsuite>
</testsuites>
`
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
