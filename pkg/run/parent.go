package run

import (
	"context"
	"errors"

	"connector/pkg/incremental"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/slice"
)

// errStop ends a parent read once the child needs no more of its records.
var errStop = errors.New("the child stream needs no more partitions")

// readParent reads a parent stream for the partitions of st: each record, decoded, goes to
// yield with the parent slice it came from. The parent is read one page at a time (each
// request waits for the child to take the partitions of the page before), with its own
// pagination, partitions and error handling, none of the read's limits, and its pages
// reported to the observer under its own name. Its records are not emitted.
func (st *stream) readParent(ctx context.Context, ps *manifest.Stream, yield func(rec any, sl *slice.Slice) bool) error {
	o := st.o.helper()
	var in *record.Object
	dependent := false
	for _, d := range dependentParents(st.s.Router) {
		dependent = dependent || d == ps
	}
	if dependent && st.cursor != nil {
		in = st.parentIn(ps)
	}
	pst, err := newStream(o, ps, st.s.Name, in)
	if err != nil {
		return &StreamError{Stream: ps.Name, Err: err}
	}
	pst.read = st.read
	if dependent && pst.cursor != nil {
		st.mu.Lock()
		if st.parentCursors == nil {
			st.parentCursors = map[*manifest.Stream]*incremental.Cursor{}
		}
		st.parentCursors[ps] = pst.cursor
		st.mu.Unlock()
	}
	if o.Observer != nil {
		o.Observer.StreamStart(StreamStart{Stream: ps.Name, ParentOf: st.s.Name, Group: ps.Group, Pagination: pst.pag.Describe(), Cursor: pst.describeCursor()})
	}
	res := pst.readAll(ctx, func(sl *slice.Slice) Emitter { return &partitions{yield: yield, slice: sl} })
	stopped := errors.Is(res.Err, errStop)
	if stopped {
		res.Err = nil
	}
	if o.Observer != nil {
		o.Observer.StreamEnd(res)
	}
	if stopped {
		return nil
	}
	return res.Err
}

// partitions is the emitter of a parent read: it decodes each record for the router.
type partitions struct {
	yield func(rec any, sl *slice.Slice) bool
	slice *slice.Slice
}

func (p *partitions) Records(_ string, recs []record.Record) error {
	for _, r := range recs {
		raw := r.Raw
		if r.Object != nil {
			// A transformed parent record: decoded anew, so that nothing the child keeps
			// shares the page's memory.
			var err error
			if raw, err = r.AppendJSON(nil); err != nil {
				return err
			}
		}
		v, err := record.Decode(raw)
		if err != nil {
			return err
		}
		if !p.yield(v, p.slice) {
			return errStop
		}
	}
	return nil
}

func (p *partitions) EndPage() error { return nil }
