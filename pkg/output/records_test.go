package output

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/internal/protocoltest"
	"connector/pkg/record"
)

func TestRecordWriterFormats(t *testing.T) {
	now := func() time.Time { return time.UnixMilli(1700000000123) }
	raw := []byte(`{"id":12345678901234567890,"h":"<a&b>"}`)
	tests := []struct{ format, first, want string }{
		{FormatRecords, "", `{"id":12345678901234567890,"h":"<a&b>"}` + "\n"},
		{FormatEnvelope, "", `{"stream":"a<b>","data":{"id":12345678901234567890,"h":"<a&b>"}}` + "\n"},
		// airbyte: the stream's RUNNING status before its first record, as the CDK writes it.
		{FormatAirbyte, `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000123,"stream_status":{"stream_descriptor":{"name":"a<b>"},"status":"RUNNING"}}}` + "\n",
			`{"type":"RECORD","record":{"stream":"a<b>","data":{"id":12345678901234567890,"h":"<a&b>"},"emitted_at":1700000000123}}` + "\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w, err := NewRecordWriter(&buf, tt.format, now)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := w.Records("a<b>", recs(raw)); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.first+tt.want+tt.want {
			t.Errorf("%s: %q, want %q then twice %q", tt.format, got, tt.first, tt.want)
		}
	}
}

// Streams written at once still give whole lines, each stream's records in order.
func TestRecordWriterConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewRecordWriter(&buf, FormatEnvelope, nil)
	var wg sync.WaitGroup
	for s := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 2000 {
				w.Records(fmt.Sprint("s", s), recs([]byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", 100)))))
				if i%100 == 0 {
					w.Flush()
				}
			}
		}()
	}
	wg.Wait()
	w.Flush()
	next := map[string]int{}
	for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
		var s string
		var i int
		if _, err := fmt.Sscanf(line, `{"stream":"%2s","data":{"i":%d,`, &s, &i); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if i != next[s] {
			t.Fatalf("stream %s: record %d after %d", s, i, next[s]-1)
		}
		next[s]++
	}
	if len(next) != 4 || next["s0"] != 2000 {
		t.Errorf("records per stream: %v", next)
	}
}

// failAfter accepts n bytes, then fails every write.
type failAfter struct {
	n   int
	err error
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k := f.n
		f.n = 0
		return k, f.err
	}
	f.n -= len(p)
	return len(p), nil
}

// A failed write (stdout closed: `| head -1`) reaches the writer's caller: at the latest
// from Flush, and from Records once the failure has happened.
func TestRecordWriterReportsAFailedWrite(t *testing.T) {
	boom := errors.New("broken pipe")
	w, _ := NewRecordWriter(&failAfter{n: 100, err: boom}, FormatRecords, nil)
	defer w.Close()
	line := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	if err := w.Records("s", recs(line)); err != nil {
		t.Fatalf("first page: %v (nothing has been written yet)", err)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush: %v, want the write error", err)
	}
	var err error
	for range 3 * maxChunks {
		if err = w.Records("s", recs(bytes.Repeat(line, chunkSize/len(line)+1))); err != nil {
			break
		}
	}
	if !errors.Is(err, boom) {
		t.Fatalf("Records after the failure: %v, want the write error", err)
	}
	if err := w.EndPage(); !errors.Is(err, boom) {
		t.Errorf("EndPage after the failure: %v, want the write error", err)
	}
}

// countingWriter keeps what it was given and counts the writes.
type countingWriter struct {
	buf    bytes.Buffer
	writes int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.writes++
	return c.buf.Write(p)
}

