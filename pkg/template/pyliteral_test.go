package template

import (
	"testing"

	"connector/pkg/record"
)

// TestLiteralEvalIsPythons: what ast.literal_eval (Python 3.11) gives for each text, as JSON;
// "error" where it raises (the CDK then keeps the text).
func TestLiteralEvalIsPythons(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]string{
		"123":                          "123",
		" 42 ":                         "42",
		"-5":                           "-5",
		"+5":                           "5",
		"1_000":                        "1000",
		"0x10":                         "16",
		"0o17":                         "15",
		"0b101":                        "5",
		"00":                           "0",
		"007":                          "error",
		"1.":                           "1.0",
		".5":                           "0.5",
		"1e3":                          "1000.0",
		"12345678901234567890":         "12345678901234567890",
		"-12345678901234567890":        "-12345678901234567890",
		"2024-01-05":                   "error",
		"1 + 1":                        "error",
		"10 - 3":                       "error",
		"1j":                           "error",
		"True":                         "true",
		"False":                        "false",
		"None":                         "null",
		"true":                         "error",
		"none":                         "error",
		"Trueish":                      "error",
		"range(3)":                     "error",
		"not True":                     "error",
		"'a'":                          `"a"`,
		`"it's"`:                       `"it's"`,
		`'a' "b"`:                      `"ab"`,
		`'\x41\u00e9\n'`:               `"Aé\n"`,
		"'''x'''":                      `"x"`,
		"[1, 'b', None]":               `[1,"b",null]`,
		"[]":                           "[]",
		"(1,)":                         "[1]",
		"(1)":                          "1",
		"()":                           "[]",
		"[1, 2,]":                      "[1,2]",
		"{'b': 1, 'a': {'c': [1, 2]}}": `{"b":1,"a":{"c":[1,2]}}`,
		"{}":                           "{}",
		"{1, 2}":                       "error",
		"{1: 'x'}":                     `{"1":"x"}`,
		"":                             "error",
		"Customer 1":                   "error",
		"[1, 2":                        "error",
	} {
		v, err := LiteralEval(text)
		got := "error"
		if err == nil {
			b, merr := record.Marshal(v)
			if merr != nil {
				t.Fatalf("%q: %v", text, merr)
			}
			got = string(b)
		}
		if got != want {
			t.Errorf("LiteralEval(%q) = %s, want %s", text, got, want)
		}
	}
}
