package run

import (
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/slice"
	"connector/pkg/template"
)

// A slice's pagination starts again from its first page when the error handler answers a
// request with RESET_PAGINATION, or when the retriever's pagination_reset limit of records
// is reached, as the CDK's PaginationTracker decides: the records already emitted stay
// emitted; with SPLIT_USING_CURSOR and an incremental cursor the slice then starts at the
// newest cursor value its records had, and a reset that leaves the slice as it was fails;
// otherwise (RESET, or no cursor) the slice may start again unchanged once.

// resets follows the pagination resets of one slice.
type resets struct {
	// split: the slice starts again at the newest cursor value (SPLIT_USING_CURSOR with an
	// incremental cursor).
	split bool
	// limit is number_of_records (0: none); records counts the records emitted since the
	// slice last started.
	limit, records int
	// same counts the resets in a row that left the slice as it was.
	same int
}

func newResets(st *stream) resets {
	pr := st.s.PaginationReset
	if pr == nil {
		return resets{}
	}
	return resets{split: pr.Action == manifest.ResetSplit && st.cursor != nil, limit: pr.Records}
}

// resetsAfterRecords reports a stream whose slices start again after a number of records:
// the page after one cannot be guessed, nor requested ahead.
func resetsAfterRecords(s *manifest.Stream) bool {
	return s.PaginationReset != nil && s.PaginationReset.Records > 0
}

// due reports that the records since the slice last started reach the limit.
func (rs *resets) due() bool { return rs.limit > 0 && rs.records >= rs.limit }

// restart starts the slice's pagination again for cause, and says with which slice; orig is
// the slice as the stream made it.
func (r *sliceReader) restart(orig *slice.Slice, cause string) (*slice.Slice, error) {
	rs := &r.resets
	prev := r.sv.s
	next := prev
	if rs.split {
		next = r.st.cursor.Reduce(orig, r.track)
	}
	if sameCursor(next, prev) {
		rs.same++
		switch {
		case rs.split && rs.same >= 1:
			start, _, _ := prev.Window()
			return nil, fmt.Errorf("pagination reset (%s): SPLIT_USING_CURSOR would start the slice again unchanged, its records having no cursor value newer than its start %s",
				cause, start)
		case !rs.split && rs.same >= 2:
			return nil, fmt.Errorf("pagination reset (%s): the slice was started again unchanged once already, and may be only once", cause)
		}
	} else {
		rs.same = 0
	}
	rs.records = 0
	r.sv = newSliceVars(next, r.st.in)
	return next, nil
}

// sameCursor reports slices with the same interval.
func sameCursor(a, b *slice.Slice) bool {
	if a == b {
		return true
	}
	ka, kb := a.Cursor.Keys(), b.Cursor.Keys()
	if len(ka) != len(kb) {
		return false
	}
	for i, k := range ka {
		va, _ := a.Cursor.Get(k)
		vb, _ := b.Cursor.Get(kb[i])
		if k != kb[i] || template.ToString(va) != template.ToString(vb) {
			return false
		}
	}
	return true
}
