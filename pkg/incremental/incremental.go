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
	// Globals are the run's testing values and the clock of its templates.
	Globals template.Globals
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
	// impl is what the cursor's kind does in a read.
	impl impl

	mu         sync.Mutex
	warnedOnce bool
}

// kind is an incremental cursor of the definition format, everything this package knows of
// it in one value: how it is made for a read, and how it is said (connector streams).
// Each kind is in its own file (datetimekind.go, count.go) and is registered in kinds by one
// line; its fields and their checks are the definition format's, in pkg/manifest (the
// Incremental model and the loader's incremental_sync).
type kind struct {
	// make builds the cursor's work for a read of stream s from its input state st (nil:
	// none), and says the record field it follows. A state that does not fit is a
	// *StateError.
	make func(s *manifest.Stream, st *record.Object, env Env) (impl, string, error)
	// traits are what a description says of m besides its type, cursor field and step, in
	// order; router is the stream's partition router (nil: none).
	traits func(m *manifest.Incremental, router *manifest.Router) []string
	// stateTime is the cursor value a state stands at (nil: a kind whose state holds no
	// time).
	stateTime func(m *manifest.Incremental, st *record.Object, env Env) (time.Time, bool)
}

// kinds are the incremental cursors, by their type in definitions.
var kinds = map[string]kind{
	manifest.DatetimeCursor: datetimeKind,
	manifest.CountCursor:    countKind,
}

// impl is what a kind of cursor does in a read. The Cursor holds c.mu around every call
// but slices, which takes it itself where it must (slices are made while others close).
type impl interface {
	// slices yields the slices of the read: for each partition of c's router, its intervals.
	slices(ctx context.Context, c *Cursor, yield func(*slice.Slice, error) bool)
	// inject puts the interval's values of sl in a request (after the router's).
	inject(b *request.Builder, sl *slice.Slice) error
	// keep says whether a record with cursor value v (found: the record has the field) is
	// kept, and takes the value in t.
	keep(t *Tracker, v any, found bool) (bool, error)
	// close takes in a slice read whole, and says whether a STATE message is due.
	close(sl *slice.Slice, t *Tracker) (bool, error)
	state() *record.Object
	// finish is the end of the stream (router: the partition router under the cursor).
	finish(router slice.Router)
	// abandon counts the partitions still being made as made.
	abandon()
	// describe says what the cursor does, for traces; field is its record field.
	describe(field string) string
	// reduce is the key of the interval's start and the start a slice starts again from after
	// the records t saw (ok false: none).
	reduce(t *Tracker) (key string, start any, ok bool)
	// filters reports a cursor that drops records outside the read's range, dataFeed one
	// whose page with a last record out of range ends the slice.
	filters() bool
	dataFeed() bool
	// endNow is the end of the read's range now; pastRange whether a value is beyond the
	// range of sl. Only cursors that filter are asked.
	endNow() (time.Time, error)
	pastRange(t *Tracker, v any) bool
}

// New makes the cursor of stream s over its partition router, from the stream's input
// state (nil: none). A state that does not fit is a *StateError.
func New(s *manifest.Stream, router slice.Router, st *record.Object, env Env) (*Cursor, error) {
	m := s.Incremental
	k, ok := kinds[m.Type]
	if !ok {
		return nil, fmt.Errorf("incremental_sync %s is not supported", m.Type)
	}
	im, field, err := k.make(s, st, env)
	if err != nil {
		return nil, err
	}
	return &Cursor{stream: s.Name, env: env, router: router, field: field, impl: im}, nil
}

// Summary says an incremental_sync for a list of streams (connector streams): its cursor
// field, rendered with g where it can be (its source where it cannot), and a line of words:
// `DatetimeBasedCursor on updated_at, step P1D, a cursor per partition`. router is the
// stream's partition router (nil: none).
func Summary(m *manifest.Incremental, router *manifest.Router, g template.Globals) (field, text string) {
	show := func(t *template.Template) string {
		if t == nil {
			return ""
		}
		if s, err := t.Render(g.Vars(m.Parameters)); err == nil && s != "" {
			return s
		}
		return t.Source()
	}
	field = show(m.CursorField)
	text = m.Type + " on " + field
	if m.Step != nil {
		text += ", step " + show(m.Step)
	}
	if k, ok := kinds[m.Type]; ok && k.traits != nil {
		for _, t := range k.traits(m, router) {
			text += ", " + t
		}
	}
	return field, text
}

