package cmd

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/internal/protocoltest"
)

// Incremental reads as a user runs them, beyond what the CDK's recorded runs show
// (incremental_cdk_test.go): concurrency, a killed read resumed, broken state files, the
// states of other streams, the form of the file written, request options, a failed slice.

// incDay is the day the events of these tests start.
var incDay = time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)

// incDef is a definition with a stream events sliced by day (PT1S granularity), since and
// until in the query, between the testing values start and end; and a stream notes with no
// cursor.
const incDef = `version: 6.44.0
type: DeclarativeSource
definitions:
  req: {type: HttpRequester, url_base: "{{ config['base_url'] }}", http_method: GET}
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /events}
      record_selector: {$ref: "#/definitions/sel"}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "{{ config['start'] }}"
      end_datetime: "{{ config['end'] }}"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
  - type: DeclarativeStream
    name: notes
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /notes}
      record_selector: {$ref: "#/definitions/sel"}
`

// incEvents is the events API of incDef: two events a day (08:00 and 20:00) for days days
// from incDay, those within [since, until]; delay(since) is how long an answer waits (nil:
// none); fail(since) answers 500 instead.
type incEvents struct {
	days  int
	delay func(since time.Time) time.Duration
	fail  func(since time.Time) bool
}

func (e incEvents) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if r.URL.Path == "/notes" {
		w.Write([]byte(`{"data":[{"note":1}]}`))
		return
	}
	since, err1 := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
	until, err2 := time.Parse(time.RFC3339, r.URL.Query().Get("until"))
	if err1 != nil || err2 != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if e.delay != nil {
		select {
		case <-time.After(e.delay(since)):
		case <-r.Context().Done():
			return
		}
	}
	if e.fail != nil && e.fail(since) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(`{"error":"boom"}`))
		return
	}
	var recs []string
	for d := range e.days {
		for _, h := range []int{8, 20} {
			at := incDay.AddDate(0, 0, d).Add(time.Duration(h) * time.Hour)
			if !at.Before(since) && !at.After(until) {
				recs = append(recs, fmt.Sprintf(`{"id":%d,"updated_at":"%s"}`, d*100+h, at.Format(time.RFC3339)))
			}
		}
	}
	fmt.Fprintf(w, `{"data":[%s]}`, strings.Join(recs, ","))
}

// incValues are testing values for incDef from incDay to days later.
func incValues(t *testing.T, api *recorder, days int) string {
	return writeFile(t, "values.yaml", fmt.Sprintf("base_url: %s\nstart: \"2024-03-01T00:00:00Z\"\nend: %q\n",
		api.URL, incDay.AddDate(0, 0, days).Format(time.RFC3339)))
}

// incEnv is a test environment whose clock stands still.
func incEnv() Env {
	env := testEnv(nil)
	env.Now = func() time.Time { return resT0 }
	return env
}

// TestIncrementalConcurrencyKeepsOutputAndState: 60 daily slices read 8 at a time from an
// API that answers the earlier windows last give the same stdout (records and STATE
// messages, in order) and the same state file as a read one slice at a time.
func TestIncrementalConcurrencyKeepsOutputAndState(t *testing.T) {
	t.Parallel()
	const days = 60
	api := newRecorder(t, incEvents{days: days, delay: func(since time.Time) time.Duration {
		day := int(since.Sub(incDay).Hours() / 24)
		return time.Duration(8-day%8) * 3 * time.Millisecond
	}}.serve)
	def := writeFile(t, "def.yaml", incDef)
	vals := incValues(t, api, days)
	read := func(concurrency string) (cliResult, string) {
		state := filepath.Join(t.TempDir(), "state.json")
		res := runCLIEnv(t, incEnv(), "", "read", def, "--testing-values", vals, "--stream", "events",
			"--format", "airbyte", "--state", state, "--concurrency", concurrency)
		return res, readText(t, state)
	}
	one, oneState := read("1")
	eight, eightState := read("8")
	if one.Code != 0 || eight.Code != 0 {
		t.Fatalf("exit %d and %d\n%s\n%s", one.Code, eight.Code, one.Stderr, eight.Stderr)
	}
	if got := strings.Count(one.Stdout, `"type":"RECORD"`); got != 2*days {
		t.Fatalf("%d records, want %d", got, 2*days)
	}
	if got := strings.Count(one.Stdout, `"type":"STATE"`); got != days+1 {
		t.Errorf("%d STATE messages, want one per slice and one at the end: %d", got, days+1)
	}
	if eight.Stdout != one.Stdout {
		t.Errorf("stdout at --concurrency 8 differs from --concurrency 1:\n%s\nwant:\n%s", eight.Stdout, one.Stdout)
	}
	want := `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-04-29T20:00:00Z"}}}
]
`
	if oneState != want || eightState != want {
		t.Errorf("state files:\n%s\n%s\nwant:\n%s", oneState, eightState, want)
	}
}

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// TestMain removes the program connectorBinary built, once every test is done.
func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// connectorBinary builds the program once for the tests that run it as a process.
func connectorBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		var err error
		if binDir, err = os.MkdirTemp("", "connector-bin"); err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(binDir, "connector")
		build := exec.Command("go", "build", "-o", binPath, ".")
		build.Dir = ".." // the module root
		if out, err := build.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// stateValue is the cursor value of stream in a state file ("" when it has none yet).
