package cmd

import (
	"strings"
	"testing"

	"connector/internal/testcorpus"
)

// ticktick.yaml's streams use components read does not run yet, but the OAuth flow needs only
// its spec: `connector oauth` must get as far as printing the consent URL (and then time out,
// as no browser answers).
func TestOAuthOnARealDefinitionWithUnsupportedStreams(t *testing.T) {
	t.Parallel()
	def := testcorpus.File(t, "ticktick.yaml")
	creds := writeFile(t, "creds.yaml", "authorization:\n  auth_type: Oauth\n  client_id: cid-123\n  client_secret: sec-456\n")
	res := runCLI(t, "", "oauth", def, "--testing-values", creds, "--timeout", "50ms")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1 (callback timeout); stderr:\n%s", res.Code, res.Stderr)
	}
	if !strings.Contains(res.Stderr, "https://ticktick.com/oauth/authorize?") ||
		!strings.Contains(res.Stderr, "client_id=cid-123") ||
		!strings.Contains(res.Stderr, "no authorization callback") {
		t.Errorf("stderr:\n%s", res.Stderr)
	}
	if strings.Contains(res.Stderr, "sec-456") {
		t.Errorf("the client secret leaked:\n%s", res.Stderr)
	}
}
