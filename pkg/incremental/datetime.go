package incremental

import (
	"fmt"
	"slices"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// spec is a DatetimeBasedCursor as a stream reads it: its templates evaluated once, as the
// CDK does when it builds the stream.
type spec struct {
	field            string
	tf               timeFormat
	start            time.Time
	end              func() (time.Time, error)
	step             template.Duration // zero: one slice
	granularity      template.Duration // zero: none
	lookback         template.Duration // zero: none
	startKey, endKey string
	startOpt, endOpt *request.Option
	dataFeed         bool
	clientSide       bool
}

// newSpec evaluates a DatetimeBasedCursor's fields with the config.
func newSpec(m *manifest.Incremental, env Env) (*spec, error) {
	vars := env.Globals.Vars(m.Parameters)
	render := func(t *template.Template, field string) (string, error) {
		if t == nil {
			return "", nil
		}
		s, err := t.Render(vars)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		return s, nil
	}
	sp := &spec{dataFeed: m.IsDataFeed, clientSide: m.IsClientSideIncremental, startKey: "start_time", endKey: "end_time"}
	var err error
	if sp.field, err = render(m.CursorField, "cursor_field"); err != nil {
		return nil, err
	}
	sp.tf = newTimeFormat(m.DatetimeFormat, m.CursorDatetimeFormats)
	if k, err := render(m.PartitionFieldStart, "partition_field_start"); err != nil {
		return nil, err
	} else if k != "" {
		sp.startKey = k
	}
	if k, err := render(m.PartitionFieldEnd, "partition_field_end"); err != nil {
		return nil, err
	} else if k != "" {
		sp.endKey = k
	}
	duration := func(text, field string) (template.Duration, error) {
		if text == "" {
			return template.Duration{}, nil
		}
		d, err := template.ParseDuration(text)
		if err != nil {
			return d, fmt.Errorf("%s %q: %w", field, text, err)
		}
		if d.Months < 0 || d.Exact < 0 {
			return d, fmt.Errorf("%s %q: a negative duration", field, text)
		}
		return d, nil
	}
	if sp.granularity, err = duration(m.CursorGranularity, "cursor_granularity"); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		t    *template.Template
		name string
		to   *template.Duration
	}{{m.Step, "step", &sp.step}, {m.LookbackWindow, "lookback_window", &sp.lookback}} {
		text, err := render(f.t, f.name)
		if err != nil {
			return nil, err
		}
		if *f.to, err = duration(text, f.name); err != nil {
			return nil, err
		}
	}
	if sp.start, err = minMax(m.Start, m.DatetimeFormat, vars, "start_datetime"); err != nil {
		return nil, err
	}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	if m.End == nil {
		sp.end = func() (time.Time, error) { return now().UTC().Truncate(time.Microsecond), nil }
	} else {
		sp.end = func() (time.Time, error) { return minMax(m.End, m.DatetimeFormat, vars, "end_datetime") }
	}
	if sp.startOpt, err = request.NewOption(m.StartTimeOption, vars); err != nil {
		return nil, fmt.Errorf("start_time_option: %w", err)
	}
	if sp.endOpt, err = request.NewOption(m.EndTimeOption, vars); err != nil {
		return nil, fmt.Errorf("end_time_option: %w", err)
	}
	return sp, nil
}

// minMax is MinMaxDatetime.get_datetime: the datetime, raised to min_datetime and capped at
// max_datetime, all read with the value's format (the cursor's when it has none).
func minMax(d *manifest.DatetimeValue, cursorFormat string, vars map[string]any, field string) (time.Time, error) {
	format := d.Format
	if format == "" {
		format = cursorFormat
	}
	read := func(t *template.Template, name string) (time.Time, bool, error) {
		if t == nil {
			return time.Time{}, false, nil
		}
		text, err := t.Render(vars)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%s %s: %w", field, name, err)
		}
		if text == "" && name != "datetime" {
			return time.Time{}, false, nil
		}
		// As the CDK reads it: str() of the rendered text read as a Python literal, so that
		// a template that renders "2026-09-27" in quotes gives the date (amazon-ads.yaml).
		text = template.LiteralText(text)
		v, err := template.ParseTime(text, format)
		if err != nil {
			return time.Time{}, false, fmt.Errorf("%s %s %q does not match the format %q: %v", field, name, text, format, err)
		}
		return v, true, nil
	}
	t, _, err := read(d.Datetime, "datetime")
	if err != nil {
		return t, err
	}
	if lo, ok, err := read(d.Min, "min_datetime"); err != nil {
		return t, err
	} else if ok && lo.After(t) {
		t = lo
	}
	if hi, ok, err := read(d.Max, "max_datetime"); err != nil {
		return t, err
	} else if ok && hi.Before(t) {
		t = hi
	}
	return t, nil
}

