package incremental

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// A Cursor driven as a read drives it: its slices taken in order, each one's request built
// with Inject, its records kept or dropped through a Tracker, the slice closed, and the
// state the CDK would emit written down. The state forms and values are the CDK's for the
// same definitions (cmd/incremental_e2e_test.go runs the same cases through the CLI).

// streamOf loads a definition of one stream "events" with the given incremental_sync (and
// partition_router when not empty), YAML at the retriever's level of indentation.
func streamOf(t *testing.T, inc, router string) *manifest.Stream {
	t.Helper()
	def := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
`
	if router != "" {
		def += "      partition_router:\n" + pad(router, "        ")
	}
	def += "    incremental_sync:\n" + pad(inc, "      ")
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return d.Streams[0]
}

func pad(s, p string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = p + l
	}
	return strings.Join(lines, "\n") + "\n"
}

// clock is a fake clock the test moves by hand.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newClock(t *testing.T, at string) *clock { return &clock{t: mustTime(t, at)} }

// cursorOf makes the cursor of s over its router (a list router's partitions need no
// parent), from a JSON input state ("" for none).
func cursorOf(t *testing.T, s *manifest.Stream, state string, env Env) *Cursor {
	t.Helper()
	c, err := newCursor(s, state, env)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newCursor(s *manifest.Stream, state string, env Env) (*Cursor, error) {
	router, err := slice.NewRouter(s.Router, slice.Env{Globals: env.Globals})
	if err != nil {
		return nil, err
	}
	var st *record.Object
	if state != "" {
		v, err := record.Decode([]byte(state))
		if err != nil {
			return nil, err
		}
		st = v.(*record.Object)
	}
	return New(s, router, st, env)
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := record.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// read drives c: for each slice, "GET url" with the slice's request options, then "keep
// REC" or "drop REC" for each of the records the API answers for that URL, then "state
// JSON" when a STATE message is due; "final JSON" is the state at the end. step, when set,
// runs before each slice (to move a fake clock).
func read(t *testing.T, c *Cursor, answers map[string][]string, step func()) []string {
	t.Helper()
	var log []string
	for sl, err := range c.Slices(context.Background()) {
		if err != nil {
			log = append(log, "error: "+err.Error())
			break
		}
		if step != nil {
			step()
		}
		b := request.New("data", "GET", "https://api.test/events")
		if err := c.Inject(b, sl); err != nil {
			t.Fatal(err)
		}
		req, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		url := strings.TrimPrefix(req.URL, "https://api.test/events")
		log = append(log, "GET "+url)
		tr := c.Track(sl)
		if err := tr.EndNow(); err != nil {
			t.Fatal(err)
		}
		for _, rec := range answers[url] {
			keep, err := tr.Keep([]byte(rec))
			switch {
			case err != nil:
				log = append(log, "error: "+err.Error())
			case keep:
				log = append(log, "keep "+rec)
			default:
				log = append(log, "drop "+rec)
			}
		}
		due, err := c.Close(sl, tr)
		if err != nil {
			t.Fatal(err)
		}
		if due {
			log = append(log, "state "+jsonOf(t, c.State()))
		}
	}
	return append(log, "final "+jsonOf(t, c.Finish()))
}

func same(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

const daily = `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%d"
start_datetime: "{{ config.start }}"
end_datetime: "2024-01-03"
step: P1D
cursor_granularity: P1D
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
`

// A DatetimeBasedCursor without partitions: one slice per step from the start (or the
// state's value) to the end, each stopping a granularity before the next; a STATE after
// every slice, the greatest cursor value of the intervals read without a gap.
func TestDatetimeCursorRead(t *testing.T) {
	tests := []struct {
		name, inc, state string
		answers          map[string][]string
		want             []string
	}{{
		name: "from the start",
		inc:  daily,
		answers: map[string][]string{
			"?since=2024-01-01&until=2024-01-01": {`{"id":1,"updated":"2024-01-01"}`},
			"?since=2024-01-02&until=2024-01-03": {`{"id":2,"updated":"2024-01-03"}`, `{"id":3,"updated":"2024-01-02"}`},
		},
		want: []string{
			"GET ?since=2024-01-01&until=2024-01-01",
			`keep {"id":1,"updated":"2024-01-01"}`,
			`state {"updated":"2024-01-01"}`,
			"GET ?since=2024-01-02&until=2024-01-03",
			`keep {"id":2,"updated":"2024-01-03"}`,
			`keep {"id":3,"updated":"2024-01-02"}`,
			`state {"updated":"2024-01-03"}`,
			`final {"updated":"2024-01-03"}`,
		},
	}, {
		name:    "from the state, its other keys kept",
		inc:     daily,
		state:   `{"note":"kept","updated":"2024-01-02"}`,
		answers: map[string][]string{"?since=2024-01-02&until=2024-01-03": {`{"updated":"2024-01-03"}`}},
		want: []string{
			"GET ?since=2024-01-02&until=2024-01-03",
			`keep {"updated":"2024-01-03"}`,
			`state {"note":"kept","updated":"2024-01-03"}`,
			`final {"note":"kept","updated":"2024-01-03"}`,
		},
	}, {
		// Slices without records do not move the state (the CDK's most_recent_cursor_value).
		name:  "a state before the start starts at the start",
		inc:   daily,
		state: `{"updated":"2023-06-01"}`,
		want: []string{
			"GET ?since=2024-01-01&until=2024-01-01",
			`state {"updated":"2024-01-01"}`,
			"GET ?since=2024-01-02&until=2024-01-03",
			`state {"updated":"2024-01-01"}`,
			`final {"updated":"2024-01-01"}`,
		},
	}, {
		name: "lookback window and named slice keys",
		inc: `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-01-03"
lookback_window: P1D
partition_field_start: from
partition_field_end: to
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: from}
end_time_option: {type: RequestOption, inject_into: header, field_name: X-To}`,
		state:   `{"updated":"2024-01-02"}`,
		answers: map[string][]string{"?from=2024-01-01": {`{"updated":"2024-01-01"}`, `{"updated":"2024-01-02"}`}},
		want: []string{
			"GET ?from=2024-01-01",
			`keep {"updated":"2024-01-01"}`,
			`keep {"updated":"2024-01-02"}`,
			`state {"updated":"2024-01-02"}`,
			`final {"updated":"2024-01-02"}`,
		},
	}, {
		name: "an older date-range state: the hole is read, then from its end",
		inc:  daily,
		state: `{"state_type":"date-range","slices":[
			{"start":"2024-01-01","end":"2024-01-01","most_recent_cursor_value":"2024-01-01"},
			{"start":"2024-01-03","end":"2024-01-03"}]}`,
		answers: map[string][]string{"?since=2024-01-02&until=2024-01-02": {`{"updated":"2024-01-02"}`}},
		want: []string{
			"GET ?since=2024-01-02&until=2024-01-02",
			`keep {"updated":"2024-01-02"}`,
			`state {"updated":"2024-01-02"}`,
			`final {"updated":"2024-01-02"}`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cursorOf(t, streamOf(t, tt.inc, ""), tt.state, Env{Globals: template.Globals{Config: map[string]any{"start": "2024-01-01"}}})
			same(t, read(t, c, tt.answers, nil), tt.want)
		})
	}
}

// The interval's bounds go where the options say: here the end in a header.
func TestDatetimeCursorInjectsHeader(t *testing.T) {
	s := streamOf(t, `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-01-02"
