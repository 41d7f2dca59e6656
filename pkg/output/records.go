// Package output writes what the commands produce: records in the formats of `read`, and the
// reports people read.
package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"connector/pkg/record"
)

// Record formats of `read`.
const (
	FormatRecords  = "records"
	FormatEnvelope = "envelope"
	FormatAirbyte  = "airbyte"
)

// Formats lists the record formats, for flag help and validation.
var Formats = []string{FormatRecords, FormatEnvelope, FormatAirbyte}

// RecordWriter writes one JSON line per record. A record is written as the bytes received
// (already compact), nothing decoded or re-encoded, or, when a transformation edited it, as
// its object encoded. Lines are gathered in chunks that a
// goroutine of its own writes out (see asyncWriter), so the read goes on while stdout takes
// the last page. It is safe for concurrent use; each line is written whole.
type RecordWriter struct {
	mu     sync.Mutex
	out    *asyncWriter
	cur    []byte // the chunk being filled
	format string
	now    func() time.Time
	// prefixes caches the encoded start of a record line per stream.
	prefixes map[string][]byte
	// running holds the streams whose RUNNING status is written (airbyte: before their
	// first record, as the CDK writes it).
	running map[string]bool
	// logs adds the CDK's LOG message before each RUNNING status (see LogStatuses).
	logs bool
}

// LogStatuses makes an airbyte writer write the LOG message the CDK writes before a
// stream's RUNNING status ("Marking stream books as RUNNING"), as the protocol entry point
// does.
func (r *RecordWriter) LogStatuses() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = true
}

// NewRecordWriter writes to w in the given format. now stamps airbyte messages.
func NewRecordWriter(w io.Writer, format string, now func() time.Time) (*RecordWriter, error) {
	switch format {
	case FormatRecords, FormatEnvelope, FormatAirbyte:
	default:
		return nil, fmt.Errorf("unknown output format %q (use records, envelope or airbyte)", format)
	}
	if now == nil {
		now = time.Now
	}
	out := newAsyncWriter(w)
	return &RecordWriter{out: out, cur: out.chunk(), format: format, now: now}, nil
}

// Records writes records of stream, one line each, in order; their lines are not
// interleaved with those of other streams. The error is that of an earlier write, if one
// failed.
func (r *RecordWriter) Records(stream string, recs []record.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.objects(recs); err != nil {
		return err
	}
	if r.format == FormatAirbyte && len(recs) > 0 && !r.running[stream] {
		line, err := r.runningLine(stream)
		if err != nil {
			return err
		}
		r.cur = append(r.cur, line...)
	}
	for _, rec := range recs {
		if err := r.record(stream, rec); err != nil {
			return err
		}
	}
	return nil
}

// record writes one record; the caller holds r.mu.
func (r *RecordWriter) record(stream string, rec record.Record) error {
	b, err := r.line(r.cur, r.prefix(stream), rec)
	if err != nil {
		return err // r.cur is left as it was
	}
	r.cur = b
	if len(r.cur) < chunkSize {
		return nil
	}
	r.handOff()
	return r.out.failed()
}

// line appends the line of one record to b; prefix is the stream's (see prefix).
func (r *RecordWriter) line(b, prefix []byte, rec record.Record) ([]byte, error) {
	if r.format != FormatRecords {
		b = append(b, prefix...)
	}
	n := len(b)
	b, err := rec.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	if r.format == FormatAirbyte {
		b = b[:n+len(dropTopNulls(b[n:]))]
	}
	switch r.format {
	case FormatEnvelope:
		b = append(b, '}')
	case FormatAirbyte:
		b = append(b, `,"emitted_at":`...)
		b = strconv.AppendInt(b, r.now().UnixMilli(), 10)
		b = append(b, `}}`...)
	}
	return append(b, '\n'), nil
}

// runningLine is the RUNNING status of stream, which is then running; the caller holds
// r.mu.
func (r *RecordWriter) runningLine(stream string) ([]byte, error) {
	if r.running == nil {
		r.running = map[string]bool{}
	}
	r.running[stream] = true
	status, err := encodeMessage(r.status(stream, "RUNNING"))
	if err != nil || !r.logs {
		return status, err
	}
	var m logMessage
	m.Type, m.Log.Level, m.Log.Message = "LOG", "INFO", "Marking stream "+stream+" as RUNNING"
	line, err := encodeMessage(m)
	if err != nil {
		return nil, err
	}
	return append(line, status...), nil
}

// RefusedError is a batch of records the writer refused whole, none of it written.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// Refused says that none of the batch was written.
func (e *RefusedError) Refused() bool { return true }

