package cmd

import (
	"encoding/json"
	"net/http"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// byStream splits envelope lines by stream, keeping their order within each stream.
func byStream(t *testing.T, stdout string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		if line == "" {
			continue
		}
		var env struct {
			Stream string          `json:"stream"`
			Data   json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("line %q is not a whole envelope: %v", line, err)
		}
		out[env.Stream] = append(out[env.Stream], string(env.Data))
	}
	return out
}

func TestConcurrentStreamsMatchSequential(t *testing.T) {
	t.Parallel()
	streams := map[string]pagedStream{
		"empty":   {total: 0},
		"one":     {total: 1},
		"full":    {total: 9},
		"short":   {total: 7},
		"large":   {total: 200},
		"midstop": {sizes: []int{3, 2, 3}},
	}
	names := []string{"empty", "one", "full", "short", "large", "midstop"}
	api := pagedAPI(t, streams)
	vals := writeFile(t, "values.yaml", "{}\n")
	for _, mode := range []string{"offset", "page"} {
		def := pagedDefinition(t, api.URL, mode, 3, names, "")
		seq := runCLI(t, "", "read", def, "--testing-values", vals, "--format", "envelope")
		if seq.Code != 0 {
			t.Fatalf("sequential: exit %d: %s", seq.Code, seq.Stderr)
		}
		want := byStream(t, seq.Stdout)
		if len(want["large"]) != 200 || len(want["midstop"]) != 5 || len(want["empty"]) != 0 {
			t.Fatalf("sequential read: %v", want)
		}
		for _, args := range [][]string{
			{"--concurrency", "2"},
			{"--concurrency", "6"},
			{"--concurrency", "3", "--prefetch", "4"},
		} {
			got := runCLI(t, "", append([]string{"read", def, "--testing-values", vals, "--format", "envelope"}, args...)...)
			if got.Code != 0 || got.Stderr != "" {
				t.Fatalf("%s %v: exit %d: %s", mode, args, got.Code, got.Stderr)
			}
			if g := byStream(t, got.Stdout); !reflect.DeepEqual(g, want) {
				t.Errorf("%s %v: records per stream differ from the sequential read:\n%v\nwant\n%v", mode, args, g, want)
			}
			if len(got.Stdout) != len(seq.Stdout) {
				t.Errorf("%s %v: %d bytes, sequential %d", mode, args, len(got.Stdout), len(seq.Stdout))
			}
		}
	}
}

// meetingAPI answers the first requests of two streams only once both have arrived (or
// 404 after 5 s): two streams finish only if they are read at the same time.
func meetingAPI(t *testing.T) *recorder {
	var mu sync.Mutex
	arrived := map[string]bool{}
	both := make(chan struct{})
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		mu.Lock()
		arrived[name] = true
		if len(arrived) == 2 {
			select {
			case <-both:
			default:
				close(both)
			}
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(5 * time.Second):
			http.Error(w, "the other stream never came", http.StatusNotFound)
			return
		}
		w.Write([]byte(`{"data":[{"s":"` + name + `"}]}`))
	})
}

// Two streams whose first pages wait for each other: they finish only if they are read at
// the same time, through concurrency_level or --concurrency.
func TestConcurrencyReadsStreamsAtOnce(t *testing.T) {
	t.Parallel()
	vals := writeFile(t, "values.yaml", "{}\n")
	level := "concurrency_level:\n  type: ConcurrencyLevel\n  default_concurrency: 2\n  max_concurrency: 2\n"
	for _, tt := range []struct {
		name, extra string
		args        []string
	}{
		{"concurrency_level", level, nil},
		{"--concurrency", "", []string{"--concurrency", "2"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := meetingAPI(t)
			def := pagedDefinition(t, api.URL, "offset", 3, []string{"a", "b"}, tt.extra)
			res := runCLI(t, "", append([]string{"read", def, "--testing-values", vals, "--format", "envelope"}, tt.args...)...)
			if res.Code != 0 {
				t.Fatalf("exit %d: %s", res.Code, res.Stderr)
			}
			lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
			sort.Strings(lines)
			want := []string{`{"stream":"a","data":{"s":"a"}}`, `{"stream":"b","data":{"s":"b"}}`}
			if !reflect.DeepEqual(lines, want) {
				t.Errorf("stdout %q, want %q", lines, want)
			}
		})
	}
}

func TestConcurrentStreamFailureIsReportedPerStream(t *testing.T) {
	t.Parallel()
	api := pagedAPI(t, map[string]pagedStream{"a": {total: 4}, "c": {total: 2}})
	def := pagedDefinition(t, api.URL, "offset", 3, []string{"a", "missing", "c"}, "")
	vals := writeFile(t, "values.yaml", "{}\n")
	res := runCLI(t, "", "read", def, "--testing-values", vals, "--format", "envelope", "--concurrency", "3")
	if res.Code != 1 {
		t.Fatalf("exit %d, want 1: %s", res.Code, res.Stderr)
	}
	got := byStream(t, res.Stdout)
	if len(got["a"]) != 4 || len(got["c"]) != 2 || len(got["missing"]) != 0 {
		t.Errorf("records: %v", got)
	}
	if !strings.Contains(res.Stderr, "stream missing, page 1: 404 Not Found from GET "+api.URL+"/missing?offset=0&limit=3") ||
		!strings.HasSuffix(res.Stderr, "1 of 3 streams failed\n") {
		t.Errorf("stderr:\n%s", res.Stderr)
	}
}

// In the airbyte format too, a concurrent read writes what a sequential one writes: a stream
// read while an earlier one still holds stdout waits in a buffer, and gets its RUNNING status
// before its first record when the buffer is written out.
func TestConcurrentAirbyteMatchesSequential(t *testing.T) {
	t.Parallel()
	api := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(r.URL.Path, "/")
		if name == "a" {
			// Read at once, b's records wait in their buffer while a holds stdout.
			time.Sleep(150 * time.Millisecond)
		}
		w.Write([]byte(`{"data":[{"s":"` + name + `","n":1},{"s":"` + name + `","n":2}]}`))
	})
	def := pagedDefinition(t, api.URL, "offset", 3, []string{"a", "b"}, "")
	vals := writeFile(t, "values.yaml", "{}\n")
	env := testEnv(nil)
	env.Now = func() time.Time { return time.UnixMilli(1700000000000) }
	args := []string{"read", def, "--testing-values", vals, "--format", "airbyte"}
	seq := runCLIEnv(t, env, "", args...)
	got := runCLIEnv(t, env, "", append(args, "--concurrency", "2")...)
	if seq.Code != 0 || got.Code != 0 {
		t.Fatalf("exit %d and %d: %s %s", seq.Code, got.Code, seq.Stderr, got.Stderr)
	}
	if got.Stdout != seq.Stdout {
		t.Errorf("--concurrency 2:\n%s\nsequential:\n%s", got.Stdout, seq.Stdout)
	}
	if n := strings.Count(got.Stdout, `"status":"RUNNING"`); n != 2 {
		t.Errorf("%d RUNNING statuses, want one per stream:\n%s", n, got.Stdout)
	}
}
