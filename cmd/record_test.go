package cmd

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"connector/pkg/demoapi"
	"connector/pkg/redact"
)

// recordedDemo is a read of a definition of definitions/ recorded against the demo API.
type recordedDemo struct {
	def     string // path of the definition
	har     string // path of the recording
	live    cliResult
	secrets []string // every credential of the testing values and every token the API issued
}

// recordDemo reads definitions/name against the demo API (on a fake clock, so that budgets
// and job polls do not wait) with --record, then stops the API. Extra arguments follow.
func recordDemo(t *testing.T, name string, args ...string) *recordedDemo {
	t.Helper()
	clock := &stepClock{now: resT0}
	d := newAuthDemo(t, demoapi.Options{Now: clock.Now})
	vals := authDemoValues(t, d.URL)
	def := filepath.Join("..", "definitions", name)
	if name == "declarative-oauth.yaml" {
		// Its tokens come from the consent flow, written into the testing values.
		run := startOAuth(t, testEnv(nil), def, "--testing-values", vals)
		if status, page := browse(t, run.consentURL(t)); status != http.StatusOK {
			t.Fatalf("callback answered %d %q", status, page)
		}
		if code, stderr := run.wait(t); code != 0 {
			t.Fatalf("oauth: exit %d\n%s", code, stderr)
		}
		d.collectValues(t, vals)
	}
	rec := &recordedDemo{def: def, har: filepath.Join(t.TempDir(), "rec.har")}
	rec.live = runCLIEnv(t, clock.env(), "", append([]string{"read", def, "--testing-values", vals, "--record", rec.har}, args...)...)
	if rec.live.Code != 0 {
		t.Fatalf("recording: exit %d\n%s", rec.live.Code, rec.live.Stderr)
	}
	if !regexp.MustCompile(`(?m)^recorded \d+ requests? in ` + regexp.QuoteMeta(rec.har) + `$`).MatchString(rec.live.Stderr) {
		t.Errorf("stderr does not say where the recording is:\n%s", rec.live.Stderr)
	}
	d.Close()
	rec.secrets = append(demoSecrets(), d.tokens()...)
	return rec
}

// collectValues adds the tokens the consent flow wrote into the values file at path.
func (d *authDemo) collectValues(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), ": "); ok && strings.HasSuffix(k, "_token") {
			d.mu.Lock()
			d.issued = append(d.issued, strings.Trim(v, `"`))
			d.mu.Unlock()
		}
	}
}

// demoSecrets are the credentials of testing-values.example.yaml.
func demoSecrets() []string {
	return []string{demoapi.DemoUsername, demoapi.DemoPassword, demoapi.DemoReaderUsername, demoapi.DemoBearerToken,
		demoapi.DemoAPIKey, demoapi.DemoClientID, demoapi.DemoClientSecret, demoapi.DemoRefreshToken,
		demoapi.DemoRotatingRefreshToken, "demo-expired-access-token"}
}

// placeholders finds the named placeholders of a recording.
var placeholders = regexp.MustCompile(`\*\*\*\*[A-Za-z0-9._+-]+\*\*\*\*`)

// recordingSecretForms are the spellings of a secret to look for in a recording, written
// here independently of the redactor: raw, JSON-escaped, URL-encoded, base64 in both
// alphabets (with and without padding), and the base64 of user:secret and secret:x pairs.
func recordingSecretForms(s string) []string {
	js, _ := json.Marshal(s)
	forms := []string{s, string(js[1 : len(js)-1]), url.QueryEscape(s), url.PathEscape(s)}
	for _, plain := range []string{s, demoapi.DemoUsername + ":" + s, s + ":", s + ":" + demoapi.DemoPassword} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
			forms = append(forms, enc.EncodeToString([]byte(plain)))
		}
	}
	return forms
}

// assertNoSecretInRecording greps the recording, its placeholders taken out, for every form
// of every secret, then asks a redactor that knows only those secrets (and so every form
// pkg/redact knows: escapes, entities, base64 stretches) whether any is left.
func assertNoSecretInRecording(t *testing.T, path string, secrets []string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := placeholders.ReplaceAllString(string(data), "")
	// The keys of the testing values are names from the definition's specification, not
	// secrets, even when one spells a secret by chance (reader_username: reader).
	var a struct {
		Log struct {
			Connector struct {
				Values map[string]any `json:"values"`
			} `json:"_connector"`
		} `json:"log"`
	}
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	text = dropKeys(text, a.Log.Connector.Values)
	var r redact.Redactor
	for _, s := range secrets {
		if len(s) < 3 {
			continue
		}
		r.Add(s)
		for _, f := range recordingSecretForms(s) {
			if strings.Contains(text, f) {
				i := strings.Index(text, f)
				t.Errorf("%s holds the secret %q as %q: …%s…", path, s, f, text[max(i-80, 0):min(i+len(f)+40, len(text))])
			}
		}
	}
	if r.Contains(text) {
		masked := r.String(text)
		i := strings.Index(masked, redact.Mask)
		t.Errorf("%s holds a secret in a form the redactor knows: …%s…", path, masked[max(i-80, 0):min(i+40, len(masked))])
	}
}

// dropKeys takes the keys of values, written as JSON keys, out of text.
func dropKeys(text string, values any) string {
	if m, ok := values.(map[string]any); ok {
		for k, v := range m {
			text = strings.ReplaceAll(text, `"`+k+`":`, `"":`)
			text = dropKeys(text, v)
		}
	}
	return text
}

// Every example of definitions/ read from the demo API with --record, then read again
// with --replay once the API is stopped: the same records, byte for byte, and a recording
// that holds no credential and no issued token in any form.
func TestRecordReplayEveryDefinition(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob(filepath.Join("..", "definitions", "*.yaml"))
	if err != nil || len(files) < 30 {
		t.Fatalf("definitions: %v %v", files, err)
	}
	for _, file := range files {
		name := filepath.Base(file)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := recordDemo(t, name)
			if rec.live.Stdout == "" {
				t.Fatal("the recorded read wrote no record")
			}
			replay := runCLI(t, "", "read", rec.def, "--replay", rec.har)
			if replay.Code != 0 || strings.Contains(replay.Stderr, "error") {
				t.Fatalf("replay: exit %d\n%s", replay.Code, replay.Stderr)
			}
			if replay.Stdout != rec.live.Stdout {
				t.Errorf("the replay wrote other records:\n%s\nrecorded read:\n%s", firstLines(replay.Stdout, 3), firstLines(rec.live.Stdout, 3))
			}
			assertNoSecretInRecording(t, rec.har, rec.secrets)
		})
	}
}

func firstLines(s string, n int) string {
	lines := strings.SplitAfterN(s, "\n", n+1)
	return strings.Join(lines[:min(n, len(lines))], "")
}
