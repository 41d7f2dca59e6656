package run

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"connector/pkg/extract"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/queryprops"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/slice"
)

// A stream whose requester has a QueryProperties reads each page as the CDK's
// SimpleRetriever does: one request per property chunk, all with the page's token, one
// after the other; the chunk goes into the request parameter that held the QueryProperties
// (its names joined by commas) and is stream_partition.extra_fields.query_properties to
// templates. With property_chunking the page's records are merged by the merge key: the
// records without a key are emitted as they come, the merged ones after them, in the order
// their keys first appeared. The paginator decides on the last chunk's response, and counts
// the records the page emitted (merged ones once). Nothing is requested ahead.
//
// A PropertiesFromEndpoint's property list is read when the stream's first page needs it,
// once per stream (the CDK caches it in the component; a failed read is tried again by the
// next slice, as there): its retriever is read as a stream of one empty slice, with its own
// pagination and error handling and none of the read's limits, and each record gives the
// name at property_field_path.

// queryProps is a stream's QueryProperties, ready to read.
type queryProps struct {
	m        *manifest.QueryProperties
	chunking *queryprops.Chunking
	mu       sync.Mutex
	// chunks are the property chunks of every page; nil until a PropertiesFromEndpoint
	// has been read.
	chunks [][]string
}

func newQueryProps(s *manifest.Stream) (*queryProps, error) {
	m := s.Requester.QueryProperties
	if m == nil {
		return nil, nil
	}
	if s.Decoder != nil {
		return nil, fmt.Errorf("QueryProperties with a %s is not supported yet", s.Decoder.Type)
	}
	qp := &queryProps{m: m}
	if m.Chunking != nil {
		qp.chunking = &queryprops.Chunking{Type: queryprops.LimitType(m.Chunking.LimitType), Limit: m.Chunking.Limit}
	}
	if m.Endpoint == nil {
		qp.chunks = queryprops.Chunks(m.List, m.Always, qp.chunking)
	}
	return qp, nil
}

// propertyChunks returns the property chunks of the stream's pages, reading the
// PropertiesFromEndpoint the first time.
func (st *stream) propertyChunks(ctx context.Context) ([][]string, error) {
	qp := st.qp
	qp.mu.Lock()
	defer qp.mu.Unlock()
	if qp.chunks != nil {
		return qp.chunks, nil
	}
	names, err := st.readProperties(ctx, qp.m.Endpoint)
	if err != nil {
		return nil, fmt.Errorf("PropertiesFromEndpoint: %w", err)
	}
	qp.chunks = queryprops.Chunks(names, qp.m.Always, qp.chunking)
	return qp.chunks, nil
}

// readProperties reads the property names of a PropertiesFromEndpoint, reporting its pages
// to the observer as the properties of st.
func (st *stream) readProperties(ctx context.Context, pe *manifest.PropertiesFromEndpoint) ([]string, error) {
	path, err := renderPath(pe.FieldPath, st.o.globals().Vars(pe.Parameters))
	if err != nil {
		return nil, fmt.Errorf("property_field_path: %w", err)
	}
	o := st.o.helper()
	pst, err := newStream(o, pe.Retriever, st.s.Name, nil)
	if err != nil {
		return nil, &StreamError{Stream: pe.Retriever.Name, Err: err}
	}
	pst.read = st.read
	if o.Observer != nil {
		o.Observer.StreamStart(StreamStart{Stream: pe.Retriever.Name, ParentOf: st.s.Name, Properties: true, Pagination: pst.pag.Describe()})
	}
	var names []string
	var nameErr error
	res := pst.readAll(ctx, func(sl *slice.Slice) Emitter {
		return &partitions{slice: sl, yield: func(rec any, _ *slice.Slice) bool {
			name, err := queryprops.Property(rec, path)
			if err != nil {
				nameErr = err
				return false
			}
			names = append(names, name)
			return true
		}}
	})
	if errors.Is(res.Err, errStop) {
		res.Err = &StreamError{Stream: pe.Retriever.Name, Err: nameErr}
	}
	res.Properties = true
	if o.Observer != nil {
		o.Observer.StreamEnd(res)
	}
	return names, res.Err
}

// part is the request of one property chunk of a page, and its answer.
type part struct {
	req  *httpx.Request
	path []string
	resp *httpx.Response
}

