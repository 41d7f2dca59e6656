package output

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"connector/pkg/record"
)

// Streams written at once still give whole lines, each stream's records in order.
func TestRecordWriterConcurrentLinesStayWhole(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewRecordOutput(&buf, FormatEnvelope, nil)
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
	w, _ := NewRecordOutput(&failAfter{n: 100, err: boom}, FormatRecords, nil)
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
	w := newRecords(cw)
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
	w, _ := NewRecordOutput(bw, FormatEnvelope, nil)
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