// interval is a part of the time line read whole: the CDK's {start, end,
// most_recent_cursor_value}.
type interval struct {
	start, end time.Time
	max        time.Time // the greatest cursor value seen in it
	hasMax     bool
}

// dtCursor is one DatetimeBasedCursor over one partition: the CDK's ConcurrentCursor with
// its state in the sequential form.
type dtCursor struct {
	sp *spec
	// legacy is the input state, whose keys the output state keeps.
	legacy *record.Object
	// done are the intervals read whole, merged, in order.
	done []interval
	// syncStart is where records start to count for the filters: the state value, or the
	// start.
	syncStart time.Time
}

// newDTCursor makes the cursor of one partition from its state (nil or empty: none).
func newDTCursor(sp *spec, st *record.Object) (*dtCursor, error) {
	c := &dtCursor{sp: sp, syncStart: sp.start}
	if st == nil || st.Len() == 0 {
		c.done = []interval{{start: sp.start, end: sp.start, max: sp.start, hasMax: true}}
		return c, nil
	}
	if t, _ := st.Get("state_type"); t == "date-range" {
		return c, c.dateRange(st)
	}
	c.legacy = st
	if v, ok := st.Get(sp.field); ok && v != nil {
		t, err := sp.tf.parse(v)
		if err != nil {
			return nil, &StateError{Key: sp.field, Err: err}
		}
		if !t.Before(sp.start) {
			c.syncStart = t
		}
	}
	c.done = []interval{{start: sp.start, end: c.syncStart, max: c.syncStart, hasMax: true}}
	return c, nil
}

// dateRange reads the CDK's older state of intervals: {"state_type": "date-range",
// "slices": [{"start", "end", "most_recent_cursor_value"}]}.
func (c *dtCursor) dateRange(st *record.Object) error {
	raw, _ := st.Get("slices")
	list, ok := raw.([]any)
	if !ok {
		return &StateError{Key: "slices", Err: fmt.Errorf("a date-range state needs a list of slices")}
	}
	for i, s := range list {
		o, ok := s.(*record.Object)
		if !ok {
			return &StateError{Key: fmt.Sprintf("slices[%d]", i), Err: fmt.Errorf("a slice is an object")}
		}
		var iv interval
		for _, f := range []struct {
			key string
			to  *time.Time
		}{{"start", &iv.start}, {"end", &iv.end}, {"most_recent_cursor_value", &iv.max}} {
			v, ok := o.Get(f.key)
			if !ok || v == nil {
				if f.key != "most_recent_cursor_value" {
					return &StateError{Key: fmt.Sprintf("slices[%d].%s", i, f.key), Err: fmt.Errorf("missing")}
				}
				continue
			}
			t, err := c.sp.tf.parse(v)
			if err != nil {
				return &StateError{Key: fmt.Sprintf("slices[%d].%s", i, f.key), Err: err}
			}
			*f.to = t
			if f.key == "most_recent_cursor_value" {
				iv.hasMax = true
			}
		}
		c.done = append(c.done, iv)
	}
	if len(c.done) == 0 {
		c.done = []interval{{start: c.sp.start, end: c.sp.start, max: c.sp.start, hasMax: true}}
		return nil
	}
	switch first := c.done[0]; {
	case first.hasMax:
		c.syncStart = first.max
	default:
		c.syncStart = first.end
	}
	c.merge()
	return nil
}

