package cmd

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"connector/pkg/demoapi"
)

// The example of LegacyToPerPartitionStateMigration (definitions/legacy-state-migration.yaml)
// read from its legacy state file (definitions/testdata/legacy-state-migration.state.json).

const legacyExample = "legacy-state-migration.yaml"

// legacyStateFile is a copy of the example's legacy state file, for a read to rewrite.
func legacyStateFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "state.json")
	writeAt(t, path, readText(t, filepath.Join("..", "definitions", "testdata", "legacy-state-migration.state.json")))
	return path
}

// reviewURLs are the requests for the reviews of author a, one per window [since, until].
func reviewURLs(a string, windows ...[2]string) []string {
	var out []string
	for _, w := range windows {
		out = append(out, "GET /v1/public/authors/"+a+"/reviews?since="+strings.ReplaceAll(w[0], ":", "%3A")+"&until="+strings.ReplaceAll(w[1], ":", "%3A"))
	}
	return out
}

// months are the monthly windows of 2024 from January to June, as step P1M cuts them from
// start_date.
var months = [][2]string{
	{"2024-01-01T00:00:00Z", "2024-01-31T23:59:59Z"}, {"2024-02-01T00:00:00Z", "2024-02-29T23:59:59Z"},
	{"2024-03-01T00:00:00Z", "2024-03-31T23:59:59Z"}, {"2024-04-01T00:00:00Z", "2024-04-30T23:59:59Z"},
	{"2024-05-01T00:00:00Z", "2024-05-31T23:59:59Z"}, {"2024-06-01T00:00:00Z", "2024-06-30T23:59:59Z"},
}

// stateFileEntry is the stream_state of stream in a state file, as JSON text.
func stateFileEntry(t *testing.T, file, stream string) string {
	t.Helper()
	var msgs []struct {
		Stream struct {
			Descriptor struct {
				Name string `json:"name"`
			} `json:"stream_descriptor"`
			State json.RawMessage `json:"stream_state"`
		} `json:"stream"`
	}
	if err := json.Unmarshal([]byte(readText(t, file)), &msgs); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	for _, m := range msgs {
		if m.Stream.Descriptor.Name == stream {
			return string(m.Stream.State)
		}
	}
	t.Fatalf("%s has no state of %s", file, stream)
	return ""
}

// A union of lists makes partitions {"author_id": "1"}, the migrated entries' own: authors 1
// and 2 go on from their legacy values, author 3, unknown, starts at start_date. A second read
// from the state the first saved (already per partition) is not migrated again.
func TestLegacyStateMigrationUnion(t *testing.T) {
	statePath := legacyStateFile(t)
	res, reqs := incrementalRun(t, legacyExample, statePath, "--stream", "listed_author_reviews")
	want := reviewURLs("1", [2]string{"2024-04-10T00:00:00Z", "2024-05-09T23:59:59Z"},
		[2]string{"2024-05-10T00:00:00Z", "2024-06-09T23:59:59Z"}, [2]string{"2024-06-10T00:00:00Z", "2024-06-30T23:59:59Z"})
	want = append(want, reviewURLs("2", [2]string{"2024-05-27T06:10:45Z", "2024-06-27T06:10:44Z"},
		[2]string{"2024-06-27T06:10:45Z", "2024-06-30T23:59:59Z"})...)
	want = append(want, reviewURLs("3", months...)...)
	wantRequests(t, "requests", reqs, want)
	if want := jsonLines(t, demoapi.Review, 151, 201, 202, 3, 53, 103, 153, 203); res.Stdout != want {
		t.Errorf("stdout:\n%s\nwant:\n%s", res.Stdout, want)
	}
	const migrated = `{"use_global_cursor":false,"states":[` +
		`{"partition":{"author_id":"1"},"cursor":{"updated_at":"2024-05-26T12:36:40Z"}},` +
		`{"partition":{"author_id":"2"},"cursor":{"updated_at":"2024-05-27T06:10:45Z"}},` +
		`{"partition":{"author_id":"3"},"cursor":{"updated_at":"2024-05-27T23:44:50Z"}}],` +
		`"state":{"updated_at":"2024-05-27T23:44:50Z"},"lookback_window":0,"parent_state":{}}`
	if got := stateFileEntry(t, statePath, "listed_author_reviews"); got != migrated {
		t.Errorf("state of listed_author_reviews:\n%s\nwant:\n%s", got, migrated)
	}
	// The other stream's legacy state is left as it was: it was not read.
	if got, want := stateFileEntry(t, statePath, "author_reviews"), `{"1":{"updated_at":"2024-04-10T00:00:00Z"},"2":{"updated_at":"2024-05-27T06:10:45Z"}}`; got != want {
		t.Errorf("state of author_reviews:\n%s\nwant:\n%s", got, want)
	}

	_, reqs = incrementalRun(t, legacyExample, statePath, "--stream", "listed_author_reviews")
	wantRequests(t, "requests of the second read", reqs, append(append(
		reviewURLs("1", [2]string{"2024-05-26T12:36:40Z", "2024-06-26T12:36:39Z"}, [2]string{"2024-06-26T12:36:40Z", "2024-06-30T23:59:59Z"}),
		reviewURLs("2", [2]string{"2024-05-27T06:10:45Z", "2024-06-27T06:10:44Z"}, [2]string{"2024-06-27T06:10:45Z", "2024-06-30T23:59:59Z"})...),
		reviewURLs("3", [2]string{"2024-05-27T23:44:50Z", "2024-06-27T23:44:49Z"}, [2]string{"2024-06-27T23:44:50Z", "2024-06-30T23:59:59Z"})...))
	if got := stateFileEntry(t, statePath, "listed_author_reviews"); got != migrated {
		t.Errorf("state of listed_author_reviews after the second read:\n%s\nwant:\n%s", got, migrated)
	}
}

