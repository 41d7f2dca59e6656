package run

import (
	"errors"
	"fmt"
	"net/http"

	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/slice"
	"connector/pkg/transform"
)

// handle is one page of the pipeline: extract its records, pass them through the filter to
// the emitter, ask the paginator what comes next, apply the limits and the repeat guard,
// and tell the observer. It returns the next page's token, and whether the read goes on
// (Reset: from the slice's first page; orig is the slice as the stream made it).
func (r *sliceReader) handle(p *fetched, guard *repeatGuard, orig *slice.Slice) (next any, end End, err error) {
	req, resp := p.req, p.resp
	defer p.spool.close()
	ev := PageEvent{Stream: r.st.s.Name, Slice: r.sv.s, Method: req.Method, URL: req.URL, Status: resp.Status,
		Size: len(resp.Body) + int(resp.Sunk), TokenBefore: p.token, Lazy: p.lazy}
	if resp.Ignored && p.parts == nil {
		// The error handler said IGNORE: no records, and the slice ends here.
		r.res.pages++
		ev.Number, ev.End, ev.Ignored = r.res.pages, Ignored, resp.Reason
		r.observe(ev)
		return nil, Ignored, nil
	}
	if r.st.transform != nil && !r.st.want.Values {
		// The objects of the last page's records are written and decided on: nothing holds
		// them (a paginator reading last_records could keep one in its token).
		r.arena.Reset()
	}
	var page *parsed
	var emitted int
	var limit Limit
	var leftOut bool
	if p.parts != nil {
		r.res.pages++
		page, emitted, limit, leftOut, err = r.mergeParts(p)
	} else if page, err = r.parse(p); err == nil {
		r.res.pages++
		emitted, limit, leftOut, err = r.emitAll(page, p)
	}
	if err != nil {
		return nil, Failed, err
	}
	ev.Number = r.res.pages
	if r.res.pages == 1 {
		r.res.firstPageRecords = emitted
	}
	r.resets.records += emitted
	ev.Records, ev.Emitted, ev.Shown = page.count, emitted, r.shown
	r.shown = nil
	if p.parts != nil && resp.Ignored {
		// The last chunk's answer was ignored: the CDK ends the slice after the page's
		// records.
		ev.End, ev.Ignored = Ignored, resp.Reason
		if r.out != nil {
			if err := r.out.EndPage(); err != nil {
				return nil, Failed, err
			}
		}
		r.observe(ev)
		return nil, Ignored, nil
	}
	d, derr := r.st.pag.Next(p.token, r.pageInfo(page, resp, req.URL))
	if derr == nil && !d.Stop && r.track != nil && r.st.cursor.DataFeed() && page.count > 0 &&
		r.track.PastRange(page.last) {
		// is_data_feed: the newest-first feed has gone past the read's range.
		d = paginate.Decision{Stop: true, Why: paginate.DataFeedEnd, Strategy: d.Strategy, Count: d.Count, Size: d.Size}
	}
	if derr == nil && !d.Stop {
		derr = guard.check(d.Token)
	}
	ev.Decision = d
	switch {
	case derr != nil:
		ev.End, ev.Err, ev.TokenAfter = Failed, derr, d.Token
	case limit.Set() && !leftOut && d.Stop:
		// The limit coincided with the natural end of the stream: nothing was left out.
		ev.End = Paginated
	case limit.Set():
		ev.End, ev.Limit, ev.TokenAfter = Limited, limit, d.Token
	case !d.Stop && r.st.o.MaxPages > 0 && r.pagesBefore+r.res.pages >= r.st.o.MaxPages:
		ev.End, ev.Limit, ev.TokenAfter = Limited, Limit{Flag: "--max-pages", N: r.st.o.MaxPages}, d.Token
	case !d.Stop && r.testPages() > 0 && r.res.pages-r.pagesFrom >= r.testPages():
		// The test read's pages per slice: this slice ends, the stream goes on.
		ev.End, ev.Limit, ev.TokenAfter = Limited, Limit{Flag: SlicePagesFlag, N: r.testPages()}, d.Token
	case d.Stop:
		ev.End = Paginated
	default:
		ev.TokenAfter = d.Token
	}
	if (ev.End == Continue || ev.End == Paginated) && r.resets.due() {
		// number_of_records: the CDK starts again even after the last page.
		ev.End, ev.Restart.Limit, ev.TokenAfter = Reset, r.resets.limit, nil
		cause := fmt.Sprintf("%d records since the slice started, number_of_records %d", r.resets.records, r.resets.limit)
		if ev.Restart.Slice, derr = r.restart(orig, cause); derr != nil {
			ev.End, ev.Err = Failed, derr
		}
	}
	if ev.End == Limited && ev.Limit.Flag != SlicePagesFlag {
		r.res.Limit = ev.Limit
	}
	if r.out != nil {
		if err := r.out.EndPage(); err != nil {
			return nil, Failed, err
		}
	}
	r.observe(ev)
	if derr != nil {
		return nil, Failed, derr
	}
	return ev.TokenAfter, ev.End, nil
}

