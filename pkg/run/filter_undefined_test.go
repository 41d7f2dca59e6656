package run

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
)

// TestRecordFilterOnMissingValuesIsTheCDKs: `record['prints'] > 0` drops a record without
// prints (the CDK catches Jinja's UndefinedError and takes the filter's default, False) and
// keeps one whose prints is null or text (a TypeError: the CDK keeps the condition's own
// text, which is true). The records kept are the CDK's RecordFilter output for the same
// records, in ../transform/testdata/cdk-undefined (made by the script there).
func TestRecordFilterOnMissingValuesIsTheCDKs(t *testing.T) {
	f, err := os.Open("../transform/testdata/cdk-undefined/filter_addfields.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		t.Fatal("no line in the CDK's output")
	}
	var cdk struct {
		Condition string            `json:"record_filter"`
		Kept      []json.RawMessage `json:"kept"`
	}
	if err := json.Unmarshal(sc.Bytes(), &cdk); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range cdk.Kept {
		var b bytes.Buffer
		if err := json.Compact(&b, r); err != nil {
			t.Fatal(err)
		}
		want = append(want, b.String())
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[`+
			`{"id":1,"prints":3,"createdAt":"Tue, 05 Mar 2024 10:20:30 +0000","uri":"https://api.example/users/AB-1"},`+
			`{"id":2},{"id":3,"prints":0,"createdAt":null,"uri":null},{"id":4,"prints":null},{"id":5,"prints":"7"}]}`)
	}))
	t.Cleanup(api.Close)
	def := strings.Replace(cursorDef(api.URL, ""), `extractor: {field_path: [data]}`,
		`extractor: {field_path: [data]}
        record_filter: {condition: "`+cdk.Condition+`"}`, 1)
	o, s := loadStream(t, def)
	out := &emitter{}
	o.Out = out
	res := Stream(context.Background(), o, s)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	if got := strings.Join(out.lines, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("records\n%s\nthe CDK keeps\n%s", got, strings.Join(want, "\n"))
	}
}

// TestRecordFilterOtherFailuresStay: a failure the CDK does not catch (a division by zero)
// still fails the stream.
func TestRecordFilterOtherFailuresStay(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"data":[{"id":1}]}`)
	}))
	t.Cleanup(api.Close)
	def := strings.Replace(cursorDef(api.URL, ""), `extractor: {field_path: [data]}`,
		`extractor: {field_path: [data]}
        record_filter: {condition: "{{ record['id'] / 0 }}"}`, 1)
	o, s := loadStream(t, def)
	o.Out = &emitter{}
	res := Stream(context.Background(), o, s)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "record_filter: evaluating `{{ record['id'] / 0 }}`: division by zero") {
		t.Fatalf("error %v", res.Err)
	}
}
