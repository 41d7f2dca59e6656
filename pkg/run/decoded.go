package run

import (
	"errors"
	"fmt"
	"io"

	"connector/pkg/decode"
	"connector/pkg/extract"
)

// parsed is a page after parsing. For JSON it holds every record; for another decoder
// (JSON lines, CSV, XML, gzip, zip) it holds the values still to decode, which emitAll reads
// and emits in batches, so that a large body is never held as records all at once.
type parsed struct {
	*extract.Page
	values *decode.Values
	// first is a value decoded ahead (XML: the response templates read).
	first []byte
	// count is the number of records of the page; last is the last one's JSON text.
	count int
	last  []byte
}

// decodedBatch is how many records of a decoded page are emitted at a time.
const decodedBatch = 1000

// openDecoded starts decoding a page with the stream's decoder. What pagination templates
// read as `response` is what the CDK's decoder yields first: the document for XmlDecoder,
// an empty mapping for a streamed decoder (a GzipDecoder of JSON).
func (r *sliceReader) openDecoded(p *fetched) (*parsed, error) {
	pg := &parsed{Page: &extract.Page{}}
	if p.spool != nil && p.spool.f != nil {
		pg.values = r.st.dec.OpenReader(p.spool.f)
	} else {
		pg.values = r.st.dec.Open(p.resp.Body)
	}
	if !r.st.want.Body {
		return pg, nil
	}
	if r.st.dec.Streamed() {
		pg.Body = map[string]any{}
		return pg, nil
	}
	v, err := pg.values.Next()
	if err != nil && err != io.EOF {
		return nil, r.decodeError(p, pg, err)
	}
	pg.first = v
	pg.Body = map[string]any{}
	if v != nil {
		whole, err := extract.Parse(v, nil, extract.Want{Body: true})
		if err != nil {
			return nil, r.decodeError(p, pg, err)
		}
		pg.Body = whole.Body
	}
	return pg, nil
}

// emitAll emits the records of a page: all at once for JSON, in batches as they are
// decoded for another decoder. It stops at --max-records as emit does.
func (r *sliceReader) emitAll(pg *parsed, p *fetched) (emitted int, limit Limit, leftOut bool, err error) {
	if pg.values == nil {
		pg.count = len(pg.Records)
		if pg.count > 0 {
			pg.last = pg.Records[pg.count-1].Raw
		}
		return r.emit(pg.Page, p)
	}
	// Records are kept past their batch only for a paginator that reads them (last_records).
	keep := r.st.want.Values && r.st.s.Paginator != nil
	want := r.st.want
	want.Body, want.LazyBody = false, false
	var batch extract.Page
	var kept []extract.Record
	flush := func() error {
		n, l, lo, err := r.emit(&batch, p)
		emitted += n
		if len(batch.Records) > 0 {
			pg.last = append(pg.last[:0], batch.Records[len(batch.Records)-1].Raw...)
		}
		if keep {
			for _, rec := range batch.Records {
				kept = append(kept, extract.Record{Value: rec.Value})
			}
		}
		clear(batch.Records)
		batch.Records = batch.Records[:0]
		limit, leftOut = l, lo
		return err
	}
	for !limit.Set() {
		v := pg.first
		if v != nil {
			pg.first = nil
		} else {
			v, err = pg.values.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return emitted, Limit{}, false, r.decodeError(p, pg, err)
			}
		}
		w := want
		if p.spool == nil || keep {
			left := want.MaxRecords - pg.count
			if left <= 0 {
				return emitted, Limit{}, false, r.decodeError(p, pg, &extract.TooManyRecordsError{Max: want.MaxRecords})
			}
			w.MaxRecords = left
		} else {
			// A body read from disk whose records are not kept: nothing grows with their
			// number, so it is not bounded.
			w.MaxRecords = 1 << 30
		}
		ex, err := extract.Parse(v, p.path, w)
		if err != nil {
			return emitted, Limit{}, false, r.decodeError(p, pg, err)
		}
		pg.count += len(ex.Records)
		batch.Records = append(batch.Records, ex.Records...)
		if len(batch.Records) >= decodedBatch {
			if err := flush(); err != nil {
				return emitted, limit, leftOut, err
			}
		}
	}
	if !limit.Set() && len(batch.Records) > 0 {
		if err := flush(); err != nil {
			return emitted, limit, leftOut, err
		}
	}
	if limit.Set() && !leftOut {
		// Whether the page had more records than those emitted: more values to decode.
		_, err := pg.values.Next()
		leftOut = err != io.EOF
	}
	if keep {
		pg.Records = kept
	}
	return emitted, limit, leftOut, nil
}

// decodeError says what is wrong with a page the stream's decoder cannot read: the request,
// the status, the decoder, and where in the body.
func (r *sliceReader) decodeError(p *fetched, pg *parsed, err error) error {
	req, resp := p.req, p.resp
	url := r.st.o.Client.Redactor.String(req.URL)
	where := pg.values.Where()
	var tm *extract.TooManyRecordsError
	var tl *decode.TooLargeError
	switch {
	case errors.As(err, &tl):
		return fmt.Errorf("%s %s answered %d, but %v", req.Method, url, resp.Status, tl)
	case errors.As(err, &tm):
		return fmt.Errorf("%s %s answered %d with more than %d records on one page, a limit of one record per %d bytes of --max-body (--max-body raises the limit)",
			req.Method, url, resp.Status, tm.Max, recordBytes)
	case errors.Is(err, extract.ErrEmpty) && where == "":
		err = errors.New("the body is empty")
	case where != "" && !errorNamesPlace(err, where):
		err = fmt.Errorf("%s: %w", where, err)
	}
	return fmt.Errorf("%s %s answered %d with a body that %s cannot read: %v",
		req.Method, url, resp.Status, r.st.dec.Type(), err)
}

// errorNamesPlace reports whether a decoder's error already starts with the place.
func errorNamesPlace(err error, where string) bool {
	s := err.Error()
	return len(s) >= len(where) && s[:len(where)] == where
}
