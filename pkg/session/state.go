package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"connector/pkg/atomicfile"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/run"
	"connector/pkg/state"
)

// State is the state of a read: read from a state file (or a recording), and written after
// every checkpoint to its output file, in the background, the newest state winning. States
// of streams the read does not touch are written back as they were.
type State struct {
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

// StateFiles say where a read's state comes from and goes to.
type StateFiles struct {
	// In is the state file read when it exists ("": none).
	In string
	// Out is the file written after every checkpoint ("": In, unless ReadOnly).
	Out string
	// ReadOnly never writes the state (the Airbyte entry point: the platform keeps it).
	ReadOnly bool
	// Recorded is the state a recording began with, taken when In is "" (a replay).
	Recorded     []byte
	RecordedFrom string
	// Given is a state handed over in memory (a request to connector serve), named GivenName
	// in messages; taken when In is "" and nothing was recorded.
	Given     []byte
	GivenName string
}

// OpenState reads the state of a read. A state that cannot be read is an InvalidError; an
// output file that cannot be written (no such folder) is an ArgumentError, found before the
// read rather than at its first checkpoint.
func OpenState(f StateFiles) (*State, error) {
	s := &State{file: &state.File{}, out: f.Out, last: map[string]*record.Object{}}
	switch {
	case f.In != "":
		file, err := state.Read(f.In)
		var se *state.Error
		if errors.As(err, &se) {
			return nil, invalidf("state file %v", err)
		}
		if err != nil {
			return nil, invalidf("cannot read the state file: %s", pathError(err))
		}
		s.file = file
		if s.out == "" && !f.ReadOnly {
			s.out = f.In
		}
	case len(f.Recorded) > 0:
		file, err := state.Parse(f.RecordedFrom, f.Recorded)
		if err != nil {
			return nil, invalidf("the state recorded in %v", err)
		}
		s.file = file
	case len(f.Given) > 0:
		file, err := state.Parse(f.GivenName, f.Given)
		if err != nil {
			return nil, invalidf("%v", err)
		}
		s.file = file
	}
	if s.out != "" {
		dir := filepath.Dir(s.out)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return nil, &ArgumentError{fmt.Errorf("cannot write the state file %s: the folder %s does not exist", s.out, dir)}
		}
		if fi, err := os.Stat(s.out); err == nil && fi.IsDir() {
			return nil, &ArgumentError{fmt.Errorf("cannot write the state file %s: it is a folder", s.out)}
		}
	}
	return s, nil
}

// Of is the input state of a stream.
func (s *State) Of(stream string) *record.Object { return s.file.Get(stream) }

// Out is the file the state is written to ("": nowhere).
func (s *State) Out() string { return s.out }

// Check refuses, before any request, a state that does not fit the streams (named name in
// the message; "": "the state").
func (s *State) Check(o *run.Options, name string, streams []*manifest.Stream) error {
	if err := run.CheckState(o, streams); err != nil {
		if name == "" {
			name = "the state"
		}
		return invalidf("%s: %w (fix the state, or start over without it)", name, err)
	}
	return nil
}

// Set takes a stream's new state and has the file rewritten.
func (s *State) Set(stream string, st *record.Object) {
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
func (s *State) write() {
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

// Close waits for the last write.
func (s *State) Close() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Describe is a stream's newest state for a person, cut when long.
func (s *State) Describe(stream string) (string, bool) {
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

// pathError drops the operation from a file error: "open x: no such file" → "x: no such file".
func pathError(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Path + ": " + pe.Err.Error()
	}
	return err.Error()
}