// objects refuses, in the airbyte format, a page of records of which one is not a JSON
// object, before writing any of them: the data of an Airbyte RECORD is an object, and the
// CDK fails the stream of such a record.
func (r *RecordWriter) objects(recs []record.Record) error {
	if r.format != FormatAirbyte {
		return nil
	}
	for _, rec := range recs {
		if rec.Object == nil && (len(rec.Raw) == 0 || rec.Raw[0] != '{') {
			return &RefusedError{fmt.Sprintf("a record is %s, not an object: an Airbyte RECORD's data is an object", jsonKind(rec.Raw))}
		}
	}
	return nil
}

// jsonKind names the kind of a JSON value from its compact text.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// partLines writes the lines of a part (see Part), with the RUNNING status of each stream
// not yet running before its first record, as Records writes it.
func (r *RecordWriter) partLines(b []byte, firsts []streamAt) error {
	if len(firsts) > 0 {
		r.mu.Lock()
		var out []byte
		last := 0
		for _, f := range firsts {
			if r.running[f.stream] {
				continue
			}
			line, err := r.runningLine(f.stream)
			if err != nil {
				r.mu.Unlock()
				return err
			}
			out = append(append(out, b[last:f.at]...), line...)
			last = f.at
		}
		r.mu.Unlock()
		if out != nil {
			b = append(out, b[last:]...)
		}
	}
	return r.lines(b)
}

// lines writes lines formatted by line, whole.
func (r *RecordWriter) lines(b []byte) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for len(b) > 0 {
		room := max(chunkSize-len(r.cur), 0)
		if room == 0 {
			r.handOff()
			if err := r.out.failed(); err != nil {
				return err
			}
			continue
		}
		// Cut at the end of a line within the room, so that a chunk never splits a line.
		n := len(b)
		if n > room {
			if i := bytes.LastIndexByte(b[:room], '\n'); i >= 0 {
				n = i + 1
			} else if i := bytes.IndexByte(b, '\n'); i >= 0 {
				n = i + 1
			}
		}
		r.cur = append(r.cur, b[:n]...)
		b = b[n:]
		if len(r.cur) >= chunkSize {
			r.handOff()
		}
	}
	return r.out.failed()
}

// handOff queues the chunk being filled for writing and takes an empty one. The caller
// holds r.mu.
func (r *RecordWriter) handOff() {
	if len(r.cur) == 0 {
		return
	}
	r.out.send(r.cur)
	r.cur = r.out.chunk()
}

// prefix is what comes before a record of stream in the envelope and airbyte formats,
// encoded once per stream rather than once per record. The caller holds r.mu.
func (r *RecordWriter) prefix(stream string) []byte {
	if p, ok := r.prefixes[stream]; ok {
		return p
	}
	p := r.newPrefix(stream)
	if r.prefixes == nil {
		r.prefixes = map[string][]byte{}
	}
	r.prefixes[stream] = p
	return p
}

// newPrefix encodes the prefix of stream.
func (r *RecordWriter) newPrefix(stream string) []byte {
	var b bytes.Buffer
	if r.format == FormatAirbyte {
		b.WriteString(`{"type":"RECORD","record":{"stream":`)
	} else {
		b.WriteString(`{"stream":`)
	}
	writeString(&b, stream)
	b.WriteString(`,"data":`)
	return b.Bytes()
}

