// Package builder runs the Connector Builder's test read: one stream of a session, read
// within the Builder's limits, told as the CDK's StreamRead JSON — its slices, each with its
// pages (request, response, records), the state after it and the requests of its
// asynchronous jobs; the auxiliary requests of the read (token refreshes, logins, parent
// streams); its logs; the config after a token rotation; whether a limit was reached.
//
// The read is the engine's own (pkg/run through the session), observed: every HTTP attempt
// (httpx's Observe), every slice (run.SliceObserver), every record (the read's Emitter),
// every state (its checkpoints) becomes one message of a log, in the order the read makes
// them, as the CDK's read yields its messages. That log is then grouped the way the CDK's
// message grouper groups its messages (group.go), so that the same read gives the same
// StreamRead, quirks included.
//
// Masking happens when the StreamRead is made, after the read: the tokens the read obtained
// are known to the redactor by then, the token in the very response that brought it
// included. Records are data and are not masked.
package builder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/run"
	"connector/pkg/session"
	"connector/pkg/slice"
)

// Limits are the Connector Builder's test-read limits (the CDK's TestLimits).
type Limits struct {
	// Records is max_records. The CDK 7.28.2 does not stop at it: it reads every record the
	// other limits let through, and says the limit was reached when their number is at
	// least Records. So does TestRead.
	Records int
	// PagesPerSlice is max_pages_per_slice: every slice ends after so many pages, in the
	// stream and in its parent streams alike.
	PagesPerSlice int
	// Slices is max_slices: the stream (and each parent stream) reads at most so many.
	Slices int
}

// The Builder's default limits.
const (
	DefaultRecords       = 100
	DefaultPagesPerSlice = 5
	DefaultSlices        = 5
)

// DefaultLimits are the limits of a test read that sets none.
func DefaultLimits() Limits {
	return Limits{Records: DefaultRecords, PagesPerSlice: DefaultPagesPerSlice, Slices: DefaultSlices}
}

// testReadJobMinutes is how long the CDK's test read lets an asynchronous job run when the
// definition sets no polling_job_timeout (a sync waits 60 minutes).
const testReadJobMinutes = 15

// Inferrer infers from the records of a test read what the CDK infers from them: the
// stream's schema (its SchemaInferrer) and the formats of its datetime fields (its
// DatetimeFormatInferrer). NewInferrer makes one for each test read, used by it alone.
type Inferrer interface {
	// Record takes each record of the read, in order, as the JSON text of the StreamRead.
	Record(rec json.RawMessage)
	// Result is what the records said, once they are all in.
	Result() Inferred
}

// Inferred is what an Inferrer found.
type Inferred struct {
	// Schema is inferred_schema and DatetimeFormats inferred_datetime_formats, as JSON
	// (nil: null).
	Schema, DatetimeFormats json.RawMessage
	// Errors are logged at ERROR after the read's own logs, as the CDK logs the validation
	// errors of its inferred schema (a primary key or cursor field the records lack).
	Errors []string
}

// Options configure a test read.
type Options struct {
	// Limits are the test read's; a field left 0 takes the Builder's default.
	Limits Limits
	// StateOf gives the state the stream starts from (nil: none).
	StateOf func(stream string) *record.Object
	// NewInferrer makes the inferrer of the stream read (nil: inferred_schema and
	// inferred_datetime_formats are null).
	NewInferrer func(stream *manifest.Stream) Inferrer
	// ConfigAsGiven lays out the config of latest_config_update as the caller's config was
	// written (its key order); nil: keys sorted.
	ConfigAsGiven func(config map[string]any) any
}

