package incremental

import (
	"context"
	"fmt"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
)

// datetimeKind is DatetimeBasedCursor: intervals of time from the state (or start_datetime)
// to end_datetime, one cursor for a stream without partitions, else one per partition with
// a global fallback (one cursor for every partition with global_substream_cursor or a
// grouping router).
var datetimeKind = kind{
	make: func(s *manifest.Stream, st *record.Object, env Env) (impl, string, error) {
		m := s.Incremental
		sp, err := newSpec(m, env)
		if err != nil {
			return nil, "", err
		}
		d := &datetimeCursor{sp: sp}
		if s.Router == nil {
			d.one, err = newDTCursor(sp, st)
		} else {
			d.per, err = newPerPartition(sp, st, m.GlobalSubstream || s.Router.Type == manifest.GroupingRouter, env)
			if err == nil {
				// The CDK's list and cartesian routers have no parent state to give: its
				// state then has no parent_state at all.
				d.per.noParentState = s.Router.Type == manifest.ListRouter || s.Router.Type == manifest.CartesianRouter
			}
		}
		if err != nil {
			return nil, "", err
		}
		return d, sp.field, nil
	},
	traits: func(m *manifest.Incremental, router *manifest.Router) []string {
		switch {
		case router == nil:
			return nil
		case m.GlobalSubstream || router.Type == manifest.GroupingRouter:
			return []string{"one cursor for every partition"}
		}
		return []string{"a cursor per partition"}
	},
	stateTime: datetimeStateTime,
}

// datetimeCursor is a DatetimeBasedCursor in a read: one of one and per is set.
type datetimeCursor struct {
	sp  *spec
	one *dtCursor     // a stream without partitions
	per *perPartition // a stream with partitions
}

// mark is what a DatetimeBasedCursor's slice carries for its close.
type mark struct {
	w    window
	part *partState // nil without partitions
}

func (d *datetimeCursor) slices(ctx context.Context, c *Cursor, yield func(*slice.Slice, error) bool) {
	if d.per != nil {
		d.per.slices(ctx, c, yield)
		return
	}
	c.mu.Lock()
	dc := *d.one
	dc.done = append([]interval{}, d.one.done...)
	c.mu.Unlock()
	var stopped bool
	err := dc.windows(func(w window) bool {
		if !yield(d.sp.newSlice(slice.New(nil), w, nil), nil) {
			stopped = true
			return false
		}
		return true
	})
	if err != nil && !stopped {
		yield(nil, err)
	}
}

// newSlice is the slice of one interval of a partition.
func (sp *spec) newSlice(partition *slice.Slice, w window, ps *partState) *slice.Slice {
	sl := &slice.Slice{Partition: partition.Partition, Extra: partition.Extra, Lazy: partition.Lazy, Cursor: &record.Object{}}
	sl.Cursor.Set(sp.startKey, w.start)
	sl.Cursor.Set(sp.endKey, w.end)
	sl.Mark = &mark{w: w, part: ps}
	return sl
}

// inject puts start_time_option, then end_time_option.
func (d *datetimeCursor) inject(b *request.Builder, sl *slice.Slice) error {
	for _, o := range []struct {
		opt *request.Option
		key string
	}{{d.sp.startOpt, d.sp.startKey}, {d.sp.endOpt, d.sp.endKey}} {
		if o.opt == nil {
			continue
		}
		v, _ := sl.Get(o.key)
		if err := o.opt.Inject(b, v, "the incremental_sync's "+o.key); err != nil {
			return err
		}
	}
	return nil
}

// keep parses the record's value; one that has none that parses is kept and leaves the
// state alone, with a warning once, as in the CDK.
func (d *datetimeCursor) keep(t *Tracker, raw any, found bool) (bool, error) {
	var v time.Time
	ok := false
	if found && raw != nil {
		if tm, err := d.sp.tf.parse(raw); err == nil {
			v, ok = tm, true
		}
	}
	if !ok {
		t.c.warnOnce()
		return true, nil
	}
	if d.filters() && !d.cursorOf(t.sl).synced(v, t.end) {
		return false, nil
	}
	if !t.hasMax || v.After(t.max) {
		t.max, t.hasMax = v, true
	}
	return true, nil
}

func (d *datetimeCursor) pastRange(t *Tracker, v any) bool {
	tm, err := d.sp.tf.parse(v)
	if err != nil {
		return false
	}
	return !d.cursorOf(t.sl).synced(tm, t.end)
}

// cursorOf is the cursor a slice's records are checked against.
func (d *datetimeCursor) cursorOf(sl *slice.Slice) *dtCursor {
	if d.one != nil {
		return d.one
	}
	m, _ := sl.Mark.(*mark)
	return d.per.cursorFor(m)
}

func (d *datetimeCursor) filters() bool              { return d.sp.clientSide || d.sp.dataFeed }
func (d *datetimeCursor) dataFeed() bool             { return d.sp.dataFeed }
func (d *datetimeCursor) endNow() (time.Time, error) { return d.sp.end() }

// close: a STATE message after every slice without partitions; with them, after the first
// slice, then once per 600 s.
func (d *datetimeCursor) close(sl *slice.Slice, t *Tracker) (bool, error) {
	m := sl.Mark.(*mark)
	if d.one != nil {
		return true, d.one.close(m.w, t.max, t.hasMax)
	}
	if err := d.per.close(m, t); err != nil {
		return false, err
	}
	return d.per.due(), nil
}

func (d *datetimeCursor) state() *record.Object {
	if d.one != nil {
		return d.one.state()
	}
	return d.per.state()
}

func (d *datetimeCursor) finish(router slice.Router) {
	if d.per != nil {
		d.per.finish(router)
	}
}

func (d *datetimeCursor) abandon() {
	if d.per != nil {
		for _, q := range d.per.parts {
			q.generating = false
		}
	}
}

func (d *datetimeCursor) describe(field string) string {
	if d.one != nil {
		return fmt.Sprintf("DatetimeBasedCursor on %s from %s", field, d.sp.tf.format(d.one.syncStart))
	}
	return fmt.Sprintf("DatetimeBasedCursor on %s, one cursor per partition", field)
}

func (d *datetimeCursor) reduce(t *Tracker) (string, any, bool) {
	if !t.hasMax {
		return "", nil, false
	}
	return d.sp.startKey, d.sp.tf.format(t.max), true
}

// datetimeStateTime is the value under the cursor field of a state, or the first interval
// of a date-range state.
func datetimeStateTime(m *manifest.Incremental, st *record.Object, env Env) (time.Time, bool) {
	if st == nil {
		return time.Time{}, false
	}
	vars := env.Globals.Vars(m.Parameters)
	field, err := m.CursorField.Render(vars)
	if err != nil {
		return time.Time{}, false
	}
	tf := newTimeFormat(m.DatetimeFormat, m.CursorDatetimeFormats)
	v, ok := st.Get(field)
	if t, _ := st.Get("state_type"); t == "date-range" {
		list, _ := st.Get("slices")
		ss, _ := list.([]any)
		if len(ss) == 0 {
			return time.Time{}, false
		}
		first, _ := ss[0].(*record.Object)
		if first == nil {
			return time.Time{}, false
		}
		if v, ok = first.Get("most_recent_cursor_value"); !ok || v == nil {
			v, ok = first.Get("end")
		}
	}
	if !ok || v == nil {
		return time.Time{}, false
	}
	t, err := tf.parse(v)
	return t, err == nil
}
