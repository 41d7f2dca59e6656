package resolve

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// frozen is the clock of the migration records in the expected outputs.
var frozen = time.Date(2025, 1, 2, 3, 4, 5, 678901000, time.UTC)

// TestPassesAsTheCDK runs each pass on the cases of testdata/passes.json and compares the
// result, as JSON text with its key order, with what the CDK's own pass made of the same
// input (testdata/passes.cdk.json; testdata/README.md says how it was made).
func TestPassesAsTheCDK(t *testing.T) {
	var cases []struct {
		Name       string          `json:"name"`
		Pass       string          `json:"pass"`
		Input      json.RawMessage `json:"input"`
		ParentWins bool            `json:"parent_wins"`
	}
	var want []struct {
		Name   string  `json:"name"`
		Output *string `json:"output"`
		Error  *string `json:"error"`
	}
	readJSON(t, "testdata/passes.json", &cases)
	readJSON(t, "testdata/passes.cdk.json", &want)
	if len(cases) != len(want) {
		t.Fatalf("%d cases, %d expected outputs: run the command of testdata/README.md again", len(cases), len(want))
	}
	for i, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			if want[i].Name != c.Name {
				t.Fatalf("expected output %d is for %q", i, want[i].Name)
			}
			in, err := parseJSON(c.Input)
			if err != nil {
				t.Fatal(err)
			}
			got, err := runPass(c.Pass, in, c.ParentWins)
			switch {
			case want[i].Error != nil:
				if err == nil || err.Error() != *want[i].Error {
					t.Errorf("error %v, want %q", err, *want[i].Error)
				}
			case err != nil:
				t.Errorf("error %v, want\n%s", err, *want[i].Output)
			default:
				b, err := Encode(got, "")
				if err != nil {
					t.Fatal(err)
				}
				if string(b) != *want[i].Output {
					t.Errorf("got\n%s\nwant\n%s", b, *want[i].Output)
				}
			}
		})
	}
}

func runPass(pass string, in any, parentWins bool) (any, error) {
	b := newBudget(maxSteps)
	switch pass {
	case "refs":
		return (&refs{root: in.(*Object), visited: map[string]bool{}, b: b}).eval(in, 0)
	case "propagate":
		return (&propagator{parentWins: parentWins, b: b}).component("", in.(*Object), NewObject(), 0)
	case "migrate":
		return migrate(in.(*Object), frozen), nil
	case "normalize":
		return normalize(in.(*Object)), nil
	case "urljoin":
		out := &List{}
		for _, pair := range in.(*List).Items {
			p := pair.(*List).Items
			u, err := urljoin(p[0].(string), p[1].(string))
			if err != nil {
				u = "ValueError: " + err.Error()
			}
			out.Items = append(out.Items, u)
		}
		return out, nil
	}
	panic("unknown pass " + pass)
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}
