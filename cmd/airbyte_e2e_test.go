package cmd

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// airbyteLines splits an airbyte stdout into its messages, leaving out a last line cut
// short by a kill.
func airbyteLines(t *testing.T, stdout string) []map[string]json.RawMessage {
	t.Helper()
	var msgs []map[string]json.RawMessage
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			if !strings.HasSuffix(stdout, "\n") && strings.HasSuffix(stdout, sc.Text()) {
				continue
			}
			t.Fatalf("stdout line %q: %v", sc.Text(), err)
		}
		msgs = append(msgs, m)
	}
	return msgs
}

// eventsOf are the updated_at of the events RECORD messages, in order.
func eventsOf(t *testing.T, msgs []map[string]json.RawMessage) []string {
	t.Helper()
	var out []string
	for _, m := range msgs {
		if string(m["type"]) != `"RECORD"` {
			continue
		}
		var r struct {
			Stream string `json:"stream"`
			Data   struct {
				UpdatedAt string `json:"updated_at"`
			} `json:"data"`
		}
		if err := json.Unmarshal(m["record"], &r); err != nil {
			t.Fatal(err)
		}
		if r.Stream == "events" {
			out = append(out, r.Data.UpdatedAt)
		}
	}
	return out
}

// incCatalog is a configured catalog of incDef's events stream, incremental.
const incCatalog = `{"streams":[{"stream":{"name":"events","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append"}]}`

// incConfig is incValues as an Airbyte config (JSON).
func incConfig(t *testing.T, url string, days int) string {
	return writeFile(t, "config.json", fmt.Sprintf(`{"base_url":%q,"start":"2024-03-01T00:00:00Z","end":%q}`,
		url, incDay.AddDate(0, 0, days).Format(time.RFC3339)))
}

// TestAirbyteReadKilled: `airbyte read` killed with SIGKILL half way: every record at or
// before the last STATE message's cursor was written before that message (the state covers
// only what was emitted), and a second read from that STATE message (as the platform would
// pass it back) writes the rest, ending with the state of a whole read.
func TestAirbyteReadKilled(t *testing.T) {
	t.Parallel()
	bin := connectorBinary(t)
	const days = 30
	api := newRecorder(t, incEvents{days: days, delay: func(time.Time) time.Duration { return 15 * time.Millisecond }}.serve)
	def := writeFile(t, "def.yaml", incDef)
	config := incConfig(t, api.URL, days)
	catalog := writeFile(t, "catalog.json", incCatalog)
	args := []string{"airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog}

	first := exec.Command(bin, args...)
	first.Env = []string{"NO_COLOR=1"}
	pipe, err := first.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once five STATE messages are out, keeping what it wrote up to the kill.
	var got strings.Builder
	r := bufio.NewReader(pipe)
	states := 0
	for states < 5 {
		line, err := r.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("the read ended (%v) before it was killed:\n%s", err, got.String())
		}
		if strings.HasPrefix(line, `{"type":"STATE"`) {
			states++
		}
	}
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	got.Write(rest)
	_ = first.Wait()

	msgs := airbyteLines(t, got.String())
	var last json.RawMessage
	lastAt := -1
	for i, m := range msgs {
		if string(m["type"]) == `"STATE"` {
			last, lastAt = m["state"], i
		}
	}
	var st struct {
		Stream struct {
			State struct {
				UpdatedAt string `json:"updated_at"`
			} `json:"stream_state"`
		} `json:"stream"`
	}
	if err := json.Unmarshal(last, &st); err != nil || st.Stream.State.UpdatedAt == "" {
		t.Fatalf("last STATE %s: %v", last, err)
	}
	cursor := st.Stream.State.UpdatedAt
	if cursor >= incDay.AddDate(0, 0, days-1).Format(time.RFC3339) {
		t.Fatalf("killed too late to test anything (state %s)", cursor)
	}
	before := map[string]bool{}
	for _, at := range eventsOf(t, msgs[:lastAt]) {
		before[at] = true
	}

	// A whole read, in-process, for the records and the final state.
	whole := runCLIEnv(t, incEnv(), "", args...)
	if whole.Code != 0 {
		t.Fatalf("whole read: exit %d\n%s", whole.Code, whole.Stdout)
	}
	wholeMsgs := airbyteLines(t, whole.Stdout)
	all := eventsOf(t, wholeMsgs)
	if len(all) != 2*days {
		t.Fatalf("the whole read wrote %d records, want %d", len(all), 2*days)
	}
	for _, at := range all {
		if at <= cursor && !before[at] {
			t.Errorf("the last STATE (updated_at %s) covers %s, which was not written before it", cursor, at)
		}
	}

	// The platform passes the last STATE back: the second read writes what is after it.
	state := writeFile(t, "state.json", "["+string(last)+"]")
	second := runCLIEnv(t, incEnv(), "", append(args, "--state", state)...)
	if second.Code != 0 {
		t.Fatalf("resumed read: exit %d\n%s", second.Code, second.Stdout)
	}
	after := map[string]bool{}
	for _, at := range eventsOf(t, airbyteLines(t, second.Stdout)) {
		after[at] = true
		if at < cursor {
			t.Errorf("the resumed read wrote %s, before the state %s it started from", at, cursor)
		}
	}
	for _, at := range all {
		if !before[at] && !after[at] {
			t.Errorf("record %s written by neither read", at)
		}
	}
	if a, b := finalState(second.Stdout), finalState(whole.Stdout); a != b || a == "" {
		t.Errorf("final STATE after the resumed read:\n%s\nwant that of a whole read:\n%s", a, b)
	}
}

