package template

import (
	"bufio"
	"encoding/json"
	"os"
	"testing"
)

// cdkRow is one line of testdata/cdk-undefined/probe.out: how the CDK's Jinja rendering of
// a template ended ("ok", "UndefinedError", "TypeError", or another exception's name).
type cdkRow struct {
	Template string `json:"template"`
	Render   string `json:"render"`
}

// differsFromCDK are the probe's templates where this tool knowingly does not raise what
// the CDK raises, each with the reason.
var differsFromCDK = map[string]string{
	// Access through a missing value yields undefined here, never an error (the product's rule).
	"{{ record['prints'].x }}":              "access",
	"{{ record['prints']['x'] }}":           "access",
	"{{ record['prints'].get('x') }}":       "access",
	"{{ record.prints.x.y }}":               "access",
	"{{ record['prints'].upper() }}":        "access",
	"{{ record['prints'] | string }}":       "undefined renders as the empty text",
	"{{ record['prints'] | base64encode }}": "undefined renders as the empty text",
}

// TestErrorClassesAreTheCDKs evaluates every template of the CDK probe on the same record
// and checks that a failure has the class of the exception the CDK's Jinja raised, and
// that Interpolate gives the template's own text for a TypeError, as the CDK's eval does.
func TestErrorClassesAreTheCDKs(t *testing.T) {
	f, err := os.Open("testdata/cdk-undefined/probe.out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	vars := map[string]any{"config": map[string]any{}, "record": map[string]any{"id": int64(1), "name": "a", "n": nil, "s": "5"}}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		var row cdkRow
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		n++
		tp, err := Compile(row.Template, []string{"record", "config"})
		if err != nil {
			t.Errorf("%s: %v", row.Template, err)
			continue
		}
		_, err = tp.Eval(vars)
		got := "ok"
		if err != nil {
			switch Class(err) {
			case ClassUndefined:
				got = "UndefinedError"
			case ClassType:
				got = "TypeError"
			default:
				got = "other"
			}
		}
		want := row.Render
		if want != "ok" && want != "UndefinedError" && want != "TypeError" {
			want = "other"
		}
		if reason, ok := differsFromCDK[row.Template]; ok {
			if got != "ok" {
				t.Errorf("%s: listed as differing (%s), but fails with %s: %v", row.Template, reason, got, err)
			}
			continue
		}
		if got != want {
			t.Errorf("%s: %s (%v), the CDK's Jinja %s", row.Template, got, err, row.Render)
		}
		v, ierr := tp.Interpolate(vars)
		switch want {
		case "TypeError":
			if ierr != nil || v != row.Template {
				t.Errorf("Interpolate(%s) = %#v, %v; want the template's own text", row.Template, v, ierr)
			}
		case "UndefinedError":
			if Class(ierr) != ClassUndefined {
				t.Errorf("Interpolate(%s) = %#v, %v; want the undefined failure for the caller's default", row.Template, v, ierr)
			}
		}
	}
	if n < 50 {
		t.Fatalf("read %d rows of the probe, want at least 50", n)
	}
}

// TestInterpolateTextOfATypeError is the whole source for a template of text and tags too.
func TestInterpolateTextOfATypeError(t *testing.T) {
	src := "id-{{ record['s'] + 1 }}-{{ record['name'] }}"
	tp, err := Compile(src, []string{"record"})
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]any{"record": map[string]any{"s": "5", "name": "a"}}
	if s, err := tp.InterpolateText(vars); err != nil || s != src {
		t.Fatalf("InterpolateText = %q, %v; want %q", s, err, src)
	}
	if _, err := tp.Render(vars); Class(err) != ClassType || err.Error() != "evaluating `{{ record['s'] + 1 }}`: unsupported operand type(s) for +: 'str' and 'int'" {
		t.Fatalf("Render: %v (class %d)", err, Class(err))
	}
}
