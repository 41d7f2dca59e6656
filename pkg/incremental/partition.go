package incremental

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"connector/pkg/record"
	"connector/pkg/slice"
)

// switchToGlobal is the CDK's SWITCH_TO_GLOBAL_LIMIT: beyond this many partitions a
// per-partition cursor keeps one global value only.
const switchToGlobal = 10_000

// maxPartitions is the CDK's DEFAULT_MAX_PARTITIONS_NUMBER: beyond, the cursors of finished
// partitions are forgotten first, else the oldest.
const maxPartitions = 25_000

// ParentStater is a router whose parents carry state (incremental_dependency): what the
// child's state keeps under parent_state.
type ParentStater interface {
	ParentState() *record.Object
}

// partState is one partition's cursor and where its slices stand.
type partState struct {
	key       string
	partition *record.Object // the partition with its keys sorted, as the state writes it
	cur       *dtCursor
	// open counts the slices made and not closed; generating is true until the last is
	// made.
	open       int
	generating bool
	// made is set once this read has made the partition's slices: the partition coming
	// again later in the read is dropped.
	made bool
	seq  int
	// entry is the partition's entry in the state, made again after each close.
	entry *record.Object
	// known is the place of the partition among those this read made (-1: from the input
	// state): a state lists the partitions up to the one of the slice last closed, so that
	// it does not depend on how far ahead slices were made.
	known int
}

// perPartition is the CDK's ConcurrentPerPartitionCursor: one cursor per partition, a
// global value for partitions not seen before, and the parents' state.
type perPartition struct {
	sp        *spec
	env       Env
	parts     []*partState
	byKey     map[string]*partState
	useGlobal bool
	// noParentState: the router gives no parent state (a list or a cartesian product),
	// and the final state has no parent_state.
	noParentState bool
	// global is the global value (formatted) the state writes; candidate the greatest
	// value seen this read.
	global, candidate       string
	globalT, candidateT     time.Time
	hasGlobal, hasCandidate bool
	syncedSome              bool
	lookback                int
	parentState             *record.Object
	// pending are the parent states seen as partitions were made, oldest first, with the
	// partition that came with each.
	pending  []pendingParent
	seq      int
	started  time.Time
	warnedDu bool
	// lastMessage is when the last STATE message was due (the CDK emits one per 600 s).
	lastMessage time.Time
	// upTo is the place of the partition of the slice last closed.
	upTo int
	now  func() time.Time
}

type pendingParent struct {
	state *record.Object
	seq   int
}

func newPerPartition(sp *spec, st *record.Object, global bool, env Env) (*perPartition, error) {
	p := &perPartition{sp: sp, env: env, byKey: map[string]*partState{}, useGlobal: global, now: env.Now, upTo: -1}
	if p.now == nil {
		p.now = time.Now
	}
	if st == nil || st.Len() == 0 {
		return p, nil
	}
	_, hasStates := st.Get("states")
	_, hasState := st.Get("state")
	if !hasStates && !hasState {
		// A state of one value, as a stream without partitions writes it: every partition
		// starts from it.
		if err := p.setGlobal(st, sp.field); err != nil {
			return nil, err
		}
	} else {
		if v, ok := st.Get("use_global_cursor"); ok {
			b, isBool := v.(bool)
			if !isBool {
				return nil, &StateError{Key: "use_global_cursor", Err: fmt.Errorf("a boolean, not %v", v)}
			}
			p.useGlobal = p.useGlobal || b
		}
		if v, ok := st.Get("lookback_window"); ok {
			n, err := newNumber(v)
			if err != nil {
				return nil, &StateError{Key: "lookback_window", Err: fmt.Errorf("a number of seconds, not %v", v)}
			}
			f, _ := n.v.Float64()
			p.lookback = int(f)
		}
		if v, ok := st.Get("states"); ok {
			list, isList := v.([]any)
			if !isList {
				return nil, &StateError{Key: "states", Err: fmt.Errorf("a list of partition states")}
			}
			for i, e := range list {
				o, _ := e.(*record.Object)
				var part, cur *record.Object
				if o != nil {
					pv, _ := o.Get("partition")
					cv, _ := o.Get("cursor")
					part, _ = pv.(*record.Object)
					cur, _ = cv.(*record.Object)
				}
				if part == nil || cur == nil {
					return nil, &StateError{Key: fmt.Sprintf("states[%d]", i), Err: fmt.Errorf("each entry has a `partition` object and a `cursor` object")}
				}
				c, err := newDTCursor(sp, cur)
				if err != nil {
					if se, ok := err.(*StateError); ok {
						se.Key = fmt.Sprintf("states[%d].cursor.%s", i, se.Key)
					}
					return nil, err
				}
				key, sorted := partitionKey(part)
				ps := &partState{key: key, partition: sorted, cur: c, known: -1}
				if _, dup := p.byKey[key]; !dup {
					p.parts = append(p.parts, ps)
				}
				p.byKey[key] = ps
			}
		}
		if v, ok := st.Get("state"); ok {
			o, isObj := v.(*record.Object)
			if !isObj {
				return nil, &StateError{Key: "state", Err: fmt.Errorf("an object, not %v", v)}
			}
			if err := p.setGlobal(o, sp.field); err != nil {
				if se, ok := err.(*StateError); ok {
					se.Key = "state." + se.Key
				}
				return nil, err
			}
		}
	}
	if v, ok := st.Get("parent_state"); ok {
		if o, isObj := v.(*record.Object); isObj && o.Len() > 0 {
			p.parentState = o
		}
	}
	return p, nil
}