// TestRead reads one stream of s as the Connector Builder's test read does and tells the
// read as a StreamRead. A failure of the read is in its logs, not an error: the error is a
// stream s does not have (a *session.ArgumentError), a state that does not fit it (a
// *session.InvalidError), limits below 0, or the end of ctx (then with the StreamRead of
// what was read).
//
// A definition with dynamic streams must have them made first (Session.Resolve): their
// requests are no part of the test read, as the CDK's grouper leaves them out. For the time
// of the read, TestRead observes s.Client (after any observer it had), sends every request
// once (the CDK's test read does not retry) and hears s.OnConfigUpdate; it puts them back
// as they were. Each test read has a session of its own: two at once share nothing.
func TestRead(ctx context.Context, s *session.Session, stream string, o Options) (*StreamRead, error) {
	lim, err := o.Limits.withDefaults()
	if err != nil {
		return nil, err
	}
	found, err := session.Select(s.Def, []string{stream})
	if err != nil {
		return nil, err
	}
	st := found[0]
	ro := s.Options()
	ro.StateOf = o.StateOf
	ro.TestRead = &run.TestLimits{Pages: lim.PagesPerSlice, Slices: lim.Slices, JobMinutes: testReadJobMinutes}
	ro.Prefetch = 1
	ro.Files = &run.Files{Builder: true}
	if err := run.CheckState(ro, found); err != nil {
		return nil, &session.InvalidError{Err: fmt.Errorf("the state: %w", err)}
	}
	c := &collector{name: st.Name, async: st.Async != nil, roles: map[string]role{}, red: s.Client.Redactor,
		layout: o.ConfigAsGiven, userAgent: s.Client.UserAgent}
	if o.NewInferrer != nil {
		c.inferrer = o.NewInferrer(st)
	}
	if st.Async != nil {
		if d, err := run.JobTimeout(ro, st); err == nil {
			c.jobTimeout = pyTimedelta(d.Seconds())
		}
	}
	ro.Out, ro.Observer, ro.Checkpoint, ro.Warn = c, c, c.checkpoint, c.warn

	client := s.Client
	prevObserve, prevNoRetries, prevUpdate := client.Observe, client.NoRetries, s.OnConfigUpdate
	defer func() {
		client.Observe, client.NoRetries, s.OnConfigUpdate = prevObserve, prevNoRetries, prevUpdate
	}()
	client.NoRetries = true
	client.Observe = func(e httpx.Exchange) {
		if prevObserve != nil {
			prevObserve(e)
		}
		c.exchange(e)
	}
	s.OnConfigUpdate = func(config map[string]any) {
		if prevUpdate != nil {
			prevUpdate(config)
		}
		c.configUpdated(config)
	}

	res := run.Stream(ctx, ro, st)
	if res.Err != nil && !c.reported(res.Err) {
		c.failed(res.Err)
	}
	out := c.streamRead(lim)
	if err := ctx.Err(); err != nil {
		return out, err
	}
	return out, nil
}

// withDefaults fills the limits left 0 with the Builder's, and refuses one below 0.
func (l Limits) withDefaults() (Limits, error) {
	d := DefaultLimits()
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{{"records", &l.Records, d.Records}, {"pages per slice", &l.PagesPerSlice, d.PagesPerSlice}, {"slices", &l.Slices, d.Slices}} {
		switch {
		case *f.v < 0:
			return l, fmt.Errorf("the test read's limit of %s must be at least 1, not %d", f.name, *f.v)
		case *f.v == 0:
			*f.v = f.def
		}
	}
	return l, nil
}

// role is what the requests of a stream are to the test read.
type role int

const (
	// unknown: a stream the read did not announce (the components of dynamic streams, made
	// before the read): its requests are left out, as the CDK's grouper leaves out the pages
	// of another stream.
	unknown role = iota
	// parent: a parent stream, its pages auxiliary requests of the type PARENT_STREAM.
	parent
	// schemaLoader: the retriever of a DynamicSchemaLoader, its pages auxiliary requests.
	schemaLoader
	// other: the retriever of a PropertiesFromEndpoint, whose pages the CDK logs as another
	// stream's and leaves out.
	other
)

// collector hears the read and keeps its log: the messages, in the order the read made them.
type collector struct {
	name  string
	async bool
	red   *redact.Redactor
	// jobTimeout is the polling_job_timeout of the stream's jobs, as Python writes a
	// timedelta ("0:15:00"), for the description of their creation.
	jobTimeout string
	inferrer   Inferrer
	layout     func(map[string]any) any
	// userAgent is the User-Agent the client sends on a request that sets none.
	userAgent string

	mu    sync.Mutex
	roles map[string]role
	log   []message
	// errs are the failures logged already.
	errs []error
}

// message is one entry of the log of a read.
type message struct {
	kind kind
	// descriptor is the slice a slice message opens, as the CDK describes it.
	descriptor json.RawMessage
	// http is the exchange of a page or auxiliary message, aux how the latter is titled.
	http *captured
	aux  auxTitle
	// records are the records of a records message.
	records []json.RawMessage
	// state is a STATE message's stream_state and record count.
	state   json.RawMessage
	counted int
	// log is a log message; config a config message's config (JSON).
	log    LogMessage
	config json.RawMessage
}

type kind int

const (
	sliceMsg kind = iota
	pageMsg
	auxMsg
	recordsMsg
	stateMsg
	logMsg
	configMsg
)

// captured is an HTTP exchange as the read saw it; its texts are masked when the StreamRead
// is made.
type captured struct {
	method, url string
	header      http.Header
	body        string
	status      int
	respHeader  http.Header
	respBody    []byte
}

func (c *collector) add(m message) {
	c.mu.Lock()
	c.log = append(c.log, m)
	c.mu.Unlock()
}

