// Package state reads and writes a state file: where each incremental stream stopped, so that
// the next read asks only for what changed. The format is Airbyte's — a list of STATE
// messages, one per stream — so a state file moves between connector and the Airbyte
// platform in both directions:
//
//	[{"type":"STREAM","stream":{"stream_descriptor":{"name":"orders"},"stream_state":{"updated_at":"2024-01-05"}}}]
//
// Read also takes the older mapping of stream names to states ({"orders": {…}}), the STATE
// messages a `read --format airbyte` writes (one per line, the last of each stream wins), a
// single message, and the per-stream states of a GLOBAL message (as the CDK reads them). A
// stream's state is kept as it was written (key order, numbers' spelling); the states of
// streams a read does not touch are written back unchanged.
package state

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"connector/pkg/atomicfile"
	"connector/pkg/record"
)

// maxFile bounds the state file read.
const maxFile = 64 << 20

// File is the states of the streams, in order.
type File struct {
	// Path is the file read, for messages ("" when none was).
	Path    string
	streams []*Stream
}

// Stream is the state of one stream.
type Stream struct {
	Name      string
	Namespace string
	// State is the stream_state: a JSON object as written.
	State *record.Object
	// Global says the state came in a GLOBAL state message (it is written back as a STREAM
	// one).
	Global bool
}

// Error is a state file that cannot be read: the file and what is wrong (exit 3).
type Error struct {
	Path string
	Msg  string
}

func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// Read reads the state file at path; a file that does not exist is an empty state (the first
// run of an incremental read).
func Read(path string) (*File, error) {
	f := &File{Path: path}
	fh, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	data, err := io.ReadAll(io.LimitReader(fh, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(data) > maxFile {
		return nil, &Error{path, fmt.Sprintf("the state file is larger than %d MiB (a limit of connector)", maxFile>>20)}
	}
	if err := f.parse(data); err != nil {
		return nil, err
	}
	return f, nil
}

// Parse reads a state from data; path names it in messages.
func Parse(path string, data []byte) (*File, error) {
	f := &File{Path: path}
	if err := f.parse(data); err != nil {
		return nil, err
	}
	return f, nil
}

func (f *File) fail(format string, args ...any) error {
	return &Error{Path: f.Path, Msg: fmt.Sprintf(format, args...)}
}

func (f *File) parse(data []byte) error {
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return nil
	}
	v, err := record.Decode(trimmed)
	if err != nil {
		// Several JSON values, one per line: the STATE messages of a read.
		return f.parseLines(data)
	}
	switch x := v.(type) {
	case []any:
		for i, m := range x {
			if err := f.message(m, fmt.Sprintf("[%d]", i)); err != nil {
				return err
			}
		}
		return nil
	case *record.Object:
		if _, ok := x.Get("type"); ok {
			return f.message(x, "")
		}
		// The older mapping of stream names to their states.
		for _, name := range x.Keys() {
			st, _ := x.Get(name)
			obj, ok := st.(*record.Object)
			if !ok {
				return f.fail("the state of stream %q must be an object, not %s", name, kind(st))
			}
			f.set(name, "", obj)
		}
		return nil
	}
	return f.fail("a state file is a list of STATE messages (or a mapping of stream names to states), not %s", kind(v))
}

func (f *File) parseLines(data []byte) error {
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), maxFile)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		v, err := record.Decode(line)
		if err != nil {
			return f.fail("line %d: %v", n, err)
		}
		o, ok := v.(*record.Object)
		if !ok {
			return f.fail("line %d: a line must be a STATE message, not %s", n, kind(v))
		}
		if t, _ := o.Get("type"); t != "STATE" {
			continue // a RECORD or TRACE line of the same output
		}
		if err := f.message(o, fmt.Sprintf("line %d", n)); err != nil {
			return err
		}
	}
	return sc.Err()
}

