package cmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// Incremental reads checked against the Airbyte CDK: every run in testdata/incremental-cdk is
// a definition run through the real CDK (v7.28.2, concurrency 1) against feedserver.py, with
// the exact requests it sent, the RECORD and STATE lines it printed and the state it left
// (see /work/briefs/incremental-examples/README.md, where the fixtures come from). Here the
// same definition runs through `connector read --format airbyte --state FILE` against feedAPI,
// a Go port of feedserver.py, and must send the same requests, print the same lines and
// write the same state file.

// feedRoute is one route of a feed API's data.json.
type feedRoute struct {
	Path        string            `json:"path"`
	Records     []json.RawMessage `json:"records"`
	Filters     []feedFilter      `json:"filters"`
	Order       string            `json:"order"`
	OrderBy     string            `json:"order_by"`
	OrderFormat string            `json:"order_format"`
	PageSize    int               `json:"page_size"`
	PageParam   string            `json:"page_param"`
	Envelope    *string           `json:"envelope"`
}

// feedFilter keeps the records whose field compares with the query parameter by op.
type feedFilter struct {
	Param       string `json:"param"`
	Field       string `json:"field"`
	Op          string `json:"op"`
	Format      string `json:"format"`
	FieldFormat string `json:"field_format"`
	Truncate    string `json:"truncate"`
}

// feedRecord is a record as listed (its bytes, sent as they are) and its fields.
type feedRecord struct {
	raw    json.RawMessage
	fields map[string]any
}

// feedAPI is feedserver.py in Go: the first route whose path matches answers with its
// records, kept by the route's filters, ordered, paged and wrapped as the route says.
type feedAPI struct {
	routes  []feedRoute
	records [][]feedRecord
}

