package httpx

import (
	"context"
	"strings"
	"testing"
)

// A predicate that orders a missing value is false, the CDK's default for its
// InterpolatedBoolean; one that compares text with a number is a TypeError, whose template
// text is true (the CDK's own results for these templates are in
// pkg/template/testdata/cdk-undefined).
func TestPredicateOnMissingValuesIsTheCDKs(t *testing.T) {
	const handler = `
type: DefaultErrorHandler
response_filters:
  - type: HttpResponseFilter
    action: FAIL
    predicate: "{{ response.error.code > 32000 }}"
`
	for _, tt := range []struct {
		name, body, err string
	}{
		{"no error code: the predicate is false, the 200 succeeds", `{"data":[]}`, ""},
		{"a text code: the predicate is true", `{"error":{"code":"x"}}`, `200 OK from GET URL/x: {"error":{"code":"x"}}`},
		{"a larger code: the predicate is true", `{"error":{"code":32001}}`, `200 OK from GET URL/x: {"error":{"code":32001}}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv, calls := script(t, step{200, nil, tt.body})
			c, _, _ := fakeClient(srv, t0)
			_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/x", Handler: handlerFrom(t, handler, nil)})
			got := ""
			if err != nil {
				got = strings.ReplaceAll(err.Error(), srv.URL, "URL")
			}
			if got != tt.err || calls() != 1 {
				t.Errorf("error %q after %d calls, want %q after 1", got, calls(), tt.err)
			}
		})
	}
}
