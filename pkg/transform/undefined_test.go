package transform

import (
	"bufio"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
)

// cdkUndefined is testdata/cdk-undefined/filter_addfields.out: the CDK's RecordFilter and
// AddFields run on records with missing, null and mistyped values (see the README there).
type cdkUndefined struct {
	RecordFilter       string            `json:"record_filter"`
	Kept               []json.RawMessage `json:"kept"`
	AddFields          map[string]string `json:"add_fields"`
	AddFieldsCondition string            `json:"add_fields_condition"`
	Records            []json.RawMessage `json:"records"`
	AddFieldsUndefined string            `json:"add_fields_undefined"`
}

// undefinedInputs are the records the CDK script transformed, in its order.
var undefinedInputs = []string{
	`{"id":1,"prints":3,"createdAt":"Tue, 05 Mar 2024 10:20:30 +0000","uri":"https://api.example/users/AB-1"}`,
	`{"id":2}`,
	`{"id":3,"prints":0,"createdAt":null,"uri":null}`,
	`{"id":4,"prints":null}`,
	`{"id":5,"prints":"7"}`,
}

func readCDKUndefined(t *testing.T) []cdkUndefined {
	t.Helper()
	f, err := os.Open("testdata/cdk-undefined/filter_addfields.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []cdkUndefined
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var c cdkUndefined
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		out = append(out, c)
	}
	if len(out) != 5 {
		t.Fatalf("%d lines in the CDK's output, want 5", len(out))
	}
	return out
}

// compact is the CDK's json.dumps text as record.Marshal writes it: same keys, same order.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	v, err := record.Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	b, err := record.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAddFieldsOnMissingValuesIsTheCDKs: a field whose template fails with a TypeError
// (strptime of a missing or null date, regex_search in a missing or null text) gets the
// template's own text, as in the CDK; the other fields of the record are set as usual.
func TestAddFieldsOnMissingValuesIsTheCDKs(t *testing.T) {
	cdk := readCDKUndefined(t)[1]
	m := &manifest.Transformation{Type: manifest.AddFields}
	for _, name := range []string{"created_at_utc", "user_id", "double"} {
		m.Fields = append(m.Fields, &manifest.AddedField{Path: []string{name}, Value: compile(t, cdk.AddFields[name])})
	}
	for i, in := range undefinedInputs {
		got, err := applyOne(t, m, map[string]any{}, nil, in)
		if want := compact(t, cdk.Records[i]); err != nil || got != want {
			t.Errorf("AddFields on %s = %s, %v; the CDK gives %s", in, got, err, want)
		}
	}
}

// TestAddFieldsConditionOnMissingValuesIsTheCDKs: the condition is false when an undefined
// value is ordered (the CDK's default, False), true when None or a text is compared with a
// number (a TypeError: the condition's own text, which is true).
func TestAddFieldsConditionOnMissingValuesIsTheCDKs(t *testing.T) {
	for _, cdk := range readCDKUndefined(t)[2:4] {
		m := &manifest.Transformation{Type: manifest.AddFields, Condition: compile(t, cdk.AddFieldsCondition),
			Fields: []*manifest.AddedField{{Path: []string{"flag"}, Value: compile(t, "{{ record['prints'] }}")}}}
		for i, in := range undefinedInputs {
			got, err := applyOne(t, m, map[string]any{}, nil, in)
			if want := compact(t, cdk.Records[i]); err != nil || got != want {
				t.Errorf("AddFields if %s on %s = %s, %v; the CDK gives %s", cdk.AddFieldsCondition, in, got, err, want)
			}
		}
	}
}

// TestAddFieldsUndefinedNumberFails: an undefined value used as a number in a field's value
// stays a failure, as in the CDK (its default is the template itself, which fails again).
func TestAddFieldsUndefinedNumberFails(t *testing.T) {
	cdk := readCDKUndefined(t)[4]
	if !strings.HasPrefix(cdk.AddFieldsUndefined, "UndefinedError") {
		t.Fatalf("the CDK's output says %q", cdk.AddFieldsUndefined)
	}
	m := &manifest.Transformation{Type: manifest.AddFields, Fields: []*manifest.AddedField{{Path: []string{"next"}, Value: compile(t, "{{ record['prints'] + 1 }}")}}}
	got, err := applyOne(t, m, map[string]any{}, nil, `{"id":2}`)
	want := "transformations[0] AddFields: field next: evaluating `{{ record['prints'] + 1 }}`: unsupported operand for +: a value is undefined"
	if err == nil || err.Error() != want {
		t.Fatalf("AddFields = %s, %v; want the error %q", got, err, want)
	}
}

// TestCDKFilterOutputIsRead guards the line the record filter's test in pkg/run reads.
func TestCDKFilterOutputIsRead(t *testing.T) {
	cdk := readCDKUndefined(t)[0]
	var ids []string
	for _, r := range cdk.Kept {
		var v struct{ ID json.Number }
		if err := json.Unmarshal(r, &v); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID.String())
	}
	if !slices.Equal(ids, []string{"1", "4", "5"}) || cdk.RecordFilter != "{{ record['prints'] > 0 }}" {
		t.Fatalf("the CDK's filter line: %s kept %v", cdk.RecordFilter, ids)
	}
}
