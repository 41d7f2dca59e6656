package dev

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"time"
)

// Why polling rather than inotify (fsnotify): editors save in several ways — writing in
// place, or writing a new file and renaming it over the old one (vim, JetBrains, many
// formatters), which leaves an inotify watch on the old inode; a watch then has to be on the
// folder and re-armed after every rename. Looking at two or three files every 100 ms costs a
// few stat calls (microseconds), sees every way of saving the same way, also on file systems
// that send no events (network and some container mounts), and needs no dependency. The
// 100 ms it can add to a save are well inside the second a save may take to reach the page.

// maxFile is the largest file read (a definition or testing values).
const maxFile = 64 << 20

// stamp is what a poll sees of a file without reading it.
type stamp struct {
	exists bool
	size   int64
	mod    time.Time
}

func stampOf(path string) stamp {
	fi, err := os.Stat(path)
	if err != nil {
		return stamp{}
	}
	return stamp{exists: true, size: fi.Size(), mod: fi.ModTime()}
}

// content is a file as last read.
type content struct {
	data []byte
	err  error
	sum  [32]byte
}

// snapshot is the watched files as last read, and when the newest of them was written.
type snapshot struct {
	files map[string]content
	saved time.Time
}

// data is a file's bytes, or why it could not be read.
func (s snapshot) data(path string) ([]byte, error) {
	c, ok := s.files[path]
	if !ok {
		return nil, fmt.Errorf("%s is not watched", path)
	}
	return c.data, c.err
}

// watcher polls files and reports a snapshot when one of them changed: its size or
// modification time moved and, once it has stayed the same for settle (an editor writes in
// steps), its content is not what it was.
type watcher struct {
	paths         []string
	every, settle time.Duration
	stamps        []stamp
	last          snapshot
}

// first reads the files as they are now.
func (w *watcher) first() snapshot {
	w.stamps = w.stampAll()
	w.last = w.readAll(w.stamps)
	return w.last
}

func (w *watcher) stampAll() []stamp {
	out := make([]stamp, len(w.paths))
	for i, p := range w.paths {
		out[i] = stampOf(p)
	}
	return out
}

func (w *watcher) readAll(stamps []stamp) snapshot {
	s := snapshot{files: make(map[string]content, len(w.paths))}
	for i, p := range w.paths {
		c := readFile(p)
		s.files[p] = c
		if stamps[i].mod.After(s.saved) {
			s.saved = stamps[i].mod
		}
	}
	return s
}

func readFile(path string) content {
	f, err := os.Open(path)
	if err != nil {
		return content{err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err == nil && len(b) > maxFile {
		err = fmt.Errorf("%s is larger than %d MiB (a limit of connector dev)", path, maxFile>>20)
	}
	if err != nil {
		return content{err: err}
	}
	return content{data: b, sum: sha256.Sum256(b)}
}

// run polls until ctx ends, sending a snapshot on out after every change of content.
func (w *watcher) run(ctx context.Context, out chan<- snapshot) {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		now := w.stampAll()
		if equalStamps(now, w.stamps) {
			continue
		}
		// Wait until the files stay as they are for settle.
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(w.settle):
			}
			again := w.stampAll()
			if equalStamps(again, now) {
				break
			}
			now = again
		}
		w.stamps = now
		s := w.readAll(now)
		if sameContent(s, w.last) {
			continue // touched, or saved unchanged
		}
		w.last = s
		select {
		case out <- s:
		case <-ctx.Done():
			return
		}
	}
}

func equalStamps(a, b []stamp) bool {
	for i := range a {
		if a[i].exists != b[i].exists || a[i].size != b[i].size || !a[i].mod.Equal(b[i].mod) {
			return false
		}
	}
	return true
}

func sameContent(a, b snapshot) bool {
	for p, ca := range a.files {
		cb := b.files[p]
		if (ca.err == nil) != (cb.err == nil) || ca.sum != cb.sum {
			return false
		}
	}
	return true
}