// exchange takes an HTTP attempt: a page of the stream, an auxiliary request, or nothing
// the test read shows. An attempt that got no response is not logged, as the CDK logs none.
func (c *collector) exchange(e httpx.Exchange) {
	if e.Err != "" || e.Status == 0 {
		return
	}
	c.mu.Lock()
	r := c.roles[e.Stream]
	c.mu.Unlock()
	var m message
	switch {
	case e.Kind == "data" && e.Stream == c.name:
		m.kind = pageMsg
	case e.Kind == "data" && r == parent:
		m.kind, m.aux = auxMsg, parentTitle(e.Stream)
	case e.Kind == "data" && r == schemaLoader:
		m.kind, m.aux = auxMsg, schemaTitle()
	case e.Kind == "data" && (r == unknown || r == other):
		return
	default:
		t, ok := auxTitleOf(e, c.jobTimeout)
		if !ok {
			return
		}
		m.kind, m.aux = auxMsg, t
	}
	m.http = &captured{
		method: e.Method, url: e.URL, header: e.Header.Clone(), body: e.Body, status: e.Status,
		respHeader: e.RespHeader.Clone(), respBody: append([]byte(nil), e.RespBody...),
	}
	if m.http.header == nil {
		m.http.header = http.Header{}
	}
	if c.userAgent != "" && m.http.header.Get("User-Agent") == "" {
		m.http.header.Set("User-Agent", c.userAgent)
	}
	c.add(m)
}

// StreamStart learns what the streams the read announces are to it.
func (c *collector) StreamStart(ss run.StreamStart) {
	if ss.ParentOf == "" {
		return
	}
	r := parent
	switch {
	case ss.Schema:
		r = schemaLoader
	case ss.Properties || ss.ParentOf == "dynamic_streams":
		r = other
	}
	c.mu.Lock()
	if ss.Stream != c.name {
		c.roles[ss.Stream] = r
	}
	c.mu.Unlock()
}

func (c *collector) Page(run.PageEvent)   {}
func (c *collector) StreamEnd(run.Result) {}

// SliceStart opens a slice of the stream read.
func (c *collector) SliceStart(stream string, sl *slice.Slice) {
	if stream != c.name {
		return
	}
	c.add(message{kind: sliceMsg, descriptor: describe(sl, c.async)})
}

// SliceEnd logs the failure of a slice of the stream read: the CDK reads the other slices
// and logs each failure.
func (c *collector) SliceEnd(stream string, _ *slice.Slice, err error) {
	if stream != c.name || err == nil || errors.Is(err, context.Canceled) {
		return
	}
	c.failed(err)
}

// Records takes the records of a page of the stream read.
func (c *collector) Records(_ string, recs []record.Record) error {
	out := make([]json.RawMessage, 0, len(recs))
	for _, r := range recs {
		text, err := r.AppendJSON(nil)
		if err != nil {
			return err
		}
		out = append(out, text)
		if c.inferrer != nil {
			c.inferrer.Record(text)
		}
	}
	c.add(message{kind: recordsMsg, records: out})
	return nil
}

func (c *collector) EndPage() error { return nil }

// checkpoint takes a state the CDK emits a STATE message for.
func (c *collector) checkpoint(cp run.Checkpoint) {
	if !cp.Message {
		return
	}
	text, err := record.Marshal(cp.State)
	if err != nil {
		return
	}
	c.add(message{kind: stateMsg, state: text, counted: cp.Records})
}

// warn logs a note of the read at WARN.
func (c *collector) warn(text string) {
	c.add(message{kind: logMsg, log: LogMessage{Message: text, Level: "WARN"}})
}

// failed logs a failure at ERROR: the failure as a person reads it, and beneath it the
// cause without the stream, slice and page that name where it happened.
func (c *collector) failed(err error) {
	internal := err
	var se *run.StreamError
	if errors.As(err, &se) {
		internal = se.Err
	}
	text := internal.Error()
	c.mu.Lock()
	c.errs = append(c.errs, err)
	c.mu.Unlock()
	c.add(message{kind: logMsg, log: LogMessage{Message: err.Error(), Level: "ERROR", InternalMessage: &text}})
}

// reported says whether err was logged already.
func (c *collector) reported(err error) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, e := range c.errs {
		if e == err {
			return true
		}
	}
	return false
}

// configUpdated takes the config after a token rotation, as it stands now.
func (c *collector) configUpdated(config map[string]any) {
	var v any = config
	if c.layout != nil {
		v = c.layout(config)
	}
	text, err := record.Marshal(v)
	if err != nil {
		return
	}
	c.add(message{kind: configMsg, config: text})
}

// describe is a slice as the CDK's slice log describes it: the object of its partition's
// and interval's keys; for the one empty slice of a stream without partitions the CDK
// writes the text of Python's repr, "{}"; a slice of an asynchronous job is described by
// the job's own partition, which has no keys.
func describe(sl *slice.Slice, async bool) json.RawMessage {
	switch {
	case async:
		return json.RawMessage(`{}`)
	case !sl.Truthy():
		return json.RawMessage(`"{}"`)
	}
	o := &record.Object{}
	for _, k := range sl.Keys() {
		v, _ := sl.Get(k)
		o.Set(k, v)
	}
	text, err := record.Marshal(o)
	if err != nil {
		return json.RawMessage(`{}`)
	}
	return text
}
