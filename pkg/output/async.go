package output

import (
	"io"
	"sync"
	"sync/atomic"
)

// Output is written by a goroutine of its own, so that a read does not wait for stdout (a
// pipe into jq, a file, a terminal) before it asks for the next page. Lines are gathered in
// chunks of about chunkSize bytes; a full chunk, or the chunk in progress at the end of a
// page, is queued to the writer goroutine and a free chunk taken in its place. At most
// maxChunks exist, so a slow reader of stdout holds the read back instead of making memory
// grow.
const (
	chunkSize = 64 << 10
	maxChunks = 4
	// A chunk that grew past keepSize for one huge record is dropped, not reused.
	keepSize = 1 << 20
)

// queued is a chunk to write, or (buf nil) a request to say when everything before it is
// written.
type queued struct {
	buf  []byte
	done chan error
}

// asyncWriter writes chunks to w in the order they were queued, on one goroutine started
// at the first hand-off and stopped by close.
type asyncWriter struct {
	w     io.Writer
	queue chan queued
	free  chan []byte
	made  int // chunks allocated so far
	start sync.Once
	// failure is the first write error; after it, chunks are dropped unwritten.
	failure atomic.Pointer[error]
}

func newAsyncWriter(w io.Writer) *asyncWriter {
	return &asyncWriter{
		w:     w,
		queue: make(chan queued, maxChunks),
		free:  make(chan []byte, maxChunks),
	}
}

// chunk returns an empty chunk: a free one, a new one while fewer than maxChunks exist,
// else the next one the writer goroutine frees.
func (a *asyncWriter) chunk() []byte {
	select {
	case b := <-a.free:
		return b
	default:
	}
	if a.made < maxChunks {
		a.made++
		return make([]byte, 0, chunkSize+chunkSize/4)
	}
	return <-a.free
}

// send queues a filled chunk for writing.
func (a *asyncWriter) send(b []byte) {
	a.start.Do(func() { go a.loop() })
	a.queue <- queued{buf: b}
}

// wait returns once everything queued so far is written, with the first write error.
func (a *asyncWriter) wait() error {
	a.start.Do(func() { go a.loop() })
	done := make(chan error, 1)
	a.queue <- queued{done: done}
	return <-done
}

// failed returns the first write error without waiting, or nil.
func (a *asyncWriter) failed() error {
	if err := a.failure.Load(); err != nil {
		return *err
	}
	return nil
}

// close waits for everything queued and stops the goroutine; the writer must not be used
// afterwards.
func (a *asyncWriter) close() error {
	err := a.wait()
	close(a.queue)
	return err
}

func (a *asyncWriter) loop() {
	for q := range a.queue {
		if q.buf == nil {
			q.done <- a.failed()
			continue
		}
		if a.failed() == nil && len(q.buf) > 0 {
			if _, err := a.w.Write(q.buf); err != nil {
				a.failure.Store(&err)
			}
		}
		if cap(q.buf) > keepSize {
			q.buf = make([]byte, 0, chunkSize+chunkSize/4)
		}
		a.free <- q.buf[:0]
	}
}
