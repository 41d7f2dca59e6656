package resolve

import (
	"fmt"
	"math"
	"os"
	"strings"
	"testing"
)

// A YAML file is read as PyYAML's safe_load reads it (testdata/scalars.pyyaml.json is what
// PyYAML and json.dumps made of testdata/scalars.yaml): YAML 1.1 booleans, octal and
// sexagesimal numbers, floats that need a dot, merge keys of lists of mappings, keys that
// are numbers or null written as JSON writes them.
func TestParseYAMLAsPyYAML(t *testing.T) {
	src, err := os.ReadFile("testdata/scalars.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("testdata/scalars.pyyaml.json")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Encode(m, "")
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != strings.TrimSpace(string(want)) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

// JSON is read as json.loads reads it: a number with a fraction or an exponent is a float,
// written back as Python writes floats; a key written twice keeps its first place.
func TestParseJSON(t *testing.T) {
	m, err := Parse([]byte(` {"b": 1, "a": [1.0, 1e3, 2.50, -0.0, 1E-7, 12345678901234567890], "b": {"c": null, "d": "\u00e9\n"}}`))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := Encode(m, "")
	want := `{"b":{"c":null,"d":"é\n"},"a":[1.0,1000.0,2.5,-0.0,1e-07,12345678901234567890]}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	for _, bad := range []string{`[1]`, `"x"`, "", "a: [1"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := Parse([]byte("a: &x [*x]\n")); err == nil || !strings.Contains(err.Error(), "the alias *x is inside the value it names") {
		t.Errorf("a recursive alias: %v", err)
	}
}

func TestPyFloat(t *testing.T) {
	for f, want := range map[float64]string{
		1: "1.0", 0.1: "0.1", 1e16: "1e+16", 1e15: "1000000000000000.0", 123456.789: "123456.789",
		0.0001: "0.0001", 0.00001: "1e-05", 1.5e-300: "1.5e-300", -2.5e22: "-2.5e+22",
		math.MaxFloat64: "1.7976931348623157e+308", 5e-324: "5e-324", 100: "100.0",
	} {
		if got := pyFloat(f); got != want {
			t.Errorf("pyFloat(%v) = %s, want %s", f, got, want)
		}
	}
}

// The indented form is json.dumps(indent=2)'s.
func TestEncodeIndented(t *testing.T) {
	m, _ := Parse([]byte(`{"a": [], "b": {}, "c": [1, {"d": "<&>"}]}`))
	got, _ := Encode(m, "  ")
	want := "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    1,\n    {\n      \"d\": \"<&>\"\n    }\n  ]\n}"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := Encode(floatNumber(math.Inf(1)), ""); err != errNotFinite {
		t.Errorf("inf: %v", err)
	}
}

func TestObjectKeepsPythonOrder(t *testing.T) {
	o := NewObject()
	o.Set("a", 1)
	o.Set("b", 2)
	o.Set("a", 3) // in place
	o.Pop("b")
	o.Set("b", 4) // at the end again
	o.Set("c", 5)
	if got := strings.Join(o.Keys(), ","); got != "a,b,c" || o.Value("a") != 3 {
		t.Errorf("keys %s, a=%v", got, o.Value("a"))
	}
	o.Pop("a")
	o.Set("a", 6)
	if got := strings.Join(o.Keys(), ","); got != "b,c,a" {
		t.Errorf("keys %s", got)
	}
}

// equal is Python's ==: 1 == 1.0 == True, mappings whatever their order.
func TestEqual(t *testing.T) {
	a, _ := Parse([]byte(`{"x": [1, 2.0, true], "y": {"p": 1, "q": null}}`))
	b, _ := Parse([]byte(`{"y": {"q": null, "p": 1.0}, "x": [1.0, 2, 1]}`))
	c, _ := Parse([]byte(`{"y": {"q": null, "p": 1.0}, "x": [1.0, 2, 0]}`))
	if !equal(a, b) || equal(a, c) {
		t.Errorf("equal(a, b) = %v, equal(a, c) = %v", equal(a, b), equal(a, c))
	}
	if canonical(a) == canonical(b) {
		t.Error("the normalizer's hash tells 1 from 1.0, as json.dumps does")
	}
}

// References that double at each level would make a trillion values: the resolution stops at
// its limit (here a lower one, for speed), with an error, in bounded time and memory.
func TestLimits(t *testing.T) {
	var sb strings.Builder
	sb.WriteString(`{"type": "DeclarativeSource", "streams": "#/l0"`)
	for i := range 40 {
		fmt.Fprintf(&sb, `, "l%d": ["#/l%d", "#/l%d"]`, i, i+1, i+1)
	}
	sb.WriteString(`, "l40": "x"}`)
	m, err := Parse([]byte(sb.String()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Manifest(m, Options{maxSteps: 100_000}); err == nil || err.Error() != "the manifest expands to more than 100000 values through $ref and $parameters (a limit of connector)" {
		t.Errorf("doubling references: %v", err)
	}
	// Nesting made by references, each level a few written ones deep.
	sb.Reset()
	sb.WriteString(`{"type": "DeclarativeSource", "streams": "#/l0"`)
	for i := range 1100 {
		fmt.Fprintf(&sb, `, "l%d": {"a": "#/l%d"}`, i, i+1)
	}
	sb.WriteString(`, "l1100": 1}`)
	if m, err = Parse([]byte(sb.String())); err != nil {
		t.Fatal(err)
	}
	if _, err := Manifest(m, Options{}); err == nil || !strings.Contains(err.Error(), "more than 1024 levels") {
		t.Errorf("deep nesting: %v", err)
	}
}
