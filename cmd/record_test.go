package cmd

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
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
	return recordDemoValues(t, name, nil, args...)
}

// recordDemoValues is recordDemo with the testing values edited by edit.
func recordDemoValues(t *testing.T, name string, edit func(string) string, args ...string) *recordedDemo {
	t.Helper()
	clock := &stepClock{now: resT0}
	d := newAuthDemo(t, demoapi.Options{Now: clock.Now})
	vals := authDemoValues(t, d.URL)
	if edit != nil {
		data, _ := os.ReadFile(vals)
		os.WriteFile(vals, []byte(edit(string(data))), 0o600)
	}
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
			var files []string
			if name == "file-uploader.yaml" {
				files = []string{"--files-dir", t.TempDir()} // its downloads are recorded too
			}
			rec := recordDemo(t, name, files...)
			if rec.live.Stdout == "" {
				t.Fatal("the recorded read wrote no record")
			}
			replay := runCLI(t, "", append([]string{"read", rec.def, "--replay", rec.har}, files...)...)
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

// mutate writes a copy of definitions/name with old replaced by new (once) and returns its
// path.
func mutate(t *testing.T, name, old, new string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "definitions", name))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), old) {
		t.Fatalf("%s has no %q", name, old)
	}
	return writeFile(t, name, strings.Replace(string(data), old, new, 1))
}

// A definition changed after its recording: the replay fails (exit 1) on the first
// request that differs, naming the request and what differs from the nearest recorded
// request, and makes no other request.
func TestReplayFailsWhereTheDefinitionChanged(t *testing.T) {
	t.Parallel()
	rec := recordDemo(t, "offset-pagination.yaml")
	tests := []struct {
		name, old, new, want string
	}{
		{"page size", "page_size: 100", "page_size: 50",
			"request 1: query limit=50, recorded limit=100 (no recorded request matches; the nearest is entry 1 of REC)"},
		{"path", "path: /v1/public/books", "path: /v1/public/novels",
			"request 1: path /v1/public/novels, recorded /v1/public/books (no recorded request matches; the nearest is entry 1 of REC)"},
		{"token name", "field_name: offset", "field_name: start",
			"request 1: query offset missing, recorded offset=0; query start=0 not recorded (no recorded request matches; the nearest is entry 1 of REC)"},
		{"a parameter added", "http_method: GET", "http_method: GET\n    request_parameters:\n      sort: \"{{ 'title' if next_page_token else '' }}\"",
			"request 2: query sort=title not recorded (no recorded request matches; the nearest is entry 2 of REC)"},
	}
	for _, tt := range tests {
		def := mutate(t, "offset-pagination.yaml", tt.old, tt.new)
		res := runCLI(t, "", "read", def, "--replay", rec.har)
		if res.Code != 1 {
			t.Errorf("%s: exit %d, want 1\n%s", tt.name, res.Code, res.Stderr)
		}
		want := strings.ReplaceAll(tt.want, "REC", rec.har)
		if !strings.Contains(res.Stderr, ": "+want+" (") {
			t.Errorf("%s: stderr\n%s\nwant it to say\n%s", tt.name, res.Stderr, want)
		}
	}
}

// Requests go out in another order with --concurrency: each finds its recorded answer
// wherever it is, and stdout stays byte for byte the same, whichever concurrency recorded
// and whichever replays.
func TestReplayWithAnotherConcurrency(t *testing.T) {
	t.Parallel()
	for _, recorded := range []string{"1", "4"} {
		rec := recordDemo(t, "substream-partition-router.yaml", "--concurrency", recorded)
		for _, replayed := range []string{"1", "4", "8"} {
			res := runCLI(t, "", "read", rec.def, "--replay", rec.har, "--concurrency", replayed)
			if res.Code != 0 || res.Stdout != rec.live.Stdout {
				t.Errorf("recorded with --concurrency %s, replayed with %s: exit %d, same records: %v\n%s",
					recorded, replayed, res.Code, res.Stdout == rec.live.Stdout, res.Stderr)
			}
		}
	}
}