func newFeedAPI(t *testing.T, dataFile string) *feedAPI {
	t.Helper()
	data, err := os.ReadFile(dataFile)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Routes []feedRoute `json:"routes"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("%s: %v", dataFile, err)
	}
	f := &feedAPI{routes: doc.Routes}
	for _, r := range doc.Routes {
		var recs []feedRecord
		for _, raw := range r.Records {
			d := json.NewDecoder(bytes.NewReader(raw))
			d.UseNumber()
			var fields map[string]any
			if err := d.Decode(&fields); err != nil {
				t.Fatalf("%s: %v", dataFile, err)
			}
			recs = append(recs, feedRecord{raw: raw, fields: fields})
		}
		f.records = append(f.records, recs)
	}
	return f
}

// feedLayouts are the Go layouts of the strptime formats the fixtures use (%z takes Z,
// +02:00 and +0200, as Python's does).
var feedLayouts = map[string][]string{
	"%Y-%m-%dT%H:%M:%SZ":   {"2006-01-02T15:04:05Z"},
	"%Y-%m-%dT%H:%M:%S%z":  {"2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05Z0700"},
	"%Y-%m-%d":             {"2006-01-02"},
	"%Y-%m-%dT%H:%M:%S.%f": {"2006-01-02T15:04:05.999999"},
}

// feedParse is feedserver.py's parse: "int", "%s", "%ms" or a strptime format (no zone: UTC).
// Times are compared as Unix microseconds.
func feedParse(v any, format string) (int64, error) {
	text := fmt.Sprint(v)
	switch format {
	case "int", "%s", "%ms":
		n, err := strconv.ParseInt(text, 10, 64)
		switch {
		case err != nil:
			return 0, err
		case format == "%s":
			return n * 1e6, nil
		case format == "%ms":
			return n * 1e3, nil
		}
		return n, nil
	}
	layouts, ok := feedLayouts[format]
	if !ok {
		return 0, fmt.Errorf("the feed API has no layout for %q", format)
	}
	var err error
	for _, l := range layouts {
		var t time.Time
		if t, err = time.Parse(l, text); err == nil {
			return t.UnixMicro(), nil
		}
	}
	return 0, err
}

func (f feedFilter) fieldValue(v any) (int64, error) {
	format := f.FieldFormat
	if format == "" {
		format = f.Format
	}
	n, err := feedParse(v, format)
	if err == nil && f.Truncate == "day" {
		day := int64(24 * time.Hour / time.Microsecond)
		// The day of the value as written (its own offset), as Python's replace() keeps it.
		t, _ := feedTime(v, format)
		_, off := t.Zone()
		local := n + int64(off)*1e6
		n = local - local%day - int64(off)*1e6
	}
	return n, err
}

func feedTime(v any, format string) (time.Time, error) {
	for _, l := range feedLayouts[format] {
		if t, err := time.Parse(l, fmt.Sprint(v)); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("no layout")
}

var feedOps = map[string]func(a, b int64) bool{
	">=": func(a, b int64) bool { return a >= b },
	">":  func(a, b int64) bool { return a > b },
	"<=": func(a, b int64) bool { return a <= b },
	"<":  func(a, b int64) bool { return a < b },
}

func feedMatch(pattern, path string) (map[string]string, bool) {
	p := strings.Split(strings.Trim(pattern, "/"), "/")
	q := strings.Split(strings.Trim(path, "/"), "/")
	if len(p) != len(q) {
		return nil, false
	}
	caps := map[string]string{}
	for i, a := range p {
		if strings.HasPrefix(a, "{") && strings.HasSuffix(a, "}") {
			caps[a[1:len(a)-1]] = q[i]
		} else if a != q[i] {
			return nil, false
		}
	}
	return caps, true
}

func (f *feedAPI) serve(w http.ResponseWriter, r *http.Request) {
	status, body := f.answer(r)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(body)
}

func (f *feedAPI) answer(r *http.Request) (int, []byte) {
	query := map[string]string{}
	for k, vs := range r.URL.Query() {
		query[k] = vs[len(vs)-1] // dict(parse_qsl(...)): the last value wins
	}
	fail := func(status int, msg string) (int, []byte) {
		b, _ := json.Marshal(map[string]string{"error": msg})
		return status, b
	}
	for i, route := range f.routes {
		caps, ok := feedMatch(route.Path, r.URL.Path)
		if !ok {
			continue
		}
		var recs []feedRecord
		for _, rec := range f.records[i] {
			keep := true
			for k, v := range caps {
				if fmt.Sprint(rec.fields[k]) != v {
					keep = false
				}
			}
			if keep {
				recs = append(recs, rec)
			}
		}
		for _, flt := range route.Filters {
			param, ok := query[flt.Param]
			if !ok {
				continue
			}
			want, err := feedParse(param, flt.Format)
			if err != nil {
				return fail(http.StatusBadRequest, fmt.Sprintf("bad %s: %v", flt.Param, err))
			}
			var kept []feedRecord
			for _, rec := range recs {
				v, has := rec.fields[flt.Field]
				if !has {
					kept = append(kept, rec)
					continue
				}
				n, err := flt.fieldValue(v)
				if err != nil {
					return fail(http.StatusInternalServerError, err.Error())
				}
				if feedOps[flt.Op](n, want) {
					kept = append(kept, rec)
				}
			}
			recs = kept
		}
		if route.Order != "" {
			format := route.OrderFormat
			if format == "" {
				format = "int"
				if len(route.Filters) > 0 {
					format = route.Filters[0].FieldFormat
					if format == "" {
						format = route.Filters[0].Format
					}
				}
			}
			var have, without []feedRecord
			for _, rec := range recs {
				if _, ok := rec.fields[route.OrderBy]; ok {
					have = append(have, rec)
				} else {
					without = append(without, rec)
				}
			}
			key := func(rec feedRecord) int64 {
				n, _ := feedParse(rec.fields[route.OrderBy], format)
				return n
			}
			sort.SliceStable(have, func(a, b int) bool {
				if route.Order == "desc" {
					return key(have[a]) > key(have[b])
				}
				return key(have[a]) < key(have[b])
			})
			recs = append(have, without...)
		}
		var out bytes.Buffer
		list := func() {
			out.WriteString("[")
			for j, rec := range recs {
				if j > 0 {
					out.WriteString(", ")
				}
				out.Write(rec.raw)
			}
			out.WriteString("]")
		}
		env := "data"
		if route.Envelope != nil {
			env = *route.Envelope
		}
		if env == "" && route.PageSize == 0 {
			list()
			return http.StatusOK, out.Bytes()
		}
		next := ""
		if route.PageSize > 0 {
			param := route.PageParam
			if param == "" {
				param = "page"
			}
			page := 1
			if p, ok := query[param]; ok {
				n, err := strconv.Atoi(p)
				if err != nil {
					return fail(http.StatusInternalServerError, err.Error())
				}
				page = n
			}
			size := route.PageSize
			more := len(recs) > page*size
			lo, hi := min((page-1)*size, len(recs)), min(page*size, len(recs))
			recs = recs[lo:hi]
			next = `"next_page": null`
			if more {
				next = fmt.Sprintf(`"next_page": %d`, page+1)
			}
		}
		if env == "" {
			list() // feedserver.py drops next_page then
			return http.StatusOK, out.Bytes()
		}
		out.WriteString("{")
		if next != "" {
			out.WriteString(next + ", ")
		}
		key, _ := json.Marshal(env)
		out.Write(key)
		out.WriteString(": ")
		list()
		out.WriteString("}")
		return http.StatusOK, out.Bytes()
	}
	return fail(http.StatusNotFound, "no route")
}

// cdkRun is one recorded run of an example.
type cdkRun struct {
	example, run string
	streams      []string
	// perPartition: a ConcurrentPerPartitionCursor stream, whose first STATE the CDK
	// writes after generating every partition (at concurrency 1) where connector
	// generates them as it goes: that STATE lists the partitions known so far only.
	perPartition bool
	// sameAs names another run of the example whose recorded requests, lines and state
	// this run must give instead of its own (connector differs from the CDK here).
	sameAs string
	// stateOut is the state file this run must leave, when connector's differs from the
	// CDK's state-out.json (it keeps the states of streams it does not read).
	stateOut string
	// refused: exit 3 before any request, stderr holding this text, the state file
	// untouched.
	refused string
}

var cdkRuns = []cdkRun{
	{example: "client-side", run: "run1", streams: []string{"tickets"}},
	{example: "client-side", run: "run2", streams: []string{"tickets"}},
	{example: "daily-step", run: "run1", streams: []string{"events"}},
	{example: "daily-step", run: "run2", streams: []string{"events"}},
	{example: "data-feed", run: "run1", streams: []string{"activity"}},
	{example: "data-feed", run: "run2", streams: []string{"activity"}},
	{example: "duplicate-partition", run: "run1", streams: []string{"comments"}, perPartition: true},
	// Every org × the pipelines of every org: a pipeline slug two orgs share gives the same
	// partition twice under each org, and the CDK reads it once (buildkite's shape).
	{example: "duplicate-partition-cartesian", run: "run1", streams: []string{"builds"}, perPartition: true},
	{example: "epoch-seconds", run: "run1", streams: []string{"events"}},
	{example: "epoch-seconds", run: "run2", streams: []string{"events"}},
	{example: "full-refresh-catalog", run: "with-state", streams: []string{"events"}},
	{example: "global-cursor", run: "run1", streams: []string{"comments"}, perPartition: true},
	{example: "global-cursor", run: "run2", streams: []string{"comments"}, perPartition: true},
	{example: "incremental-dependency", run: "run1", streams: []string{"comments"}, perPartition: true},
	{example: "incremental-dependency", run: "run2", streams: []string{"comments"}, perPartition: true},
	{example: "incrementing-count", run: "run1", streams: []string{"messages"}},
	{example: "incrementing-count", run: "run2", streams: []string{"messages"}},
	{example: "lookback", run: "run1", streams: []string{"orders"}},
	{example: "lookback", run: "run2", streams: []string{"orders"}},
	{example: "state-delegating", run: "run1", streams: []string{"customers"}},
	{example: "state-delegating", run: "run2", streams: []string{"customers"}},
	{example: "state-delegating", run: "run3", streams: []string{"customers"}},
	{example: "state-formats", run: "empty-window", streams: []string{"events"}},
	{example: "state-formats", run: "date-range", streams: []string{"events"},
		stateOut: `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-05T11:00:00Z"}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"not_in_catalog"},"stream_state":{"x":1}}}]`},
	{example: "state-formats", run: "after-end", streams: []string{"events"}},
	{example: "state-formats", run: "before-start", streams: []string{"events"}},
	{example: "state-formats", run: "extra-keys", streams: []string{"events"}},
	// The CDK fails with exit 1 and the same "No format" text; connector refuses the
	// state as an invalid input (exit 3), naming the file and the key.
	{example: "state-formats", run: "other-format", streams: []string{"events"},
		refused: `the state of stream events does not fit its incremental_sync: key "updated_at": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 2024-03-04 (fix the state, or start over without it)`},
	// The CDK 7 cannot read the older {stream: state} mapping, and ignores LEGACY
	// messages; connector reads both: the run resumes from 2024-03-04T00:00:00Z as the CDK
	// does with the same value in a GLOBAL message.
	{example: "state-formats", run: "legacy-mapping", streams: []string{"events"}, sameAs: "global-type"},
	{example: "state-formats", run: "legacy-type", streams: []string{"events"}, sameAs: "global-type"},
	{example: "state-formats", run: "global-type", streams: []string{"events"}},
	{example: "state-formats", run: "with-stats", streams: []string{"events"}},
	// A state under another namespace is not the stream's (a first run, as in the CDK),
	// and is written back as it was.
	{example: "state-formats", run: "namespace", streams: []string{"events"},
		stateOut: `[{"type":"STREAM","stream":{"stream_descriptor":{"name":"events","namespace":"public"},"stream_state":{"updated_at":"2024-03-05T11:00:00Z"}}},
{"type":"STREAM","stream":{"stream_descriptor":{"name":"events"},"stream_state":{"updated_at":"2024-03-05T11:00:00Z"}}}]`},
	{example: "substream-per-partition", run: "run1", streams: []string{"comments"}, perPartition: true},
	{example: "substream-per-partition", run: "run2", streams: []string{"comments"}, perPartition: true},
	{example: "timezone-offsets", run: "run1", streams: []string{"events"}},
	{example: "timezone-offsets", run: "run2", streams: []string{"events"}},
	{example: "unfiltered-server", run: "run1", streams: []string{"events"}},
	{example: "unfiltered-server", run: "run2", streams: []string{"events"}},
}