// message reads one state message: an AirbyteStateMessage, or an AirbyteMessage of type
// STATE that holds one.
func (f *File) message(v any, where string) error {
	at := func(key string) string {
		if where == "" {
			return key
		}
		return where + "." + key
	}
	o, ok := v.(*record.Object)
	if !ok {
		return f.fail("%s must be a STATE message object, not %s", orTop(where), kind(v))
	}
	t, _ := o.Get("type")
	if t == "STATE" {
		inner, _ := o.Get("state")
		return f.message(inner, at("state"))
	}
	switch t {
	case "STREAM":
		s, ok := get[*record.Object](o, "stream")
		if !ok {
			return f.fail("%s: a STREAM state message needs a `stream` object", orTop(where))
		}
		_, err := f.streamState(s, at("stream"))
		return err
	case "LEGACY":
		data, ok := get[*record.Object](o, "data")
		if !ok {
			return f.fail("%s: a LEGACY state message needs a `data` object", orTop(where))
		}
		for _, name := range data.Keys() {
			st, _ := data.Get(name)
			obj, ok := st.(*record.Object)
			if !ok {
				return f.fail("%s: the state of stream %q must be an object", at("data"), name)
			}
			f.set(name, "", obj)
		}
		return nil
	case "GLOBAL":
		// The CDK reads the per-stream states of a GLOBAL state; a shared state is one
		// only database sources write.
		g, ok := get[*record.Object](o, "global")
		if !ok {
			return f.fail("%s: a GLOBAL state message needs a `global` object", orTop(where))
		}
		if shared, ok := g.Get("shared_state"); ok && shared != nil {
			if so, isObj := shared.(*record.Object); !isObj || so.Len() > 0 {
				return f.fail("%s: a GLOBAL state with a `shared_state` (as database sources write) is not one a declarative connector reads; give each stream its own STREAM state", at("global"))
			}
		}
		list, _ := g.Get("stream_states")
		states, ok := list.([]any)
		if !ok && list != nil {
			return f.fail("%s: `stream_states` must be a list, not %s", at("global"), kind(list))
		}
		for i, e := range states {
			s, ok := e.(*record.Object)
			if !ok {
				return f.fail("%s must be an object, not %s", at(fmt.Sprintf("global.stream_states[%d]", i)), kind(e))
			}
			st, err := f.streamState(s, at(fmt.Sprintf("global.stream_states[%d]", i)))
			if err != nil {
				return err
			}
			st.Global = true
		}
		return nil
	}
	return f.fail("%s: unknown state message type %v (STREAM, LEGACY)", orTop(where), t)
}

// streamState reads one {"stream_descriptor": …, "stream_state": …} found at where.
func (f *File) streamState(s *record.Object, where string) (*Stream, error) {
	d, ok := get[*record.Object](s, "stream_descriptor")
	if !ok {
		return nil, f.fail("%s: missing `stream_descriptor`", where)
	}
	name, ok := get[string](d, "name")
	if !ok || name == "" {
		return nil, f.fail("%s: missing the stream `name`", where+".stream_descriptor")
	}
	ns, _ := get[string](d, "namespace")
	st, present := s.Get("stream_state")
	obj, isObj := st.(*record.Object)
	switch {
	case !present || st == nil:
		obj = &record.Object{}
	case !isObj:
		return nil, f.fail("%s: `stream_state` must be an object, not %s", where, kind(st))
	}
	return f.set(name, ns, obj), nil
}

func orTop(where string) string {
	if where == "" {
		return "the state"
	}
	return where
}

func get[T any](o *record.Object, key string) (T, bool) {
	v, _ := o.Get(key)
	t, ok := v.(T)
	return t, ok
}

func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case *record.Object:
		return "an object"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return "a number"
}

func (f *File) set(name, ns string, st *record.Object) *Stream {
	if s := f.find(name, ns); s != nil {
		s.State, s.Global = st, false
		return s
	}
	s := &Stream{Name: name, Namespace: ns, State: st}
	f.streams = append(f.streams, s)
	return s
}

// Get returns the state of a stream (nil when it has none).
func (f *File) Get(name string) *record.Object {
	for _, s := range f.streams {
		if s.Name == name && s.Namespace == "" {
			return s.State
		}
	}
	return nil
}

// Set replaces the state of a stream (a new stream goes last).
func (f *File) Set(name string, st *record.Object) { f.set(name, "", st) }

// Streams are the streams that have a state, in order.
func (f *File) Streams() []*Stream { return f.streams }

// Marshal writes the states as Airbyte's list of STATE messages, one per line.
func (f *File) Marshal() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("[")
	for i, s := range f.streams {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n")
		msg, err := Message(s.Name, s.Namespace, s.State)
		if err != nil {
			return nil, err
		}
		b.Write(msg)
	}
	b.WriteString("\n]\n")
	return b.Bytes(), nil
}

// Message is the AirbyteStateMessage of one stream's state.
func Message(name, namespace string, st *record.Object) ([]byte, error) {
	d := &record.Object{}
	d.Set("name", name)
	if namespace != "" {
		d.Set("namespace", namespace)
	}
	s := &record.Object{}
	s.Set("stream_descriptor", d)
	if st == nil {
		st = &record.Object{}
	}
	s.Set("stream_state", st)
	m := &record.Object{}
	m.Set("type", "STREAM")
	m.Set("stream", s)
	return record.Marshal(m)
}

// Write replaces the file at path with the states, atomically.
func (f *File) Write(path string) error {
	data, err := f.Marshal()
	if err != nil {
		return err
	}
	return atomicfile.Write(path, data)
}
