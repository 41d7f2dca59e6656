package run

import (
	"context"
	"iter"
	"sync"

	"connector/pkg/manifest"
	"connector/pkg/slice"
)

// Output is where Read writes, in order: a sequence of parts (output.Sequencer).
type Output interface {
	// Part appends a part: what is written into it comes after every part made before it.
	Part() Part
}

// Part is one part of an Output.
type Part interface {
	Emitter
	// AtHead runs f once every part before this one is written out.
	AtHead(f func())
	// Drop discards what the part holds and what is written into it later.
	Drop()
	// Done says nothing more will be written into the part.
	Done(drop bool)
}

// Hooks hear, in output order, when each stream starts and ends: Start before any of the
// stream's records, End after all of them. They run when their place in the output is
// reached, and may write to the output's writer directly.
type Hooks struct {
	Start func(s *manifest.Stream)
	End   func(res Result)
	// SliceFailed, when set, hears each slice that failed, in output order (after the
	// slice's records, before its stream's End); not a slice that an interrupt or a closed
	// output ended.
	SliceFailed func(f SliceFailure)
}

// SliceFailure is a slice that failed: its error names the stream, the slice and the page;
// Records were written from it before the failure.
type SliceFailure struct {
	Stream  string
	Err     error
	Records int
}

// Read reads streams in order with up to workers slices in flight at once, across and
// within streams, and writes to out exactly what reading one slice at a time writes:
// streams in order, slices in order, pages in order. A slice that finishes before its turn
// waits in its part of the output. A slice that fails does not stop the others, as in the
// CDK: the stream fails at its end with the error of its first failing slice. With
// FailFast, or when the error ends the whole read (an interrupt, a closed stdout), the slices
// after it in the same stream are cancelled and their records dropped, as a read one slice at
// a time would never have read them. A stream with a
// --max-pages or --max-records limit reads its slices one at a time, so the limit falls on
// the same record whatever workers is. It returns the result of every stream started, in
// order.
func Read(ctx context.Context, o *Options, streams []*manifest.Stream, workers int, out Output, hooks Hooks) []Result {
	o = o.forRead()
	r := &reader{o: o, out: out, hooks: hooks, slots: make(chan struct{}, max(workers, 1))}
	gate := newGroupGate()
	var ends sync.WaitGroup
	results := make([]Result, len(streams))
	started := 0
	for i, s := range streams {
		if ctx.Err() != nil || !gate.acquire(ctx, s) {
			break
		}
		started++
		self, parents := grouped(s)
		finish := r.stream(ctx, s, func() { gate.release(self) })
		// The slices are made: the parents' records are read.
		gate.release(parents...)
		if workers <= 1 {
			// One slice at a time: the next stream starts after this one's end, as a
			// read of the streams one after the other does (a --fail-fast stop included).
			results[i] = finish()
			continue
		}
		ends.Add(1)
		go func() {
			defer ends.Done()
			results[i] = finish()
		}()
	}
	ends.Wait()
	return results[:started]
}

// reader is one Read.
type reader struct {
	o     *Options
	out   Output
	hooks Hooks
	// slots holds a token per slice in flight.
	slots chan struct{}
}

// sliceRun is one slice of a stream being read.
type sliceRun struct {
	part   Part
	cancel context.CancelFunc
	res    sliceResult
}

// streamRun is the read of one stream's slices.
type streamRun struct {
	mu     sync.Mutex
	slices []*sliceRun
	// failed is the index of the first slice that failed so far (-1: none).
	failed int
	// genCancel stops making slices.
	genCancel context.CancelFunc
}

// fail ends the stream at slice i: the slices after it are cancelled and dropped.
func (sr *streamRun) fail(i int) {
	sr.mu.Lock()
	defer sr.mu.Unlock()
	if sr.failed >= 0 && sr.failed < i {
		return
	}
	sr.failed = i
	sr.genCancel()
	for _, later := range sr.slices[i+1:] {
		later.cancel()
		later.part.Drop()
	}
}