// SlicePagesFlag names the limit of a test read's pages per slice in a PageEvent: it ends
// the slice, not the stream.
const SlicePagesFlag = "max_pages_per_slice"

// testPages is the test read's limit of pages per slice (0: none).
func (r *sliceReader) testPages() int {
	if tl := r.st.o.TestRead; tl != nil {
		return tl.Pages
	}
	return 0
}

func (r *sliceReader) observe(ev PageEvent) {
	if r.st.o.Observer != nil {
		r.st.o.Observer.Page(ev)
	}
}

// parse extracts the records of a page, or says what is wrong with its body. A decoder
// other than JSON is only opened here: emitAll decodes the records.
func (r *sliceReader) parse(p *fetched) (*parsed, error) {
	if r.st.dec != nil {
		return r.openDecoded(p)
	}
	req, resp := p.req, p.resp
	page, err := extract.Parse(resp.Body, p.path, r.st.want)
	if err == nil {
		return &parsed{Page: page}, nil
	}
	var nr *extract.NotRecordError
	var de *extract.DepthError
	var tm *extract.TooManyRecordsError
	client := r.st.o.Client
	url := client.Redactor.String(req.URL)
	switch {
	case errors.Is(err, extract.ErrEmpty) && resp.Status == http.StatusNoContent:
		return &parsed{Page: &extract.Page{}}, nil
	case errors.As(err, &de):
		// No excerpt: the start of such a body is brackets.
		return nil, fmt.Errorf("%s %s answered %d with %w", req.Method, url, resp.Status, err)
	case errors.As(err, &tm):
		return nil, fmt.Errorf("%s %s answered %d with more than %d records on one page, a limit of one record per %d bytes of --max-body (--max-body raises the limit)",
			req.Method, url, resp.Status, tm.Max, recordBytes)
	case errors.As(err, &nr):
		return nil, fmt.Errorf("%s %s answered %d, but %v: %s", req.Method, url, resp.Status, err,
			quoteExcerpt(client.RedactedExcerpt(resp.Body)))
	}
	return nil, fmt.Errorf("%s %s answered %d with a body that is not JSON (%v): %s",
		req.Method, url, resp.Status, err, quoteExcerpt(client.RedactedExcerpt(resp.Body)))
}

// quoteExcerpt quotes a redacted excerpt of a body for an error message.
func quoteExcerpt(excerpt string) string {
	if excerpt == "" {
		return "(empty body)"
	}
	return fmt.Sprintf("%q", excerpt)
}

// emit passes the records of a page through the record filter to the emitter. It stops at
// --max-records and then returns the limit, and whether records of the page were left out.
func (r *sliceReader) emit(page *extract.Page, p *fetched) (emitted int, limit Limit, leftOut bool, err error) {
	sel := r.newSelector(p)
	if r.track != nil {
		if err := r.track.EndNow(); err != nil {
			return 0, Limit{}, false, fmt.Errorf("incremental_sync end_datetime: %w", err)
		}
	}
	r.startBatch(len(page.Records))
	for i := range page.Records {
		rec := &page.Records[i]
		obj, ok, err := sel.pass(rec)
		if err != nil {
			return emitted, Limit{}, false, err
		}
		if !ok {
			continue
		}
		if ok, err = r.accept(rec, obj); err != nil {
			return emitted, Limit{}, false, err
		}
		if !ok {
			continue
		}
		emitted++
		if limit = r.recordLimit(); limit.Set() {
			leftOut = i < len(page.Records)-1
			break
		}
	}
	return emitted, limit, leftOut, r.flushBatch()
}

// selector is the record selector's filter and the stream's transformations and schema
// normalization, ready for the records of one page.
type selector struct {
	r     *sliceReader
	vars  map[string]any
	fvars map[string]any
	// batch is the stream's transformations for the records of the page.
	batch *transform.Batch
}

func (r *sliceReader) newSelector(p *fetched) *selector {
	sel := &selector{r: r}
	if r.st.s.Selector.Filter != nil || r.st.transform != nil {
		sel.vars = r.sv.vars(r.st.o.globals(), p.token, p.first)
	}
	if r.st.transform != nil {
		sel.batch = r.st.transform.Batch(sel.vars)
	}
	if r.st.s.Selector.Filter != nil {
		sel.fvars = withParams(sel.vars, r.st.s.Selector.FilterParameters)
	}
	return sel
}

func (sel *selector) keep(value any) (bool, error) {
	sel.fvars["record"] = value
	// An undefined value used as a number or ordered (record['prints'] > 0 on a record
	// without prints) gives the filter's default, false: the record is dropped. A TypeError
	// gives the condition's own text, which is true: the record is kept. Both as in the CDK.
	v, err := sel.r.st.s.Selector.Filter.InterpolateOr(sel.fvars, false)
	if err != nil {
		return false, fmt.Errorf("record_filter: %w", err)
	}
	// The CDK's RecordFilter is an InterpolatedBoolean: the rendered text read as a Python
	// literal, false only for its false values, so "False" from a template with text around
	// its expression drops the record. None drops it too (Python's truthiness), where the CDK
	// keeps it.
	return transform.ValueTruth(v), nil
}