// launchChunks builds the requests of a page's chunks and starts sending them, one after
// the other. The page's request is the last chunk's.
func (r *sliceReader) launchChunks(ctx context.Context, token any, first bool, prevURL string) *fetched {
	p := &fetched{token: token, first: first, done: make(chan struct{})}
	chunks, err := r.st.propertyChunks(ctx)
	if err != nil {
		p.err = err
		close(p.done)
		return p
	}
	parts := make([]part, 0, len(chunks))
	for _, chunk := range chunks {
		req, path, err := r.st.build(ctx, r.sv.withChunk(chunk, r.st.in), token, first, prevURL)
		if err != nil {
			p.err = err
			close(p.done)
			return p
		}
		parts = append(parts, part{req: req, path: path})
	}
	last := parts[len(parts)-1]
	p.req, p.path = last.req, last.path
	sctx, cancel := context.WithCancel(ctx)
	p.cancel = cancel
	go func() {
		defer close(p.done)
		for i := range parts {
			resp, err := r.st.send(sctx, parts[i].req)
			if err != nil {
				p.err = err
				return
			}
			parts[i].resp = resp
		}
		p.parts, p.resp = parts, parts[len(parts)-1].resp
	}()
	return p
}

// withChunk is the slice as a chunk's request sees it: the CDK replaces its extra_fields by
// {"query_properties": chunk}.
func (sv *sliceVars) withChunk(chunk []string, state *record.Object) *sliceVars {
	s := *sv.s
	names := make([]any, len(chunk))
	for i, n := range chunk {
		names[i] = n
	}
	s.Extra = &record.Object{}
	s.Extra.Set("query_properties", names)
	return newSliceVars(&s, state)
}

// injectChunk sets the request parameter of the QueryProperties to the slice's chunk.
func (st *stream) injectChunk(b *request.Builder, sl *slice.Slice) error {
	if st.qp == nil || st.qp.m.Key == "" {
		return nil
	}
	v, _ := sl.Extra.Get("query_properties")
	names, _ := v.([]any)
	chunk := make([]string, len(names))
	for i, n := range names {
		chunk[i], _ = n.(string)
	}
	return b.SetParam(st.qp.m.Key, []string{queryprops.Value(chunk)}, "the requester's QueryProperties")
}

// mergeParts selects the records of every chunk of a page, merges them, and emits them. The
// page it returns holds the emitted records, and the last chunk's body.
func (r *sliceReader) mergeParts(p *fetched) (page *parsed, emitted int, limit Limit, leftOut bool, err error) {
	var merger *queryprops.Merger
	if c := r.st.qp.m.Chunking; c != nil {
		merger = queryprops.NewMerger(c.MergeKey)
	}
	sel := r.newSelector(p)
	if r.track != nil {
		if err := r.track.EndNow(); err != nil {
			return nil, 0, Limit{}, false, fmt.Errorf("incremental_sync end_datetime: %w", err)
		}
	}
	type chosen struct {
		rec extract.Record
		obj *record.Object
	}
	var direct []chosen
	page = &parsed{Page: &extract.Page{}}
	for _, pt := range p.parts {
		if pt.resp.Ignored {
			continue // the error handler's IGNORE: no records
		}
		pg, err := r.parse(&fetched{token: p.token, first: p.first, req: pt.req, resp: pt.resp, path: pt.path})
		if err != nil {
			return nil, 0, Limit{}, false, err
		}
		page.Body = pg.Body
		for i := range pg.Records {
			rec := &pg.Records[i]
			obj, ok, err := sel.pass(rec)
			if err != nil {
				return nil, 0, Limit{}, false, err
			}
			if !ok {
				continue
			}
			if merger != nil {
				text, err := record.Record{Raw: rec.Raw, Object: obj}.AppendJSON(nil)
				if err != nil {
					return nil, 0, Limit{}, false, err
				}
				v, err := record.Decode(text)
				if err != nil {
					return nil, 0, Limit{}, false, err
				}
				if o, isObj := v.(*record.Object); isObj {
					keyed, err := merger.Add(o)
					if err != nil {
						return nil, 0, Limit{}, false, err
					}
					if keyed {
						continue
					}
				}
			}
			direct = append(direct, chosen{*rec, obj})
		}
	}
	if merger != nil {
		for _, o := range merger.Records() {
			direct = append(direct, chosen{extract.Record{Value: o}, o})
		}
	}
	r.startBatch(len(direct))
	for i := range direct {
		c := &direct[i]
		page.Records = append(page.Records, c.rec)
		ok, err := r.accept(&c.rec, c.obj)
		if err != nil {
			return nil, emitted, Limit{}, false, err
		}
		if !ok {
			continue
		}
		emitted++
		if limit = r.recordLimit(); limit.Set() {
			leftOut = i < len(direct)-1
			break
		}
	}
	page.count = len(direct)
	if n := len(direct); n > 0 {
		if page.last, err = (record.Record{Raw: direct[n-1].rec.Raw, Object: direct[n-1].obj}).AppendJSON(nil); err != nil {
			return nil, emitted, Limit{}, false, err
		}
	}
	return page, emitted, limit, leftOut, r.flushBatch()
}