// check and paginate-trace record and replay too: the same report, the same trace.
func TestCheckAndTraceRecordAndReplay(t *testing.T) {
	t.Parallel()
	for _, command := range []string{"check", "paginate-trace"} {
		for _, name := range []string{"oauth-refresh-token.yaml", "session-token.yaml"} {
			clock := &stepClock{now: resT0}
			d := newAuthDemo(t, demoapi.Options{Now: clock.Now})
			vals := authDemoValues(t, d.URL)
			def := filepath.Join("..", "definitions", name)
			har := filepath.Join(t.TempDir(), "rec.har")
			live := runCLIEnv(t, clock.env(), "", command, def, "--testing-values", vals, "--record", har)
			d.Close()
			if live.Code != 0 {
				t.Fatalf("%s %s: exit %d\n%s", command, name, live.Code, live.Stderr)
			}
			replay := runCLI(t, "", command, def, "--replay", har)
			// The answers that carried a token are recorded with placeholders: their
			// sizes differ, nothing else.
			if replay.Code != 0 || scrubSizes(replay.Stdout) != scrubSizes(live.Stdout) {
				t.Errorf("%s %s replayed: exit %d\n%s\nstdout:\n%s\nrecorded run:\n%s", command, name, replay.Code, replay.Stderr, replay.Stdout, live.Stdout)
			}
			assertNoSecretInRecording(t, har, append(demoSecrets(), d.tokens()...))
		}
	}
}

// scrubSizes replaces the sizes of the answers in a trace, and their Content-Length.
func scrubSizes(trace string) string {
	trace = regexp.MustCompile(`(?m)^(\s+Content-Length: )\d+$`).ReplaceAllString(trace, "${1}N")
	return regexp.MustCompile(`, \d+ bytes`).ReplaceAllString(trace, ", N bytes")
}

// A read whose end date is now_utc(): the replay's clock is the recording's, so it asks
// for the same slices, and the retries of the recording (a 503, a connection cut) are
// replayed without waiting.
func TestReplayTakesTheRecordingsClockAndRetries(t *testing.T) {
	t.Parallel()
	rec := recordDemoValues(t, "incremental-datetime.yaml", func(vals string) string {
		return regexp.MustCompile(`(?m)^end_date: .*$`).ReplaceAllString(vals, "")
	})
	if !strings.Contains(rec.live.Stdout, "\n") {
		t.Fatal("no records")
	}
	data, _ := os.ReadFile(rec.har)
	if !strings.Contains(string(data), `{"name": "until", "value": "2026-03-01T12:00:00Z"}`) {
		t.Errorf("no recorded request ends at the recording's now, 2026-03-01T12:00:00Z")
	}
	res := runCLI(t, "", "read", rec.def, "--replay", rec.har)
	if res.Code != 0 || res.Stdout != rec.live.Stdout {
		t.Errorf("replay: exit %d\n%s", res.Code, res.Stderr)
	}

	calls := 0
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		calls++
		switch calls {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			conn, _, _ := w.(http.Hijacker).Hijack()
			conn.Close()
		default:
			e2eAnswer(`{"data":[{"id":1},{"id":2}]}`)(w, r)
		}
	})
	def := writeFile(t, "def.yaml", e2eOneStream("url_base: \"{{ config['base_url'] }}\"\npath: /items", e2eDataPath))
	vals := writeFile(t, "values.yaml", "base_url: "+api.URL+"\n")
	har := filepath.Join(t.TempDir(), "retries.har")
	clock := &stepClock{now: resT0}
	live := runCLIEnv(t, clock.env(), "", "read", def, "--testing-values", vals, "--record", har)
	api.Close()
	if live.Code != 0 || calls != 3 {
		t.Fatalf("recording: exit %d after %d calls\n%s", live.Code, calls, live.Stderr)
	}
	replay := runCLI(t, "", "read", def, "--replay", har)
	if replay.Code != 0 || replay.Stdout != live.Stdout || strings.Contains(replay.Stderr, "note:") {
		t.Errorf("replay: exit %d\n%s\nstdout %q", replay.Code, replay.Stderr, replay.Stdout)
	}
}