// TestIncrementalCDKRunsAreAllListed makes sure no recorded run is left out of cdkRuns.
func TestIncrementalCDKRunsAreAllListed(t *testing.T) {
	t.Parallel()
	listed := map[string]bool{}
	for _, r := range cdkRuns {
		listed[r.example+"/"+r.run] = true
	}
	dirs, err := filepath.Glob("testdata/incremental-cdk/*/*/messages.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		rel, _ := filepath.Rel("testdata/incremental-cdk", filepath.Dir(d))
		if !listed[filepath.ToSlash(rel)] {
			t.Errorf("run %s is not in cdkRuns", rel)
		}
		delete(listed, filepath.ToSlash(rel))
	}
	for r := range listed {
		t.Errorf("cdkRuns lists %s, which has no recorded messages", r)
	}
}

// tickingClock is a clock that moves one microsecond per reading: runs are repeatable and
// a per-partition stream's lookback_window (the read's duration, rounded up to whole
// seconds) is 1, as in the CDK's fast runs.
func tickingClock() func() time.Time {
	var n atomic.Int64
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return func() time.Time { return base.Add(time.Duration(n.Add(1)) * time.Microsecond) }
}

func TestIncrementalMatchesCDK(t *testing.T) {
	t.Parallel()
	for _, tt := range cdkRuns {
		t.Run(tt.example+"/"+tt.run, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join("testdata", "incremental-cdk", tt.example)
			want := filepath.Join(dir, tt.run)
			if tt.sameAs != "" {
				want = filepath.Join(dir, tt.sameAs)
			}
			api := newRecorder(t, newFeedAPI(t, filepath.Join(dir, "data.json")).serve)
			res, stateFile, before := cdkRead(t, api, filepath.Join(dir, "manifest.yaml"), filepath.Join(dir, tt.run), tt.streams)

			if tt.refused != "" {
				if res.Code != exitInvalid || !strings.Contains(res.Stderr, tt.refused) || !strings.Contains(res.Stderr, stateFile+": ") {
					t.Errorf("exit %d, stderr:\n%s\nwant exit 3 naming %s and saying %s", res.Code, res.Stderr, stateFile, tt.refused)
				}
				if n := len(api.requests()); n != 0 || res.Stdout != "" {
					t.Errorf("%d requests, stdout %q: want none", n, res.Stdout)
				}
				after, _ := os.ReadFile(stateFile)
				if !bytes.Equal(after, before) {
					t.Errorf("the state file changed:\n%s", after)
				}
				return
			}
			if res.Code != 0 {
				t.Fatalf("exit %d, stderr:\n%s", res.Code, res.Stderr)
			}
			cdkCheckRequests(t, api, filepath.Join(want, "requests.txt"))
			got := cdkMessages(t, res.Stdout)
			wantLines := strings.Split(strings.TrimSuffix(readText(t, filepath.Join(want, "messages.jsonl")), "\n"), "\n")
			cdkCheckMessages(t, got, wantLines, tt.perPartition, func(state string) {
				// A mid-run state is one a read resumes from.
				cdkResume(t, api, dir, filepath.Join(dir, tt.run), tt.streams, state)
			})
			wantState := tt.stateOut
			if wantState == "" {
				wantState = readText(t, filepath.Join(want, "state-out.json"))
			}
			gotState := readText(t, stateFile)
			if !jsonEqual(t, gotState, wantState) {
				t.Errorf("state file:\n%s\nwant (as JSON):\n%s", gotState, wantState)
			}
		})
	}
}