end_time_option: {type: RequestOption, inject_into: header, field_name: X-To}`, "")
	c := cursorOf(t, s, "", Env{})
	for sl := range c.Slices(context.Background()) {
		b := request.New("data", "GET", "https://api.test/events")
		if err := c.Inject(b, sl); err != nil {
			t.Fatal(err)
		}
		req, _ := b.Build()
		if got := req.URL + " X-To: " + req.Header.Get("X-To"); got != "https://api.test/events X-To: 2024-01-02" {
			t.Errorf("request = %s", got)
		}
		if sl.Label() != "2024-01-01 → 2024-01-02" {
			t.Errorf("label = %s", sl.Label())
		}
	}
	if got := c.Describe(); got != "DatetimeBasedCursor on updated from 2024-01-01" {
		t.Errorf("Describe = %s", got)
	}
	if c.Field() != "updated" || c.Filters() || c.DataFeed() {
		t.Errorf("Field %s, Filters %v, DataFeed %v", c.Field(), c.Filters(), c.DataFeed())
	}
}

// Without end_datetime the end is now, from the clock the read gives.
func TestDatetimeCursorEndIsNow(t *testing.T) {
	s := streamOf(t, `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}`, "")
	clk := newClock(t, "2024-03-05T10:11:12.123456789Z")
	c := cursorOf(t, s, "", Env{Now: clk.now})
	same(t, read(t, c, nil, nil), []string{
		"GET ?until=2024-03-05T10%3A11%3A12Z",
		`state {"updated":"2024-01-01T00:00:00Z"}`,
		`final {"updated":"2024-01-01T00:00:00Z"}`,
	})
}

// is_client_side_incremental keeps only the records within [the state's value, the end];
// a record without a cursor value that parses is kept, with one warning for the read.
func TestClientSideFilter(t *testing.T) {
	s := streamOf(t, `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-01-03"
