package jsondiff

import (
	"strings"
	"testing"
)

func TestFirst(t *testing.T) {
	tests := []struct {
		name, got, want, diff string
	}{
		{"same", `{"a":1,"b":[1,2]}`, `{"a": 1, "b": [1, 2]}`, ""},
		{"nested string", `{"user":{"name":"a"}}`, `{"user":{"name":"b"}}`, `$.user.name: got "a", expected "b"`},
		{"number spelling", `{"price":1.50}`, `{"price":1.5}`, `$.price: got 1.50, expected 1.5`},
		{"type", `{"id":"1"}`, `{"id":1}`, `$.id: got "1", expected 1`},
		{"missing key", `{"a":1}`, `{"a":1,"b":null}`, `$.b: got absent, expected null`},
		{"extra key", `{"a":1,"c d":true}`, `{"a":1}`, `$["c d"]: got true, expected absent`},
		{"key order", `{"b":1,"a":2}`, `{"a":2,"b":1}`, `$: the same keys in another order: got [b a], expected [a b]`},
		{"repeated key", `{"a":1,"a":1}`, `{"a":1}`, `$: a key repeated: got [a a], expected [a]`},
		{"shorter list", `{"l":[1]}`, `{"l":[1,{"x":2}]}`, `$.l[1]: got absent, expected {"x":2}`},
		{"text as in the file", `{"h":"<b>&amp;"}`, `{"h":"<i>"}`, `$.h: got "<b>&amp;", expected "<i>"`},
		{"array top", `[1,2,3]`, `[1,2,4]`, `$[2]: got 3, expected 4`},
		{"long value", `{"s":"` + strings.Repeat("x", 100) + `"}`, `{"s":""}`, `$.s: got "` + strings.Repeat("x", 79) + `…, expected ""`},
	}
	for _, tt := range tests {
		d, err := First([]byte(tt.got), []byte(tt.want), nil)
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		got := ""
		if d != nil {
			got = d.String()
		}
		if got != tt.diff {
			t.Errorf("%s: got %q, want %q", tt.name, got, tt.diff)
		}
	}
}

func TestFirstWithEqualAndErrors(t *testing.T) {
	loose := func(a, b string) bool { return a == b || b == "*" }
	if d, err := First([]byte(`{"k":"anything"}`), []byte(`{"k":"*"}`), loose); err != nil || d != nil {
		t.Errorf("loose comparison: %v %v", d, err)
	}
	d, _ := First([]byte(`{"k":2}`), []byte(`{"k":3}`), nil)
	if got := d.Format("recorded"); got != "$.k: got 2, recorded 3" {
		t.Errorf("Format = %q", got)
	}
	for _, bad := range []string{``, `{`, `{} {}`, `[1,]`} {
		if _, err := First([]byte(bad), []byte(`{}`), nil); err == nil {
			t.Errorf("First(%q) did not fail", bad)
		}
	}
	deep := strings.Repeat("[", 600) + strings.Repeat("]", 600)
	if _, err := First([]byte(deep), []byte(`[]`), nil); err == nil {
		t.Error("a document nested 600 deep was accepted")
	}
}