// Airbyte protocol messages, with fields in the protocol's order.
type (
	logMessage struct {
		Type string `json:"type"`
		Log  struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"log"`
	}
	traceMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type         string `json:"type"`
			EmittedAt    int64  `json:"emitted_at"`
			StreamStatus struct {
				StreamDescriptor struct {
					Name string `json:"name"`
				} `json:"stream_descriptor"`
				Status string `json:"status"`
			} `json:"stream_status"`
		} `json:"trace"`
	}
	errorMessage struct {
		Type  string `json:"type"`
		Trace struct {
			Type      string `json:"type"`
			EmittedAt int64  `json:"emitted_at"`
			Error     struct {
				Message          string      `json:"message"`
				InternalMessage  string      `json:"internal_message,omitempty"`
				FailureType      string      `json:"failure_type"`
				StreamDescriptor *descriptor `json:"stream_descriptor,omitempty"`
			} `json:"error"`
		} `json:"trace"`
	}
	controlMessage struct {
		Type    string `json:"type"`
		Control struct {
			Type            string `json:"type"`
			EmittedAt       int64  `json:"emitted_at"`
			ConnectorConfig struct {
				Config json.RawMessage `json:"config"`
			} `json:"connectorConfig"`
		} `json:"control"`
	}
)

// Log writes an airbyte LOG message (other formats carry no logs on stdout).
func (r *RecordWriter) Log(level, message string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m logMessage
	m.Type, m.Log.Level, m.Log.Message = "LOG", level, message
	return r.message(m)
}

// StreamStatus writes an airbyte TRACE stream status message: STARTED, RUNNING, COMPLETE or
// INCOMPLETE.
func (r *RecordWriter) StreamStatus(stream, status string) error {
	if r.format != FormatAirbyte {
		return nil
	}
	return r.message(r.status(stream, status))
}

func (r *RecordWriter) status(stream, status string) traceMessage {
	var m traceMessage
	m.Type, m.Trace.Type, m.Trace.EmittedAt = "TRACE", "STREAM_STATUS", r.now().UnixMilli()
	m.Trace.StreamStatus.StreamDescriptor.Name = stream
	m.Trace.StreamStatus.Status = status
	return m
}

// ErrorTrace is a failed stream, for an airbyte TRACE ERROR message. Both messages must
// already be redacted: the writer prints them as given.
type ErrorTrace struct {
	Stream string
	// Message is for the user; InternalMessage is the cause beneath it.
	Message, InternalMessage string
	// FailureType is config_error, transient_error or system_error (see run.FailureType).
	FailureType string
}

// descriptor is a protocol StreamDescriptor.
type descriptor struct {
	Name string `json:"name"`
}

// Error writes an airbyte TRACE message of type ERROR for a failed stream, or for the whole
// read when e.Stream is "" (no stream_descriptor).
func (r *RecordWriter) Error(e ErrorTrace) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m errorMessage
	m.Type, m.Trace.Type, m.Trace.EmittedAt = "TRACE", "ERROR", r.now().UnixMilli()
	m.Trace.Error.Message, m.Trace.Error.InternalMessage = e.Message, e.InternalMessage
	m.Trace.Error.FailureType = e.FailureType
	if e.Stream != "" {
		m.Trace.Error.StreamDescriptor = &descriptor{Name: e.Stream}
	}
	return r.message(m)
}

// Control writes an airbyte CONTROL message carrying the updated testing values: a
// map[string]any (keys in sorted order) or a *record.Object (keys in its order). Its
// top-level null values are left out, as the CDK's serializer leaves them out.
func (r *RecordWriter) Control(config any) error {
	if r.format != FormatAirbyte {
		return nil
	}
	var m controlMessage
	m.Type, m.Control.Type, m.Control.EmittedAt = "CONTROL", "CONNECTOR_CONFIG", r.now().UnixMilli()
	kept := &record.Object{} // an object, never null
	switch c := config.(type) {
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(c)) {
			if c[k] != nil {
				kept.Set(k, c[k])
			}
		}
	case *record.Object:
		for _, k := range c.Keys() {
			if v, _ := c.Get(k); v != nil {
				kept.Set(k, v)
			}
		}
	}
	b, err := record.Marshal(kept)
	if err != nil {
		return err
	}
	m.Control.ConnectorConfig.Config = json.RawMessage(b)
	return r.message(m)
}

func (r *RecordWriter) message(m any) error {
	line, err := encodeMessage(m)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = append(r.cur, line...)
	return r.out.failed()
}

// encodeMessage is one protocol message as a line, without HTML escaping.
func encodeMessage(m any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// EndPage queues what is gathered for writing without waiting for it to be written; the
// read loop calls it after every page, so records reach stdout page by page. The error is
// that of an earlier write, if one failed.
func (r *RecordWriter) EndPage() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handOff()
	return r.out.failed()
}

// Flush writes out everything gathered so far and returns once it is written, with the
// first write error.
func (r *RecordWriter) Flush() error {
	r.EndPage()
	return r.out.wait()
}

// Close flushes and stops the writer goroutine. The writer must not be used afterwards.
func (r *RecordWriter) Close() error {
	r.EndPage()
	return r.out.close()
}

// writeString writes s as a JSON string without HTML escaping.
func writeString(w io.Writer, s string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// State writes an airbyte STATE message of one stream, as the CDK does: the stream's state
// and the number of records written since its previous STATE message.
func (r *RecordWriter) State(stream string, state *record.Object, records int) error {
	if r.format != FormatAirbyte {
		return nil
	}
	b := []byte(`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":`)
	b = appendJSONString(b, stream)
	b = append(b, `},"stream_state":`...)
	if state == nil {
		state = &record.Object{}
	}
	st, err := record.Marshal(state)
	if err != nil {
		return fmt.Errorf("stream %s: state: %w", stream, err)
	}
	b = append(b, st...)
	b = append(b, `},"sourceStats":{"recordCount":`...)
	b = strconv.AppendInt(b, int64(records), 10)
	b = append(b, ".0}}}\n"...)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cur = append(r.cur, b...)
	return r.out.failed()
}

func appendJSONString(b []byte, s string) []byte {
	var buf bytes.Buffer
	writeString(&buf, s)
	return append(b, buf.Bytes()...)
}
