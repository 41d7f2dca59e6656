package incremental

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"connector/pkg/record"
	"connector/pkg/template"
)

// The expected values of these tests come from the Airbyte CDK's behaviour
// (/work/briefs/incremental-cdk.md §2.3–2.7 and the recorded runs it cites).

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestTimeFormatParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		out    string
		in     []string
		value  any
		want   string // RFC 3339 with the offset the value keeps
		offset int    // seconds east of UTC
	}{
		{"%s string", "%s", nil, "1709251200", "2024-03-01T00:00:00Z", 0},
		{"%s JSON integer", "%s", nil, json.Number("1709251200"), "2024-03-01T00:00:00Z", 0},
		{"%s JSON float is cut to its integer", "%s", nil, json.Number("1709251200.7"), "2024-03-01T00:00:00Z", 0},
		{"%ms", "%ms", nil, "1709251200123", "2024-03-01T00:00:00.123Z", 0},
		{"%ms JSON integer", "%ms", nil, json.Number("1709251200123"), "2024-03-01T00:00:00.123Z", 0},
		{"%s_as_float", "%s_as_float", nil, "1709251200.5", "2024-03-01T00:00:00.5Z", 0},
		{"%epoch_microseconds", "%epoch_microseconds", nil, "1709251200000001", "2024-03-01T00:00:00.000001Z", 0},
		{"%_ms", "%Y-%m-%dT%H:%M:%S.%_msZ", nil, "2024-03-01T10:20:30.123Z", "2024-03-01T10:20:30.123Z", 0},
		{"%z +0200 kept", "%Y-%m-%dT%H:%M:%S%z", nil, "2024-03-01T00:00:00+0200", "2024-03-01T00:00:00+02:00", 7200},
		{"%z +05:30 kept", "%Y-%m-%dT%H:%M:%S%z", nil, "2024-03-01T00:00:00+05:30", "2024-03-01T00:00:00+05:30", 19800},
		{"%z Z", "%Y-%m-%dT%H:%M:%S%z", nil, "2024-03-01T00:00:00Z", "2024-03-01T00:00:00Z", 0},
		{"%z -0100", "%Y-%m-%dT%H:%M:%S%z", nil, "2024-03-01T00:00:00-0100", "2024-03-01T00:00:00-01:00", -3600},
		{"no zone is UTC", "%Y-%m-%d %H:%M:%S", nil, "2024-03-01 10:00:00", "2024-03-01T10:00:00Z", 0},
		{"cursor_datetime_formats first", "%Y-%m-%d", []string{"%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S"}, "2024-03-03T09:30:00+00:00", "2024-03-03T09:30:00Z", 0},
		{"cursor_datetime_formats second", "%Y-%m-%d", []string{"%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S"}, "2024-03-03 09:30:00", "2024-03-03T09:30:00Z", 0},
		{"datetime_format last", "%Y-%m-%d", []string{"%Y-%m-%dT%H:%M:%S%z"}, "2024-03-03", "2024-03-03T00:00:00Z", 0},
		// The first format that reads the value wins, even when a later one reads it too.
		{"order: %s before %ms", "%ms", []string{"%s"}, "1709251200", "2024-03-01T00:00:00Z", 0},
		{"order: %ms before %s", "%s", []string{"%ms"}, "1709251200", "1970-01-20T18:47:31.2Z", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := newTimeFormat(tt.out, tt.in).parse(tt.value)
			if err != nil {
				t.Fatal(err)
			}
			if want := mustTime(t, tt.want); !got.Equal(want) {
				t.Errorf("parse(%v) = %v, want %v", tt.value, got, want)
			}
			if _, off := got.Zone(); off != tt.offset {
				t.Errorf("parse(%v) has the offset %d s, want %d", tt.value, off, tt.offset)
			}
		})
	}
}

func TestTimeFormatParseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		out   string
		in    []string
		value any
		want  string
	}{
		{"%Y-%m-%dT%H:%M:%SZ", nil, "2024-03-04", `no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 2024-03-04`},
		{"%Y-%m-%d", []string{"%Y-%m-%dT%H:%M:%S%z", "%s"}, "yesterday", `no format in ['%Y-%m-%dT%H:%M:%S%z', '%s', '%Y-%m-%d'] matching yesterday`},
		{"%s", nil, "1709251200.5", `no format in ['%s'] matching 1709251200.5`},
		{"%Y-%m-%dT%H:%M:%SZ", nil, json.Number("20240304"), `no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 20240304`},
		{"%Y-%m-%dT%H:%M:%SZ", nil, "2024-03-04T00:00:00Z trailing", `no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 2024-03-04T00:00:00Z trailing`},
	}
	for _, tt := range tests {
		_, err := newTimeFormat(tt.out, tt.in).parse(tt.value)
		if err == nil || err.Error() != tt.want {
			t.Errorf("parse(%v) with %q + %q: %v\nwant %s", tt.value, tt.in, tt.out, err, tt.want)
		}
	}
}

func TestTimeFormatFormat(t *testing.T) {
	t.Parallel()
	at := mustTime(t, "2024-03-01T12:34:56.789012Z")
	plus2 := mustTime(t, "2024-03-01T02:00:00+02:00")
	whole := mustTime(t, "2024-03-01T00:00:00Z")
	tests := []struct {
		format string
		t      time.Time
		want   string
	}{
		{"%s", at, "1709296496"},
		{"%ms", at, "1709296496789"},
		{"%epoch_microseconds", at, "1709296496789012"},
		// 1098554253192844 µs, which the CDK's float product writes one µs low: exact here.
		{"%epoch_microseconds", time.UnixMicro(1098554253192844).UTC(), "1098554253192844"},
		{"%s_as_float", at, "1709296496.789012"},
		{"%s_as_float", whole, "1709251200.0"},
		{"%s_as_float", whole.Add(100 * time.Millisecond), "1709251200.1"},
		{"%Y-%m-%dT%H:%M:%S.%_msZ", at, "2024-03-01T12:34:56.789Z"},
		{"%Y-%m-%dT%H:%M:%S.%fZ", at, "2024-03-01T12:34:56.789012Z"},
		{"%Y-%m-%dT%H:%M:%SZ", at, "2024-03-01T12:34:56Z"},
		{"%Y-%m-%d", at, "2024-03-01"},
		// The offset the value carries is written, not UTC.
		{"%Y-%m-%dT%H:%M:%S%z", plus2, "2024-03-01T02:00:00+0200"},
		{"%Y-%m-%dT%H:%M:%S%z", whole, "2024-03-01T00:00:00+0000"},
		{"%s", plus2, "1709251200"},
	}
	for _, tt := range tests {
		if got := newTimeFormat(tt.format, nil).format(tt.t); got != tt.want {
			t.Errorf("format(%v, %q) = %q, want %q", tt.t, tt.format, got, tt.want)
		}
	}
}