// finalState is the state of the last STATE message of an airbyte stdout, without its
// sourceStats.
func finalState(stdout string) string {
	var last string
	for _, line := range strings.Split(stdout, "\n") {
		if strings.HasPrefix(line, `{"type":"STATE"`) {
			last = line
		}
	}
	if i := strings.Index(last, `,"sourceStats"`); i >= 0 {
		last = last[:i]
	}
	return last
}

// TestAirbyteStateRoundTrip: the STATE messages of `airbyte read` are a state file for
// `connector read --state`, and the file `connector read --state-out` writes is a --state
// for `airbyte read`; either way the second read starts where the first stopped.
func TestAirbyteStateRoundTrip(t *testing.T) {
	t.Parallel()
	const days = 10
	api := newRecorder(t, incEvents{days: days}.serve)
	def := writeFile(t, "def.yaml", incDef)
	config := incConfig(t, api.URL, days)
	vals := incValues(t, api, days)
	catalog := writeFile(t, "catalog.json", incCatalog)
	dir := t.TempDir()

	// airbyte read → its last STATE message as a file → read --state.
	ab := runCLIEnv(t, incEnv(), "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog)
	if ab.Code != 0 {
		t.Fatalf("airbyte read: exit %d\n%s", ab.Code, ab.Stdout)
	}
	msgs := airbyteLines(t, ab.Stdout)
	var last json.RawMessage
	for _, m := range msgs {
		if string(m["type"]) == `"STATE"` {
			last = m["state"]
		}
	}
	fromAirbyte := filepath.Join(dir, "from-airbyte.json")
	writeState := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeState(fromAirbyte, "["+string(last)+"]")
	res := runCLIEnv(t, incEnv(), "", "read", def, "--testing-values", vals, "--stream", "events", "--state", fromAirbyte, "--state-out", filepath.Join(dir, "after-read.json"))
	if res.Code != 0 {
		t.Fatalf("read --state: exit %d\n%s", res.Code, res.Stderr)
	}
	// The last day's second event is the cursor: the read starts at it (inclusive), as the
	// CDK does, and writes nothing before it.
	lastAt := incDay.AddDate(0, 0, days-1).Add(20 * time.Hour).Format(time.RFC3339)
	for at := range incRecords(t, res.Stdout) {
		if at < lastAt {
			t.Errorf("read --state (from airbyte read) wrote %s, before the state %s", at, lastAt)
		}
	}
	if got := stateValue(t, filepath.Join(dir, "after-read.json"), "events", "updated_at"); got != lastAt {
		t.Errorf("read --state-out after airbyte read's state: %q, want %q", got, lastAt)
	}

	// read --state-out → airbyte read --state.
	readOut := filepath.Join(dir, "read-out.json")
	res = runCLIEnv(t, incEnv(), "", "read", def, "--testing-values", vals, "--stream", "events", "--state-out", readOut)
	if res.Code != 0 {
		t.Fatalf("read --state-out: exit %d\n%s", res.Code, res.Stderr)
	}
	ab2 := runCLIEnv(t, incEnv(), "", "airbyte", "read", "--manifest-path", def, "--config", config, "--catalog", catalog, "--state", readOut)
	if ab2.Code != 0 {
		t.Fatalf("airbyte read --state (from read): exit %d\n%s", ab2.Code, ab2.Stdout)
	}
	for _, at := range eventsOf(t, airbyteLines(t, ab2.Stdout)) {
		if at < lastAt {
			t.Errorf("airbyte read --state (from read) wrote %s, before the state %s", at, lastAt)
		}
	}
	if a, b := finalState(ab2.Stdout), finalState(ab.Stdout); a != b {
		t.Errorf("final STATE of airbyte read from read's state:\n%s\nwant:\n%s", a, b)
	}
}
