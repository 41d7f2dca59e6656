package output

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/record"
)

func rec(s string) []record.Record { return []record.Record{{Raw: []byte(s)}} }

// TestSequencerKeepsOrder: parts written in any order come out in the order they were made;
// a dropped part writes nothing; AtHead callbacks run in their place.
func TestSequencerKeepsOrder(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewRecordOutput(&buf, FormatRecords, nil)
	s := NewSequencer(context.Background(), w)
	var events []string
	parts := make([]*Part, 5)
	for i := range parts {
		parts[i] = s.Part()
	}
	parts[4].AtHead(func() { events = append(events, "head 4") })
	// Written from the last to the first.
	for i := len(parts) - 1; i >= 0; i-- {
		parts[i].Records("s", rec(fmt.Sprintf(`{"part":%d}`, i)))
		parts[i].EndPage()
	}
	parts[2].Drop()
	for i := len(parts) - 1; i >= 0; i-- {
		parts[i].Done(false)
	}
	parts[4].AtHead(func() { events = append(events, "head 4 again") })
	w.Close()
	want := "{\"part\":0}\n{\"part\":1}\n{\"part\":3}\n{\"part\":4}\n"
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
	if strings.Join(events, ",") != "head 4,head 4 again" {
		t.Errorf("events %v", events)
	}
}

// TestSequencerWaitsWhenAPartIsFull: a part not at the head holds at most partBuffer; its
// writer then waits until the part reaches the head, and nothing is lost or reordered.
func TestSequencerWaitsWhenAPartIsFull(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewRecordOutput(&buf, FormatRecords, nil)
	s := NewSequencer(context.Background(), w)
	head, second := s.Part(), s.Part()
	line := `{"pad":"` + strings.Repeat("x", 1000) + `"}`
	n := 2 * partBuffer / len(line)
	var wg sync.WaitGroup
	wg.Add(1)
	released := make(chan struct{})
	go func() {
		defer wg.Done()
		for range n {
			if err := second.Records("s", rec(line)); err != nil {
				t.Error(err)
			}
		}
		select {
		case <-released:
		default:
			t.Error("the second part wrote past its buffer before it was the head")
		}
		second.Done(false)
	}()
	head.Records("s", rec(`{"first":true}`))
	close(released)
	head.Done(false)
	wg.Wait()
	w.Close()
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if len(lines) != n+1 || lines[0] != `{"first":true}` || lines[n] != line {
		t.Errorf("%d lines, first %.20q", len(lines), lines[0])
	}
}

// TestSequencerEndsWaitsWithTheContext: a writer waiting for its turn returns when the read
// is cancelled.
func TestSequencerEndsWaitsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	w, _ := NewRecordOutput(&bytes.Buffer{}, FormatRecords, nil)
	s := NewSequencer(ctx, w)
	s.Part() // the head, never done
	p := s.Part()
	line := strings.Repeat("y", partBuffer)
	cancel()
	if err := p.Records("s", rec(`"`+line+`"`)); err != context.Canceled {
		t.Errorf("err = %v, want context.Canceled", err)
	}
}

// In the airbyte format, records that waited in a part's buffer get their stream's RUNNING
// status before the first of them when the part is written out, once per stream, as
// records written at the head do.
func TestSequencerWritesRunningBeforeBufferedRecords(t *testing.T) {
	var buf bytes.Buffer
	now := func() time.Time { return time.UnixMilli(7) }
	w, _ := NewRecordOutput(&buf, FormatAirbyte, now)
	s := NewSequencer(context.Background(), w)
	head, second, third := s.Part(), s.Part(), s.Part()
	// The later parts are written first, while the head holds stdout.
	third.Records("b", rec(`{"b":3}`))
	second.Records("a", rec(`{"a":2}`))
	second.Records("b", rec(`{"b":1}`))
	second.Records("b", rec(`{"b":2}`))
	head.Records("a", rec(`{"a":1}`))
	head.Done(false)
	second.Done(false)
	third.Done(false)
	w.Close()
	status := func(stream string) string {
		return `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":7,"stream_status":{"stream_descriptor":{"name":"` + stream + `"},"status":"RUNNING"}}}` + "\n"
	}
	record := func(stream, data string) string {
		return `{"type":"RECORD","record":{"stream":"` + stream + `","data":` + data + `,"emitted_at":7}}` + "\n"
	}
	want := status("a") + record("a", `{"a":1}`) + record("a", `{"a":2}`) +
		status("b") + record("b", `{"b":1}`) + record("b", `{"b":2}`) + record("b", `{"b":3}`)
	if buf.String() != want {
		t.Errorf("got\n%s\nwant\n%s", buf.String(), want)
	}
}
