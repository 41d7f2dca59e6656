package run

import (
	"context"

	"connector/pkg/manifest"
	"connector/pkg/slice"
)

// Components reads the retriever of an HttpComponentsResolver, s, to its end: each record,
// decoded, goes to yield with the slice it came from. It is read as a parent stream is
// (its own pagination, partitions and error handling, none of the read's limits), and its
// pages are reported to the observer as those of a parent of the dynamic streams.
func Components(ctx context.Context, o *Options, s *manifest.Stream, yield func(rec any, sl *slice.Slice) bool) Result {
	ro := o.forRead().helper()
	const of = "dynamic_streams"
	st, err := newStream(ro, s, of, nil)
	if ro.Observer != nil {
		ss := StreamStart{Stream: s.Name, ParentOf: of}
		if st != nil {
			ss.Pagination = st.pag.Describe()
		}
		ro.Observer.StreamStart(ss)
	}
	res := Result{Stream: s.Name, ParentOf: of}
	if err != nil {
		res.Err = &StreamError{Stream: s.Name, Err: err}
	} else {
		res = st.readAll(ctx, func(sl *slice.Slice) Emitter { return &partitions{yield: yield, slice: sl} })
	}
	if ro.Observer != nil {
		ro.Observer.StreamEnd(res)
	}
	return res
}
