package builder

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"

	"connector/pkg/record"
)

// streamRead makes the StreamRead of the read's log: the log grouped as the CDK's
// get_message_groups groups the messages of its read, then the logs, the inferred schema
// and the limit reached, as its TestReader.run_test_read puts them together. Every text is
// masked here, now that the read has made every secret known.
func (c *collector) streamRead(lim Limits) *StreamRead {
	c.mu.Lock()
	log := c.log
	c.mu.Unlock()
	g := grouper{c: c, out: &StreamRead{Logs: []LogMessage{}, Slices: []Slice{}, AuxiliaryRequests: []AuxiliaryRequest{}}}
	for _, m := range log {
		g.take(m)
	}
	g.end()
	out := g.out
	// The CDK appends its deprecation warnings here; this read has none to give (the
	// definition's warnings are validate's).
	if c.inferrer != nil {
		inf := c.inferrer.Result()
		out.InferredSchema, out.InferredDatetimeFormats = inf.Schema, inf.DatetimeFormats
		for _, e := range inf.Errors {
			out.Logs = append(out.Logs, LogMessage{Message: c.red.String(e), Level: "ERROR"})
		}
	}
	out.TestReadLimitReached = limitReached(out.Slices, lim)
	return out
}

// grouper is the state of the CDK's message grouper, message after message: the page being
// filled (its request, response and records), the slice being filled, the last state.
type grouper struct {
	c   *collector
	out *StreamRead

	// pageSeen is the CDK's at_least_one_page_in_group: the slice has had a page request.
	pageSeen   bool
	records    []json.RawMessage
	req        *HTTPRequest
	resp       *HTTPResponse
	descriptor json.RawMessage
	pages      []Page
	state      json.RawMessage
	// sliceAux are the asynchronous jobs' requests. The CDK keeps one list of them for the
	// whole read and never empties it: every slice that ends while it holds some refers to
	// that same list, so each shows the jobs' requests of the whole read. shared are those
	// slices.
	sliceAux []AuxiliaryRequest
	shared   []int
}

// take is one message, as get_message_groups takes it: a page request or a slice closes the
// page being filled, a slice closes the slice too.
func (g *grouper) take(m message) {
	if g.pageSeen && (m.kind == pageMsg || m.kind == sliceMsg) {
		g.closePage()
	}
	switch m.kind {
	case sliceMsg:
		if g.pageSeen {
			g.closeSlice()
			g.pages, g.pageSeen = nil, false
		}
		g.descriptor = g.c.maskJSON(m.descriptor)
	case pageMsg:
		g.pageSeen = true
		g.req, g.resp = g.c.request(m.http), g.c.response(m.http)
	case auxMsg:
		a := AuxiliaryRequest{Title: m.aux.title, Type: m.aux.typ, Description: m.aux.description,
			Request: *g.c.request(m.http), Response: *g.c.response(m.http)}
		if m.aux.async() {
			g.sliceAux = append(g.sliceAux, a)
		} else {
			g.out.AuxiliaryRequests = append(g.out.AuxiliaryRequests, a)
		}
	case recordsMsg:
		g.records = append(g.records, m.records...)
	case stateMsg:
		g.state = g.c.stateMessage(m.state, m.counted)
	case logMsg:
		g.out.Logs = append(g.out.Logs, g.c.maskLog(m.log))
	case configMsg:
		g.out.LatestConfigUpdate = g.c.cleanConfig(m.config)
	}
}

// end closes what is open when the read ends: the last page and its slice, unless nothing
// came after the last slice closed.
func (g *grouper) end() {
	if g.req != nil || g.resp != nil || len(g.records) > 0 {
		g.closePage()
		g.closeSlice()
	}
	for _, i := range g.shared {
		g.out.Slices[i].AuxiliaryRequests = g.sliceAux
	}
}

func (g *grouper) closePage() {
	recs := g.records
	if recs == nil {
		recs = []json.RawMessage{}
	}
	g.pages = append(g.pages, Page{Records: recs, Request: g.req, Response: g.resp})
	g.records, g.req, g.resp = nil, nil, nil
}

func (g *grouper) closeSlice() {
	s := Slice{Pages: g.pages, SliceDescriptor: g.descriptor, State: []json.RawMessage{}, AuxiliaryRequests: []AuxiliaryRequest{}}
	if s.Pages == nil {
		s.Pages = []Page{}
	}
	if s.SliceDescriptor == nil {
		s.SliceDescriptor = json.RawMessage("null")
	}
	if g.state != nil {
		s.State = []json.RawMessage{g.state}
	}
	if len(g.sliceAux) > 0 {
		g.shared = append(g.shared, len(g.out.Slices))
	}
	g.out.Slices = append(g.out.Slices, s)
}