is_client_side_incremental: true`, "")
	var warnings []string
	c := cursorOf(t, s, `{"updated":"2024-01-02"}`, Env{Warn: func(s string) { warnings = append(warnings, s) }})
	if !c.Filters() || c.DataFeed() {
		t.Fatalf("Filters %v, DataFeed %v", c.Filters(), c.DataFeed())
	}
	same(t, read(t, c, map[string][]string{"": {
		`{"updated":"2024-01-01"}`,
		`{"updated":"2024-01-02"}`,
		`{"updated":"2024-01-04"}`,
		`{"id":"no cursor"}`,
		`{"updated":"yesterday"}`,
		`{"updated":"2024-01-03"}`,
	}}, nil), []string{
		"GET ",
		`drop {"updated":"2024-01-01"}`,
		`keep {"updated":"2024-01-02"}`,
		`drop {"updated":"2024-01-04"}`,
		`keep {"id":"no cursor"}`,
		`keep {"updated":"yesterday"}`,
		`keep {"updated":"2024-01-03"}`,
		`state {"updated":"2024-01-03"}`,
		`final {"updated":"2024-01-03"}`,
	})
	same(t, warnings, []string{"events: a record has no cursor value in `updated` that the cursor's formats read; such records are kept and do not move the state"})
}

// is_data_feed: a page whose last record is out of range ends the slice (PastRange), and
// KeepObject judges a record a transformation edited.
func TestDataFeed(t *testing.T) {
	s := streamOf(t, `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-01-03"
is_data_feed: true`, "")
	c := cursorOf(t, s, `{"updated":"2024-01-02"}`, Env{})
	if !c.DataFeed() || !c.Filters() {
		t.Fatalf("DataFeed %v, Filters %v", c.DataFeed(), c.Filters())
	}
	for sl := range c.Slices(context.Background()) {
		tr := c.Track(sl)
		if err := tr.EndNow(); err != nil {
			t.Fatal(err)
		}
		for raw, want := range map[string]bool{`{"updated":"2024-01-01"}`: true, `{"updated":"2024-01-02"}`: false, `{"x":1}`: false, `{"updated":"later"}`: false} {
			if got := tr.PastRange([]byte(raw)); got != want {
				t.Errorf("PastRange(%s) = %v, want %v", raw, got, want)
			}
		}
		o := &record.Object{}
		o.Set("updated", "2024-01-01")
		if keep, err := tr.KeepObject(o); err != nil || keep {
			t.Errorf("KeepObject(2024-01-01) = %v, %v; want dropped", keep, err)
		}
		o.Set("updated", "2024-01-03")
		if keep, err := tr.KeepObject(o); err != nil || !keep {
			t.Errorf("KeepObject(2024-01-03) = %v, %v; want kept", keep, err)
		}
	}
}

// IncrementingCountCursor: one slice from the state's count (or start_value); the state is
// the greatest count seen; a STATE only after a slice with a count.
func TestCountCursorRead(t *testing.T) {
	inc := `