// merge sorts the intervals and joins those that touch: the next starts within the
// granularity (or a millisecond) of the end of the one before.
func (c *dtCursor) merge() {
	slices.SortStableFunc(c.done, func(a, b interval) int {
		if d := a.start.Compare(b.start); d != 0 {
			return d
		}
		return a.end.Compare(b.end)
	})
	gap := c.sp.granularity
	if gap.IsZero() {
		gap = template.Duration{Exact: time.Millisecond}
	}
	out := c.done[:1]
	for _, iv := range c.done[1:] {
		last := &out[len(out)-1]
		if !gap.AddTo(last.end).Before(iv.start) {
			if iv.end.After(last.end) {
				last.end = iv.end
			}
			if iv.hasMax && (!last.hasMax || iv.max.After(last.max)) {
				last.max, last.hasMax = iv.max, true
			}
			continue
		}
		out = append(out, iv)
	}
	c.done = out
}

// window is one slice's interval, as the slice carries it (formatted).
type window struct{ start, end string }

// windows yields the intervals still to read, in order: the holes between the intervals
// read, then from the last one (less the lookback window) to the end.
func (c *dtCursor) windows(yield func(window) bool) error {
	sp := c.sp
	done := append([]interval{}, c.done...)
	g := sp.granularity
	if done[0].start.After(sp.start) {
		if !c.split(sp.start, done[0].start, false, yield) {
			return nil
		}
	}
	for i := 0; i+1 < len(done); i++ {
		if !c.split(g.AddTo(done[i].end), done[i+1].start, false, yield) {
			return nil
		}
	}
	end, err := sp.end()
	if err != nil {
		return err
	}
	c.split(sp.lookback.SubFrom(done[len(done)-1].end), end, true, yield)
	return nil
}

// split cuts [lower, upper] into windows of step; every window but the one that reaches
// the end stops a granularity before the next starts.
func (c *dtCursor) split(lower, upper time.Time, upperIsEnd bool, yield func(window) bool) bool {
	sp := c.sp
	if !lower.Before(upper) || upper.Before(sp.start) {
		return true
	}
	if lower.Before(sp.start) {
		lower = sp.start
	}
	g := sp.granularity
	if sp.step.IsZero() || !sp.step.AddTo(lower).Before(upper) {
		hi := upper
		if !g.IsZero() && !upperIsEnd {
			hi = g.SubFrom(upper)
		}
		return yield(window{sp.tf.format(lower), sp.tf.format(hi)})
	}
	for {
		u := sp.step.AddTo(lower)
		reached := !u.Before(upper)
		if reached {
			u = upper
		}
		hi := u
		if !g.IsZero() && (!upperIsEnd || !reached) {
			hi = g.SubFrom(u)
		}
		if !yield(window{sp.tf.format(lower), sp.tf.format(hi)}) {
			return false
		}
		if reached {
			return true
		}
		lower = u
	}
}

// close takes in a window read whole, with the greatest cursor value of its records.
func (c *dtCursor) close(w window, max time.Time, hasMax bool) error {
	s, err := c.sp.tf.parse(w.start)
	if err != nil {
		return err
	}
	e, err := c.sp.tf.parse(w.end)
	if err != nil {
		return err
	}
	c.done = append(c.done, interval{start: s, end: e, max: max, hasMax: hasMax})
	c.merge()
	return nil
}

// value is the state's cursor value: the greatest cursor value of the intervals read
// without a gap from the start (or that start).
func (c *dtCursor) value() time.Time {
	if first := c.done[0]; first.hasMax {
		return first.max
	}
	return c.done[0].start
}

// state is the cursor's state: the input state's keys, with the cursor field's value.
func (c *dtCursor) state() *record.Object {
	out := &record.Object{}
	if c.legacy != nil {
		for _, k := range c.legacy.Keys() {
			v, _ := c.legacy.Get(k)
			out.Set(k, v)
		}
	}
	out.Set(c.sp.field, c.sp.tf.format(c.value()))
	return out
}

// synced is the CDK's should_be_synced for a parsed cursor value: within [sync start, end].
func (c *dtCursor) synced(t time.Time, end time.Time) bool {
	return !t.Before(c.syncStart) && !t.After(end)
}