func (p *perPartition) setGlobal(st *record.Object, field string) error {
	v, ok := st.Get(field)
	if !ok {
		return nil
	}
	t, err := p.sp.tf.parse(v)
	if err != nil {
		return &StateError{Key: field, Err: err}
	}
	p.global, p.globalT, p.hasGlobal = p.sp.tf.format(t), t, true
	p.candidate, p.candidateT, p.hasCandidate = p.global, t, true
	return nil
}

// ParentStateOf is the state a parent stream starts from when the child's partitions
// depend on it (incremental_dependency): the child's parent_state for it, else the child's
// global value, else the child's one value under the parent's cursor field.
func ParentStateOf(child *record.Object, parent, parentField string) *record.Object {
	if child == nil {
		return nil
	}
	rest := &record.Object{}
	for _, k := range child.Keys() {
		if k != "__ab_no_cursor_state_message" {
			v, _ := child.Get(k)
			rest.Set(k, v)
		}
	}
	if rest.Len() == 0 {
		return nil
	}
	if ps, ok := rest.Get("parent_state"); ok {
		if o, ok := ps.(*record.Object); ok {
			if v, ok := o.Get(parent); ok {
				st, _ := v.(*record.Object)
				return st
			}
		}
		return nil
	}
	if g, ok := rest.Get("state"); ok {
		st, _ := g.(*record.Object)
		return st
	}
	if rest.Len() == 1 && parentField != "" {
		v, _ := rest.Get(rest.Keys()[0])
		out := &record.Object{}
		out.Set(parentField, v)
		return out
	}
	return nil
}

// partitionKey is the CDK's key of a partition: its JSON with keys sorted at every level;
// sorted is the partition as the state writes it.
func partitionKey(part *record.Object) (string, *record.Object) {
	sorted := sortKeys(part).(*record.Object)
	b, err := record.Marshal(sorted)
	if err != nil {
		return fmt.Sprint(part), sorted
	}
	return string(b), sorted
}

func sortKeys(v any) any {
	switch x := v.(type) {
	case *record.Object:
		// Python sorts str keys by code point: the byte order of UTF-8.
		keys := slices.Sorted(slices.Values(x.Keys()))
		out := &record.Object{}
		for _, k := range keys {
			e, _ := x.Get(k)
			out.Set(k, sortKeys(e))
		}
		return out
	case *slice.Slice:
		return sortKeys(x.Partition)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = sortKeys(e)
		}
		return out
	}
	return v
}

