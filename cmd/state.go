package cmd

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/spf13/cobra"

	"connector/pkg/atomicfile"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/run"
	"connector/pkg/state"
)

// stateFlags are --state and --state-out.
type stateFlags struct {
	path, out string
	// readOnly never writes the state (airbyte read: the platform keeps it).
	readOnly bool
}

func (f *stateFlags) add(c *cobra.Command) {
	c.Flags().StringVar(&f.path, "state", "", "read incremental streams' state from `FILE` when it exists, and rewrite it (atomically) after every checkpoint: a slice whose records are all written")
	c.Flags().StringVar(&f.out, "state-out", "", "write the state to `FILE` instead of the --state file")
}

// stateStore is the state of a read: read from --state, written after every checkpoint to
// --state-out (else --state), in the background, the newest state winning. States of
// streams the read does not touch are written back as they were.
type stateStore struct {
	file *state.File
	out  string

	mu      sync.Mutex
	pending bool
	running bool
	wg      sync.WaitGroup
	err     error
	// last is each stream's newest state, for the closing note.
	last map[string]*record.Object
}

// openState reads the state file of f (none: an empty state, written nowhere).
func openState(f stateFlags) (*stateStore, error) {
	s := &stateStore{file: &state.File{}, out: f.out, last: map[string]*record.Object{}}
	if f.path != "" {
		file, err := state.Read(f.path)
		var se *state.Error
		if errors.As(err, &se) {
			return nil, &invalidError{fmt.Errorf("state file %v", err)}
		}
		if err != nil {
			return nil, &invalidError{fmt.Errorf("cannot read the state file: %s", pathError(err))}
		}
		s.file = file
		if s.out == "" && !f.readOnly {
			s.out = f.path
		}
	}
	if s.out != "" {
		// Found out before the read, not at its first checkpoint.
		dir := filepath.Dir(s.out)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, usagef("cannot write the state file %s: the folder %s does not exist", s.out, dir)
		}
		if fi, err := os.Stat(s.out); err == nil && fi.IsDir() {
			return nil, usagef("cannot write the state file %s: it is a folder", s.out)
		}
	}
	return s, nil
}

// of is the input state of a stream.
func (s *stateStore) of(stream string) *record.Object { return s.file.Get(stream) }

// check refuses, before any request, a state that does not fit the definition (exit 3).
func (s *stateStore) check(o *run.Options, path string, streams []*manifest.Stream) error {
	if err := run.CheckState(o, streams); err != nil {
		name := path
		if name == "" {
			name = "the state"
		}
		return &invalidError{fmt.Errorf("%s: %w (fix the state, or start over without it)", name, err)}
	}
	return nil
}

// set takes a stream's new state and has the file rewritten.
func (s *stateStore) set(stream string, st *record.Object) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := st.Get("__ab_no_cursor_state_message"); !ok || st.Len() > 1 {
		s.last[stream] = st // a full refresh stream's state says nothing worth a note
	}
	if s.out == "" {
		return
	}
	s.file.Set(stream, st)
	s.pending = true
	if !s.running {
		s.running = true
		s.wg.Add(1)
		go s.write()
	}
}

// write writes the newest states until none is pending.
func (s *stateStore) write() {
	defer s.wg.Done()
	for {
		s.mu.Lock()
		if !s.pending {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.pending = false
		data, err := s.file.Marshal()
		s.mu.Unlock()
		if err == nil {
			err = atomicfile.Write(s.out, data)
		}
		if err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("cannot write the state file: %s", pathError(err))
			}
			s.mu.Unlock()
		}
	}
}

// close waits for the last write.
func (s *stateStore) close() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// describe is a stream's newest state for stderr, cut when long.
func (s *stateStore) describe(stream string) (string, bool) {
	s.mu.Lock()
	st, ok := s.last[stream]
	s.mu.Unlock()
	if !ok {
		return "", false
	}
	text, err := record.Marshal(st)
	if err != nil {
		return "", false
	}
	if len(text) > 160 {
		return string(text[:157]) + "…", true
	}
	return string(text), true
}
