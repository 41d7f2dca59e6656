package cmd

import (
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

func TestCheckAuthenticatesAndReportsEachStream(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{Records: 30})
	vals := authDemoValues(t, demo.URL)
	res := runCLI(t, "", "check", authDefinition("oauth-refresh-token.yaml"), "--testing-values", vals)
	want := "ok  books  (30 records on the first page)\nok  authors  (30 records on the first page)\n"
	if res.Code != 0 || res.Stdout != want {
		t.Errorf("exit %d, stdout %q, want %q; stderr:\n%s", res.Code, res.Stdout, want, res.Stderr)
	}
	if st := demo.api.Stats(); st.RefreshTokenGrants != 1 || st.DataRequests != 2 {
		t.Errorf("stats %+v, want one token for both streams", st)
	}

	res = runCLI(t, "", "check", authDefinition("bearer-auth.yaml"), "--testing-values", vals, "--set", "bearer_token=not-the-token", "--format", "json")
	line := `{"stream":"books","ok":false,"records":0,"error":"authentication failed: 401 Unauthorized from GET ` + demo.URL + `/v1/bearer/books?`
	if res.Code != 1 || !strings.HasPrefix(res.Stdout, line) || strings.Contains(res.Stdout, "not-the-token") {
		t.Errorf("exit %d, stdout:\n%s\nwant it to start with %s", res.Code, res.Stdout, line)
	}
}