// fromGlobal is the cursor of a partition not in the state: from the global value less
// the lookback window (seconds), or from the start.
func (p *perPartition) fromGlobal() *dtCursor {
	var st *record.Object
	if p.hasGlobal {
		st = &record.Object{}
		st.Set(p.sp.field, p.sp.tf.format(p.globalT.Add(-time.Duration(p.lookback)*time.Second)))
	}
	c, err := newDTCursor(p.sp, st)
	if err != nil {
		// The global value was written by this format: it reads back.
		c, _ = newDTCursor(p.sp, nil)
	}
	return c
}

func (p *perPartition) cursorFor(m *mark) *dtCursor {
	if m == nil || m.part == nil {
		return p.fromGlobal()
	}
	return m.part.cur
}

// slices makes, for each partition of the router, the slices of its cursor.
func (p *perPartition) slices(ctx context.Context, c *Cursor, yield func(*slice.Slice, error) bool) {
	c.mu.Lock()
	p.started = p.now()
	c.mu.Unlock()
	stater, _ := c.router.(ParentStater)
	for part, err := range c.router.Slices(ctx) {
		if err != nil {
			yield(nil, err)
			return
		}
		c.mu.Lock()
		if !p.useGlobal && len(p.byKey) >= switchToGlobal {
			p.useGlobal = true
			if p.env.Warn != nil {
				p.env.Warn(fmt.Sprintf("%s: more than %d partitions, the state keeps one global cursor value from now on (as the Airbyte CDK does)", c.stream, switchToGlobal))
			}
		}
		key, sorted := partitionKey(part.Partition)
		ps := p.byKey[key]
		// The Airbyte CDK drops a partition that comes again before the first is done, and
		// at concurrency 1 it makes every partition before it reads the first, so each
		// partition is read once per read. Dropping every repeat of this read gives that
		// result whatever the concurrency and however far ahead the parents were read.
		if ps != nil && ps.made {
			warn := !p.warnedDu
			p.warnedDu = true
			c.mu.Unlock()
			if warn && p.env.Warn != nil {
				p.env.Warn(fmt.Sprintf("%s: a partition came again in this read (%s); it is read once, as the Airbyte CDK does", c.stream, part))
			}
			continue
		}
		if ps == nil {
			p.evict()
			ps = &partState{key: key, partition: sorted, cur: p.fromGlobal(), known: p.seq}
			p.parts = append(p.parts, ps)
			p.byKey[key] = ps
		}
		ps.generating, ps.made = true, true
		ps.seq = p.seq
		p.seq++
		if stater != nil {
			st := stater.ParentState()
			if n := len(p.pending); n == 0 || !sameJSON(p.pending[n-1].state, st) {
				p.pending = append(p.pending, pendingParent{state: st, seq: ps.seq})
			}
		}
		cur := *ps.cur
		cur.done = append([]interval{}, ps.cur.done...)
		c.mu.Unlock()
		var stopped bool
		var prev *slice.Slice
		werr := cur.windows(func(w window) bool {
			// Each slice goes out once the next is known, so the last one is known as last.
			if prev != nil && !p.emit(c, ps, prev, false, yield) {
				stopped = true
				return false
			}
			c.mu.Lock()
			ps.open++
			c.mu.Unlock()
			prev = p.sp.newSlice(part, w, ps)
			return true
		})
		if stopped {
			return
		}
		if werr != nil {
			yield(nil, werr)
			return
		}
		if prev == nil {
			c.mu.Lock()
			ps.generating = false
			c.mu.Unlock()
			continue
		}
		if !p.emit(c, ps, prev, true, yield) {
			return
		}
	}
}

// evict forgets partitions, finished ones first, to make room for one more.
func (p *perPartition) evict() {
	for len(p.parts) >= maxPartitions {
		drop := 0
		for i, q := range p.parts {
			if q.open == 0 && !q.generating {
				drop = i
				break
			}
		}
		delete(p.byKey, p.parts[drop].key)
		p.parts = append(p.parts[:drop], p.parts[drop+1:]...)
	}
}