// Pages come out whole and in order, gathered into chunks, and never more than maxChunks
// chunks exist.
func TestRecordWriterManyPagesKeepOrderAndBoundMemory(t *testing.T) {
	cw := &countingWriter{}
	w, _ := NewRecordWriter(cw, FormatRecords, nil)
	var want bytes.Buffer
	for page := range 200 {
		var raws []record.Record
		for i := range 50 {
			raw := []byte(fmt.Sprintf(`{"page":%d,"i":%d,"pad":"%s"}`, page, i, strings.Repeat("y", 80)))
			raws = append(raws, record.Record{Raw: raw})
			want.Write(raw)
			want.WriteByte('\n')
		}
		if err := w.Records("s", raws); err != nil {
			t.Fatal(err)
		}
		if err := w.EndPage(); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(cw.buf.Bytes(), want.Bytes()) {
		t.Fatalf("output differs: %d bytes, want %d", cw.buf.Len(), want.Len())
	}
	if w.out.made > maxChunks {
		t.Errorf("%d chunks made, at most %d may exist", w.out.made, maxChunks)
	}
	if cw.writes >= 200*2 {
		t.Errorf("%d writes for 200 pages: chunks are not gathered", cw.writes)
	}
}

// blockedWriter holds every write until open is closed; entered receives a value as each
// write starts.
type blockedWriter struct {
	open    chan struct{}
	entered chan struct{}
	buf     bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	b.entered <- struct{}{}
	<-b.open
	return b.buf.Write(p)
}

// While stdout takes nothing, the read is held back instead of buffering without bound:
// once maxChunks chunks exist and are queued or being written, none is free, so the next
// chunk can only be the one the writer frees. Opening stdout then writes them in order.
func TestAsyncWriterHoldsTheReadBackWhileOutputIsBlocked(t *testing.T) {
	bw := &blockedWriter{open: make(chan struct{}), entered: make(chan struct{}, maxChunks+2)}
	a := newAsyncWriter(bw)
	var want bytes.Buffer
	for i := range maxChunks {
		b := fmt.Appendf(a.chunk(), "chunk %d\n", i)
		want.Write(b)
		a.send(b)
	}
	<-bw.entered // the writer goroutine holds the first chunk
	if a.made != maxChunks || len(a.free) != 0 || len(a.queue) != maxChunks-1 {
		t.Fatalf("with stdout blocked: %d chunks made, %d free, %d queued; want %d, 0, %d",
			a.made, len(a.free), len(a.queue), maxChunks, maxChunks-1)
	}
	next := make(chan []byte)
	go func() { next <- a.chunk() }()
	close(bw.open)
	b := <-next
	if a.made != maxChunks {
		t.Errorf("%d chunks made, want the %d that exist reused", a.made, maxChunks)
	}
	b = fmt.Appendf(b, "chunk %d\n", maxChunks)
	want.Write(b)
	a.send(b)
	if err := a.close(); err != nil {
		t.Fatal(err)
	}
	if got := bw.buf.String(); got != want.String() {
		t.Errorf("output %q, want %q", got, want.String())
	}
}

// Flush returns only once everything before it is written: while stdout holds the first
// write, Flush has not returned; once stdout takes it, Flush returns with all of it written.
func TestRecordWriterFlushWaitsForTheWrite(t *testing.T) {
	bw := &blockedWriter{open: make(chan struct{}), entered: make(chan struct{}, maxChunks+2)}
	w, _ := NewRecordWriter(bw, FormatEnvelope, nil)
	defer w.Close()
	w.Records("a", recs([]byte(`{"x":1}`), []byte(`{"x":2}`)))
	w.EndPage()
	w.Records("a", recs([]byte(`{"x":3}`)))
	flushed := make(chan error)
	go func() { flushed <- w.Flush() }()
	<-bw.entered
	select {
	case err := <-flushed:
		t.Fatalf("Flush returned (%v) while stdout had not taken the first page", err)
	default:
	}
	close(bw.open)
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	want := `{"stream":"a","data":{"x":1}}` + "\n" + `{"stream":"a","data":{"x":2}}` + "\n" + `{"stream":"a","data":{"x":3}}` + "\n"
	if got := bw.buf.String(); got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}

// recs makes records of the API's bytes.
func recs(raws ...[]byte) []record.Record {
	out := make([]record.Record, len(raws))
	for i, r := range raws {
		out[i] = record.Record{Raw: r}
	}
	return out
}

// TestEditedRecordsAreEncoded: a record a transformation edited is written as its object,
// in every format, between records written as the API's bytes.
func TestEditedRecordsAreEncoded(t *testing.T) {
	o := &record.Object{}
	o.Set("id", json.Number("12345678901234567890"))
	o.Set("name", "<b> & é")
	for format, want := range map[string]string{
		FormatRecords:  `{"x":1}` + "\n" + `{"id":12345678901234567890,"name":"<b> & é"}` + "\n",
		FormatEnvelope: `{"stream":"s","data":{"x":1}}` + "\n" + `{"stream":"s","data":{"id":12345678901234567890,"name":"<b> & é"}}` + "\n",
	} {
		var buf bytes.Buffer
		w, _ := NewRecordWriter(&buf, format, nil)
		if err := w.Records("s", []record.Record{{Raw: []byte(`{"x":1}`)}, {Object: o}}); err != nil {
			t.Fatal(err)
		}
		w.Close()
		if buf.String() != want {
			t.Errorf("%s: got %q, want %q", format, buf.String(), want)
		}
	}
}

// Every airbyte message the writer makes, exactly, in the order a read writes them, and
// valid under the protocol's schema.
func TestRecordWriterAirbyteMessages(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewRecordWriter(&buf, FormatAirbyte, func() time.Time { return time.UnixMilli(1700000000000) })
	if err != nil {
		t.Fatal(err)
	}
	state := &record.Object{}
	state.Set("updated_at", "2024-01-02")
	edited := &record.Object{}
	edited.Set("id", json.Number("2"))
	for _, err := range []error{
		w.Log("INFO", "Starting syncing"),
		w.StreamStatus("books", "STARTED"),
		w.Records("books", []record.Record{{Raw: []byte(`{"id":1}`)}, {Object: edited}}),
		w.State("books", state, 2),
		w.Control(map[string]any{"credentials": map[string]any{"refresh_token": "r2"}}),
		w.Control(nil),
		w.Error(ErrorTrace{Stream: "books", Message: "stream books, page 2: 500 Internal Server Error", InternalMessage: "500 Internal Server Error", FailureType: "transient_error"}),
		w.StreamStatus("books", "INCOMPLETE"),
		w.StreamStatus("authors", "STARTED"),
		w.StreamStatus("authors", "COMPLETE"),
		w.State("authors", nil, 0),
		w.Flush(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	const status = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"%s"},"status":"%s"}}}` + "\n"
	want := `{"type":"LOG","log":{"level":"INFO","message":"Starting syncing"}}` + "\n" +
		fmt.Sprintf(status, "books", "STARTED") +
		fmt.Sprintf(status, "books", "RUNNING") +
		`{"type":"RECORD","record":{"stream":"books","data":{"id":1},"emitted_at":1700000000000}}` + "\n" +
		`{"type":"RECORD","record":{"stream":"books","data":{"id":2},"emitted_at":1700000000000}}` + "\n" +
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"books"},"stream_state":{"updated_at":"2024-01-02"}},"sourceStats":{"recordCount":2.0}}}` + "\n" +
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{"credentials":{"refresh_token":"r2"}}}}}` + "\n" +
		`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{}}}}` + "\n" +
		`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000,"error":{"message":"stream books, page 2: 500 Internal Server Error","internal_message":"500 Internal Server Error","failure_type":"transient_error","stream_descriptor":{"name":"books"}}}}` + "\n" +
		fmt.Sprintf(status, "books", "INCOMPLETE") +
		fmt.Sprintf(status, "authors", "STARTED") +
		fmt.Sprintf(status, "authors", "COMPLETE") +
		`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"authors"},"stream_state":{}},"sourceStats":{"recordCount":0.0}}}` + "\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	protocoltest.Check(t, buf.String())
}

// The data of an Airbyte RECORD is an object: the writer refuses a page with any other
// record, and writes none of it (nor the stream's RUNNING status). Then it goes on.
func TestRecordWriterAirbyteRefusesRecordsThatAreNotObjects(t *testing.T) {
	for _, tt := range []struct{ raw, kind string }{
		{`1`, "a number"}, {`-1.5`, "a number"}, {`"x"`, "a string"}, {`[{"id":1}]`, "an array"},
		{`true`, "a boolean"}, {`null`, "null"},
	} {
		var buf bytes.Buffer
		w, _ := NewRecordWriter(&buf, FormatAirbyte, func() time.Time { return time.UnixMilli(1) })
		want := "a record is " + tt.kind + ", not an object: an Airbyte RECORD's data is an object"
		if err := w.Records("s", recs([]byte(tt.raw))); err == nil || err.Error() != want {
			t.Errorf("%s: error %v, want %s", tt.raw, err, want)
		}
		if err := w.Records("s", recs([]byte(`{"id":1}`), []byte(tt.raw), []byte(`{"id":2}`))); err == nil || err.Error() != want {
			t.Errorf("%s after a record: error %v, want %s", tt.raw, err, want)
		}
		if err := w.Records("s", recs([]byte(`{"id":3}`))); err != nil {
			t.Errorf("a record after the refused page: %v", err)
		}
		w.Flush()
		got := buf.String()
		if want := `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"s"},"status":"RUNNING"}}}` + "\n" +
			`{"type":"RECORD","record":{"stream":"s","data":{"id":3},"emitted_at":1}}` + "\n"; got != want {
			t.Errorf("%s: wrote\n%s\nwant\n%s", tt.raw, got, want)
		}
		// The other formats write any JSON value as the API sent it.
		var rb bytes.Buffer
		rw, _ := NewRecordWriter(&rb, FormatRecords, nil)
		if err := rw.Records("s", recs([]byte(tt.raw))); err != nil {
			t.Errorf("%s in the records format: %v", tt.raw, err)
		}
		rw.Flush()
		if rb.String() != tt.raw+"\n" {
			t.Errorf("%s in the records format: %q", tt.raw, rb.String())
		}
	}
}
