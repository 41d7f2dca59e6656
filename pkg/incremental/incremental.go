// Package incremental divides a stream's partitions into the intervals an incremental read
// asks for, and keeps where the read stands — the state — as the Airbyte CDK does for the
// same definition: DatetimeBasedCursor (one cursor, or one per partition with a global
// fallback), IncrementingCountCursor. A Cursor is a slice.Router: it wraps the stream's
// partition router, and its slices are the partition's slices × the cursor's intervals.
//
// The read tells the cursor, per slice, the cursor values of the records it emitted (a
// Tracker), and closes each slice read whole, in slice order, once its records are written
// out: the state then covers only slices whose records were all written, with no gap, so a
// read stopped at any moment resumes without losing a record.
package incremental

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"sync"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// Env is what a cursor needs from the read.
type Env struct {
	Config map[string]any
	// Now is the clock of the default end_datetime (nil: time.Now).
	Now func() time.Time
	// Warn hears notes meant for the user.
	Warn func(text string)
}

// StateError is an input state that does not fit the definition, naming the key.
type StateError struct {
	Key string
	Err error
}

func (e *StateError) Error() string { return fmt.Sprintf("key %q: %v", e.Key, e.Err) }
func (e *StateError) Unwrap() error { return e.Err }

// Cursor is the incremental cursor of one read of a stream.
type Cursor struct {
	stream string
	env    Env
	router slice.Router
	field  string
	sp     *spec // DatetimeBasedCursor
	count  *countCursor
	// one is the cursor of a stream without partitions; per the cursors of its partitions.
	one *dtCursor
	per *perPartition

	mu         sync.Mutex
	warnedOnce bool
}

// New makes the cursor of stream s over its partition router, from the stream's input
// state (nil: none). A state that does not fit is a *StateError.
func New(s *manifest.Stream, router slice.Router, st *record.Object, env Env) (*Cursor, error) {
	m := s.Incremental
	c := &Cursor{stream: s.Name, env: env, router: router}
	switch m.Type {
	case manifest.CountCursor:
		if s.Router != nil {
			return nil, fmt.Errorf("an IncrementingCountCursor cannot be used with a partition router (as in the Airbyte CDK): give stream %s one or the other", s.Name)
		}
		cc, err := newCountCursor(m, env, st)
		if err != nil {
			return nil, err
		}
		c.count, c.field = cc, cc.field
		return c, nil
	case manifest.DatetimeCursor:
		sp, err := newSpec(m, env)
		if err != nil {
			return nil, err
		}
		c.sp, c.field = sp, sp.field
		if s.Router == nil {
			c.one, err = newDTCursor(sp, st)
			return c, err
		}
		c.per, err = newPerPartition(sp, st, m.GlobalSubstream || s.Router.Type == manifest.GroupingRouter, env)
		return c, err
	}
	return nil, fmt.Errorf("incremental_sync %s is not supported", m.Type)
}

// Field is the record field the cursor follows.
func (c *Cursor) Field() string { return c.field }

// Filters reports a cursor that drops records outside the read's range
// (is_client_side_incremental, is_data_feed).
func (c *Cursor) Filters() bool { return c.sp != nil && (c.sp.clientSide || c.sp.dataFeed) }

// DataFeed reports is_data_feed: a page whose last record is out of range ends the slice.
func (c *Cursor) DataFeed() bool { return c.sp != nil && c.sp.dataFeed }

// mark is what a cursor's slice carries for its close.
type mark struct {
	w    window
	part *partState // nil without partitions
}

// Slices yields the slices: for each partition of the router, its intervals.
func (c *Cursor) Slices(ctx context.Context) iter.Seq2[*slice.Slice, error] {
	return func(yield func(*slice.Slice, error) bool) {
		switch {
		case c.count != nil:
			yield(c.count.slice(), nil)
		case c.one != nil:
			c.mu.Lock()
			dc := *c.one
			dc.done = append([]interval{}, c.one.done...)
			c.mu.Unlock()
			var stopped bool
			err := dc.windows(func(w window) bool {
				if !yield(c.newSlice(slice.New(nil), w, nil), nil) {
					stopped = true
					return false
				}
				return true
			})
			if err != nil && !stopped {
				yield(nil, err)
			}
		default:
			c.per.slices(ctx, c, yield)
		}
	}
}