// limitReached is the CDK's _has_reached_limit: as many slices as the limit, a slice with
// as many pages as the limit, or as many records as the limit, read or not.
func limitReached(slices []Slice, lim Limits) bool {
	if len(slices) >= lim.Slices {
		return true
	}
	records := 0
	for _, s := range slices {
		if len(s.Pages) >= lim.PagesPerSlice {
			return true
		}
		for _, p := range s.Pages {
			if records += len(p.Records); records >= lim.Records {
				return true
			}
		}
	}
	return false
}

// request is a captured request as the StreamRead shows it, masked.
func (c *collector) request(x *captured) *HTTPRequest {
	r := &HTTPRequest{URL: c.red.String(x.url), Headers: c.headers(x.header), HTTPMethod: x.method}
	if x.body != "" {
		body := c.red.String(x.body)
		r.Body = &body
	}
	return r
}

// response is a captured response as the StreamRead shows it: its body as text, masked.
func (c *collector) response(x *captured) *HTTPResponse {
	body := c.red.String(strings.ToValidUTF8(string(x.respBody), "\ufffd"))
	return &HTTPResponse{Status: x.status, Body: &body, Headers: c.headers(x.respHeader)}
}

// headers are headers one value each, as the CDK's dict of them: several values joined with
// ", ", each masked (a credential header whatever fills it).
func (c *collector) headers(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, vs := range h {
		masked := make([]string, len(vs))
		for i, v := range vs {
			masked[i] = c.red.Header(k, v, false)
		}
		out[k] = strings.Join(masked, ", ")
	}
	return out
}

// maskLog masks the texts of a log message.
func (c *collector) maskLog(l LogMessage) LogMessage {
	l.Message = c.red.String(l.Message)
	if l.InternalMessage != nil {
		s := c.red.String(*l.InternalMessage)
		l.InternalMessage = &s
	}
	return l
}

// stateMessage lays a STATE message out as the CDK's test read shows it: the dataclass of
// the protocol turned into a dict field by field (global_ keeps Python's name), the record
// count a float.
func (c *collector) stateMessage(state json.RawMessage, counted int) json.RawMessage {
	masked := c.maskJSON(state)
	b := []byte(`{"type":"STREAM","stream":{"stream_descriptor":{"name":`)
	name, _ := record.Marshal(c.name)
	b = append(b, name...)
	b = append(b, `,"namespace":null},"stream_state":`...)
	b = append(b, masked...)
	b = append(b, `},"global_":null,"data":null,"sourceStats":{"recordCount":`...)
	b = append(b, pyFloat(counted)...)
	b = append(b, `},"destinationStats":null}`...)
	return b
}

// pyFloat writes a whole number as Python writes it as a float: 12.0.
func pyFloat(n int) string {
	return strconv.Itoa(n) + ".0"
}

// cleanConfig is the config of a CONTROL message as latest_config_update shows it: without
// the keys that start with "__" (the CDK's clean_config), masked.
func (c *collector) cleanConfig(config json.RawMessage) json.RawMessage {
	v, err := record.Decode(config)
	if err != nil {
		return nil
	}
	if o, ok := v.(*record.Object); ok {
		for _, k := range append([]string(nil), o.Keys()...) {
			if strings.HasPrefix(k, "__") {
				o.Delete(k)
			}
		}
	}
	text, err := record.Marshal(c.mask(v))
	if err != nil {
		return nil
	}
	return text
}

// maskJSON masks the strings of a JSON value, keys and structure kept.
func (c *collector) maskJSON(text json.RawMessage) json.RawMessage {
	v, err := record.Decode(text)
	if err != nil {
		return json.RawMessage(strconv.Quote(c.red.String(string(text))))
	}
	out, err := record.Marshal(c.mask(v))
	if err != nil {
		return text
	}
	return out
}

// mask masks every string of a decoded JSON value.
func (c *collector) mask(v any) any {
	switch x := v.(type) {
	case string:
		return c.red.String(x)
	case *record.Object:
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			x.Set(k, c.mask(e))
		}
		return x
	case []any:
		for i, e := range x {
			x[i] = c.mask(e)
		}
		return x
	}
	return v
}