// cdkRead runs `read` of manifest with the run's config (its base_url pointing at api) and
// its state-in.json as --state (absent: a --state file that does not exist yet). It returns
// the result, the state file and the state file's content before the run.
func cdkRead(t *testing.T, api *recorder, manifest, runDir string, streams []string, extra ...string) (cliResult, string, []byte) {
	t.Helper()
	tmp := t.TempDir()
	cfg := regexp.MustCompile(`http://127\.0\.0\.1:\d+`).ReplaceAllString(readText(t, filepath.Join(runDir, "config.json")), api.URL)
	cfgFile := filepath.Join(tmp, "config.json")
	stateFile := filepath.Join(tmp, "state.json")
	writeAt(t, cfgFile, cfg)
	var before []byte
	if in, err := os.ReadFile(filepath.Join(runDir, "state-in.json")); err == nil {
		writeAt(t, stateFile, string(in))
		before = in
	}
	args := []string{"read", manifest, "--testing-values", cfgFile, "--format", "airbyte", "--state", stateFile}
	for _, s := range streams {
		args = append(args, "--stream", s)
	}
	env := testEnv(nil)
	env.Now = tickingClock()
	return runCLIEnv(t, env, "", append(args, extra...)...), stateFile, before
}

// cdkResume reads again from a STATE message's stream_state and expects a clean run.
func cdkResume(t *testing.T, api *recorder, dir, runDir string, streams []string, message string) {
	t.Helper()
	var m struct {
		State struct {
			Stream json.RawMessage `json:"stream"`
		} `json:"state"`
	}
	if err := json.Unmarshal([]byte(message), &m); err != nil {
		t.Fatal(err)
	}
	resume := t.TempDir()
	writeAt(t, filepath.Join(resume, "config.json"), readText(t, filepath.Join(runDir, "config.json")))
	writeAt(t, filepath.Join(resume, "state-in.json"), `[{"type":"STREAM","stream":`+string(m.State.Stream)+`}]`)
	other := newRecorder(t, newFeedAPI(t, filepath.Join(dir, "data.json")).serve)
	res, _, _ := cdkRead(t, other, filepath.Join(dir, "manifest.yaml"), resume, streams)
	if res.Code != 0 {
		t.Errorf("a read resumed from the mid-run STATE %s: exit %d\n%s", message, res.Code, res.Stderr)
	}
}