// newSlice is the slice of one interval of a partition.
func (c *Cursor) newSlice(partition *slice.Slice, w window, ps *partState) *slice.Slice {
	sl := &slice.Slice{Partition: partition.Partition, Extra: partition.Extra, Lazy: partition.Lazy, Cursor: &record.Object{}}
	sl.Cursor.Set(c.sp.startKey, w.start)
	sl.Cursor.Set(c.sp.endKey, w.end)
	sl.Mark = &mark{w: w, part: ps}
	return sl
}

// Inject puts the partition's values and the interval's bounds in a request: the router's
// options, then start_time_option, then end_time_option.
func (c *Cursor) Inject(b *request.Builder, sl *slice.Slice) error {
	if err := c.router.Inject(b, sl); err != nil {
		return err
	}
	if c.count != nil {
		if c.count.opt != nil {
			v, _ := sl.Get("start")
			return c.count.opt.Inject(b, v, "start_value_option")
		}
		return nil
	}
	for _, o := range []struct {
		opt *request.Option
		key string
	}{{c.sp.startOpt, c.sp.startKey}, {c.sp.endOpt, c.sp.endKey}} {
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

// Tracker follows the records of one slice: the greatest cursor value of those emitted,
// and whether a record is within the read's range. One goroutine uses it.
type Tracker struct {
	c      *Cursor
	sl     *slice.Slice
	max    time.Time
	hasMax bool
	count  countMax
	end    time.Time
	hasEnd bool
}

// Track starts following a slice's records (nil for a nil cursor).
func (c *Cursor) Track(sl *slice.Slice) *Tracker {
	if c == nil {
		return nil
	}
	return &Tracker{c: c, sl: sl}
}

// value is the record's cursor value, parsed; ok false when it has none that parses (the
// CDK then syncs the record and leaves the state alone, with a warning once).
func (t *Tracker) value(v any, found bool) (time.Time, bool) {
	if found && v != nil {
		if tm, err := t.c.sp.tf.parse(v); err == nil {
			return tm, true
		}
	}
	t.c.warnOnce()
	return time.Time{}, false
}

func (c *Cursor) warnOnce() {
	c.mu.Lock()
	first := !c.warnedOnce
	c.warnedOnce = true
	c.mu.Unlock()
	if first && c.env.Warn != nil {
		c.env.Warn(fmt.Sprintf("%s: a record has no cursor value in `%s` that the cursor's formats read; such records are kept and do not move the state", c.stream, c.field))
	}
}

// EndNow re-reads the end of the range (the CDK evaluates it for every record); a page
// calls it once before its records.
func (t *Tracker) EndNow() error {
	if t.c.sp == nil || !t.c.Filters() {
		return nil
	}
	e, err := t.c.sp.end()
	if err != nil {
		return err
	}
	t.end, t.hasEnd = e, true
	return nil
}

// synced is should_be_synced for a parsed value.
func (t *Tracker) synced(v time.Time) bool {
	return t.c.cursorOf(t.sl).synced(v, t.end)
}

// Keep says whether the read keeps a record (the client-side and data feed filters; true
// without them), and when it does, takes its cursor value in.
func (t *Tracker) Keep(raw []byte) (bool, error) {
	v, found := record.Field(raw, t.c.field)
	return t.keep(v, found)
}

// KeepObject is Keep for a record a transformation edited.
func (t *Tracker) KeepObject(o *record.Object) (bool, error) {
	v, found := o.Get(t.c.field)
	return t.keep(v, found)
}

func (t *Tracker) keep(raw any, found bool) (bool, error) {
	if t.c.count != nil {
		return true, t.count.observe(raw, found, t.c.field)
	}
	v, ok := t.value(raw, found)
	if !ok {
		return true, nil
	}
	if t.c.Filters() && !t.synced(v) {
		return false, nil
	}
	if !t.hasMax || v.After(t.max) {
		t.max, t.hasMax = v, true
	}
	return true, nil
}

// PastRange says whether a page's last record (before any filter) is out of the read's
// range, which ends a data feed.
func (t *Tracker) PastRange(raw []byte) bool {
	v, found := record.Field(raw, t.c.field)
	if !found || v == nil {
		return false
	}
	tm, err := t.c.sp.tf.parse(v)
	if err != nil {
		return false
	}
	return !t.synced(tm)
}

// cursorOf is the cursor a slice's records are checked against.
func (c *Cursor) cursorOf(sl *slice.Slice) *dtCursor {
	if c.one != nil {
		return c.one
	}
	m, _ := sl.Mark.(*mark)
	return c.per.cursorFor(m)
}

// Close takes in a slice read whole, after its records were written out; slices are closed
// in order. It says whether the CDK would emit a STATE message now: after every slice; for
// an IncrementingCountCursor only after a slice with a count; for a cursor per partition
// after the first slice, then once per 600 s.
func (c *Cursor) Close(sl *slice.Slice, t *Tracker) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.count != nil:
		c.count.close(t.count)
		return t.count.has, nil
	case c.one != nil:
		m := sl.Mark.(*mark)
		return true, c.one.close(m.w, t.max, t.hasMax)
	}
	if err := c.per.close(sl.Mark.(*mark), t); err != nil {
		return false, err
	}
	return c.per.due(), nil
}

