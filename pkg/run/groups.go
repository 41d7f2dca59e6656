package run

import (
	"context"
	"sync"

	"connector/pkg/manifest"
)

// groupGate keeps the streams of a stream group (stream_groups, BlockSimultaneousSyncsAction)
// from being read at the same time, whatever the number of workers. A stream is busy from
// the moment its slices start being made until its last slice is read; a parent stream is
// busy while a child makes its slices from it (that is when the parent's records are read).
// A stream may start when neither it nor any parent it reads has a group with a busy member,
// and is not busy itself: so the requests of two streams of one group are never in flight
// at once, a parent's included. Streams without a group, and without a grouped parent, never
// wait.
//
// Streams start in order: one that must wait holds back those after it, whose records come
// after its own in the output. Letting them go first would leave their records waiting, in
// buffers of bounded size, for a stream that itself waits for them: bounded memory and a
// deterministic output come first.
type groupGate struct {
	mu sync.Mutex
	// busy counts the reads under way of each stream (as a stream or as a parent), and used
	// the busy streams of each group.
	busy map[string]int
	used map[string]int
	// freed is closed (and replaced) each time a stream stops being busy.
	freed chan struct{}
}

func newGroupGate() *groupGate {
	return &groupGate{busy: map[string]int{}, used: map[string]int{}, freed: make(chan struct{})}
}

// grouped are the streams whose reads s's read counts as: s and the parents it reads its
// partitions from, those that are in a group.
func grouped(s *manifest.Stream) (self *manifest.Stream, parents []*manifest.Stream) {
	if s.Group != "" {
		self = s
	}
	for _, a := range s.Ancestors() {
		if a.Group != "" {
			parents = append(parents, a)
		}
	}
	return self, parents
}

// acquire waits until s may start, then marks s and its grouped parents busy. It returns
// false when ctx ends first.
func (g *groupGate) acquire(ctx context.Context, s *manifest.Stream) bool {
	self, parents := grouped(s)
	all := parents
	if self != nil {
		all = append([]*manifest.Stream{self}, parents...)
	}
	if len(all) == 0 {
		return true
	}
	for {
		g.mu.Lock()
		free := true
		for _, x := range all {
			if g.busy[x.Name] > 0 || g.used[x.Group] > 0 {
				free = false
				break
			}
		}
		if free {
			for _, x := range all {
				g.busy[x.Name]++
				g.used[x.Group]++
			}
			g.mu.Unlock()
			return true
		}
		wait := g.freed
		g.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return false
		}
	}
}

// release marks the streams xs no longer busy (the grouped ones among them).
func (g *groupGate) release(xs ...*manifest.Stream) {
	g.mu.Lock()
	defer g.mu.Unlock()
	changed := false
	for _, x := range xs {
		if x == nil || x.Group == "" {
			continue
		}
		g.busy[x.Name]--
		g.used[x.Group]--
		changed = true
	}
	if changed {
		close(g.freed)
		g.freed = make(chan struct{})
	}
}