func TestRecordReplayErrors(t *testing.T) {
	t.Parallel()
	def := filepath.Join("..", "definitions", "offset-pagination.yaml")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.har")
	os.WriteFile(bad, []byte(`{"log": {"version": "1.2", "entries": [`), 0o600)
	other := filepath.Join(dir, "browser.har")
	os.WriteFile(other, []byte(`{"log": {"version": "1.2", "creator": {"name": "Firefox", "version": "120"}, "entries": []}}`), 0o600)
	missing := filepath.Join(dir, "missing.har")
	tests := []struct {
		args   []string
		code   int
		stderr string
	}{
		{[]string{"read", def, "--replay", missing}, 2, "error: cannot read the recording " + missing + ": no such file or directory\n"},
		{[]string{"read", def, "--replay", dir}, 2, "error: cannot read the recording " + dir + ": is a directory\n"},
		{[]string{"check", def, "--replay", bad}, 3, "error: " + bad + " is not a recording of connector: the file is empty or cut short\n"},
		{[]string{"paginate-trace", def, "--replay", other}, 3, "error: " + other + ` is not a recording of connector: no "_connector" field in the log: the file was not recorded with connector --record` + "\n"},
		{[]string{"read", def, "--replay", other, "--record", missing}, 2, "error: --record and --replay cannot be used together: a replay sends no request to record\n"},
		{[]string{"read", def, "--set", "base_url=http://127.0.0.1:1", "--record", filepath.Join(dir, "no", "such", "x.har")}, 2,
			"error: cannot write the recording " + filepath.Join(dir, "no", "such", "x.har") + ": no such file or directory\n"},
		{[]string{"test", def}, 2, "error: no definition has a recording to replay: record one with connector read " + def + " --testing-values FILE --record " +
			filepath.Join("..", "definitions", "testdata", "offset-pagination.har") + ", or pass --replay FILE\n"},
		{[]string{"test", def, "--replay", bad}, 3, "error: " + bad + " is not a recording of connector: the file is empty or cut short\n"},
		{[]string{"test", def, "--replay", missing}, 2, "error: cannot read the recording " + missing + ": no such file or directory\n"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", tt.args...)
		if res.Code != tt.code || res.Stderr != tt.stderr {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit %d:\n%s", tt.args, res.Code, res.Stderr, tt.code, tt.stderr)
		}
	}
}

// Every recording kept in definitions/testdata passes connector test against its definition
// and its expected records: CI runs the examples offline.
func TestRecordedExamplesPass(t *testing.T) {
	t.Parallel()
	hars, err := filepath.Glob(filepath.Join("..", "definitions", "testdata", "*.har"))
	if err != nil || len(hars) == 0 {
		t.Fatalf("no recording in definitions/testdata: %v", err)
	}
	for _, har := range hars {
		name := strings.TrimSuffix(filepath.Base(har), ".har")
		def := filepath.Join("..", "definitions", name+".yaml")
		res := runCLI(t, "", "test", def, "--replay", har)
		want := regexp.MustCompile(`^PASS  ` + regexp.QuoteMeta(def) + `: \d+ records as expected in ` +
			regexp.QuoteMeta(expectPath(har)) + ` \(\d+ requests replayed from ` + regexp.QuoteMeta(har) + `\)\n$`)
		if res.Code != 0 || !want.MatchString(res.Stdout) || res.Stderr != "" {
			t.Errorf("connector test %s: exit %d\nstdout %s\nstderr %s", name, res.Code, res.Stdout, res.Stderr)
		}
	}
}

func TestConnectorTest(t *testing.T) {
	t.Parallel()
	rec := recordDemo(t, "offset-pagination.yaml")
	expect := filepath.Join(t.TempDir(), "books.jsonl")
	def := rec.def

	// --update writes the records of the replay.
	res := runCLI(t, "", "test", def, "--replay", rec.har, "--expect", expect, "--update")
	if res.Code != 0 || res.Stdout != "UPDATED  "+def+": 250 records written to "+expect+" (3 requests replayed from "+rec.har+")\n" {
		t.Fatalf("--update: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if data, _ := os.ReadFile(expect); string(data) != rec.live.Stdout {
		t.Fatal("the expected file is not the records of the recorded read")
	}
	pass := "PASS  " + def + ": 250 records as expected in " + expect + " (3 requests replayed from " + rec.har + ")\n"
	if res := runCLI(t, "", "test", def, "--replay", rec.har, "--expect", expect); res.Code != 0 || res.Stdout != pass {
		t.Fatalf("test: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	// The default expected file sits beside the recording.
	if err := os.WriteFile(expectPath(rec.har), []byte(rec.live.Stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	if res := runCLI(t, "", "test", def, "--replay", rec.har); res.Code != 0 {
		t.Fatalf("test with the default --expect: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}

	lines := strings.SplitAfter(rec.live.Stdout, "\n")
	edited := func(edit func([]string) []string) string {
		return writeFile(t, "expected.jsonl", strings.Join(edit(slices.Clone(lines)), ""))
	}
	var record12 map[string]any
	json.Unmarshal([]byte(lines[11]), &record12)
	title, _ := json.Marshal(record12["title"])
	tests := []struct {
		name   string
		expect string
		def    string
		want   string
	}{
		{"a value", edited(func(l []string) []string {
			l[11] = strings.Replace(l[11], `"title":`+string(title), `"title":"Another title"`, 1)
			return l
		}), def, `record 12 $.title: got ` + string(title) + `, expected "Another title"`},
		{"a record more", edited(func(l []string) []string { return append(l[:250], `{"id":0}`+"\n") }), def,
			`record 251: got none (the read ended after 250 records), expected {"id":0}`},
		{"a record less", edited(func(l []string) []string { return l[:249] }), def,
			"record 250: got " + excerpt([]byte(strings.TrimSuffix(lines[249], "\n"))) + ", expected no more records (the expected file has 249)"},
		{"a request the recording lacks", expect, mutate(t, "offset-pagination.yaml", "page_size: 100", "page_size: 50"),
			"request 1: query limit=50, recorded limit=100 (no recorded request matches; the nearest is entry 1 of " + rec.har + ")"},
	}
	for _, tt := range tests {
		res := runCLI(t, "", "test", tt.def, "--replay", rec.har, "--expect", tt.expect)
		prefix := "FAIL  " + tt.def + ": " + tt.want
		if res.Code != 1 || !strings.HasPrefix(res.Stdout, prefix) {
			t.Errorf("%s: exit %d, stdout\n%s\nwant it to start with\n%s", tt.name, res.Code, res.Stdout, prefix)
		}
	}

	// A definition that lost a stream no longer makes the requests recorded for it.
	two := recordDemo(t, "page-pagination.yaml")
	books := strings.SplitAfter(two.live.Stdout, "\n")[:250]
	if err := os.WriteFile(expectPath(two.har), []byte(strings.Join(books, "")), 0o600); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(mutate(t, "page-pagination.yaml", "  - $ref: \"#/definitions/streams/authors\"\n", ""))
	oneStream := writeFile(t, "page-pagination.yaml", strings.Replace(string(data), "    - authors\n", "", 1))
	res = runCLI(t, "", "test", oneStream, "--replay", two.har)
	if want := "FAIL  " + oneStream + ": the read no longer makes 3 recorded requests of " + two.har + ", the first: entry 4, GET "; res.Code != 1 || !strings.HasPrefix(res.Stdout, want) {
		t.Errorf("a stream less: exit %d, stdout\n%s\nwant it to start with\n%s", res.Code, res.Stdout, want)
	}

	// A recording of check is not a read; a missing expected file says how to make it.
	checkHar := filepath.Join(t.TempDir(), "check.har")
	runCLI(t, "", "check", def, "--replay", rec.har, "--record", checkHar) // refused: nothing recorded
	if c := runCLIEnv(t, (&stepClock{now: resT0}).env(), "", "check", def, "--set", "base_url=http://127.0.0.1:1", "--record", checkHar); c.Code != 1 {
		t.Fatalf("check against nothing: exit %d\n%s", c.Code, c.Stderr)
	}
	res = runCLI(t, "", "test", def, "--replay", checkHar)
	if res.Code != 2 || res.Stderr != "error: "+checkHar+" is a recording of check; connector test replays a read: record one with connector read "+def+" --testing-values FILE --record "+checkHar+"\n" {
		t.Errorf("a check recording: exit %d\n%s", res.Code, res.Stderr)
	}
	missing := filepath.Join(t.TempDir(), "none.jsonl")
	res = runCLI(t, "", "test", def, "--replay", rec.har, "--expect", missing)
	if res.Code != 2 || res.Stderr != "error: cannot read the expected records: "+missing+": no such file or directory (connector test "+def+" --replay "+rec.har+" --update writes them)\n" {
		t.Errorf("a missing expected file: exit %d\n%s", res.Code, res.Stderr)
	}
}

// A read recorded with --state begins, replayed without --state, from the state the
// recording began with: the same requests, the same records, and connector test passes.
func TestReplayBeginsWithTheRecordedState(t *testing.T) {
	t.Parallel()
	clock := &stepClock{now: resT0}
	d := newAuthDemo(t, demoapi.Options{Now: clock.Now})
	vals := authDemoValues(t, d.URL)
	def := filepath.Join("..", "definitions", "incremental-datetime.yaml")
	state := filepath.Join(t.TempDir(), "state.json")
	if err := os.WriteFile(state, []byte(`[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-05-20T00:00:00Z"}}}]`), 0o600); err != nil {
		t.Fatal(err)
	}
	har := filepath.Join(t.TempDir(), "events.har")
	live := runCLIEnv(t, clock.env(), "", "read", def, "--testing-values", vals, "--state", state, "--record", har)
	d.Close()
	if live.Code != 0 || live.Stdout == "" {
		t.Fatalf("recording: exit %d\n%s", live.Code, live.Stderr)
	}
	replay := runCLI(t, "", "read", def, "--replay", har)
	if replay.Code != 0 || replay.Stdout != live.Stdout {
		t.Errorf("replay: exit %d, same records: %v\n%s", replay.Code, replay.Stdout == live.Stdout, replay.Stderr)
	}
	if res := runCLI(t, "", "test", def, "--replay", har, "--update"); res.Code != 0 {
		t.Fatalf("test --update: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
	if res := runCLI(t, "", "test", def, "--replay", har); res.Code != 0 || !strings.HasPrefix(res.Stdout, "PASS") {
		t.Errorf("test: exit %d\n%s%s", res.Code, res.Stdout, res.Stderr)
	}
}