func stateValue(t *testing.T, path, stream, field string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var list []struct {
		Stream struct {
			Descriptor struct{ Name string } `json:"stream_descriptor"`
			State      map[string]any        `json:"stream_state"`
		} `json:"stream"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		t.Fatalf("the state file is not a complete list of states (not written atomically?): %v\n%s", err, data)
	}
	for _, s := range list {
		if s.Stream.Descriptor.Name == stream {
			v, _ := s.Stream.State[field].(string)
			return v
		}
	}
	return ""
}

// incRecords are the records of a records-format stdout, by their updated_at; a last line
// cut short by a kill is left out.
func incRecords(t *testing.T, stdout string) map[string]int {
	t.Helper()
	out := map[string]int{}
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var r struct {
			UpdatedAt string `json:"updated_at"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			if !strings.HasSuffix(stdout, "\n") && strings.HasSuffix(stdout, sc.Text()) {
				continue
			}
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		out[r.UpdatedAt]++
	}
	return out
}

// TestIncrementalKilledReadResumes: a read killed with SIGKILL half way leaves a state file
// from which a second read goes on: together they write every record of a whole read, the
// only records written twice are those at or after the state the second read starts from,
// and the state at the end is that of a whole read.
func TestIncrementalKilledReadResumes(t *testing.T) {
	t.Parallel()
	bin := connectorBinary(t)
	const days = 30
	api := newRecorder(t, incEvents{days: days, delay: func(time.Time) time.Duration { return 15 * time.Millisecond }}.serve)
	def := writeFile(t, "def.yaml", incDef)
	vals := incValues(t, api, days)
	dir := t.TempDir()
	state := filepath.Join(dir, "state.json")
	args := []string{"read", def, "--testing-values", vals, "--stream", "events", "--state", state}

	// The first read, killed once the state has passed the fifth day.
	outFile := filepath.Join(dir, "out1.jsonl")
	out, err := os.Create(outFile)
	if err != nil {
		t.Fatal(err)
	}
	first := exec.Command(bin, args...)
	first.Stdout, first.Env = out, []string{"NO_COLOR=1"}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- first.Wait() }()
	deadline := time.After(20 * time.Second)
	var killedAt string
poll:
	for {
		select {
		case err := <-done:
			t.Fatalf("the first read ended (%v) before it was killed", err)
		case <-deadline:
			first.Process.Kill()
			t.Fatal("the state file never passed 2024-03-05")
		case <-time.After(2 * time.Millisecond):
			if v := stateValue(t, state, "events", "updated_at"); v > "2024-03-05" {
				if err := first.Process.Kill(); err != nil {
					t.Fatal(err)
				}
				<-done
				break poll
			}
		}
	}
	out.Close()
	killedAt = stateValue(t, state, "events", "updated_at")
	if killedAt >= "2024-03-30" {
		t.Fatalf("the first read was killed too late to test anything (state %s)", killedAt)
	}
	t.Logf("killed with the state at %s", killedAt)
	firstRecs := incRecords(t, readText(t, outFile))

	// The second read, from the state the first left.
	second := exec.Command(bin, args...)
	var out2, err2 bytes.Buffer
	second.Stdout, second.Stderr, second.Env = &out2, &err2, []string{"NO_COLOR=1"}
	if err := second.Run(); err != nil {
		t.Fatalf("the resumed read: %v\n%s", err, err2.String())
	}
	secondRecs := incRecords(t, out2.String())

	// A whole read, in-process.
	whole := filepath.Join(t.TempDir(), "state.json")
	res := runCLIEnv(t, incEnv(), "", append(args[:len(args)-1], whole)...)
	if res.Code != 0 {
		t.Fatalf("whole read: exit %d\n%s", res.Code, res.Stderr)
	}
	all := incRecords(t, res.Stdout)
	if len(all) != 2*days {
		t.Fatalf("the whole read wrote %d records, want %d", len(all), 2*days)
	}
	for at := range all {
		if firstRecs[at]+secondRecs[at] == 0 {
			t.Errorf("record %s was written by neither read", at)
		}
		if firstRecs[at] > 1 || secondRecs[at] > 1 {
			t.Errorf("record %s written twice by one read", at)
		}
		if firstRecs[at] == 1 && secondRecs[at] == 1 && at < killedAt {
			t.Errorf("record %s, before the state %s the second read started from, was written again", at, killedAt)
		}
	}
	if got, want := readText(t, state), readText(t, whole); got != want {
		t.Errorf("state after the resumed read:\n%s\nwant that of a whole read:\n%s", got, want)
	}
}

