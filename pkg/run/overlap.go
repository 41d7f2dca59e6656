package run

import (
	"context"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/paginate"
)

// Overlap. With OffsetIncrement and PageIncrement the next page token depends only on how
// many records a page holds, and counting the elements of the records list is much faster
// than validating them. So once a page has arrived, its records are counted, the paginator
// decides on that count, and the next request goes out at once; the page is then validated,
// emitted and decided on as always (handle) while the next one travels. Only a request the
// read would have sent anyway goes out early: a short page, a limit or a page the count
// cannot be sure of sends nothing ahead. When the page then fails (not JSON) or its
// decision differs from the count's (an object with the records key twice: Count reads the
// first list, Parse both), the early request is cancelled and reported as discarded, like
// a prefetched page, and the right one is sent.

// overlaps says whether the stream's next page token follows from the count of a page's
// records alone.
func (r *reader) overlaps() bool {
	if !r.pag.Enabled() {
		return false
	}
	t := r.s.Paginator.Strategy.Type
	return t == manifest.OffsetIncrement || t == manifest.PageIncrement
}

// ahead sends the request for the page after cur when the count of cur's records already
// decides it, and returns nil when it does not.
func (r *reader) ahead(ctx context.Context, cur *slot) *slot {
	if !r.overlap || cur.resp.Ignored || r.o.MaxPages > 0 && r.res.Pages+1 >= r.o.MaxPages {
		return nil
	}
	n, ok := extract.Count(cur.resp.Body, r.fieldPath(cur.token, cur.first))
	if !ok || r.o.MaxRecords > 0 && r.res.Records+n >= r.o.MaxRecords {
		return nil
	}
	d, err := r.pag.Next(cur.token, paginate.Page{Count: n, URL: cur.req.URL})
	if err != nil || d.Stop {
		return nil
	}
	return r.launch(ctx, d.Token, false, cur.req.URL, true)
}
