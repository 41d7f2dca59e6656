package run

import (
	"context"
	"errors"
	"fmt"
	"time"

	"connector/pkg/incremental"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// stateOf is the input state of a stream.
func (o *Options) stateOf(name string) *record.Object {
	if o.StateOf == nil {
		return nil
	}
	return o.StateOf(name)
}

// resolve is the stream a StateDelegatingStream reads: its incremental stream when it has a
// state (any state, as the CDK decides) that is not older than its api_retention_period,
// else its full refresh stream; other streams are themselves.
func (o *Options) resolve(s *manifest.Stream, in *record.Object) *manifest.Stream {
	d := s.Delegating
	if d == nil {
		return s
	}
	pick := d.FullRefresh
	if in != nil && in.Len() > 0 && !o.pastRetention(s, in) {
		pick = d.Incremental
	}
	out := *pick
	out.Name, out.Delegating = s.Name, d
	return &out
}

// CheckState makes sure the input state of each incremental stream fits its definition,
// before anything is read: a *StateError names the stream and the key that does not fit.
func CheckState(o *Options, streams []*manifest.Stream) error {
	for _, s := range streams {
		in := o.stateOf(s.Name)
		s = o.resolve(s, in)
		if s.Incremental == nil || in == nil {
			continue
		}
		in, err := incremental.Migrate(s, in, o.globals())
		if err != nil {
			return &StateError{Stream: s.Name, Err: err}
		}
		if _, err := incremental.New(s, nil, in, o.cursorEnv(nil)); err != nil {
			return &StateError{Stream: s.Name, Err: err}
		}
	}
	return nil
}

// StateError is an input state that does not fit the stream's definition.
type StateError struct {
	Stream string
	Err    error
}

func (e *StateError) Error() string {
	var se *incremental.StateError
	if errors.As(e.Err, &se) {
		return fmt.Sprintf("the state of stream %s does not fit its incremental_sync: %v", e.Stream, e.Err)
	}
	return fmt.Sprintf("stream %s: %v", e.Stream, e.Err)
}

func (e *StateError) Unwrap() error { return e.Err }

func (o *Options) cursorEnv(warn func(string)) incremental.Env {
	return incremental.Env{Globals: o.globals(), Now: o.Now, Warn: warn}
}

// newCursor makes the incremental cursor of a stream over its router.
func (st *stream) newCursor(in *record.Object) error {
	if st.s.Incremental == nil {
		return nil
	}
	router := st.router
	if deps := dependentParents(st.s.Router); len(deps) > 0 {
		router = &parentStates{Router: router, st: st, parents: deps}
	}
	cur, err := incremental.New(st.s, router, in, st.o.cursorEnv(st.o.Warn))
	if err != nil {
		var se *incremental.StateError
		if errors.As(err, &se) {
			return &StateError{Stream: st.s.Name, Err: err}
		}
		return fmt.Errorf("incremental_sync: %w", err)
	}
	st.cursor = cur
	st.router = cur
	return nil
}

// checkpoint takes in a slice once its records are written out: a slice read whole is
// closed in the cursor, and its state told.
func (st *stream) checkpoint(sl *slice.Slice, t *incremental.Tracker, res sliceResult) {
	if errors.Is(res.err, context.Canceled) {
		return
	}
	st.written += res.records
	if st.cursor == nil || res.err != nil || res.Limit.Set() {
		return
	}
	emit, err := st.cursor.Close(sl, t)
	if err != nil {
		if st.o.Warn != nil {
			st.o.Warn(fmt.Sprintf("%s: the state did not take in slice %s: %v", st.s.Name, sl, err))
		}
		return
	}
	if st.o.Checkpoint != nil && st.parentOf == "" {
		st.o.Checkpoint(Checkpoint{Stream: st.s.Name, State: st.cursor.State(), Message: emit, Records: st.written, Slice: sl})
		if emit {
			st.written = 0
		}
	}
}

// finalCheckpoint tells the stream's state at its end; a full refresh stream read to its
// end has the CDK's state of no cursor (a failed one, none).
func (st *stream) finalCheckpoint(failed bool) {
	if st.o.Checkpoint == nil || st.parentOf != "" {
		if st.cursor != nil {
			st.cursor.Finish()
		}
		return
	}
	state := noCursorState()
	if st.cursor != nil {
		state = st.cursor.Finish()
	}
	// A failed stream's final state too: a stream without a cursor has the CDK's state of no
	// cursor, as its FinalStateCursor emits it whatever happened (a message only: Failed and
	// NoCursor keep it out of a state file).
	st.o.Checkpoint(Checkpoint{Stream: st.s.Name, State: state, Message: true, Records: st.written, Final: true, Failed: failed})
	st.written = 0
}

// noCursorState is the state the CDK writes for a stream without a cursor.
func noCursorState() *record.Object {
	o := &record.Object{}
	o.Set("__ab_no_cursor_state_message", true)
	return o
}

// dependentParents are the parent streams whose state the child carries
// (incremental_dependency), in order.
func dependentParents(r *manifest.Router) []*manifest.Stream {
	if r == nil {
		return nil
	}
	var out []*manifest.Stream
	for _, pc := range r.Parents {
		if pc.IncrementalDependency && pc.Stream.Incremental != nil || pc.IncrementalDependency && pc.Stream.Delegating != nil {
			out = append(out, pc.Stream)
		}
	}
	if r.Underlying != nil {
		out = append(out, dependentParents(r.Underlying)...)
	}
	for _, c := range r.Routers {
		out = append(out, dependentParents(c)...)
	}
	return out
}

// parentStates is the router of a child whose parents carry state: it says the parents'
// states, for the child's parent_state.
type parentStates struct {
	slice.Router
	st      *stream
	parents []*manifest.Stream
}

func (p *parentStates) ParentState() *record.Object {
	out := &record.Object{}
	p.st.mu.Lock()
	defer p.st.mu.Unlock()
	for _, ps := range p.parents {
		if c := p.st.parentCursors[ps]; c != nil {
			out.Set(ps.Name, c.State())
		} else if in := p.st.parentIn(ps); in != nil {
			out.Set(ps.Name, in)
		}
	}
	return out
}

// parentIn is the state a dependent parent starts from: taken from the child's state.
func (st *stream) parentIn(ps *manifest.Stream) *record.Object {
	field := ""
	inc := ps.Incremental
	if ps.Delegating != nil {
		inc = ps.Delegating.Incremental.Incremental
	}
	if inc != nil && inc.CursorField != nil && inc.CursorField.IsLiteral() {
		field = inc.CursorField.Source()
	}
	return incremental.ParentStateOf(st.in, ps.Name, field)
}

// describeCursor says what the stream's cursor does, for traces ("" without one).
func (st *stream) describeCursor() string {
	if st.cursor == nil {
		return ""
	}
	return st.cursor.Describe()
}

// pastRetention says whether the state of a StateDelegatingStream is older than the API
// keeps data (api_retention_period): the read then falls back to its full refresh stream,
// as the CDK does, rather than miss what the API no longer lists.
func (o *Options) pastRetention(s *manifest.Stream, in *record.Object) bool {
	d := s.Delegating
	if d.APIRetentionPeriod == "" {
		return false
	}
	if _, ok := in.Get("__ab_no_cursor_state_message"); ok && in.Len() == 1 {
		return false // a full refresh just read everything: as recent as now
	}
	warn := func(text string) {
		if o.Warn != nil {
			o.Warn(text)
		}
	}
	period := d.APIRetentionPeriod
	if t, err := template.Compile(period, []string{"config"}); err == nil {
		if text, err := t.Render(o.globals().Vars(nil)); err == nil {
			period = text
		}
	}
	dur, err := template.ParseDuration(period)
	if err != nil {
		warn(fmt.Sprintf("%s: api_retention_period %q is not an ISO 8601 duration; the state is used as it is", s.Name, period))
		return false
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	cutoff := dur.SubFrom(now().UTC())
	t, ok := incremental.StateTime(d.Incremental.Incremental, in, o.cursorEnv(nil))
	if ok && !t.Before(cutoff) {
		return false
	}
	warn(fmt.Sprintf("%s: the state's cursor value is older than the API's retention period of %s (cutoff %s): reading the full refresh stream so that nothing is lost",
		s.Name, period, cutoff.Format("2006-01-02T15:04:05Z")))
	return true
}