// TestIncrementalBadStateRefused: a state file that cannot be read, or whose state does not
// fit the definition, stops the read before any request with exit 3, naming the file (and
// the key).
func TestIncrementalBadStateRefused(t *testing.T) {
	t.Parallel()
	perPartition := filepath.Join("testdata", "incremental-cdk", "substream-per-partition")
	tests := []struct {
		name, state, stderr string
		example             string // a definition of testdata/incremental-cdk instead of incDef
	}{
		{"cursor value in another format", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-04"}}}]`,
			`error: {file}: the state of stream events does not fit its incremental_sync: key "updated_at": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 2024-03-04 (fix the state, or start over without it)`, ""},
		{"cursor value a number", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":20240304}}}]`,
			`error: {file}: the state of stream events does not fit its incremental_sync: key "updated_at": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 20240304 (fix the state, or start over without it)`, ""},
		{"not JSON", `[{"type":"STREAM",`,
			`error: state file {file}: line 1: invalid JSON at byte 18: expected a key`, ""},
		{"a number", `42`,
			`error: state file {file}: a state file is a list of STATE messages (or a mapping of stream names to states), not a number`, ""},
		{"stream_state a list", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":[]}}]`,
			"error: state file {file}: [0].stream: `stream_state` must be an object, not a list", ""},
		{"no stream name", `[{"type":"STREAM","stream":{"stream_descriptor":{},"stream_state":{}}}]`,
			"error: state file {file}: [0].stream.stream_descriptor: missing the stream `name`", ""},
		{"a date-range slice without end", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"state_type":"date-range","slices":[{"start":"2024-03-01T00:00:00Z"}]}}}]`,
			`error: {file}: the state of stream events does not fit its incremental_sync: key "slices[0].end": missing (fix the state, or start over without it)`, ""},
		{"per-partition states not a list", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"comments"},"stream_state":{"use_global_cursor":false,"states":{"a":1},"lookback_window":1}}}]`,
			`error: {file}: the state of stream comments does not fit its incremental_sync: key "states": a list of partition states (fix the state, or start over without it)`, perPartition},
		{"a partition's cursor value", `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"comments"},"stream_state":{"states":[{"partition":{"project_id":1,"parent_slice":{}},"cursor":{"updated_at":"yesterday"}}]}}}]`,
			`error: {file}: the state of stream comments does not fit its incremental_sync: key "states[0].cursor.updated_at": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching yesterday (fix the state, or start over without it)`, perPartition},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, incEvents{days: 3}.serve)
			state := writeFile(t, "state.json", tt.state)
			def, vals := writeFile(t, "def.yaml", incDef), incValues(t, api, 3)
			if tt.example != "" {
				def = filepath.Join(tt.example, "manifest.yaml")
				vals = writeFile(t, "config.json", regexp.MustCompile(`http://127\.0\.0\.1:\d+`).ReplaceAllString(
					readText(t, filepath.Join(tt.example, "run1", "config.json")), api.URL))
			}
			res := runCLIEnv(t, incEnv(), "", "read", def, "--testing-values", vals, "--state", state)
			want := strings.ReplaceAll(tt.stderr, "{file}", state) + "\n"
			if res.Code != exitInvalid || res.Stderr != want || res.Stdout != "" {
				t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3, stderr:\n%s", res.Code, res.Stdout, res.Stderr, want)
			}
			if n := len(api.requests()); n != 0 {
				t.Errorf("%d requests, want none", n)
			}
			if got := readText(t, state); got != tt.state {
				t.Errorf("the state file was rewritten:\n%s", got)
			}
		})
	}
}

