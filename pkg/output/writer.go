package output

import (
	"bytes"
	"encoding/json"
	"io"
	"sync"

	"connector/pkg/record"
)

// writer is what the formats share, the fast path of a read: lines of records copied byte
// for byte into chunks that a goroutine of its own writes out (see asyncWriter), so the
// read goes on while stdout takes the last page. Each format's type embeds a writer and
// gives it the format's framing; the writer gives the type Records, EndPage, Flush and
// Close. It is safe for concurrent use; each line is written whole.
type writer struct {
	mu  sync.Mutex
	out *asyncWriter
	cur []byte // the chunk being filled
	// f is the format: how a record's line is framed, and what comes before a stream's
	// first record.
	f framing
	// prefixes caches the encoded start of a record line per stream.
	prefixes map[string][]byte
}

// framing is what a format says of its record lines. newPrefix, appendRecord and accept
// depend on their arguments only; starting is called with the writer's mutex held.
type framing interface {
	// newPrefix is what comes before the data of each record of stream, encoded once per
	// stream.
	newPrefix(stream string) []byte
	// appendRecord appends the whole line of rec to b: prefix (the stream's newPrefix), the
	// record's JSON, the rest of the line. On an error the result is not to be used.
	appendRecord(b, prefix []byte, rec record.Record) ([]byte, error)
	// accept refuses a page of records the format cannot carry (a *RefusedError), before
	// any of it is written.
	accept(recs []record.Record) error
	// starting is what comes before the first record of stream that is written out, once
	// per stream; nil when nothing does, or no longer.
	starting(stream string) ([]byte, error)
}

func newWriter(w io.Writer, f framing) *writer {
	out := newAsyncWriter(w)
	return &writer{out: out, cur: out.chunk(), f: f}
}

// base is the writer itself, for a Sequencer writing into the output that embeds it.
func (w *writer) base() *writer { return w }

// Records writes records of stream (see RecordOutput).
func (w *writer) Records(stream string, recs []record.Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if err := w.f.accept(recs); err != nil {
		return err
	}
	if len(recs) == 0 {
		return nil
	}
	line, err := w.f.starting(stream)
	if err != nil {
		return err
	}
	w.cur = append(w.cur, line...)
	prefix := w.prefix(stream)
	for _, rec := range recs {
		if err := w.record(prefix, rec); err != nil {
			return err
		}
	}
	return nil
}

// record writes one record; the caller holds w.mu.
func (w *writer) record(prefix []byte, rec record.Record) error {
	b, err := w.f.appendRecord(w.cur, prefix, rec)
	if err != nil {
		return err // w.cur is left as it was
	}
	w.cur = b
	if len(w.cur) < chunkSize {
		return nil
	}
	w.handOff()
	return w.out.failed()
}

// prefix is the cached newPrefix of stream. The caller holds w.mu.
func (w *writer) prefix(stream string) []byte {
	if p, ok := w.prefixes[stream]; ok {
		return p
	}
	p := w.f.newPrefix(stream)
	if w.prefixes == nil {
		w.prefixes = map[string][]byte{}
	}
	w.prefixes[stream] = p
	return p
}

// partLines writes the lines of a part (see Part), with what the format writes before the
// first record of each stream (firsts) where it is due, as Records writes it.
func (w *writer) partLines(b []byte, firsts []streamAt) error {
	if len(firsts) > 0 {
		w.mu.Lock()
		var out []byte
		last := 0
		for _, f := range firsts {
			line, err := w.f.starting(f.stream)
			if err != nil {
				w.mu.Unlock()
				return err
			}
			if line == nil {
				continue
			}
			out = append(append(out, b[last:f.at]...), line...)
			last = f.at
		}
		w.mu.Unlock()
		if out != nil {
			b = append(out, b[last:]...)
		}
	}
	return w.writeLines(b)
}

// writeLines writes whole lines, already framed.
func (w *writer) writeLines(b []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	for len(b) > 0 {
		room := max(chunkSize-len(w.cur), 0)
		if room == 0 {
			w.handOff()
			if err := w.out.failed(); err != nil {
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
		w.cur = append(w.cur, b[:n]...)
		b = b[n:]
		if len(w.cur) >= chunkSize {
			w.handOff()
		}
	}
	return w.out.failed()
}

// message writes one line that is not a record (a protocol message), as encoded: err is
// that of its encoding.
func (w *writer) message(line []byte, err error) error {
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cur = append(w.cur, line...)
	return w.out.failed()
}

// handOff queues the chunk being filled for writing and takes an empty one. The caller
// holds w.mu.
func (w *writer) handOff() {
	if len(w.cur) == 0 {
		return
	}
	w.out.send(w.cur)
	w.cur = w.out.chunk()
}

// EndPage queues what is gathered for writing (see RecordOutput).
func (w *writer) EndPage() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.handOff()
	return w.out.failed()
}

// Flush writes out everything gathered so far (see RecordOutput).
func (w *writer) Flush() error {
	w.EndPage()
	return w.out.wait()
}

// Close flushes and stops the writer goroutine (see RecordOutput).
func (w *writer) Close() error {
	w.EndPage()
	return w.out.close()
}

// jsonString is s as a JSON string, without HTML escaping.
func jsonString(s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(s) // a string always encodes
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}
