package output

import (
	"context"
	"sync"

	"connector/pkg/record"
)

// A Sequencer lets several slices be read at once while stdout stays exactly what a read of
// one slice at a time writes. The output is a sequence of parts, made in output order (one
// per slice, one for each stream's start and end). The part at the head of the sequence
// writes straight to the output; any other part formats its lines into a buffer of its
// own, and when that buffer holds partBuffer bytes, its writer waits until the part reaches
// the head. When the head part is done, the next one's buffer is written out and it becomes
// the head. Memory stays bounded: at most partBuffer per part in flight.
type Sequencer struct {
	w   *writer
	ctx context.Context
	mu  sync.Mutex
	// queue holds the parts not yet written out in full; queue[0] is the head.
	queue []*Part
}

// partBuffer is how much a part not at the head may hold before its writer waits.
const partBuffer = 1 << 20

// NewSequencer writes parts to out in order. Waits end when ctx is done.
func NewSequencer(ctx context.Context, out RecordOutput) *Sequencer {
	return &Sequencer{w: out.base(), ctx: ctx}
}

// Part appends a part to the sequence: what is written into it comes after everything
// written into the parts made before it.
func (s *Sequencer) Part() *Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &Part{s: s, headCh: make(chan struct{}), prefixes: map[string][]byte{}}
	s.queue = append(s.queue, p)
	if len(s.queue) == 1 {
		p.head = true
		close(p.headCh)
	}
	return p
}

// Part is one part of a Sequencer's output. Its methods are called by the goroutine that
// writes the part.
type Part struct {
	s        *Sequencer
	head     bool
	headCh   chan struct{} // closed when the part becomes the head
	buf      []byte
	prefixes map[string][]byte
	// firsts are where the first record of each stream begins in buf: when the part is
	// written out, what the format writes before a stream's first record goes there (the
	// RUNNING status of a stream not yet running, in airbyte).
	firsts  []streamAt
	done    bool
	dropped bool
	atHead  []func()
	err     error
}

// Records writes the records of one page: straight out at the head, else into the part's
// buffer.
func (p *Part) Records(stream string, recs []record.Record) error {
	s := p.s
	s.mu.Lock()
	if p.dropped {
		s.mu.Unlock()
		return nil
	}
	if p.head {
		s.mu.Unlock()
		return s.w.Records(stream, recs)
	}
	if err := s.w.f.accept(recs); err != nil {
		s.mu.Unlock()
		return err
	}
	prefix, ok := p.prefixes[stream]
	if !ok {
		prefix = s.w.f.newPrefix(stream)
		p.prefixes[stream] = prefix
	}
	var err error
	for i, rec := range recs {
		var b []byte
		if b, err = s.w.f.appendRecord(p.buf, prefix, rec); err != nil {
			break
		}
		if i == 0 && !p.has(stream) {
			p.firsts = append(p.firsts, streamAt{stream, len(p.buf)})
		}
		p.buf = b
	}
	full := len(p.buf) >= partBuffer
	s.mu.Unlock()
	if err != nil {
		return err
	}
	if full {
		select {
		case <-p.headCh:
		case <-s.ctx.Done():
			return s.ctx.Err()
		}
		s.mu.Lock()
		err = p.err
		s.mu.Unlock()
	}
	return err
}

// streamAt is a place in a part's buffer where a stream's records begin.
type streamAt struct {
	stream string
	at     int
}

// has says whether the part's buffer holds records of stream. The caller holds s.mu.
func (p *Part) has(stream string) bool {
	for _, f := range p.firsts {
		if f.stream == stream {
			return true
		}
	}
	return false
}

// EndPage hands what the head part wrote to the writer goroutine; a part not at the head
// keeps its buffer.
func (p *Part) EndPage() error {
	p.s.mu.Lock()
	head := p.head
	p.s.mu.Unlock()
	if head {
		return p.s.w.EndPage()
	}
	return nil
}

// AtHead runs f once every part before this one is written out: at once if they are. f may
// write to the output directly (it is the head), but must not call the part.
func (p *Part) AtHead(f func()) {
	s := p.s
	s.mu.Lock()
	if !p.head {
		p.atHead = append(p.atHead, f)
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	f()
}

// Done says nothing more will be written into the part; drop discards what it holds and
// anything written later. When the part is the head, the parts after it are written out in
// turn.
func (p *Part) Done(drop bool) {
	s := p.s
	s.mu.Lock()
	defer s.mu.Unlock()
	p.done = true
	if drop {
		p.dropped, p.buf, p.firsts = true, nil, nil
	}
	for len(s.queue) > 0 && s.queue[0].done {
		s.queue = s.queue[1:]
		if len(s.queue) == 0 {
			return
		}
		next := s.queue[0]
		if len(next.buf) > 0 {
			next.err = s.w.partLines(next.buf, next.firsts)
			next.buf, next.firsts = nil, nil
		}
		next.head = true
		close(next.headCh)
		for _, f := range next.atHead {
			f()
		}
		next.atHead = nil
		if err := s.w.EndPage(); err != nil && next.err == nil {
			next.err = err
		}
	}
}

// Drop discards what the part holds and what is written into it from now on; it stays in
// its place until Done.
func (p *Part) Drop() {
	p.s.mu.Lock()
	defer p.s.mu.Unlock()
	p.dropped, p.buf, p.firsts = true, nil, nil
}
