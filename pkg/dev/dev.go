// Package dev is the engine of `connector dev`: a workspace that watches a definition and its
// testing values, validates them on every save, and test-reads the chosen stream (or every
// stream) again, the read in flight cancelled; and the local web page that shows what it
// found (server.go, web/), or a summary for a terminal (summary.go).
//
// The workspace turns files into values and asks the session for a run, as any face does; the
// test read itself is a serve.TestReader handed in. Everything it publishes is a View: JSON
// the page renders as it is, masked by the workspace's redactor, which learns every secret of
// every load and never forgets one.
package dev

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"connector/pkg/diag"
	"connector/pkg/har"
	"connector/pkg/manifest"
	"connector/pkg/redact"
	"connector/pkg/serve"
	"connector/pkg/session"
	"connector/pkg/values"
)

// Limits are a test read's limits: records in all, pages per slice, slices.
type Limits struct {
	Records int `json:"records"`
	Pages   int `json:"pages"`
	Slices  int `json:"slices"`
}

// DefaultLimits are the Connector Builder's.
var DefaultLimits = Limits{Records: 100, Pages: 5, Slices: 5}

// within keeps each limit within the Builder's bounds (records 1–5000, pages and slices
// 1–20); 0 takes the default.
func (l Limits) within() Limits {
	fit := func(v, def, most int) int {
		if v <= 0 {
			return def
		}
		return min(v, most)
	}
	return Limits{fit(l.Records, DefaultLimits.Records, 5000), fit(l.Pages, DefaultLimits.Pages, 20), fit(l.Slices, DefaultLimits.Slices, 20)}
}

// Config says what a workspace watches and how it reads.
type Config struct {
	// Definition is the definition's file; Values the testing values' ("": none); State a
	// state file the reads start from ("": none).
	Definition, Values, State string
	// TestRead makes the test reads (nil: serve.BuilderTestRead, the Builder's).
	TestRead serve.TestReader
	// Env is where the sessions reach the world. Its Redactor, when set, is the
	// workspace's (else a new one).
	Env session.Env
	// All reads every stream on each change, one after the other (the terminal's summary),
	// instead of the stream the page chose.
	All bool
	// Limits are the first reads' limits (zero: DefaultLimits).
	Limits Limits
	// Poll is how often the files are looked at (0: defaultPoll); Settle how long a changed
	// file must stay the same before it is read (0: defaultSettle).
	Poll, Settle time.Duration
}

// How often the files are looked at, and how long a change must last before it is read.
const (
	defaultPoll   = 100 * time.Millisecond
	defaultSettle = 30 * time.Millisecond
)

// Workspace watches the files of a definition and reads its streams again on every change.
// Run drives it; the page's commands (Choose, ReadAgain) and the views it publishes
// (Current, Subscribe) are safe to use from any goroutine.
type Workspace struct {
	cfg  Config
	red  *redact.Redactor
	cmds chan func(context.Context)
	done chan *Result
	// stopped is closed when Run returns.
	stopped chan struct{}

	// Owned by Run's goroutine.
	files    snapshot
	problems []Problem
	broken   bool
	def      *manifest.Definition // of the last good load
	streams  []StreamInfo
	stream   string
	limits   Limits
	results  map[string]*Result
	round    int
	trigger  string
	gen      int // of the reads in flight: a result of another generation is stale
	cancel   context.CancelFunc
	queue    []string
	reading  bool
	nextFrom json.RawMessage // the state the next read starts from, when asked

	mu   sync.Mutex
	raw  []byte // the current view as JSON, masked
	seq  int64
	subs map[chan struct{}]struct{}
}

// New returns a workspace for cfg; Run starts it.
func New(cfg Config) *Workspace {
	if cfg.Poll <= 0 {
		cfg.Poll = defaultPoll
	}
	if cfg.Settle <= 0 {
		cfg.Settle = defaultSettle
	}
	if cfg.TestRead == nil {
		cfg.TestRead = serve.BuilderTestRead
	}
	red := cfg.Env.Redactor
	if red == nil {
		red = &redact.Redactor{}
	}
	return &Workspace{
		cfg: cfg, red: red, limits: cfg.Limits.within(),
		cmds: make(chan func(context.Context)), done: make(chan *Result), stopped: make(chan struct{}),
		results: map[string]*Result{}, subs: map[chan struct{}]struct{}{},
	}
}

// Redactor is the workspace's redactor: it masks every secret any load or read has seen.
func (w *Workspace) Redactor() *redact.Redactor { return w.red }

