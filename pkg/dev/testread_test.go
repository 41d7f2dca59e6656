package dev

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sync"

	"connector/pkg/httpx"
	"connector/pkg/infer"
	"connector/pkg/record"
	"connector/pkg/run"
	"connector/pkg/serve"
	"connector/pkg/session"
)

// standInTestRead is a test read for these tests while the Builder's is built elsewhere:
// the session's own read with the test limits, its records grouped by the pages they came
// from, each data page with the request and response that made it, the other requests as
// auxiliary requests, the states the read wrote, and the inferred schema. It answers the
// shape of the CDK's StreamRead, which is all the page and the workspace read.
func standInTestRead(ctx context.Context, s *session.Session, req serve.TestReadRequest) (any, error) {
	cap := &capture{next: s.Client.HTTP.Transport, red: s.Redactor()}
	if cap.next == nil {
		cap.next = http.DefaultTransport
	}
	s.Client.HTTP.Transport = cap
	state, err := session.OpenState(session.StateFiles{Given: req.State, GivenName: "state"})
	if err != nil {
		return nil, err
	}
	streams := s.Streams
	for _, st := range streams {
		if st.Name == req.Stream {
			s.Streams = append(s.Streams[:0:0], st)
		}
	}
	pages := &pageLog{}
	var out bytes.Buffer
	_, err = s.Read(ctx, session.ReadSpec{
		Out: &out, Format: "airbyte", State: state, Observer: pages,
		MaxRecords: req.RecordLimit, MaxPages: req.PageLimit, MaxSlices: req.SliceLimit,
	})
	if err != nil {
		return nil, err
	}
	var recs []json.RawMessage
	var states []json.RawMessage
	var logs []map[string]any
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var m struct {
			Type   string
			Record struct{ Data json.RawMessage }
			State  json.RawMessage
			Trace  struct {
				Type  string
				Error struct{ Message string }
			}
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch m.Type {
		case "RECORD":
			recs = append(recs, m.Record.Data)
		case "STATE":
			states = append(states, m.State)
		case "TRACE":
			if m.Trace.Type == "ERROR" {
				logs = append(logs, map[string]any{"level": "ERROR", "message": m.Trace.Error.Message})
			}
		}
	}
	st := s.Def.Stream(req.Stream)
	inferrer := infer.NewSchemaInferrer(st.PrimaryKeyPaths(), nil)
	for _, r := range recs {
		v, _ := record.Decode(r)
		inferrer.Accumulate(req.Stream, v)
	}
	var schema json.RawMessage
	if o, _, _ := inferrer.Schema(req.Stream); o != nil {
		schema, _ = record.Marshal(o)
	}

	type page struct {
		Records  []json.RawMessage `json:"records"`
		Request  any               `json:"request"`
		Response any               `json:"response"`
	}
	type slice struct {
		Descriptor json.RawMessage   `json:"slice_descriptor"`
		Pages      []page            `json:"pages"`
		State      []json.RawMessage `json:"state"`
		Aux        []any             `json:"auxiliary_requests"`
	}
	var slices []*slice
	var topAux []any
	data := cap.exchanges("data")
	for _, a := range cap.exchanges("") {
		topAux = append(topAux, map[string]any{"title": "Authentication", "type": "AUTH", "description": a.kind, "request": a.request(cap.red), "response": a.response(cap.red)})
	}
	n, d := 0, 0
	var last any
	for _, ev := range pages.events {
		if ev.Slice != last || len(slices) == 0 {
			desc, _ := record.Marshal(map[string]any{"partition": ev.Slice.Partition, "cursor_slice": ev.Slice.Cursor})
			slices = append(slices, &slice{Descriptor: desc, Pages: []page{}, State: []json.RawMessage{}})
			last = ev.Slice
		}
		p := page{Records: []json.RawMessage{}}
		for i := 0; i < ev.Emitted && n < len(recs); i++ {
			p.Records = append(p.Records, recs[n])
			n++
		}
		if d < len(data) {
			p.Request, p.Response = data[d].request(cap.red), data[d].response(cap.red)
			d++
		}
		cur := slices[len(slices)-1]
		cur.Pages = append(cur.Pages, p)
	}
	if len(slices) > 0 && len(states) > 0 {
		slices[len(slices)-1].State = states[len(states)-1:]
	}
	if logs == nil {
		logs = []map[string]any{}
	}
	if topAux == nil {
		topAux = []any{}
	}
	return map[string]any{
		"logs": logs, "slices": slices, "auxiliary_requests": topAux,
		"inferred_schema": schema, "inferred_datetime_formats": nil, "latest_config_update": nil,
		"test_read_limit_reached": n >= req.RecordLimit,
	}, nil
}

// pageLog keeps the data pages of a read in order.
type pageLog struct {
	mu     sync.Mutex
	events []run.PageEvent
}

func (p *pageLog) StreamStart(run.StreamStart) {}
func (p *pageLog) StreamEnd(run.Result)        {}
func (p *pageLog) Page(ev run.PageEvent) {
	if ev.End == run.Discarded || ev.Lazy {
		return
	}
	p.mu.Lock()
	p.events = append(p.events, ev)
	p.mu.Unlock()
}

// capture keeps every exchange of a read, in the order the requests went out.
type capture struct {
	next http.RoundTripper
	red  redactor
	mu   sync.Mutex
	list []*exchange
}

type exchange struct {
	kind, method, url string
	reqHeader         http.Header
	reqBody           string
	status            int
	respHeader        http.Header
	respBody          string
}

func (c *capture) RoundTrip(r *http.Request) (*http.Response, error) {
	x := &exchange{kind: httpx.InfoOf(r.Context()).Kind, method: r.Method, url: r.URL.String(), reqHeader: r.Header.Clone()}
	if r.Body != nil {
		b, _ := io.ReadAll(r.Body)
		x.reqBody = string(b)
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	c.mu.Lock()
	c.list = append(c.list, x)
	c.mu.Unlock()
	resp, err := c.next.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(b))
	c.mu.Lock()
	x.status, x.respHeader, x.respBody = resp.StatusCode, resp.Header.Clone(), string(b)
	c.mu.Unlock()
	return resp, nil
}

// exchanges are those of a kind ("data"), or those of every other kind ("").
func (c *capture) exchanges(kind string) []*exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*exchange
	for _, x := range c.list {
		if (kind == "data") == (x.kind == "data") {
			out = append(out, x)
		}
	}
	return out
}

type redactor interface {
	String(string) string
	Header(name, value string, sensitive bool) string
}

func headerMap(h http.Header, red redactor) map[string]string {
	m := map[string]string{}
	for k, vs := range h {
		for _, v := range vs {
			m[k] = red.Header(k, v, false)
		}
	}
	return m
}

func (x *exchange) request(red redactor) any {
	return map[string]any{"url": red.String(x.url), "http_method": x.method, "headers": headerMap(x.reqHeader, red), "body": red.String(x.reqBody)}
}

func (x *exchange) response(red redactor) any {
	return map[string]any{"status": x.status, "headers": headerMap(x.respHeader, red), "body": red.String(x.respBody)}
}
