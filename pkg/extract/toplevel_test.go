package extract

import (
	"bufio"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"connector/pkg/record"
)

// The records of the CDK's DpathExtractor (with its JsonDecoder) for bodies that are mostly
// top-level lists, each with several field paths (testdata/cdk-toplevel, made by
// toplevel.py): a list body is a list of bodies, the path followed inside each element; at
// the end of a path without wildcards a list gives its items, an empty object or null
// nothing.
func TestTopLevelListAsCDK(t *testing.T) {
	f, err := os.Open("testdata/cdk-toplevel/toplevel.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	scan := bufio.NewScanner(f)
	n := 0
	for scan.Scan() {
		var c struct {
			Body    string
			Path    []string
			Records []json.RawMessage
			Error   string
		}
		if err := json.Unmarshal(scan.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		if c.Error != "" {
			t.Fatalf("the golden has an error case, not compared: %s", scan.Text())
		}
		path := c.Path
		for i, seg := range path {
			// The templated segment of the script, rendered as the CDK renders it (the
			// extractor is given rendered paths).
			if seg == "{{ 'cust' + 'omer' }}" {
				path = append([]string(nil), path...)
				path[i] = "customer"
			}
		}
		want := []string{}
		for _, r := range c.Records {
			want = append(want, asWritten(t, r))
		}
		got := []string{}
		page, err := Parse([]byte(c.Body), path, Want{})
		if err != nil {
			got = append(got, "error: "+err.Error())
		} else {
			for _, r := range page.Records {
				got = append(got, asWritten(t, r.Raw))
			}
		}
		if strings.Join(got, " ") != strings.Join(want, " ") {
			t.Errorf("body %s, path %q:\n got %s\nwant %s", c.Body, c.Path, got, want)
		}
		n++
	}
	if err := scan.Err(); err != nil {
		t.Fatal(err)
	}
	if n < 80 {
		t.Fatalf("only %d cases in the golden", n)
	}
}

// asWritten is a JSON value written compactly, key order kept.
func asWritten(t *testing.T, raw []byte) string {
	t.Helper()
	v, err := record.Decode(raw)
	if err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	out, err := record.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