type: IncrementingCountCursor
cursor_field: id
start_value: 5
start_value_option: {type: RequestOption, inject_into: request_parameter, field_name: after}`
	tests := []struct {
		name, state string
		answers     map[string][]string
		want        []string
	}{{
		name:    "records move the count",
		state:   `{"id":7}`,
		answers: map[string][]string{"?after=7": {`{"id":8}`, `{"id":10}`, `{"id":9}`, `{"x":1}`}},
		want:    []string{"GET ?after=7", `keep {"id":8}`, `keep {"id":10}`, `keep {"id":9}`, `keep {"x":1}`, `state {"id":10}`, `final {"id":10}`},
	}, {
		name: "no records: no STATE, the start",
		want: []string{"GET ?after=5", `final {"id":5}`},
	}, {
		name:    "a count that is not a number",
		answers: map[string][]string{"?after=5": {`{"id":"seven"}`}},
		want:    []string{"GET ?after=5", `error: the IncrementingCountCursor's field "id" holds seven, not a number`, `final {"id":5}`},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := cursorOf(t, streamOf(t, inc, ""), tt.state, Env{})
			same(t, read(t, c, tt.answers, nil), tt.want)
		})
	}
	c := cursorOf(t, streamOf(t, inc, ""), `{"id":7}`, Env{})
	if got := c.Describe(); got != "IncrementingCountCursor on id from 7" {
		t.Errorf("Describe = %s", got)
	}
	_, err := newCursor(streamOf(t, inc, "{type: ListPartitionRouter, values: [a], cursor_field: k}"), "", Env{})
	if want := "an IncrementingCountCursor cannot be used with a partition router (as in the Airbyte CDK): give stream events one or the other"; err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
}

const perTeam = `
type: DatetimeBasedCursor
cursor_field: updated
datetime_format: "%Y-%m-%dT%H:%M:%SZ"
start_datetime: "2024-01-01T00:00:00Z"
end_datetime: "2024-01-03T00:00:00Z"
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}`

const teams = `{type: ListPartitionRouter, values: [a, b], cursor_field: team, request_option: {type: RequestOption, inject_into: request_parameter, field_name: team}}`

// One cursor per partition: each partition's own state, the global value and the lookback
// window (the read's duration, on the read's clock) at the end; a STATE after the first
// slice, then at most one per 600 s.
func TestPerPartitionRead(t *testing.T) {
	tests := []struct {
		name, state string
		every       time.Duration
		answers     map[string][]string
		want        []string
	}{{
		name:  "from the start",
		every: 100 * time.Second,
		answers: map[string][]string{
			"?team=a&since=2024-01-01T00%3A00%3A00Z": {`{"updated":"2024-01-02T00:00:00Z"}`},
			"?team=b&since=2024-01-01T00%3A00%3A00Z": {`{"updated":"2024-01-01T12:00:00Z"}`},
		},
		want: []string{
			"GET ?team=a&since=2024-01-01T00%3A00%3A00Z",
			`keep {"updated":"2024-01-02T00:00:00Z"}`,
			`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}}],"lookback_window":0}`,
			"GET ?team=b&since=2024-01-01T00%3A00%3A00Z",
			`keep {"updated":"2024-01-01T12:00:00Z"}`,
			`final {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-01T12:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":200}`,
		},
	}, {
		name:  "a STATE again after 600 s",
		every: 601 * time.Second,
		want: []string{
			"GET ?team=a&since=2024-01-01T00%3A00%3A00Z",
			`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-01T00:00:00Z"}}],"lookback_window":0}`,
			"GET ?team=b&since=2024-01-01T00%3A00%3A00Z",
			`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-01T00:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-01T00:00:00Z"}}],"lookback_window":0}`,
			`final {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-01T00:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-01T00:00:00Z"}}],"lookback_window":0}`,
		},
	}, {
		name:  "a partition in the state starts from its value, a new one from the global less the lookback",
		state: `{"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T06:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":3600}`,
		every: time.Second,
		want: []string{
			"GET ?team=a&since=2024-01-02T06%3A00%3A00Z",
			`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T06:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":3600}`,
			"GET ?team=b&since=2024-01-01T23%3A00%3A00Z",
			`final {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T06:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-01T23:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":3600}`,
		},
	}, {
		name:  "a state of one value: every partition starts from it",
		state: `{"updated":"2024-01-02T00:00:00Z"}`,
		every: time.Second,
		want: []string{
			"GET ?team=a&since=2024-01-02T00%3A00%3A00Z",
			`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":0}`,
			"GET ?team=b&since=2024-01-02T00%3A00%3A00Z",
			`final {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-02T00:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":0}`,
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := newClock(t, "2024-03-01T00:00:00Z")
			c := cursorOf(t, streamOf(t, perTeam, teams), tt.state, Env{Now: clk.now})
			step := func() { clk.t = clk.t.Add(tt.every) }
			same(t, read(t, c, tt.answers, step), tt.want)
		})
	}
}