// Field is the record field the cursor follows.
func (c *Cursor) Field() string { return c.field }

// Filters reports a cursor that drops records outside the read's range
// (is_client_side_incremental, is_data_feed).
func (c *Cursor) Filters() bool { return c.impl.filters() }

// DataFeed reports is_data_feed: a page whose last record is out of range ends the slice.
func (c *Cursor) DataFeed() bool { return c.impl.dataFeed() }

// Slices yields the slices: for each partition of the router, its intervals.
func (c *Cursor) Slices(ctx context.Context) iter.Seq2[*slice.Slice, error] {
	return func(yield func(*slice.Slice, error) bool) { c.impl.slices(ctx, c, yield) }
}

// Inject puts the partition's values and the interval's bounds in a request: the router's
// options, then the cursor's (start_time_option, then end_time_option).
func (c *Cursor) Inject(b *request.Builder, sl *slice.Slice) error {
	if err := c.router.Inject(b, sl); err != nil {
		return err
	}
	return c.impl.inject(b, sl)
}

// Tracker follows the records of one slice: the greatest cursor value of those emitted,
// and whether a record is within the read's range. One goroutine uses it.
type Tracker struct {
	c  *Cursor
	sl *slice.Slice
	// max is the greatest time a DatetimeBasedCursor saw, count the greatest count an
	// IncrementingCountCursor saw.
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
	if !t.c.Filters() {
		return nil
	}
	e, err := t.c.impl.endNow()
	if err != nil {
		return err
	}
	t.end, t.hasEnd = e, true
	return nil
}

// Keep says whether the read keeps a record (the client-side and data feed filters; true
// without them), and when it does, takes its cursor value in.
func (t *Tracker) Keep(raw []byte) (bool, error) {
	v, found := record.Field(raw, t.c.field)
	return t.c.impl.keep(t, v, found)
}

// KeepObject is Keep for a record a transformation edited.
func (t *Tracker) KeepObject(o *record.Object) (bool, error) {
	v, found := o.Get(t.c.field)
	return t.c.impl.keep(t, v, found)
}

// PastRange says whether a page's last record (before any filter) is out of the read's
// range, which ends a data feed.
func (t *Tracker) PastRange(raw []byte) bool {
	v, found := record.Field(raw, t.c.field)
	if !found || v == nil {
		return false
	}
	return t.c.impl.pastRange(t, v)
}

// Close takes in a slice read whole, after its records were written out; slices are closed
// in order. It says whether the CDK would emit a STATE message now: after every slice; for
// an IncrementingCountCursor only after a slice with a count; for a cursor per partition
// after the first slice, then once per 600 s.
func (c *Cursor) Close(sl *slice.Slice, t *Tracker) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.impl.close(sl, t)
}

// State is the stream's state now, in the form the CDK writes.
func (c *Cursor) State() *record.Object {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.impl.state()
}

// Finish is the stream's state at its end (with partitions: the global value and the
// lookback window the CDK adds then).
func (c *Cursor) Finish() *record.Object {
	c.mu.Lock()
	c.impl.finish(c.router)
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
	c.impl.abandon()
}

// Describe says what the cursor does, for traces.
func (c *Cursor) Describe() string { return c.impl.describe(c.field) }

var errNotNumber = errors.New("not a number")

var inf = math.Inf(1)

// StateTime is the cursor value a cursor's state stands at (for a DatetimeBasedCursor: the
// value under the cursor field, or the first interval of a date-range state), for a
// StateDelegatingStream's api_retention_period; ok is false when the state holds none that
// parses, or the cursor's state holds no time.
func StateTime(m *manifest.Incremental, st *record.Object, env Env) (time.Time, bool) {
	k, ok := kinds[m.Type]
	if !ok || k.stateTime == nil || st == nil {
		return time.Time{}, false
	}
	return k.stateTime(m, st, env)
}

// Reduce is the slice a PaginationReset with SPLIT_USING_CURSOR starts again with: orig
// with its start moved to the newest cursor value of the records t has seen in it, written
// as the cursor writes its slices (the CDK's ConcurrentCursor.reduce_slice_range). Without
// such a value it is orig itself.
func (c *Cursor) Reduce(orig *slice.Slice, t *Tracker) *slice.Slice {
	key, start, ok := c.impl.reduce(t)
	if !ok {
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