// Run loads the files, reads, and does so again on every change and command, until ctx ends.
func (w *Workspace) Run(ctx context.Context) error {
	defer close(w.stopped)
	watch := &watcher{paths: w.paths(), every: w.cfg.Poll, settle: w.cfg.Settle}
	w.files = watch.first()
	w.reload(ctx)
	w.startRound(ctx, "start", false)
	changes := make(chan snapshot)
	go watch.run(ctx, changes)
	for {
		select {
		case <-ctx.Done():
			if w.cancel != nil {
				w.cancel()
			}
			return nil
		case s := <-changes:
			w.files = s
			w.reload(ctx)
			w.startRound(ctx, "save", false)
		case f := <-w.cmds:
			f(ctx)
		case r := <-w.done:
			w.finish(ctx, r)
		}
	}
}

// paths are the files watched: the definition and the testing values.
func (w *Workspace) paths() []string {
	if w.cfg.Values == "" {
		return []string{w.cfg.Definition}
	}
	return []string{w.cfg.Definition, w.cfg.Values}
}

// errStopped is the answer to a command once Run has returned.
var errStopped = errors.New("connector dev is stopping")

// do runs f in Run's goroutine and returns its error.
func (w *Workspace) do(ctx context.Context, f func(context.Context) error) error {
	res := make(chan error, 1)
	select {
	case w.cmds <- func(ctx context.Context) { res <- f(ctx) }:
		return <-res
	case <-ctx.Done():
		return ctx.Err()
	case <-w.stopped:
		return errStopped
	}
}

// Choose makes stream the stream read, with limits, and reads it. An unknown stream is an
// error.
func (w *Workspace) Choose(ctx context.Context, stream string, limits Limits) error {
	return w.do(ctx, func(ctx context.Context) error {
		if w.streamInfo(stream) == nil {
			return fmt.Errorf("unknown stream %q", stream)
		}
		w.stream, w.limits = stream, limits.within()
		w.startRound(ctx, "command", false)
		return nil
	})
}

// ReadAgain reads the chosen stream again; fromState starts it from the state the last
// read of the stream ended with (an error when there is none).
func (w *Workspace) ReadAgain(ctx context.Context, fromState bool) error {
	return w.do(ctx, func(ctx context.Context) error {
		if fromState {
			r := w.results[w.stream]
			if r == nil || len(r.State) == 0 {
				return errors.New("the last read of the stream ended with no state")
			}
			w.nextFrom = r.State
		}
		w.startRound(ctx, "command", fromState)
		return nil
	})
}

func (w *Workspace) streamInfo(name string) *StreamInfo {
	for i := range w.streams {
		if w.streams[i].Name == name {
			return &w.streams[i]
		}
	}
	return nil
}

// reload validates the files as they are now: the definition, the testing values, and
// whether a session opens with both. A broken file keeps the streams and results of the
// last good load.
func (w *Workspace) reload(ctx context.Context) {
	w.problems, w.broken = nil, false
	def, problems := w.load(ctx)
	w.problems = problems
	if def == nil {
		w.broken = true
		return
	}
	w.def = def
	w.streams = streamInfos(def)
	if w.streamInfo(w.stream) == nil {
		w.stream = ""
		if len(w.streams) > 0 {
			w.stream = w.streams[0].Name
		}
	}
}

// load loads the definition and opens a session with the values to find every problem; the
// definition is nil when one of them is an error. A definition with dynamic streams has them
// made, so that they can be chosen.
func (w *Workspace) load(ctx context.Context) (*manifest.Definition, []Problem) {
	var out []Problem
	src, err := w.files.data(w.cfg.Definition)
	if err != nil {
		return nil, append(out, Problem{File: w.cfg.Definition, Severity: diag.Error, Message: "cannot read the definition: " + err.Error()})
	}
	def, warnings, err := session.LoadWarn(ctx, w.cfg.Definition, src)
	var de *session.DefinitionError
	if errors.As(err, &de) {
		return nil, problemsOf(de.Diags)
	}
	if err != nil {
		return nil, append(out, Problem{File: w.cfg.Definition, Severity: diag.Error, Message: err.Error()})
	}
	out = problemsOf(warnings)
	sess, err := w.open(def, w.files)
	if err != nil {
		return nil, append(out, w.sessionProblems(err)...)
	}
	defer sess.Close()
	if len(def.Dynamic) > 0 {
		if err := sess.Resolve(ctx, nil); err != nil {
			// The static streams can still be read.
			return def, append(out, Problem{File: w.cfg.Definition, Severity: diag.Error, Message: w.red.String(err.Error())})
		}
		return sess.Def, out
	}
	return def, out
}

