package transform

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"connector/pkg/template"
)

// A record_filter keeps a record exactly when the CDK's RecordFilter does: the condition
// evaluated (Template.Eval, as pkg/run's filter evaluates it), then ValueTruth. The
// expectations are the CDK's own verdicts (testdata/recordfilter-cdk), but for a condition
// that gives None, which this tool calls false and the CDK true (noneCases).
func TestValueTruthIsTheCDKsRecordFilter(t *testing.T) {
	// The cases whose condition gives None (record.get of an absent key, the text "None").
	noneCases := map[int]bool{3: true, 16: true}
	dir := filepath.Join("testdata", "recordfilter-cdk")
	b, err := os.ReadFile(filepath.Join(dir, "cases.json"))
	if err != nil {
		t.Fatal(err)
	}
	var cases []struct {
		Condition string         `json:"condition"`
		Record    map[string]any `json:"record"`
	}
	if err := json.Unmarshal(b, &cases); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "cdk.out"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	config := map[string]any{"profiles": []any{10}, "marketplace_ids": []any{"x"}}
	for i, c := range cases {
		if !sc.Scan() {
			t.Fatalf("cdk.out has no line for case %d", i)
		}
		var want []any
		if err := json.Unmarshal(sc.Bytes(), &want); err != nil {
			t.Fatal(err)
		}
		tp, err := template.Compile(c.Condition, []string{"config", "record"})
		if err != nil {
			t.Fatalf("%s: %v", c.Condition, err)
		}
		v, err := tp.Eval(map[string]any{"config": config, "record": c.Record})
		if err != nil {
			t.Errorf("%s on %v: %v", c.Condition, c.Record, err)
			continue
		}
		kept := want[0].(bool)
		if noneCases[i] {
			if !kept {
				t.Errorf("case %d: the CDK drops a record whose condition gives None; the difference is gone", i)
			}
			kept = false
		}
		if got := ValueTruth(v); got != kept {
			t.Errorf("%s on %v: kept %v (evaluated %#v), the CDK's RecordFilter %v", c.Condition, c.Record, got, v, want[0])
		}
	}
}