// dur reads an ISO 8601 duration ("" is none).
func dur(t *testing.T, s string) template.Duration {
	t.Helper()
	if s == "" {
		return template.Duration{}
	}
	d, err := template.ParseDuration(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// testSpec is a DatetimeBasedCursor on updated_at from start to end (RFC 3339).
func testSpec(t *testing.T, format, start, end, step, granularity, lookback string) *spec {
	t.Helper()
	e := mustTime(t, end)
	return &spec{
		field:       "updated_at",
		tf:          newTimeFormat(format, nil),
		start:       mustTime(t, start),
		end:         func() (time.Time, error) { return e, nil },
		step:        dur(t, step),
		granularity: dur(t, granularity),
		lookback:    dur(t, lookback),
		startKey:    "start_time",
		endKey:      "end_time",
	}
}

// testState is a stream state from its JSON.
func testState(t *testing.T, text string) *record.Object {
	t.Helper()
	if text == "" {
		return nil
	}
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*record.Object)
}

func allWindows(t *testing.T, c *dtCursor) []string {
	t.Helper()
	var out []string
	if err := c.windows(func(w window) bool {
		out = append(out, w.start+".."+w.end)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

const isoZ = "%Y-%m-%dT%H:%M:%SZ"

func TestWindows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                               string
		format, start, end                 string
		step, granularity, lookback, state string
		want                               []string
	}{
		{name: "daily, the last window ends at the end", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z", step: "P1D", granularity: "PT1S",
			want: []string{"2024-03-01T00:00:00Z..2024-03-01T23:59:59Z", "2024-03-02T00:00:00Z..2024-03-02T23:59:59Z", "2024-03-03T00:00:00Z..2024-03-03T23:59:59Z",
				"2024-03-04T00:00:00Z..2024-03-04T23:59:59Z", "2024-03-05T00:00:00Z..2024-03-05T12:00:00Z"}},
		{name: "an end on a window boundary", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-03T00:00:00Z", step: "P1D", granularity: "PT1S",
			want: []string{"2024-03-01T00:00:00Z..2024-03-01T23:59:59Z", "2024-03-02T00:00:00Z..2024-03-03T00:00:00Z"}},
		{name: "no step: one window", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z",
			want: []string{"2024-03-01T00:00:00Z..2024-03-05T12:00:00Z"}},
		{name: "a step beyond the end: one window", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z", step: "P1Y", granularity: "PT1S",
			want: []string{"2024-03-01T00:00:00Z..2024-03-05T12:00:00Z"}},
		{name: "date-only format: the last window one day longer", format: "%Y-%m-%d", start: "2024-03-01T00:00:00Z", end: "2024-03-05T00:00:00Z", step: "P2D", granularity: "P1D",
			want: []string{"2024-03-01..2024-03-02", "2024-03-03..2024-03-05"}},
		{name: "P1M windows drift to the 29th", format: isoZ, start: "2024-01-31T00:00:00Z", end: "2024-05-10T00:00:00Z", step: "P1M", granularity: "PT1S",
			want: []string{"2024-01-31T00:00:00Z..2024-02-28T23:59:59Z", "2024-02-29T00:00:00Z..2024-03-28T23:59:59Z",
				"2024-03-29T00:00:00Z..2024-04-28T23:59:59Z", "2024-04-29T00:00:00Z..2024-05-10T00:00:00Z"}},
		{name: "resume at the state, inclusive, windows aligned on it", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-07T00:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"updated_at":"2024-03-05T11:00:00Z"}`,
			want:  []string{"2024-03-05T11:00:00Z..2024-03-06T10:59:59Z", "2024-03-06T11:00:00Z..2024-03-07T00:00:00Z"}},
		{name: "lookback from the state", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-07T00:00:00Z", step: "P1D", granularity: "PT1S", lookback: "P2D",
			state: `{"updated_at":"2024-03-05T11:00:00Z"}`,
			want:  []string{"2024-03-03T11:00:00Z..2024-03-04T10:59:59Z", "2024-03-04T11:00:00Z..2024-03-05T10:59:59Z", "2024-03-05T11:00:00Z..2024-03-06T10:59:59Z", "2024-03-06T11:00:00Z..2024-03-07T00:00:00Z"}},
		{name: "lookback never before the start", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-03T00:00:00Z", step: "P1D", granularity: "PT1S", lookback: "P5D",
			state: `{"updated_at":"2024-03-02T00:00:00Z"}`,
			want:  []string{"2024-03-01T00:00:00Z..2024-03-01T23:59:59Z", "2024-03-02T00:00:00Z..2024-03-03T00:00:00Z"}},
		{name: "a state after the end: no window", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"updated_at":"2024-04-04T00:00:00Z"}`},
		{name: "a state at the end: no window", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"updated_at":"2024-03-05T12:00:00Z"}`},
		{name: "a state before the start: a first run", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-02T12:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"updated_at":"2024-02-04T00:00:00Z"}`,
			want:  []string{"2024-03-01T00:00:00Z..2024-03-01T23:59:59Z", "2024-03-02T00:00:00Z..2024-03-02T12:00:00Z"}},
		{name: "date-range with holes: the holes, then the tail", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-05T12:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"state_type":"date-range","slices":[{"start":"2024-03-01T00:00:00Z","end":"2024-03-02T05:00:00Z"},{"start":"2024-03-04T00:00:00Z","end":"2024-03-04T12:00:00Z","most_recent_cursor_value":"2024-03-04T10:00:00Z"}]}`,
			want:  []string{"2024-03-02T05:00:01Z..2024-03-03T05:00:00Z", "2024-03-03T05:00:01Z..2024-03-03T23:59:59Z", "2024-03-04T12:00:00Z..2024-03-05T12:00:00Z"}},
		{name: "date-range starting after the start: the head first", format: isoZ, start: "2024-03-01T00:00:00Z", end: "2024-03-04T00:00:00Z", step: "P1D", granularity: "PT1S",
			state: `{"state_type":"date-range","slices":[{"start":"2024-03-02T00:00:00Z","end":"2024-03-03T00:00:00Z"}]}`,
			want:  []string{"2024-03-01T00:00:00Z..2024-03-01T23:59:59Z", "2024-03-03T00:00:00Z..2024-03-04T00:00:00Z"}},
		{name: "offsets kept: the start's in window starts, the end's in the last end", format: "%Y-%m-%dT%H:%M:%S%z", start: "2024-03-01T00:00:00+02:00", end: "2024-03-02T12:00:00Z", step: "P1D", granularity: "PT1S",
			want: []string{"2024-03-01T00:00:00+0200..2024-03-01T23:59:59+0200", "2024-03-02T00:00:00+0200..2024-03-02T12:00:00+0000"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sp := testSpec(t, tt.format, tt.start, tt.end, tt.step, tt.granularity, tt.lookback)
			c, err := newDTCursor(sp, testState(t, tt.state))
			if err != nil {
				t.Fatal(err)
			}
			if got := allWindows(t, c); !slices.Equal(got, tt.want) {
				t.Errorf("windows:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestWindowsStop: a consumer that stops takes no more windows.
func TestWindowsStop(t *testing.T) {
	t.Parallel()
	c, err := newDTCursor(testSpec(t, isoZ, "2024-03-01T00:00:00Z", "2024-03-10T00:00:00Z", "P1D", "PT1S", ""), nil)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	c.windows(func(window) bool { n++; return n < 3 })
	if n != 3 {
		t.Errorf("%d windows taken, want 3", n)
	}
}

// stateText is the cursor's state as JSON.
func stateText(t *testing.T, c *dtCursor) string {
	t.Helper()
	b, err := record.Marshal(c.state())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestCloseMergesContiguousWindows(t *testing.T) {
	t.Parallel()
	sp := testSpec(t, isoZ, "2024-03-01T00:00:00Z", "2024-03-05T00:00:00Z", "P1D", "PT1S", "")
	c, err := newDTCursor(sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	var ws []window
	c.windows(func(w window) bool { ws = append(ws, w); return true })
	closeWith := func(i int, max string) {
		t.Helper()
		var m time.Time
		if max != "" {
			m = mustTime(t, max)
		}
		if err := c.close(ws[i], m, max != ""); err != nil {
			t.Fatal(err)
		}
	}
	// Nothing read: the state is the start.
	if got, want := stateText(t, c), `{"updated_at":"2024-03-01T00:00:00Z"}`; got != want {
		t.Errorf("state %s, want %s", got, want)
	}
	// The second window closes first: a hole before it holds the state at the start.
	closeWith(1, "2024-03-02T20:00:00Z")
	if got, want := stateText(t, c), `{"updated_at":"2024-03-01T00:00:00Z"}`; got != want {
		t.Errorf("after a window past a hole: state %s, want %s", got, want)
	}
	// The first closes: both are merged; the state is the greatest record value.
	closeWith(0, "2024-03-01T08:00:00Z")
	if got, want := stateText(t, c), `{"updated_at":"2024-03-02T20:00:00Z"}`; got != want {
		t.Errorf("after the hole closed: state %s, want %s", got, want)
	}
	if len(c.done) != 1 {
		t.Errorf("%d intervals after merging, want 1: %+v", len(c.done), c.done)
	}
	// A window without records moves the interval, not the value.
	closeWith(2, "")
	if got, want := stateText(t, c), `{"updated_at":"2024-03-02T20:00:00Z"}`; got != want {
		t.Errorf("after an empty window: state %s, want %s", got, want)
	}
	if end := c.done[0].end; !end.Equal(mustTime(t, "2024-03-03T23:59:59Z")) {
		t.Errorf("the interval ends at %v, want 2024-03-03T23:59:59Z", end)
	}
	// A record past the window's end (a server that does not filter) moves the state past it.
	closeWith(3, "2024-03-09T00:00:00Z")
	if got, want := stateText(t, c), `{"updated_at":"2024-03-09T00:00:00Z"}`; got != want {
		t.Errorf("after a record past the end: state %s, want %s", got, want)
	}
}

func TestMergeGap(t *testing.T) {
	t.Parallel()
	at := func(s string) time.Time { return mustTime(t, s) }
	tests := []struct {
		name        string
		granularity string
		next        string // the start of the second interval; the first ends at 10:00:00
		merged      bool
	}{
		{"granularity apart", "PT1S", "2024-03-01T10:00:01Z", true},
		{"overlapping", "PT1S", "2024-03-01T09:00:00Z", true},
		{"more than the granularity apart", "PT1S", "2024-03-01T10:00:02Z", false},
		{"no granularity: 1 ms apart", "", "2024-03-01T10:00:00.001Z", true},
		{"no granularity: 2 ms apart", "", "2024-03-01T10:00:00.002Z", false},
	}
	for _, tt := range tests {
		sp := testSpec(t, "%Y-%m-%dT%H:%M:%S.%fZ", "2024-03-01T00:00:00Z", "2024-03-02T00:00:00Z", "", tt.granularity, "")
		c := &dtCursor{sp: sp, done: []interval{
			{start: at(tt.next), end: at("2024-03-01T12:00:00Z"), max: at("2024-03-01T11:00:00Z"), hasMax: true},
			{start: at("2024-03-01T00:00:00Z"), end: at("2024-03-01T10:00:00Z")},
		}}
		c.merge()
		if got := len(c.done) == 1; got != tt.merged {
			t.Errorf("%s: merged %v, want %v (%+v)", tt.name, got, tt.merged, c.done)
			continue
		}
		// Sorted by start; the first interval has no record value: the state is its start.
		want := "2024-03-01T00:00:00.000000Z"
		if tt.merged {
			want = "2024-03-01T11:00:00.000000Z"
		}
		if got := sp.tf.format(c.value()); got != want {
			t.Errorf("%s: value %s, want %s", tt.name, got, want)
		}
	}
}

func TestStateKeepsOtherKeysAndForm(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, format, in, want string }{
		{"extra keys kept in place", isoZ, `{"note":"kept","updated_at":"2024-03-04T00:00:00Z","n":1.50}`, `{"note":"kept","updated_at":"2024-03-04T00:00:00Z","n":1.50}`},
		{"%s is written as a string", "%s", `{"updated_at":1709510400}`, `{"updated_at":"1709510400"}`},
		{"a date-range state is written in the sequential form", isoZ,
			`{"state_type":"date-range","slices":[{"start":"2024-03-01T00:00:00Z","end":"2024-03-02T05:00:00Z"},{"start":"2024-03-04T00:00:00Z","end":"2024-03-04T12:00:00Z","most_recent_cursor_value":"2024-03-04T10:00:00Z"}]}`,
			`{"updated_at":"2024-03-01T00:00:00Z"}`},
		{"a state after the end is kept as it is", isoZ, `{"updated_at":"2024-04-04T00:00:00Z"}`, `{"updated_at":"2024-04-04T00:00:00Z"}`},
		{"a state before the start becomes the start", isoZ, `{"updated_at":"2024-02-04T00:00:00Z"}`, `{"updated_at":"2024-03-01T00:00:00Z"}`},
	}
	for _, tt := range tests {
		sp := testSpec(t, tt.format, "2024-03-01T00:00:00Z", "2024-03-05T12:00:00Z", "P1D", "PT1S", "")
		c, err := newDTCursor(sp, testState(t, tt.in))
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if got := stateText(t, c); got != tt.want {
			t.Errorf("%s: state %s, want %s", tt.name, got, tt.want)
		}
	}
}

func TestStateErrors(t *testing.T) {
	t.Parallel()
	sp := testSpec(t, isoZ, "2024-03-01T00:00:00Z", "2024-03-05T12:00:00Z", "P1D", "PT1S", "")
	for in, want := range map[string]string{
		`{"updated_at":"2024-03-04"}`:                                           `key "updated_at": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching 2024-03-04`,
		`{"state_type":"date-range","slices":3}`:                                `key "slices": a date-range state needs a list of slices`,
		`{"state_type":"date-range","slices":[{"start":"x"}]}`:                  `key "slices[0].start": no format in ['%Y-%m-%dT%H:%M:%SZ'] matching x`,
		`{"state_type":"date-range","slices":[1]}`:                              `key "slices[0]": a slice is an object`,
		`{"state_type":"date-range","slices":[{"end":"2024-03-04T00:00:00Z"}]}`: `key "slices[0].start": missing`,
	} {
		_, err := newDTCursor(sp, testState(t, in))
		var se *StateError
		if !errors.As(err, &se) || err.Error() != want {
			t.Errorf("%s: %v\nwant the StateError %s", in, err, want)
		}
	}
}