// global_substream_cursor: one global value, no partition states; no STATE while the parent
// state is empty (the CDK's throttle), the global value at the end.
func TestGlobalCursor(t *testing.T) {
	clk := newClock(t, "2024-03-01T00:00:00Z")
	c := cursorOf(t, streamOf(t, perTeam+"\nglobal_substream_cursor: true", teams), "", Env{Now: clk.now})
	if got := c.Describe(); got != "DatetimeBasedCursor on updated, one cursor per partition" {
		t.Errorf("Describe = %s", got)
	}
	same(t, read(t, c, map[string][]string{
		"?team=a&since=2024-01-01T00%3A00%3A00Z": {`{"updated":"2024-01-02T00:00:00Z"}`},
	}, func() { clk.t = clk.t.Add(1500 * time.Millisecond) }), []string{
		"GET ?team=a&since=2024-01-01T00%3A00%3A00Z",
		`keep {"updated":"2024-01-02T00:00:00Z"}`,
		"GET ?team=b&since=2024-01-01T00%3A00%3A00Z",
		`final {"use_global_cursor":true,"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":3}`,
	})
}

// A partition that comes again while the first is being read is read once, with one
// warning.
func TestDuplicatePartition(t *testing.T) {
	var warnings []string
	c := cursorOf(t, streamOf(t, perTeam, `{type: ListPartitionRouter, values: [a, a, a], cursor_field: team}`), "",
		Env{Now: newClock(t, "2024-03-01T00:00:00Z").now, Warn: func(s string) { warnings = append(warnings, s) }})
	n := 0
	for _, err := range c.Slices(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Errorf("%d slices, want 1", n)
	}
	same(t, warnings, []string{`events: a partition came again in this read ({team: "a"}); it is read once, as the Airbyte CDK does`})
}

// A partition that comes again after the first was read and closed is dropped too: the CDK,
// at concurrency 1, makes every partition before it reads the first and drops each repeat,
// so a read does not depend on how far ahead partitions are made. The request of the
// repeat would otherwise start at the cursor value the first one reached.
func TestDuplicatePartitionAfterTheFirstClosed(t *testing.T) {
	var warnings []string
	clk := newClock(t, "2024-03-01T00:00:00Z")
	c := cursorOf(t, streamOf(t, perTeam, `{type: ListPartitionRouter, values: [a, b, a], cursor_field: team, request_option: {type: RequestOption, inject_into: request_parameter, field_name: team}}`), "",
		Env{Now: clk.now, Warn: func(s string) { warnings = append(warnings, s) }})
	same(t, read(t, c, map[string][]string{
		"?team=a&since=2024-01-01T00%3A00%3A00Z": {`{"updated":"2024-01-02T00:00:00Z"}`},
	}, nil), []string{
		"GET ?team=a&since=2024-01-01T00%3A00%3A00Z",
		`keep {"updated":"2024-01-02T00:00:00Z"}`,
		`state {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}}],"lookback_window":0}`,
		"GET ?team=b&since=2024-01-01T00%3A00%3A00Z",
		`final {"use_global_cursor":false,"states":[{"partition":{"team":"a"},"cursor":{"updated":"2024-01-02T00:00:00Z"}},{"partition":{"team":"b"},"cursor":{"updated":"2024-01-01T00:00:00Z"}}],"state":{"updated":"2024-01-02T00:00:00Z"},"lookback_window":0}`,
	})
	same(t, warnings, []string{`events: a partition came again in this read ({team: "a"}); it is read once, as the Airbyte CDK does`})
}