// open opens a session of def with the testing values as files holds them. It runs in the
// goroutines of the reads too: it reads nothing of the workspace that Run changes.
func (w *Workspace) open(def *manifest.Definition, files snapshot) (*session.Session, error) {
	vals := values.None()
	if w.cfg.Values != "" {
		src, err := files.data(w.cfg.Values)
		if err != nil {
			return nil, &session.InvalidError{Err: fmt.Errorf("cannot read the testing values: %w", err)}
		}
		if vals, err = values.Parse(w.cfg.Values, src); err != nil {
			return nil, err
		}
	}
	vals.ApplyDefaults(def.ConnectionSpec)
	addCredentials(w.red, vals.Map, "")
	env := w.cfg.Env
	env.Redactor = w.red
	return session.Open(session.Inputs{DefName: w.cfg.Definition, Def: def, Values: vals, WriteTokens: w.cfg.Values}, env)
}

// sessionProblems words why a session did not open, with positions where there are some.
func (w *Workspace) sessionProblems(err error) []Problem {
	var dl diag.List
	var ve *session.ValuesError
	switch {
	case errors.As(err, &ve):
		return problemsOf(ve.Diags)
	case errors.As(err, &dl):
		return problemsOf(dl)
	}
	file := w.cfg.Values
	if file == "" {
		file = w.cfg.Definition
	}
	return []Problem{{File: file, Severity: diag.Error, Message: w.red.String(err.Error())}}
}

// addCredentials masks, besides the secrets the specification marks, every value whose key
// names a credential (password, api_key, client_secret, …): a testing values file often
// holds the credentials of other connectors too, and the page shows what the read did.
func addCredentials(r *redact.Redactor, v any, key string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			addCredentials(r, e, k)
		}
	case []any:
		for _, e := range x {
			addCredentials(r, e, key)
		}
	case string:
		if har.CredentialKey(key) {
			r.Add(x)
		}
	}
}

// startRound starts reading anew after a change or a command (what says which: start,
// save, command): the read in flight is cancelled, and the streams of the round are read
// one after the other.
func (w *Workspace) startRound(ctx context.Context, what string, fromState bool) {
	w.trigger = what
	if w.cancel != nil {
		w.cancel()
		w.cancel = nil
	}
	w.round++
	w.gen++
	w.queue, w.reading = nil, false
	if !fromState {
		w.nextFrom = nil
	}
	if !w.broken {
		if w.cfg.All {
			for _, s := range w.streams {
				w.queue = append(w.queue, s.Name)
			}
		} else if w.stream != "" {
			w.queue = []string{w.stream}
		}
	}
	w.readNext(ctx)
	w.publish()
}

// readNext starts the read of the next stream of the round, if any.
func (w *Workspace) readNext(ctx context.Context) {
	if len(w.queue) == 0 {
		w.reading = false
		return
	}
	name := w.queue[0]
	w.queue = w.queue[1:]
	w.reading = true
	rctx, cancel := context.WithCancel(ctx)
	w.cancel = cancel
	job := readJob{
		stream: name, def: w.def, files: w.files, limits: w.limits, round: w.round, gen: w.gen,
		state: w.nextFrom, fromResult: w.nextFrom != nil,
	}
	w.nextFrom = nil
	if job.state == nil && w.cfg.State != "" {
		job.state, job.stateErr = readState(w.cfg.State)
	}
	go func() {
		r := w.read(rctx, job)
		select {
		case w.done <- r:
		case <-ctx.Done():
		}
	}()
}

// finish takes a read's result, unless a newer round has begun since it started.
func (w *Workspace) finish(ctx context.Context, r *Result) {
	if r.gen != w.gen {
		return
	}
	w.results[r.Stream] = r
	w.readNext(ctx)
	w.publish()
}

// View is what the page shows, sent whole on every change: the files' problems, the
// streams, and the results of the reads of the round (the last good ones while a file is
// broken).
type View struct {
	// Seq counts the views published.
	Seq        int64  `json:"seq"`
	Definition string `json:"definition"`
	Values     string `json:"values,omitempty"`
	StateFile  string `json:"state_file,omitempty"`
	// SavedAt is when the newest of the files was last written (Unix milliseconds).
	SavedAt int64 `json:"saved_at"`
	// Round counts the loads and commands; each result says the round it was read in.
	// Trigger says what began the round: start, save or command.
	Round    int       `json:"round"`
	Trigger  string    `json:"trigger"`
	Problems []Problem `json:"problems"`
	// Broken says a file has errors: the results are those of the last good load.
	Broken  bool         `json:"broken"`
	Streams []StreamInfo `json:"streams"`
	// Stream is the stream the page chose (all streams are read in a terminal).
	Stream  string `json:"stream"`
	Limits  Limits `json:"limits"`
	Reading bool   `json:"reading"`
	// Results are the latest results of the streams read, in stream order.
	Results []*Result `json:"results"`
}

