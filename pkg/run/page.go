package run

import (
	"errors"
	"fmt"
	"net/http"

	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/paginate"
	"connector/pkg/record"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// handle is one page of the pipeline: extract its records, pass them through the filter to
// the emitter, ask the paginator what comes next, apply the limits and the repeat guard,
// and tell the observer. It returns the next page's token, and whether the read goes on.
func (r *sliceReader) handle(p *fetched, guard *repeatGuard) (next any, end End, err error) {
	req, resp := p.req, p.resp
	ev := PageEvent{Stream: r.st.s.Name, Slice: r.sv.s, Method: req.Method, URL: req.URL, Status: resp.Status,
		Size: len(resp.Body), TokenBefore: p.token, Lazy: p.lazy}
	if resp.Ignored {
		// The error handler said IGNORE: no records, and the slice ends here.
		r.res.pages++
		ev.Number, ev.End, ev.Ignored = r.res.pages, Ignored, resp.Reason
		r.observe(ev)
		return nil, Ignored, nil
	}
	page, err := r.parse(p)
	if err != nil {
		return nil, Failed, err
	}
	r.res.pages++
	ev.Number = r.res.pages
	emitted, limit, leftOut, err := r.emitAll(page, p)
	if err != nil {
		return nil, Failed, err
	}
	if r.res.pages == 1 {
		r.res.firstPageRecords = emitted
	}
	ev.Records, ev.Emitted, ev.Shown = page.count, emitted, r.shown
	r.shown = nil
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
	case d.Stop:
		ev.End = Paginated
	default:
		ev.TokenAfter = d.Token
	}
	if ev.End == Limited {
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
	return d.Token, ev.End, nil
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
	o := r.st.o
	filter := r.st.s.Selector.Filter
	chain := r.st.transform
	var vars map[string]any
	if filter != nil || chain != nil {
		vars = r.sv.vars(o.Config, p.token, p.first)
	}
	var fvars map[string]any
	if filter != nil {
		fvars = withParams(vars, r.st.s.Selector.FilterParameters)
	}
	keep := func(value any) (bool, error) {
		fvars["record"] = value
		v, err := filter.Eval(fvars)
		if err != nil {
			return false, fmt.Errorf("record_filter: %w", err)
		}
		return template.Truthy(v), nil
	}
	filterFirst := r.st.s.Selector.FilterFirst
	if r.track != nil {
		if err := r.track.EndNow(); err != nil {
			return 0, Limit{}, false, fmt.Errorf("incremental_sync end_datetime: %w", err)
		}
	}
	if cap(r.batch) < len(page.Records) {
		r.batch = make([]record.Record, 0, len(page.Records)) // made at the page's size, not grown
	}
	r.batch = r.batch[:0]
	for i := range page.Records {
		rec := &page.Records[i]
		if filter != nil && (chain == nil || filterFirst) {
			ok, err := keep(rec.Value)
			if err != nil {
				return emitted, Limit{}, false, err
			}
			if !ok {
				continue
			}
		}
		var obj *record.Object
		if chain != nil {
			var err error
			if obj, err = r.transform(chain, rec.Raw, vars); err != nil {
				return emitted, Limit{}, false, err
			}
			if obj != nil {
				rec.Value = obj // the filter after and the paginator see the edited record
			}
			if filter != nil && !filterFirst {
				ok, err := keep(rec.Value)
				if err != nil {
					return emitted, Limit{}, false, err
				}
				if !ok {
					continue
				}
			}
		}
		if n := r.st.normalize; n != nil {
			// After the filter, as the CDK's record selector does; a record the schema
			// leaves as it is keeps its bytes.
			if obj != nil {
				n.Apply(obj)
			} else if o, ok := record.Shallow(rec.Raw); ok && n.Apply(o) {
				obj = o
			}
		}
		if r.track != nil {
			var ok bool
			var err error
			if obj != nil {
				ok, err = r.track.KeepObject(obj)
			} else {
				ok, err = r.track.Keep(rec.Raw)
			}
			if err != nil {
				return emitted, Limit{}, false, err
			}
			if !ok {
				continue
			}
		}
		if obj != nil {
			r.batch = append(r.batch, record.Record{Object: obj})
		} else {
			r.batch = append(r.batch, record.Record{Raw: rec.Raw})
		}
		if len(r.shown) < o.ShowRecords {
			text, err := r.batch[len(r.batch)-1].AppendJSON(nil)
			if err != nil {
				return emitted, Limit{}, false, err
			}
			r.shown = append(r.shown, text)
		}
		emitted++
		r.res.records++
		if o.MaxRecords > 0 && r.recordsBefore+r.res.records >= o.MaxRecords {
			limit = Limit{Flag: "--max-records", N: o.MaxRecords}
			leftOut = i < len(page.Records)-1
			break
		}
	}
	if r.out != nil && len(r.batch) > 0 {
		err = r.out.Records(r.st.s.Name, r.batch)
	}
	clear(r.batch) // drop the references into the body
	return emitted, limit, leftOut, err
}

// transform decodes a record into an ordered object and applies the stream's
// transformations to it; a record that is not an object is left as it is (nil).
func (r *sliceReader) transform(chain *transform.Chain, raw []byte, vars map[string]any) (*record.Object, error) {
	obj, ok := record.Shallow(raw)
	if !ok {
		return nil, nil
	}
	if err := chain.Apply(obj, vars); err != nil {
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
