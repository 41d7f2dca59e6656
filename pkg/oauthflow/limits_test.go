package oauthflow

import (
	"strings"
	"testing"
)

// A token response nested deeper than the page parser's limit is neither JSON nor a form.
func TestTokenResponseDepthLimit(t *testing.T) {
	nested := func(n int) []byte {
		return []byte(`{"access_token":"t","x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if m := parseBody(nested(512)); m == nil || m["access_token"] != "t" {
		t.Errorf("512 levels: %.80v", m)
	}
	for _, n := range []int{513, 2_000_000} {
		if m := parseBody(nested(n)); m != nil {
			t.Errorf("%d levels: read as %.80v", n, m)
		}
	}
}