// A substream's partitions carry the parent's id (a number) and parent_slice, so none is a
// migrated entry: every author starts at start_date, and the state keeps the migrated entries
// first, as the CDK does.
func TestLegacyStateMigrationSubstream(t *testing.T) {
	statePath := legacyStateFile(t)
	_, reqs := incrementalRun(t, legacyExample, statePath, "--stream", "author_reviews")
	want := []string{"GET /v1/public/authors?limit=3"}
	for _, a := range []string{"1", "2", "3"} {
		want = append(want, reviewURLs(a, months...)...)
	}
	wantRequests(t, "requests", reqs, want)
	const state = `{"use_global_cursor":false,"states":[` +
		`{"partition":{"author_id":"1"},"cursor":{"updated_at":"2024-04-10T00:00:00Z"}},` +
		`{"partition":{"author_id":"2"},"cursor":{"updated_at":"2024-05-27T06:10:45Z"}},` +
		`{"partition":{"author_id":1,"parent_slice":{}},"cursor":{"updated_at":"2024-05-26T12:36:40Z"}},` +
		`{"partition":{"author_id":2,"parent_slice":{}},"cursor":{"updated_at":"2024-05-27T06:10:45Z"}},` +
		`{"partition":{"author_id":3,"parent_slice":{}},"cursor":{"updated_at":"2024-05-27T23:44:50Z"}}],` +
		`"state":{"updated_at":"2024-05-27T23:44:50Z"},"lookback_window":0,"parent_state":{}}`
	if got := stateFileEntry(t, statePath, "author_reviews"); got != state {
		t.Errorf("state of author_reviews:\n%s\nwant:\n%s", got, state)
	}
}

// TestLegacyStateMigrationMatchesCDK reads each stream of the example as the CDK 7.28.2 did
// (testdata/legacy-state-migration-cdk, made by its make-golden.sh): the same requests, the
// same RECORD and STATE lines (a per-partition STATE before the last may list fewer
// partitions), and the CDK's last state in the state file.
func TestLegacyStateMigrationMatchesCDK(t *testing.T) {
	t.Parallel()
	def := filepath.Join("..", "definitions", legacyExample)
	example := readText(t, filepath.Join("..", "definitions", "testdata", "legacy-state-migration.state.json"))
	for _, stream := range []string{"author_reviews", "listed_author_reviews"} {
		t.Run(stream, func(t *testing.T) {
			t.Parallel()
			run := filepath.Join("testdata", "legacy-state-migration-cdk", stream)
			if in := readText(t, filepath.Join(run, "state-in.json")); in != example {
				t.Fatalf("%s/state-in.json is not the example's state file: remake the golden", run)
			}
			api := newRecorder(t, demoapi.New(demoapi.Options{}).ServeHTTP)
			res, stateFile, _ := cdkRead(t, api, def, run, []string{stream})
			if res.Code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			cdkCheckRequests(t, api, filepath.Join(run, "requests.txt"))
			want := strings.Split(strings.TrimSuffix(readText(t, filepath.Join(run, "messages.jsonl")), "\n"), "\n")
			cdkCheckMessages(t, cdkMessages(t, res.Stdout), want, true, func(string) {})
			if got, want := stateFileEntry(t, stateFile, stream), readText(t, filepath.Join(run, "state-out.json")); !jsonEqual(t, got, want) {
				t.Errorf("state of %s:\n%s\nwant (as JSON):\n%s", stream, got, want)
			}
		})
	}
}

// The migration is refused where the CDK refuses to build it, with the position of the
// migration in the definition.
func TestLegacyStateMigrationRefused(t *testing.T) {
	t.Parallel()
	src := readText(t, filepath.Join("..", "definitions", legacyExample))
	// listed_author_reviews with a ListPartitionRouter of its own instead of the union.
	bad := strings.Replace(src, `          type: UnionPartitionRouter
          partition_field: author_id
          partition_routers:
            - type: ListPartitionRouter
              cursor_field: author_id
              values: ["1", "2"]
            - type: ListPartitionRouter
              cursor_field: author_id
              values: ["2", "3"]
`, `          type: ListPartitionRouter
          cursor_field: author_id
          values: ["1", "2"]
`, 1)
	if bad == src {
		t.Fatal("the example's union is not where this test expects it")
	}
	def := filepath.Join(t.TempDir(), "def.yaml")
	if err := os.WriteFile(def, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	res := runCLI(t, "", "validate", def)
	line := strings.Count(bad[:strings.LastIndex(bad, "- type: LegacyToPerPartitionStateMigration")], "\n") + 1
	want := def + ":" + itoa(line) + ":11: error: a LegacyToPerPartitionStateMigration needs a SubstreamPartitionRouter or a UnionPartitionRouter as the stream's partition_router, not ListPartitionRouter (as in the Airbyte CDK)\n"
	if res.Code != exitInvalid || !strings.HasPrefix(res.Stderr, want) {
		t.Errorf("exit %d, stderr:\n%s\nwant it to start with:\n%s", res.Code, res.Stderr, want)
	}
}