// A state that does not fit the definition is a *StateError naming the key.
func TestStateErrorsName(t *testing.T) {
	tests := []struct {
		name, inc, router, state, want string
	}{
		{"per-partition lookback", perTeam, teams, `{"states":[],"lookback_window":"x"}`, `key "lookback_window": a number of seconds, not x`},
		{"per-partition use_global_cursor", perTeam, teams, `{"states":[],"use_global_cursor":"yes"}`, `key "use_global_cursor": a boolean, not yes`},
		{"per-partition states", perTeam, teams, `{"states":{"a":1}}`, `key "states": a list of partition states`},
		{"date-range slices", daily, "", `{"state_type":"date-range","slices":{}}`, `key "slices": a date-range state needs a list of slices`},
		{"date-range slice", daily, "", `{"state_type":"date-range","slices":[1]}`, `key "slices[0]": a slice is an object`},
		{"count state", "{type: IncrementingCountCursor, cursor_field: id}", "", `{"id":"many"}`, `key "id": an IncrementingCountCursor's state is a number, not many`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newCursor(streamOf(t, tt.inc, tt.router), tt.state, Env{Globals: template.Globals{Config: map[string]any{"start": "2024-01-01"}}})
			var se *StateError
			if !errors.As(err, &se) {
				t.Fatalf("error = %v, want a *StateError", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error = %q\nwant      %q", err, tt.want)
			}
			if errors.Unwrap(err) == nil {
				t.Error("a StateError unwraps to its cause")
			}
		})
	}
}

// The cursor's fields are checked when it is made, with the field named.
func TestCursorFieldErrors(t *testing.T) {
	tests := []struct {
		name, inc string
		config    map[string]any
		want      string
	}{{
		name:   "a start that does not match the format",
		inc:    "{type: DatetimeBasedCursor, cursor_field: u, datetime_format: \"%Y-%m-%d\", start_datetime: \"{{ config.start }}\"}",
		config: map[string]any{"start": "01/02/2024"},
		want:   `start_datetime datetime "01/02/2024" does not match the format "%Y-%m-%d": `,
	}, {
		name:   "a step that is not a duration",
		inc:    "{type: DatetimeBasedCursor, cursor_field: u, datetime_format: \"%Y-%m-%d\", start_datetime: \"2024-01-01\", step: \"{{ config.step }}\", cursor_granularity: P1D}",
		config: map[string]any{"step": "weekly"},
		want:   `step "weekly": `,
	}, {
		name:   "a negative lookback",
		inc:    "{type: DatetimeBasedCursor, cursor_field: u, datetime_format: \"%Y-%m-%d\", start_datetime: \"2024-01-01\", lookback_window: \"{{ config.lb }}\"}",
		config: map[string]any{"lb": "-P1D"},
		want:   `lookback_window "-P1D": a negative duration`,
	}, {
		name:   "a start_value that is not an integer",
		inc:    "{type: IncrementingCountCursor, cursor_field: id, start_value: \"{{ config.from }}\"}",
		config: map[string]any{"from": "ten"},
		want:   `start_value "ten" is not an integer`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := newCursor(streamOf(t, tt.inc, ""), "", Env{Globals: template.Globals{Config: tt.config}})
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error = %v\nwant it to start with %q", err, tt.want)
			}
		})
	}
}