// cdkCheckRequests compares what api received with a requests.txt: `n METHOD URI` lines.
func cdkCheckRequests(t *testing.T, api *recorder, file string) {
	t.Helper()
	var want []string
	for _, line := range strings.Split(readText(t, file), "\n") {
		if line == "" {
			continue
		}
		n, rest, ok := strings.Cut(line, " ")
		if _, err := strconv.Atoi(n); !ok || err != nil {
			t.Fatalf("%s: a line this test does not read (headers and bodies are not compared): %q", file, line)
		}
		want = append(want, rest)
	}
	var got []string
	for _, r := range api.requests() {
		got = append(got, r.Method+" "+r.URL)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

var emittedAt = regexp.MustCompile(`,"emitted_at":\d+`)

// cdkMessages are the RECORD and STATE lines of stdout, emitted_at removed.
func cdkMessages(t *testing.T, stdout string) []string {
	t.Helper()
	var out []string
	for _, line := range strings.Split(strings.TrimSuffix(stdout, "\n"), "\n") {
		var m struct{ Type string }
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("stdout line %q: %v", line, err)
		}
		if m.Type == "RECORD" || m.Type == "STATE" {
			out = append(out, emittedAt.ReplaceAllString(line, ""))
		}
	}
	return out
}

// cdkCheckMessages compares the lines exactly. For a per-partition stream, a STATE before the
// last may list fewer partitions than the CDK's (the others not made yet): each partition it
// lists has the CDK's entry, its other keys are the CDK's, and resumed is called with it.
func cdkCheckMessages(t *testing.T, got, want []string, perPartition bool, resumed func(string)) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d lines:\n%s\nwant %d:\n%s", len(got), strings.Join(got, "\n"), len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if got[i] == want[i] {
			continue
		}
		last := i == len(want)-1
		if !perPartition || last || !strings.Contains(want[i], `"type":"STATE"`) {
			t.Errorf("line %d:\n%s\nwant:\n%s", i+1, got[i], want[i])
			continue
		}
		if msg := partialPartitionState(t, got[i], want[i]); msg != "" {
			t.Errorf("line %d: %s\n%s\nwant (or with fewer partitions):\n%s", i+1, msg, got[i], want[i])
			continue
		}
		resumed(got[i])
	}
}