// TestIncrementalOtherStreamsKept: the states of streams a read does not touch are written
// back as they were (order, spelling), and the older {stream: state} mapping is read and
// written back as the list of STATE messages.
func TestIncrementalOtherStreamsKept(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, in, want string }{
		{"list", `[
  {"type": "STREAM", "stream": {"stream_descriptor": {"name": "gone"}, "stream_state": {"b": 1.50, "a": [1, {"z": null}]}}},
  {"type": "STREAM", "stream": {"stream_descriptor": {"name": "events"}, "stream_state": {"updated_at": "2024-03-02T08:00:00Z"}}},
  {"type": "STREAM", "stream": {"stream_descriptor": {"name": "orders", "namespace": "shop"}, "stream_state": {"id": 7}}}
]`, `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"gone"},"stream_state":{"b":1.50,"a":[1,{"z":null}]}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-03T20:00:00Z"}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders","namespace":"shop"},"stream_state":{"id":7}}}
]
`},
		{"legacy mapping", `{"gone": {"b": 1.50}, "events": {"updated_at": "2024-03-02T08:00:00Z"}}`, `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"gone"},"stream_state":{"b":1.50}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-03T20:00:00Z"}}}
]
`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, incEvents{days: 4}.serve)
			state := writeFile(t, "state.json", tt.in)
			res := runCLIEnv(t, incEnv(), "", "read", writeFile(t, "def.yaml", incDef), "--testing-values", incValues(t, api, 3),
				"--stream", "events", "--state", state)
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
			}
			// The read starts at the state's value, inclusive.
			wantOut := `{"id":108,"updated_at":"2024-03-02T08:00:00Z"}
{"id":120,"updated_at":"2024-03-02T20:00:00Z"}
{"id":208,"updated_at":"2024-03-03T08:00:00Z"}
{"id":220,"updated_at":"2024-03-03T20:00:00Z"}
`
			if res.Stdout != wantOut {
				t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, wantOut)
			}
			if got := readText(t, state); got != tt.want {
				t.Errorf("state file:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

// TestIncrementalWithoutStateFile: without --state nothing is written, and the next read
// starts from the start again.
func TestIncrementalWithoutStateFile(t *testing.T) {
	t.Parallel()
	bin := connectorBinary(t)
	api := newRecorder(t, incEvents{days: 2}.serve)
	dir := t.TempDir()
	def, vals := filepath.Join(dir, "def.yaml"), filepath.Join(dir, "values.yaml")
	writeAt(t, def, incDef)
	writeAt(t, vals, fmt.Sprintf("base_url: %s\nstart: \"2024-03-01T00:00:00Z\"\nend: \"2024-03-03T00:00:00Z\"\n", api.URL))
	var outs []string
	for range 2 {
		c := exec.Command(bin, "read", def, "--testing-values", vals, "--stream", "events", "--format", "airbyte")
		c.Dir, c.Env = dir, []string{"NO_COLOR=1"}
		out, err := c.Output()
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		protocoltest.Check(t, string(out)) // a process of its own: runCLIEnv does not see it
		outs = append(outs, emittedAt.ReplaceAllString(string(out), ""))
	}
	if outs[0] != outs[1] || strings.Count(outs[0], `"type":"RECORD"`) != 4 || strings.Count(outs[0], `"type":"STATE"`) != 3 {
		t.Errorf("the two reads differ or are not whole:\n%s\n%s", outs[0], outs[1])
	}
	var got []string
	for _, r := range api.requests() {
		got = append(got, r.URL)
	}
	day1 := "/events?since=2024-03-01T00%3A00%3A00Z&until=2024-03-01T23%3A59%3A59Z"
	day2 := "/events?since=2024-03-02T00%3A00%3A00Z&until=2024-03-03T00%3A00%3A00Z"
	if want := []string{day1, day2, day1, day2}; !slices.Equal(got, want) {
		t.Errorf("requests %q, want %q", got, want)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"def.yaml", "values.yaml"}; !slices.Equal(names, want) {
		t.Errorf("the folder holds %q after the reads, want only %q", names, want)
	}
}

// TestIncrementalStateRoundTrip: a state file as the CDK writes it is read, advanced and
// written back in the same form: the same keys in the same order, the same JSON types.
func TestIncrementalStateRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		example, run, stream string
		same                 bool // the run finds nothing new
	}{
		{"daily-step", "run2", "events", false},
		{"substream-per-partition", "run2", "comments", false},
		{"incremental-dependency", "run2", "comments", false},
		{"epoch-seconds", "run2", "events", false},
		{"incrementing-count", "run2", "messages", true},
	} {
		t.Run(tt.example, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "incremental-cdk", tt.example)
			api := newRecorder(t, newFeedAPI(t, filepath.Join(dir, "data.json")).serve)
			res, stateFile, _ := cdkRead(t, api, filepath.Join(dir, "manifest.yaml"), filepath.Join(dir, tt.run), []string{tt.stream})
			if res.Code != 0 {
				t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
			}
			compact := func(text string) string {
				var b bytes.Buffer
				if err := json.Compact(&b, []byte(text)); err != nil {
					t.Fatal(err)
				}
				return b.String()
			}
			in := compact(readText(t, filepath.Join(dir, tt.run, "state-in.json")))
			got := compact(readText(t, stateFile))
			want := compact(readText(t, filepath.Join(dir, tt.run, "state-out.json")))
			if got != want {
				t.Errorf("state written:\n%s\nwant the CDK's, byte for byte once compacted:\n%s", got, want)
			}
			if (got == in) != tt.same {
				t.Errorf("state in %s, out %s: want them equal %v", in, got, tt.same)
			}
		})
	}
}