// min_datetime raises the start, max_datetime caps the end.
func TestMinMaxDatetime(t *testing.T) {
	s := streamOf(t, `
type: DatetimeBasedCursor
cursor_field: u
datetime_format: "%Y-%m-%d"
start_datetime: {type: MinMaxDatetime, datetime: "2023-01-01", min_datetime: "{{ config.min }}"}
end_datetime: {type: MinMaxDatetime, datetime: "2025-01-01", max_datetime: "2024-02-01", datetime_format: "%Y-%m-%d"}
start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: s}
end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: e}`, "")
	c := cursorOf(t, s, "", Env{Globals: template.Globals{Config: map[string]any{"min": "2024-01-15"}}})
	same(t, read(t, c, nil, nil), []string{"GET ?s=2024-01-15&e=2024-02-01", `state {"u":"2024-01-15"}`, `final {"u":"2024-01-15"}`})
}

// StateTime is where a DatetimeBasedCursor's state stands, for api_retention_period.
func TestStateTime(t *testing.T) {
	m := streamOf(t, daily, "").Incremental
	tests := []struct {
		state string
		want  string // "" for none
	}{
		{`{"updated":"2024-01-02"}`, "2024-01-02T00:00:00Z"},
		{`{"other":1}`, ""},
		{`{"updated":"soon"}`, ""},
		{`{"state_type":"date-range","slices":[{"start":"2024-01-01","end":"2024-01-05","most_recent_cursor_value":"2024-01-04"}]}`, "2024-01-04T00:00:00Z"},
		{`{"state_type":"date-range","slices":[{"start":"2024-01-01","end":"2024-01-05"}]}`, "2024-01-05T00:00:00Z"},
		{`{"state_type":"date-range","slices":[]}`, ""},
		{`{"state_type":"date-range","slices":[3]}`, ""},
	}
	for _, tt := range tests {
		st, _ := record.Decode([]byte(tt.state))
		got, ok := StateTime(m, st.(*record.Object), Env{})
		text := ""
		if ok {
			text = got.Format(time.RFC3339)
		}
		if text != tt.want {
			t.Errorf("StateTime(%s) = %q, want %q", tt.state, text, tt.want)
		}
	}
	if _, ok := StateTime(m, nil, Env{}); ok {
		t.Error("no state has no time")
	}
	count := streamOf(t, "{type: IncrementingCountCursor, cursor_field: id}", "").Incremental
	if _, ok := StateTime(count, &record.Object{}, Env{}); ok {
		t.Error("an IncrementingCountCursor's state has no time")
	}
}

// Reduce starts a slice again from the newest cursor value its records reached.
func TestReduce(t *testing.T) {
	c := cursorOf(t, streamOf(t, daily, ""), "", Env{Globals: template.Globals{Config: map[string]any{"start": "2024-01-01"}}})
	var first *record.Object
	for sl := range c.Slices(context.Background()) {
		tr := c.Track(sl)
		if got := c.Reduce(sl, tr); got != sl {
			t.Error("a slice without records is started again whole")
		}
		if _, err := tr.Keep([]byte(`{"updated":"2024-01-01"}`)); err != nil {
			t.Fatal(err)
		}
		first = c.Reduce(sl, tr).Cursor
		break
	}
	if got := jsonOf(t, first); got != `{"start_time":"2024-01-01","end_time":"2024-01-01"}` {
		t.Errorf("reduced = %s", got)
	}
	cc := cursorOf(t, streamOf(t, "{type: IncrementingCountCursor, cursor_field: id}", ""), "", Env{})
	for sl := range cc.Slices(context.Background()) {
		tr := cc.Track(sl)
		if _, err := tr.Keep([]byte(`{"id":12}`)); err != nil {
			t.Fatal(err)
		}
		if v, _ := cc.Reduce(sl, tr).Cursor.Get("start"); fmt.Sprint(v) != "12" {
			t.Errorf("reduced start = %v", v)
		}
	}
	var nilCursor *Cursor
	if nilCursor.Track(nil) != nil {
		t.Error("a nil cursor tracks nothing")
	}
}
