package output

import (
	"bytes"
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
			if err := w.Record("a<b>", raw); err != nil {
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
				w.Record(fmt.Sprint("s", s), []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, strings.Repeat("x", 100))))
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
