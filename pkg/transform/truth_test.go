package transform

import (
	"testing"

	"connector/pkg/template"
)

// Truth is the CDK 7.28.2's InterpolatedBoolean: the value rendered by Jinja, read with
// ast.literal_eval, is false only when it is `in FALSE_VALUES` ("False", "false", "{}",
// "[]", "()", "", "0", "0.0", {}, False, [], (), set()), a comparison with ==, so 0, 0.0,
// "00", "-0" and "set()" are false too. None is the one difference kept on purpose: the CDK
// calls it true, this tool false (Python's truthiness). An absent key renders empty and
// the CDK evaluates its default "False". The expectations are the CDK's code run with
// jinja2 3.1 on the same values.
func TestTruth(t *testing.T) {
	tp, err := template.Compile("{{ config.x }}", []string{"config"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		x    any
		want bool
	}{
		{nil, false}, {true, true}, {false, false}, {0, false}, {1, true}, {0.0, false},
		{"0.00", false}, {"00", false}, {"-0", false}, {" ", true}, {"false", false}, {"False", false},
		{"no", true}, {[]any{}, false}, {map[string]any{}, false}, {[]any{1}, true}, {"", false},
		{"None", false}, {"'False'", false}, {"0j", true}, {"set()", false}, {"1e400", true},
	}
	for _, tt := range tests {
		got, err := Truth(tp, map[string]any{"config": map[string]any{"x": tt.x}})
		if err != nil || got != tt.want {
			t.Errorf("x = %#v: %v %v, want %v", tt.x, got, err, tt.want)
		}
	}
	if got, err := Truth(tp, map[string]any{"config": map[string]any{}}); err != nil || got {
		t.Errorf("absent x: %v %v, want false", got, err)
	}
}
