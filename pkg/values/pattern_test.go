package values

import (
	"strings"
	"testing"
	"time"
)

// census is the pattern of us-census's query_params: a query string that may not set key
// (a negative lookahead, which Go's regexp cannot read).
const census = `^\w+=(?:[\w,:*]|%20)+(&(?!key)\w+=(?:[\w,:*]|%20)+)*$`

func TestPatternEngine(t *testing.T) {
	for _, tt := range []struct {
		pattern string
		re2     bool
	}{
		{`^\d{4}-\d{2}-\d{2}$`, true},
		{`^[A-Za-z0-9_-]+$`, true},
		{`^\s*\S+$`, true},
		{`^\cJ$`, true},
		{`^$|^[0-9]{2}:[0-9]{2}$`, true},
		{census, false},
		{`^(\w+)-\1$`, false},
		{`(?<=a)b`, false},
		{`^(?<!x)y$`, false},
		{`^\u0041$`, false},
	} {
		p, err := compilePattern(tt.pattern)
		if err != nil {
			t.Errorf("%s: %v", tt.pattern, err)
			continue
		}
		if (p.re != nil) != tt.re2 || (p.re == nil) == (p.ecma == nil) {
			t.Errorf("%s: Go's regexp %v, regexp2 %v; want Go's regexp only when it reads the pattern (%v)", tt.pattern, p.re != nil, p.ecma != nil, tt.re2)
		}
		if p.ecma != nil && p.ecma.MatchTimeout != matchTimeout {
			t.Errorf("%s: regexp2 without the match timeout (%v)", tt.pattern, p.ecma.MatchTimeout)
		}
	}
}

func TestPatternECMA(t *testing.T) {
	for _, tt := range []struct {
		name, pattern, value string
		ok                   bool
	}{
		{"us-census: one variable", census, "get=NAME&for=state:*", true},
		{"us-census: several, with %20", census, "get=NAME,B01001_001E&for=county:*&in=state:06%2037", true},
		{"us-census: several", census, "get=NAME,B01001_001E&for=county:*&in=state:06", true},
		{"us-census: key is refused", census, "get=NAME&key=abc", false},
		{"us-census: key later is refused", census, "get=NAME&for=state:*&key=abc", false},
		{"us-census: a key-like name that is not key", census, "get=NAME&keys=abc", false},
		{"us-census: not a query", census, "NAME", false},
		{"a backreference", `^(\w+)-\1$`, "ab-ab", true},
		{"a backreference that differs", `^(\w+)-\1$`, "ab-ba", false},
		{"a named backreference", `^(?<q>["'])\w*\k<q>$`, `'abc'`, true},
		{"a named backreference that differs", `^(?<q>["'])\w*\k<q>$`, `'abc"`, false},
		{"a lookbehind", `^\w+(?<!_)$`, "abc", true},
		{"a lookbehind that refuses", `^\w+(?<!_)$`, "abc_", false},
		// ECMA-262's classes, not .NET's: \w and \d are ASCII, \s takes in Unicode's spaces.
		{"\\w is ASCII", `^(?!_)\w+$`, "é", false},
		{"\\d is ASCII", `^(?!0)\d+$`, "٣", false},
		{"\\s is Unicode's", `^(?!x)\s$`, "\u00a0", true},
		// $ is the end of the value, not also before a final newline as in .NET.
		{"$ before a final newline", `^(?!x)a$`, "a\n", false},
		// the u flag's \u{…} is a code point.
		{"\\u{…}", `^(?!x)\u{1F600}$`, "😀", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			spec := map[string]any{"properties": map[string]any{"v": map[string]any{"type": "string", "pattern": tt.pattern}}}
			got := check(t, spec, map[string]any{"v": tt.value})
			var want []string
			if !tt.ok {
				want = []string{`/v testing value "v": must match the pattern ` + tt.pattern}
			}
			if !sameList(got, want) {
				t.Errorf("got  %q\nwant %q", got, want)
			}
		})
	}
}

// catastrophic backtracks exponentially on a run of a's that ends in b: the lookahead
// makes it a pattern that only regexp2 reads.
const catastrophic = `^(?=a)(a+)+$`

func TestPatternTimeout(t *testing.T) {
	value := strings.Repeat("a", 40) + "b"
	tests := []struct {
		name, schema string
		values       map[string]any
		want         []string
	}{
		{"pattern", `{properties: {q: {pattern: "` + catastrophic + `"}}}`, map[string]any{"q": value},
			[]string{`/q testing value "q": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow}},
		{"under not, it is not taken as a mismatch", `{properties: {q: {not: {pattern: "` + catastrophic + `"}}}}`, map[string]any{"q": value},
			[]string{`/q testing value "q": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow}},
		{"in a oneOf, no choice is reported", `{properties: {q: {oneOf: [{pattern: "` + catastrophic + `"}, {type: string}]}}}`, map[string]any{"q": value},
			[]string{`/q testing value "q": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow}},
		{"a key of patternProperties", `{properties: {o: {patternProperties: {"` + catastrophic + `": {}}}}}`, map[string]any{"o": map[string]any{value: 1}},
			[]string{`/o/` + value + ` testing value "o.` + value + `": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow}},
		{"what was found before is kept, the rest is not checked", `{properties: {a: {type: integer}, q: {pattern: "` + catastrophic + `"}, z: {type: integer}}}`,
			map[string]any{"a": "x", "q": value, "z": "y"},
			[]string{`/a testing value "a": got string, want integer`, `/q testing value "q": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			got := check(t, specOf(t, tt.schema), tt.values)
			if !sameList(got, tt.want) {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
			// The bound only catches a check that never ends; the timeout is 100 ms.
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("the check took %v", d)
			}
		})
	}
}

// slow is the end of the message of a pattern that gave up on a value.
const slow = " (lookaround and backreferences are matched by backtracking, which this value makes too slow); " +
	"simplify the pattern or the value; the testing values after it were not checked"

func TestPatternTimeoutKeepsTheValueOut(t *testing.T) {
	secret := "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaS3cr3t"
	spec := map[string]any{"properties": map[string]any{"token": map[string]any{"pattern": catastrophic}}}
	v, err := Parse("values.yaml", []byte("token: "+secret+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = v.Validate(spec)
	want := `values.yaml:1:8: error: testing value "token": gave up matching the pattern ` + catastrophic + ` after 100ms` + slow
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
	reason, err := CheckSchema(spec, map[string]any{"token": secret})
	if err != nil || reason != `testing value "token": gave up matching the pattern `+catastrophic+` after 100ms`+slow {
		t.Errorf("CheckSchema = %q, %v", reason, err)
	}
	if strings.Contains(reason, "S3cr3t") {
		t.Errorf("the reason quotes the value: %s", reason)
	}
}

// TestPatternBudget checks that the patterns regexp2 runs stop, all together, once they
// have taken maxBacktracking in one check: testing values can hold many strings that each
// take just under the timeout.
func TestPatternBudget(t *testing.T) {
	s, err := compileSchema(specOf(t, `{items: {pattern: "^(?!x)a$"}}`))
	if err != nil {
		t.Fatal(err)
	}
	var out []failure
	c := &checker{out: &out, backtracking: maxBacktracking}
	c.check(s, []any{"a", "a"}, nil, &out)
	if c.gaveUp == nil {
		t.Fatal("the check went on past the budget")
	}
	got := render(*c.gaveUp)
	want := `/0 testing value "0": gave up matching the pattern ^(?!x)a$ after the patterns that backtrack took 1s in all` + slow
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}