// pass filters, transforms and normalizes a record; obj is the record edited (nil: the
// record's bytes stand), ok false when the filter drops it.
func (sel *selector) pass(rec *extract.Record) (obj *record.Object, ok bool, err error) {
	st := sel.r.st
	filter, chain := st.s.Selector.Filter, sel.batch
	filterFirst := st.s.Selector.FilterFirst
	if filter != nil && (chain == nil || filterFirst) {
		if ok, err := sel.keep(rec.Value); err != nil || !ok {
			return nil, false, err
		}
	}
	if chain != nil {
		if obj, err = transformed(chain, rec, &sel.r.arena); err != nil {
			return nil, false, err
		}
		if obj != nil {
			rec.Value = obj // the filter after and the paginator see the edited record
		}
		if filter != nil && !filterFirst {
			if ok, err := sel.keep(rec.Value); err != nil || !ok {
				return nil, false, err
			}
		}
	}
	if n := st.normalize; n != nil {
		// After the filter, as the CDK's record selector does; a record the schema leaves
		// as it is keeps its bytes.
		if obj != nil {
			n.Apply(obj)
		} else if o, ok := record.Shallow(rec.Raw); ok && n.Apply(o) {
			obj = o
		}
	}
	return obj, true, nil
}

// startBatch empties the batch of records to emit, made at the page's size.
func (r *sliceReader) startBatch(n int) {
	if cap(r.batch) < n {
		r.batch = make([]record.Record, 0, n) // made at the page's size, not grown
	}
	r.batch = r.batch[:0]
}

// accept passes a selected record through the incremental cursor into the batch, and
// counts it; ok false when the cursor leaves it out.
func (r *sliceReader) accept(rec *extract.Record, obj *record.Object) (ok bool, err error) {
	if r.track != nil {
		if obj != nil {
			ok, err = r.track.KeepObject(obj)
		} else {
			ok, err = r.track.Keep(rec.Raw)
		}
		if err != nil || !ok {
			return false, err
		}
	}
	out := record.Record{Raw: rec.Raw}
	if obj != nil {
		out = record.Record{Object: obj}
	}
	if r.st.files {
		// The record's file is downloaded before the record is emitted, as the CDK's
		// record selector does.
		if out.File, err = r.upload(out); err != nil {
			// The records accepted before it are written, as the CDK has emitted them.
			if ferr := r.flushBatch(); ferr != nil {
				return false, ferr
			}
			return false, err
		}
		if r.st.o.Files.Builder {
			// The Builder's records say where their file would go.
			obj := out.Object
			if obj == nil {
				obj, _ = record.Shallow(out.Raw)
			}
			if obj != nil {
				obj.Set("source_file_relative_path", out.File.SourceFileRelativePath)
				out = record.Record{Object: obj, File: out.File}
			}
		}
	}
	r.batch = append(r.batch, out)
	if len(r.shown) < r.st.o.ShowRecords {
		text, err := r.batch[len(r.batch)-1].AppendJSON(nil)
		if err != nil {
			return false, err
		}
		r.shown = append(r.shown, text)
	}
	r.res.records++
	return true, nil
}

// recordLimit is --max-records once the stream has emitted that many.
func (r *sliceReader) recordLimit() Limit {
	o := r.st.o
	if o.MaxRecords > 0 && r.recordsBefore+r.res.records >= o.MaxRecords {
		return Limit{Flag: "--max-records", N: o.MaxRecords}
	}
	return Limit{}
}

// flushBatch hands the batch to the emitter.
func (r *sliceReader) flushBatch() (err error) {
	if r.out != nil && len(r.batch) > 0 {
		err = r.out.Records(r.st.s.Name, r.batch)
		var refused interface{ Refused() bool }
		if errors.As(err, &refused) && refused.Refused() {
			// The output refused the batch whole (a record its format cannot carry): none
			// of its records was written.
			r.res.records -= len(r.batch)
		}
	}
	clear(r.batch) // drop the references into the body
	return err
}

// transformed decodes a record into an ordered object and applies the stream's
// transformations to it; a record that is not an object is left as it is (nil).
func transformed(chain *transform.Batch, rec *extract.Record, arena *record.Arena) (*record.Object, error) {
	obj, ok := arena.ShallowAt(rec.Raw, rec.Members)
	if !ok {
		return nil, nil
	}
	if err := chain.Apply(obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// pageInfo is what the paginator learns from a page.
func (r *sliceReader) pageInfo(page *parsed, resp *httpx.Response, reqURL string) paginate.Page {
	pi := paginate.Page{Count: page.count, Body: page.Body, URL: reqURL,
		Headers: paginate.NewHeaders(resp.Header, reqURL), Vars: r.sv.base}
	if r.st.want.Values {
		pi.LastRecords = make([]any, len(page.Records))
		for i, rec := range page.Records {
			pi.LastRecords[i] = rec.Value
		}
	}
	return pi
}