func (p *perPartition) emit(c *Cursor, ps *partState, sl *slice.Slice, last bool, yield func(*slice.Slice, error) bool) bool {
	if last {
		c.mu.Lock()
		ps.generating = false
		c.mu.Unlock()
	}
	return yield(sl, nil)
}

func sameJSON(a, b *record.Object) bool {
	x, _ := record.Marshal(a)
	y, _ := record.Marshal(b)
	return string(x) == string(y)
}

// messageEvery is the CDK's throttle of a per-partition stream's STATE messages.
const messageEvery = 600 * time.Second

// due says whether a STATE message is due after a close, as the CDK's throttle decides:
// the first close of a read, then one per 600 s; with the global cursor, none while the
// parent state is empty.
func (p *perPartition) due() bool {
	now := p.now()
	if !p.lastMessage.IsZero() && now.Sub(p.lastMessage) <= messageEvery {
		return false
	}
	p.lastMessage = now
	return !(p.useGlobal && (p.parentState == nil || p.parentState.Len() == 0))
}

// close takes in a slice of a partition read whole.
func (p *perPartition) close(m *mark, t *Tracker) error {
	ps := m.part
	p.upTo = max(p.upTo, ps.known)
	if t.hasMax {
		p.syncedSome = true
		text := p.sp.tf.format(t.max)
		p.raise(text, t.max)
	}
	if !p.useGlobal {
		if err := ps.cur.close(m.w, t.max, t.hasMax); err != nil {
			return err
		}
		ps.entry = nil
	}
	ps.open--
	if ps.open == 0 && !ps.generating && !p.useGlobal {
		v := ps.cur.value()
		p.raise(p.sp.tf.format(v), v)
	}
	// The parent state of the earliest partition still open, or the newest when all are
	// closed, is what a resumed read may start the parents from.
	if len(p.pending) == 0 {
		return nil
	}
	oldestOpen := -1
	for _, q := range p.parts {
		if q.open > 0 || q.generating {
			if oldestOpen < 0 || q.seq < oldestOpen {
				oldestOpen = q.seq
			}
		}
	}
	for len(p.pending) > 0 && (oldestOpen < 0 || p.pending[0].seq < oldestOpen) {
		p.parentState = p.pending[0].state
		p.pending = p.pending[1:]
	}
	return nil
}

func (p *perPartition) raise(text string, t time.Time) {
	if !p.hasCandidate || t.After(p.candidateT) {
		p.candidate, p.candidateT, p.hasCandidate = text, t, true
	}
}

// finish is the end of the stream: with every partition closed, the global value becomes
// the greatest seen and the lookback window the read's duration in seconds.
func (p *perPartition) finish(router slice.Router) {
	p.upTo = p.seq
	for _, q := range p.parts {
		if q.open > 0 || q.generating {
			return
		}
	}
	if p.syncedSome && p.hasCandidate {
		p.global, p.globalT, p.hasGlobal = p.candidate, p.candidateT, true
		if !p.started.IsZero() {
			p.lookback = int(math.Ceil(p.now().Sub(p.started).Seconds()))
		}
	}
	switch s, ok := router.(ParentStater); {
	case ok:
		p.parentState = s.ParentState()
	case p.noParentState:
		p.parentState = nil
	default:
		p.parentState = &record.Object{}
	}
}

// state is the per-partition state, keys in the CDK's order.
func (p *perPartition) state() *record.Object {
	out := &record.Object{}
	out.Set("use_global_cursor", p.useGlobal)
	if !p.useGlobal {
		states := make([]any, 0, len(p.parts))
		for _, q := range p.parts {
			if q.known > p.upTo {
				continue // made ahead of the slices closed so far
			}
			if q.entry == nil {
				q.entry = &record.Object{}
				q.entry.Set("partition", q.partition)
				q.entry.Set("cursor", q.cur.state())
			}
			states = append(states, q.entry)
		}
		out.Set("states", states)
	}
	if p.hasGlobal {
		g := &record.Object{}
		g.Set(p.sp.field, p.global)
		out.Set("state", g)
	}
	out.Set("lookback_window", p.lookback)
	if p.parentState != nil {
		out.Set("parent_state", p.parentState)
	}
	return out
}