// stream starts the slices of s and returns a function that waits for them and gives the
// stream's result, after the stream's end has been written in its place. read runs once
// every slice has been read, before the end waits for its place.
func (r *reader) stream(ctx context.Context, s *manifest.Stream, read func()) func() Result {
	o := r.o
	start := r.out.Part()
	if r.hooks.Start != nil {
		start.AtHead(func() { r.hooks.Start(s) })
	}
	start.Done(false)
	st, err := newStream(o, s, "", o.stateOf(s.Name))
	if o.Observer != nil {
		ss := StreamStart{Stream: s.Name, Group: s.Group}
		if st != nil {
			ss.Pagination, ss.Cursor = st.pag.Describe(), st.describeCursor()
		}
		o.Observer.StreamStart(ss)
	}
	genCtx, genCancel := context.WithCancel(ctx)
	sr := &streamRun{failed: -1, genCancel: genCancel}
	var wg sync.WaitGroup
	var stopErr error // making the slices failed, or the stream could not be set up
	var limit Limit
	if err == nil {
		err = st.loadSchema(ctx)
	}
	if err != nil {
		stopErr = &StreamError{Stream: s.Name, Err: err}
	} else {
		limit, stopErr = r.launch(ctx, genCtx, st, sr, &wg)
	}
	end := r.out.Part()
	return func() Result {
		wg.Wait()
		genCancel()
		read()
		// The slices in order, up to the first that failed or hit a limit: what a read of one
		// slice at a time would have read. Making the slices failed only after them.
		res := Result{Stream: s.Name}
		stopped := false
		for i, sl := range sr.slices {
			res.Slices++
			res.add(sl.res)
			if sl.res.Limit.Set() || i == sr.failed {
				stopped = true
				break
			}
		}
		if !stopped {
			if stopErr != nil {
				res.Err = stopErr
			} else if limit.Set() {
				res.Limit = limit
			}
		}
		if st != nil {
			res.Skipped = st.skipped
		}
		if o.Observer != nil {
			o.Observer.StreamEnd(res)
		}
		done := make(chan struct{})
		end.AtHead(func() {
			// The stream's status, then its final state, in the CDK's order.
			if r.hooks.End != nil {
				r.hooks.End(res)
			}
			if st != nil {
				st.finalCheckpoint(res.Err != nil)
			}
			close(done)
		})
		end.Done(false)
		<-done
		return res
	}
}

// launch makes the slices of a stream and starts reading each when a slot is free. It
// returns the limit that stopped it, or an error in making the slices (a parent's failure).
func (r *reader) launch(ctx, genCtx context.Context, st *stream, sr *streamRun, wg *sync.WaitGroup) (Limit, error) {
	o := r.o
	// With a per-stream page or record limit, slices run one at a time: each starts
	// knowing what the ones before it read.
	serial := o.MaxPages > 0 || o.MaxRecords > 0
	next, stop := iter.Pull2(st.router.Slices(genCtx))
	defer stop()
	var done Result // what the slices before read (serial only)
	for n := 0; ; n++ {
		select {
		case r.slots <- struct{}{}:
		case <-genCtx.Done():
			return Limit{}, nil
		}
		release := func() { <-r.slots }
		if serial {
			wg.Wait()
			done = Result{}
			for _, prev := range sr.slices {
				done.add(prev.res)
			}
			done.Slices = len(sr.slices)
			sr.mu.Lock()
			failed := sr.failed >= 0
			sr.mu.Unlock()
			if failed || done.Limit.Set() {
				release()
				return Limit{}, nil
			}
		}
		sl, err, ok := next()
		if !ok || genCtx.Err() != nil {
			release()
			return Limit{}, nil
		}
		if err != nil {
			release()
			return Limit{}, st.wrap(nil, 0, err)
		}
		done.Slices = n
		if lim := st.limitBefore(done); lim.Set() {
			release()
			return lim, nil
		}
		sl.Number = n + 1
		sctx, cancel := context.WithCancel(ctx)
		part := r.out.Part()
		one := &sliceRun{part: part, cancel: cancel}
		sr.mu.Lock()
		idx := len(sr.slices)
		sr.slices = append(sr.slices, one)
		if sr.failed >= 0 {
			cancel()
			part.Drop()
		}
		sr.mu.Unlock()
		reader := st.newSliceReader(sl, part, done.Pages, done.Records)
		// The checkpoint of the slice: once its records are written out, in slice order.
		cp := r.out.Part()
		cp.AtHead(func() {
			if err := one.res.err; err != nil && !stopping(err) && r.hooks.SliceFailed != nil {
				r.hooks.SliceFailed(SliceFailure{Stream: st.s.Name, Err: err, Records: one.res.records})
			}
			st.checkpoint(sl, reader.track, one.res)
		})
		cp.Done(false)
		wg.Add(1)
		go func(sl *slice.Slice) {
			defer wg.Done()
			defer release()
			defer cancel()
			one.res = reader.read(sctx)
			if err := one.res.err; err != nil && (o.FailFast || stopping(err)) {
				sr.fail(idx)
			}
			part.Done(false)
		}(sl)
	}
}