// partialPartitionState says what is wrong with a per-partition STATE line got that is not
// want: "" when it is want with some `states` entries left out, in the same order.
func partialPartitionState(t *testing.T, got, want string) string {
	t.Helper()
	strip := func(line string) (map[string]any, []any) {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		st := m["state"].(map[string]any)["stream"].(map[string]any)["stream_state"].(map[string]any)
		states, _ := st["states"].([]any)
		delete(st, "states")
		return m, states
	}
	g, gs := strip(got)
	w, ws := strip(want)
	if !reflect.DeepEqual(g, w) {
		return "differs beyond the list of partitions"
	}
	j := 0
	for _, e := range gs {
		for j < len(ws) && !reflect.DeepEqual(ws[j], e) {
			j++
		}
		if j == len(ws) {
			return fmt.Sprintf("partition entry %v is not the CDK's", e)
		}
		j++
	}
	if len(gs) == 0 {
		return "lists no partition"
	}
	return ""
}

func readText(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// writeAt writes content at path.
func writeAt(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

// jsonEqual compares two JSON texts as values (key order aside).
func jsonEqual(t *testing.T, a, b string) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal([]byte(a), &x); err != nil {
		t.Fatalf("%v in %s", err, a)
	}
	if err := json.Unmarshal([]byte(b), &y); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// TestIncrementalClampingRefused: the CDK's clamping skips data (its DAY clamping reads
// every other day, and no clamping moves the state), so connector refuses a definition
// that sets it, before any request.
func TestIncrementalClampingRefused(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "incremental-cdk", "clamping")
	manifest := filepath.Join(dir, "manifest.yaml")
	want := manifest + ":47:9: error: DatetimeBasedCursor clamping is not supported yet (incremental_sync)\n"
	t.Run("validate", func(t *testing.T) {
		t.Parallel()
		res := runCLI(t, "", "validate", manifest)
		if res.Code != exitInvalid || !strings.Contains(res.Stderr, want) {
			t.Errorf("exit %d, stderr:\n%s\nwant exit 3 and\n%s", res.Code, res.Stderr, want)
		}
	})
	t.Run("read", func(t *testing.T) {
		t.Parallel()
		api := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
		res, stateFile, _ := cdkRead(t, api, manifest, filepath.Join(dir, "day"), []string{"events"})
		if res.Code != exitInvalid || !strings.Contains(res.Stderr, want) || res.Stdout != "" {
			t.Errorf("exit %d, stdout %q, stderr:\n%s\nwant exit 3 and\n%s", res.Code, res.Stdout, res.Stderr, want)
		}
		if n := len(api.requests()); n != 0 {
			t.Errorf("%d requests, want none", n)
		}
		if _, err := os.Stat(stateFile); err == nil {
			t.Errorf("a state file was written")
		}
	})
}
