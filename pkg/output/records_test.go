package output

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestRecordWriterFormats(t *testing.T) {
	now := func() time.Time { return time.UnixMilli(1700000000123) }
	raw := []byte(`{"id":12345678901234567890,"h":"<a&b>"}`)
	tests := []struct{ format, want string }{
		{FormatRecords, `{"id":12345678901234567890,"h":"<a&b>"}` + "\n"},
		{FormatEnvelope, `{"stream":"a<b>","data":{"id":12345678901234567890,"h":"<a&b>"}}` + "\n"},
		{FormatAirbyte, `{"type":"RECORD","record":{"stream":"a<b>","data":{"id":12345678901234567890,"h":"<a&b>"},"emitted_at":1700000000123}}` + "\n"},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		w, err := NewRecordWriter(&buf, tt.format, now)
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := w.Records("a<b>", [][]byte{raw}); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if got := buf.String(); got != tt.want+tt.want {
			t.Errorf("%s: %q, want twice %q", tt.format, got, tt.want)
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
				w.Records(fmt.Sprint("s", s), [][]byte{[]byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", 100)))})
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
	if err := w.Records("s", [][]byte{line}); err != nil {
		t.Fatalf("first page: %v (nothing has been written yet)", err)
	}
	if err := w.Flush(); !errors.Is(err, boom) {
		t.Fatalf("Flush: %v, want the write error", err)
	}
	var err error
	for range 3 * maxChunks {
		if err = w.Records("s", [][]byte{bytes.Repeat(line, chunkSize/len(line)+1)}); err != nil {
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

// slowWriter takes its time over every write and keeps what it was given.
type slowWriter struct {
	buf    bytes.Buffer
	writes int
}

func (s *slowWriter) Write(p []byte) (int, error) {
	time.Sleep(200 * time.Microsecond)
	s.writes++
	return s.buf.Write(p)
}

// Pages handed to a slow stdout come out whole and in order, and the read is held back
// instead of buffering without bound: never more than maxChunks chunks exist.
func TestRecordWriterSlowOutputKeepsOrderAndBoundsMemory(t *testing.T) {
	sw := &slowWriter{}
	w, _ := NewRecordWriter(sw, FormatRecords, nil)
	var want bytes.Buffer
	for page := range 200 {
		var raws [][]byte
		for i := range 50 {
			raw := []byte(fmt.Sprintf(`{"page":%d,"i":%d,"pad":"%s"}`, page, i, strings.Repeat("y", 80)))
			raws = append(raws, raw)
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
	if !bytes.Equal(sw.buf.Bytes(), want.Bytes()) {
		t.Fatalf("output differs: %d bytes, want %d", sw.buf.Len(), want.Len())
	}
	if w.out.made > maxChunks {
		t.Errorf("%d chunks made, at most %d may exist", w.out.made, maxChunks)
	}
	if sw.writes >= 200*2 {
		t.Errorf("%d writes for 200 pages: chunks are not gathered", sw.writes)
	}
}

// Flush returns only once everything before it is written.
func TestRecordWriterFlushWaitsForTheWrite(t *testing.T) {
	sw := &slowWriter{}
	w, _ := NewRecordWriter(sw, FormatEnvelope, nil)
	defer w.Close()
	w.Records("a", [][]byte{[]byte(`{"x":1}`), []byte(`{"x":2}`)})
	w.EndPage()
	w.Records("a", [][]byte{[]byte(`{"x":3}`)})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	want := `{"stream":"a","data":{"x":1}}` + "\n" + `{"stream":"a","data":{"x":2}}` + "\n" + `{"stream":"a","data":{"x":3}}` + "\n"
	if got := sw.buf.String(); got != want {
		t.Errorf("after Flush: %q, want %q", got, want)
	}
}
