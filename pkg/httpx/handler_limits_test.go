package httpx

import (
	"strings"
	"testing"
)

// The error handler reads a body as JSON (response, error_message_contains) only within
// the page parser's nesting limit: a deeper body is not JSON to it, like a page of HTML.
func TestHandlerBodyWithinTheDepthLimit(t *testing.T) {
	nested := func(n int) string {
		return `{"message":"x","deep":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`
	}
	for _, tt := range []struct {
		body   string
		isJSON bool
	}{
		{nested(512), true},
		{nested(513), false},
		{nested(2_000_000), false},
		{strings.Repeat(`{"a":`, 2_000_000), false},
	} {
		o := &outcome{resp: &Response{Status: 400, Body: []byte(tt.body)}}
		v := o.json()
		if o.isJSON != tt.isJSON {
			t.Errorf("a body of %d bytes: isJSON %v, want %v", len(tt.body), o.isJSON, tt.isJSON)
		}
		if m, ok := v.(map[string]any); !ok || tt.isJSON != (m["message"] == "x") {
			t.Errorf("a body of %d bytes: response %.80v", len(tt.body), v)
		}
		if got := errorMessage(o); tt.isJSON && got != "x" || !tt.isJSON && got != tt.body {
			t.Errorf("a body of %d bytes: error message %.80q", len(tt.body), got)
		}
	}
}