// Problem is a problem of the definition or of the testing values.
type Problem struct {
	File     string        `json:"file"`
	Line     int           `json:"line,omitempty"`
	Column   int           `json:"column,omitempty"`
	Severity diag.Severity `json:"severity"`
	Message  string        `json:"message"`
	Hint     string        `json:"hint,omitempty"`
}

func (p Problem) String() string {
	pos := p.File
	if p.Line > 0 {
		pos = fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
	s := fmt.Sprintf("%s: %s: %s", pos, p.Severity, p.Message)
	if p.Hint != "" {
		s += " (" + p.Hint + ")"
	}
	return s
}

func problemsOf(dl diag.List) []Problem {
	out := make([]Problem, 0, len(dl))
	for _, d := range dl {
		sev := d.Severity
		if sev == "" {
			sev = diag.Error
		}
		out = append(out, Problem{File: d.File, Line: d.Line, Column: d.Column, Severity: sev, Message: d.Message, Hint: d.Hint})
	}
	return out
}

// StreamInfo is a stream as the list of streams shows it.
type StreamInfo struct {
	Name       string     `json:"name"`
	PrimaryKey [][]string `json:"primary_key,omitempty"`
	// Cursor is the incremental cursor field ("" for a full refresh stream).
	Cursor      string `json:"cursor,omitempty"`
	Incremental bool   `json:"incremental"`
}

func streamInfos(def *manifest.Definition) []StreamInfo {
	out := make([]StreamInfo, 0, len(def.Streams))
	for _, s := range def.Streams {
		info := StreamInfo{Name: s.Name, PrimaryKey: s.PrimaryKeyPaths(), Incremental: s.Incremental != nil}
		if s.Incremental != nil && s.Incremental.CursorField != nil {
			info.Cursor = s.Incremental.CursorField.Source()
		}
		out = append(out, info)
	}
	return out
}

// publish makes the workspace's state the current view and wakes the subscribers.
func (w *Workspace) publish() {
	v := &View{
		Definition: w.cfg.Definition, Values: w.cfg.Values, StateFile: w.cfg.State,
		SavedAt: w.files.saved.UnixMilli(), Round: w.round, Trigger: w.trigger, Problems: w.problems, Broken: w.broken,
		Streams: w.streams, Stream: w.stream, Limits: w.limits, Reading: w.reading,
	}
	if v.Problems == nil {
		v.Problems = []Problem{}
	}
	if v.Streams == nil {
		v.Streams = []StreamInfo{}
	}
	v.Results = []*Result{}
	for _, s := range w.streams {
		if r := w.results[s.Name]; r != nil && (w.cfg.All || s.Name == w.stream) {
			v.Results = append(v.Results, r)
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seq++
	v.Seq = w.seq
	b, err := json.Marshal(v)
	if err != nil {
		b = []byte(`{"seq":0,"problems":[{"file":"","severity":"error","message":"the view could not be encoded"}]}`)
	}
	w.raw = w.red.Bytes(b)
	for ch := range w.subs {
		select {
		case ch <- struct{}{}:
		default: // it has a wake-up pending already
		}
	}
}

// Current returns the current view as JSON, every secret masked; nil before the first load.
func (w *Workspace) Current() []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.raw
}

// CurrentView is the current view decoded from that JSON; nil before the first load.
func (w *Workspace) CurrentView() *View {
	raw := w.Current()
	if raw == nil {
		return nil
	}
	v := &View{}
	if err := json.Unmarshal(raw, v); err != nil {
		return nil
	}
	return v
}

// Subscribe returns a channel that receives a wake-up after every new view (several views
// in a row may wake it once: read Current), and a function that ends the subscription.
func (w *Workspace) Subscribe() (<-chan struct{}, func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	w.subs[ch] = struct{}{}
	if w.raw != nil {
		ch <- struct{}{}
	}
	w.mu.Unlock()
	return ch, func() {
		w.mu.Lock()
		delete(w.subs, ch)
		w.mu.Unlock()
	}
}
