package cmd

import (
	"fmt"
	"sync"
	"time"

	"connector/pkg/run"
)

// progress shows records, pages and records/s on one refreshed stderr line when stderr is a
// terminal; otherwise it stays silent.
type progress struct {
	mu      sync.Mutex
	io      *ioStreams
	now     func() time.Time
	live    bool
	start   time.Time
	records int
	pages   int
	stream  string
	shown   bool
}

func (p *progress) StreamStart(ss run.StreamStart) {
	if ss.ParentOf != "" {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.stream, p.records, p.pages, p.start = ss.Stream, 0, 0, p.now()
}

func (p *progress) Page(ev run.PageEvent) {
	if ev.End == run.Discarded {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if ev.Stream != p.stream {
		return // a parent's page
	}
	p.records += ev.Emitted
	p.pages++
	if !p.live {
		return
	}
	rate := float64(p.records) / p.now().Sub(p.start).Seconds()
	fmt.Fprintf(p.io.Err, "\r\033[K%s: %s, %s, %.0f records/s\r", p.stream, plural(p.records, "record"), plural(p.pages, "page"), rate)
	p.shown = true
}

func (p *progress) StreamEnd(run.Result) {}

func (p *progress) clear() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.shown {
		fmt.Fprint(p.io.Err, "\r\033[K\r")
		p.shown = false
	}
}