// State is the stream's state now, in the form the CDK writes.
func (c *Cursor) State() *record.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.count != nil:
		return c.count.state()
	case c.one != nil:
		return c.one.state()
	}
	return c.per.state()
}

// Finish is the stream's state at its end (with partitions: the global value and the
// lookback window the CDK adds then).
func (c *Cursor) Finish() *record.Object {
	c.mu.Lock()
	if c.per != nil {
		c.per.finish(c.router)
	}
	c.mu.Unlock()
	return c.State()
}

// Abandon says the read asks for no more slices (a test read's slice limit): the
// partitions whose slices were still being made count as made, so that the state at the
// stream's end takes in the partitions read (the global value, the parent state), as the
// CDK's test read, which stops drawing from its slice generator, counts only the slices
// still open.
func (c *Cursor) Abandon() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.per != nil {
		for _, q := range c.per.parts {
			q.generating = false
		}
	}
}

// Describe says what the cursor does, for traces.
func (c *Cursor) Describe() string {
	switch {
	case c.count != nil:
		return fmt.Sprintf("IncrementingCountCursor on %s from %s", c.field, template.ToString(c.count.syncStart.value()))
	case c.one != nil:
		return fmt.Sprintf("DatetimeBasedCursor on %s from %s", c.field, c.sp.tf.format(c.one.syncStart))
	}
	return fmt.Sprintf("DatetimeBasedCursor on %s, one cursor per partition", c.field)
}

var errNotNumber = errors.New("not a number")

var inf = math.Inf(1)

// StateTime is the cursor value a DatetimeBasedCursor's state stands at (the value under the
// cursor field, or the first interval of a date-range state), for a StateDelegatingStream's
// api_retention_period; ok is false when the state holds none that parses.
func StateTime(m *manifest.Incremental, st *record.Object, env Env) (time.Time, bool) {
	if m.Type != manifest.DatetimeCursor || st == nil {
		return time.Time{}, false
	}
	vars := map[string]any{"config": env.Config, "parameters": params(m.Parameters)}
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

// Reduce is the slice a PaginationReset with SPLIT_USING_CURSOR starts again with: orig
// with its start moved to the newest cursor value of the records t has seen in it, written
// as the cursor writes its slices (the CDK's ConcurrentCursor.reduce_slice_range). Without
// such a value it is orig itself.
func (c *Cursor) Reduce(orig *slice.Slice, t *Tracker) *slice.Slice {
	var key string
	var start any
	switch {
	case c.count != nil && t.count.has:
		key, start = "start", t.count.n.value()
	case c.sp != nil && t.hasMax:
		key, start = c.sp.startKey, c.sp.tf.format(t.max)
	default:
		return orig
	}
	out := *orig
	out.Cursor = &record.Object{}
	for _, k := range orig.Cursor.Keys() {
		v, _ := orig.Cursor.Get(k)
		if k == key {
			v = start
		}
		out.Cursor.Set(k, v)
	}
	return &out
}
