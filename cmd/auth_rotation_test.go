package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"connector/pkg/demoapi"
)

// rotatingValues is a testing values file for oauth-rotating-refresh-token.yaml, with
// comments that must survive the rewrite.
const rotatingValues = `# rotating tokens, rewritten by connector
base_url: BASE
client_id: demo-client # the demo client
client_secret: demo-client-secret
credentials:
  # first token of the chain
  refresh_token: demo-rotating-refresh-token
  access_token: demo-expired-access-token
  token_expiry_date: "2020-01-01T00:00:00Z" # long gone
`

var rotatedLines = regexp.MustCompile(`(?m)^  refresh_token: (demo-rotated-\d+-\w+)\n  access_token: (demo-access-\d+)\n  token_expiry_date: "(\S+)" # long gone\n`)

// readRotated returns the refresh token, access token and expiry stored in the file.
func readRotated(t *testing.T, path string) (refresh, access string, expiry time.Time) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := rotatedLines.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("rewritten testing values:\n%s", data)
	}
	exp, err := time.Parse(time.RFC3339, m[3])
	if err != nil || exp.Location() != time.UTC {
		t.Fatalf("expiry %q is not RFC 3339 UTC", m[3])
	}
	for _, keep := range []string{"# rotating tokens, rewritten by connector\n", "client_id: demo-client # the demo client\n", "  # first token of the chain\n"} {
		if !strings.Contains(string(data), keep) {
			t.Errorf("the comment %q was lost:\n%s", keep, data)
		}
	}
	return m[1], m[2], exp
}

func TestOAuthRotationWritesBackAndSecondReadUsesRotatedToken(t *testing.T) {
	t.Parallel()
	clock := newAuthClock()
	demo := newAuthDemo(t, demoapi.Options{Now: clock.Now, AccessTokenTTL: time.Hour, Records: 150})
	vals := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(vals, []byte(strings.Replace(rotatingValues, "BASE", demo.URL, 1)), 0o640); err != nil {
		t.Fatal(err)
	}
	def := authDefinition("oauth-rotating-refresh-token.yaml")

	// First read: the stored token has expired, so one refresh, then two pages.
	res := runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if got := strings.Count(res.Stdout, "\n"); got != 150 {
		t.Errorf("%d records, want 150", got)
	}
	refresh1, access1, expiry1 := readRotated(t, vals)
	if !strings.HasPrefix(refresh1, "demo-rotated-1-") {
		t.Errorf("refresh token %s, want the first rotation", refresh1)
	}
	if d := time.Until(expiry1); d < 59*time.Minute || d > 61*time.Minute {
		t.Errorf("expiry %s is not an hour from now", expiry1)
	}
	if info, err := os.Stat(vals); err != nil || info.Mode().Perm() != 0o640 {
		t.Errorf("mode after rewrite %v (%v), want 0640", info.Mode().Perm(), err)
	}
	if st := demo.api.Stats(); st.RefreshTokenGrants != 1 || st.DataRequests != 2 {
		t.Errorf("stats after the first read %+v", st)
	}

	// Second read, same provider: the stored access token is still valid and is used as is.
	res = runCLI(t, "", "read", def, "--testing-values", vals)
	if res.Code != 0 {
		t.Fatalf("second read: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if st := demo.api.Stats(); st.RefreshTokenGrants != 1 || st.DataRequests != 4 {
		t.Errorf("stats after the second read %+v, want no new refresh", st)
	}
	for _, r := range demo.requests()[len(demo.requests())-2:] {
		if r.Header.Get("Authorization") != "Bearer "+access1 {
			t.Errorf("second read sent %q, want the stored token", r.Header.Get("Authorization"))
		}
	}

	// Third read after the provider's clock passed the expiry: the API refuses the stored
	// token, the connector refreshes with the ROTATED refresh token (the first one is spent
	// and would get invalid_grant) and retries.
	clock.Advance(2 * time.Hour)
	res = runCLI(t, "", "read", def, "--testing-values", vals, "--format", "airbyte")
	if res.Code != 0 {
		t.Fatalf("third read: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	refresh2, access2, _ := readRotated(t, vals)
	if !strings.HasPrefix(refresh2, "demo-rotated-2-") || access2 == access1 {
		t.Errorf("after the third read: refresh %s access %s", refresh2, access2)
	}
	st := demo.api.Stats()
	if st.RefreshTokenGrants != 2 || st.TokenErrors != 0 || st.Unauthorized != 1 {
		t.Errorf("stats after the third read %+v, want 2 refreshes, no token error, 1 unauthorized", st)
	}
	// --format airbyte announces the new config.
	var control struct {
		Type    string `json:"type"`
		Control struct {
			Type            string `json:"type"`
			ConnectorConfig struct {
				Config map[string]any `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
	found := false
	for _, line := range strings.Split(res.Stdout, "\n") {
		if strings.Contains(line, `"type":"CONTROL"`) {
			if err := json.Unmarshal([]byte(line), &control); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	creds, _ := control.Control.ConnectorConfig.Config["credentials"].(map[string]any)
	if !found || control.Control.Type != "CONNECTOR_CONFIG" || creds["refresh_token"] != refresh2 {
		t.Errorf("CONTROL message %+v (found %v)", control, found)
	}
}

func TestOAuthRotationToTestingValuesOut(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{Records: 10})
	content := strings.Replace(rotatingValues, "BASE", demo.URL, 1)
	def := authDefinition("oauth-rotating-refresh-token.yaml")

	// stdin without --testing-values-out: refused before any request.
	res := runCLI(t, content, "read", def, "--testing-values", "-")
	if res.Code != 2 || !strings.Contains(res.Stderr, "--testing-values-out") {
		t.Errorf("stdin without --testing-values-out: exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if n := len(demo.requests()); n != 0 {
		t.Errorf("%d requests before the refusal", n)
	}

	out := filepath.Join(t.TempDir(), "rotated.yaml")
	res = runCLI(t, content, "read", def, "--testing-values", "-", "--testing-values-out", out)
	if res.Code != 0 {
		t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
	}
	if refresh, _, _ := readRotated(t, out); !strings.HasPrefix(refresh, "demo-rotated-1-") {
		t.Errorf("refresh token written %s", refresh)
	}
}

func TestOAuthUpdaterNeedsInitialToken(t *testing.T) {
	t.Parallel()
	demo := newAuthDemo(t, demoapi.Options{})
	content := strings.Replace(rotatingValues, "BASE", demo.URL, 1)
	content = strings.Replace(content, "  access_token: demo-expired-access-token\n", "", 1)
	content = strings.Replace(content, `  token_expiry_date: "2020-01-01T00:00:00Z" # long gone`+"\n", "", 1)
	vals := writeFile(t, "values.yaml", content)
	for _, cmd := range []string{"read", "check"} {
		res := runCLI(t, "", cmd, authDefinition("oauth-rotating-refresh-token.yaml"), "--testing-values", vals)
		if res.Code != 3 || !strings.Contains(res.Stderr, "credentials.access_token") {
			t.Errorf("%s: exit %d, stderr:\n%s", cmd, res.Code, res.Stderr)
		}
	}
	if n := len(demo.requests()); n != 0 {
		t.Errorf("%d requests, want none", n)
	}
}