// incOptionsDef has two streams over the same API: plain (the default slice keys
// start_time/end_time in a request parameter through stream_slice and stream_interval) and
// custom (partition_field_start/end named from/to; the start in a header, the end in the JSON
// body at filter.range.until, next to the requester's own filter).
const incOptionsDef = `version: 6.44.0
type: DeclarativeSource
definitions:
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  cursor:
    type: DatetimeBasedCursor
    cursor_field: updated_at
    datetime_format: "%Y-%m-%dT%H:%M:%SZ"
    start_datetime: "2024-03-01T00:00:00Z"
    end_datetime: "2024-03-02T12:00:00Z"
    step: P1D
    cursor_granularity: PT1S
streams:
  - type: DeclarativeStream
    name: plain
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /plain
        request_parameters:
          window: "{{ stream_slice.start_time }}/{{ stream_interval['end_time'] }}"
          day: "{{ stream_interval.start_time[:10] }}"
      record_selector: {$ref: "#/definitions/sel"}
    incremental_sync: {$ref: "#/definitions/cursor"}
  - type: DeclarativeStream
    name: custom
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /custom
        http_method: POST
        request_parameters:
          window: "{{ stream_interval.from }}/{{ stream_slice.to }}"
        request_body_json:
          filter: {kind: x}
      record_selector: {$ref: "#/definitions/sel"}
    incremental_sync:
      $ref: "#/definitions/cursor"
      partition_field_start: from
      partition_field_end: "{{ 'to' }}"
      start_time_option: {type: RequestOption, inject_into: header, field_name: X-Since}
      end_time_option: {type: RequestOption, inject_into: body_json, field_path: [filter, range, "{{ 'until' }}"]}
`

// TestIncrementalRequestOptions: the slice's bounds reach the request where the definition
// says: templates (under the default or custom key names), a header, a nested JSON body key.
func TestIncrementalRequestOptions(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, e2eAnswer(`{"data":[{"updated_at":"2024-03-01T10:00:00Z"}]}`))
	res := runCLIEnv(t, incEnv(), "", "read", writeFile(t, "def.yaml", incOptionsDef),
		"--testing-values", writeFile(t, "values.yaml", "base_url: "+api.URL+"\n"))
	if res.Code != 0 {
		t.Fatalf("exit %d\n%s", res.Code, res.Stderr)
	}
	noSince := map[string]string{"X-Since": ""}
	e2eCheckRequests(t, api,
		e2eRequest{Method: "GET", URL: "/plain?window=2024-03-01T00%3A00%3A00Z%2F2024-03-01T23%3A59%3A59Z&day=2024-03-01", Headers: noSince},
		e2eRequest{Method: "GET", URL: "/plain?window=2024-03-02T00%3A00%3A00Z%2F2024-03-02T12%3A00%3A00Z&day=2024-03-02", Headers: noSince},
		e2eRequest{Method: "POST", URL: "/custom?window=2024-03-01T00%3A00%3A00Z%2F2024-03-01T23%3A59%3A59Z",
			Headers: map[string]string{"X-Since": "2024-03-01T00:00:00Z", "Content-Type": "application/json"},
			Body:    `{"filter":{"kind":"x","range":{"until":"2024-03-01T23:59:59Z"}}}`},
		e2eRequest{Method: "POST", URL: "/custom?window=2024-03-02T00%3A00%3A00Z%2F2024-03-02T12%3A00%3A00Z",
			Headers: map[string]string{"X-Since": "2024-03-02T00:00:00Z", "Content-Type": "application/json"},
			Body:    `{"filter":{"kind":"x","range":{"until":"2024-03-02T12:00:00Z"}}}`},
	)
}

// TestIncrementalFailedSliceHoldsState: a window that fails (500 until the retries run out)
// in the middle of a read: the later windows are still read, the stream fails (exit 1), and
// the state stays at the last record before the failed window, so the next read asks for it
// again.
func TestIncrementalFailedSliceHoldsState(t *testing.T) {
	t.Parallel()
	failDay := incDay.AddDate(0, 0, 2)
	api := newRecorder(t, incEvents{days: 5, fail: func(since time.Time) bool { return since.Equal(failDay) }}.serve)
	env, waits := fakeWaits()
	state := filepath.Join(t.TempDir(), "state.json")
	def := writeFile(t, "def.yaml", incDef)
	vals := incValues(t, api, 5)
	res := runCLIEnv(t, env, "", "read", def, "--testing-values", vals, "--stream", "events", "--format", "airbyte", "--state", state)
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", res.Code, res.Stderr)
	}
	if len(waits()) == 0 {
		t.Errorf("the failed window was not retried")
	}
	var states, records []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		var m struct {
			Type   string
			Record struct {
				Data struct {
					UpdatedAt string `json:"updated_at"`
				}
			}
			State struct {
				Stream struct {
					State struct {
						UpdatedAt string `json:"updated_at"`
					} `json:"stream_state"`
				}
			}
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		switch m.Type {
		case "RECORD":
			records = append(records, m.Record.Data.UpdatedAt)
		case "STATE":
			states = append(states, m.State.Stream.State.UpdatedAt)
		}
	}
	wantRecords := []string{"2024-03-01T08:00:00Z", "2024-03-01T20:00:00Z", "2024-03-02T08:00:00Z", "2024-03-02T20:00:00Z",
		"2024-03-04T08:00:00Z", "2024-03-04T20:00:00Z", "2024-03-05T08:00:00Z", "2024-03-05T20:00:00Z"}
	if !slices.Equal(records, wantRecords) {
		t.Errorf("records %q, want %q", records, wantRecords)
	}
	// After day 1, day 2, day 4, day 5 (the hole at day 3 holds the state), and the end.
	hold := "2024-03-02T20:00:00Z"
	if want := []string{"2024-03-01T20:00:00Z", hold, hold, hold, hold}; !slices.Equal(states, want) {
		t.Errorf("STATE values %q, want %q", states, want)
	}
	wantFile := `[
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"` + hold + `"}}}
]
`
	if got := readText(t, state); got != wantFile {
		t.Errorf("state file:\n%s\nwant:\n%s", got, wantFile)
	}
	if !strings.Contains(res.Stderr, "1 of 5 slices failed") {
		t.Errorf("stderr does not say a slice failed:\n%s", res.Stderr)
	}

	// The next read, with the API fixed, starts again at the held value.
	fixed := newRecorder(t, incEvents{days: 5}.serve)
	res = runCLIEnv(t, incEnv(), "", "read", def, "--testing-values", incValues(t, fixed, 5), "--stream", "events", "--state", state)
	if res.Code != 0 {
		t.Fatalf("resumed read: exit %d\n%s", res.Code, res.Stderr)
	}
	if first := fixed.requests()[0].URL; first != "/events?since=2024-03-02T20%3A00%3A00Z&until=2024-03-03T19%3A59%3A59Z" {
		t.Errorf("the resumed read starts with %s", first)
	}
	if !strings.HasPrefix(res.Stdout, `{"id":120,"updated_at":"2024-03-02T20:00:00Z"}`+"\n"+`{"id":208,"updated_at":"2024-03-03T08:00:00Z"}`) {
		t.Errorf("the resumed read does not read the failed day again:\n%s", res.Stdout)
	}
}
