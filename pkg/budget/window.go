package budget

import (
	"sort"
	"time"
)

// fixedWindow allows limit calls per window; windows follow one another every period. The
// first window opens with the first call (the CDK opens it ten days ahead of its start, so
// that a definition whose API sends no reset time waits ten days once the first window is
// spent); a reset time from the API moves the end of the current window.
type fixedWindow struct {
	limit  int
	period time.Duration
	end    time.Time // zero until the first call
	used   int
}

// roll opens the window that holds now when the current one has ended.
func (w *fixedWindow) roll(now time.Time) {
	if w.end.IsZero() {
		w.end = now.Add(w.period)
		return
	}
	if now.Before(w.end) {
		return
	}
	w.end = w.end.Add((now.Sub(w.end)/w.period + 1) * w.period)
	w.used = 0
}

// take counts a call of the given weight at now, or says how long to wait before asking
// again.
func (w *fixedWindow) take(now time.Time, weight int) time.Duration {
	w.roll(now)
	if w.used+weight > w.limit {
		return w.end.Sub(now)
	}
	w.used += weight
	return 0
}

// update applies what a response said, as the CDK does: the calls left only ever lower
// what the window allows (a policy may be stricter than the API), a reset time replaces
// the end of the window.
func (w *fixedWindow) update(now time.Time, remaining *int, reset *time.Time) {
	w.roll(now)
	if remaining != nil && w.limit-w.used > *remaining {
		w.used = w.limit - *remaining
	}
	if reset != nil && !reset.Equal(w.end) {
		w.end = *reset
	}
}

// rate is one limit of a moving window, in milliseconds as pyrate_limiter counts.
type rate struct {
	limit    int
	interval int64 // ms
}

// movingWindow allows, for each rate, at most limit calls in any interval: a call at t
// counts until t + interval included (pyrate_limiter's InMemoryBucket, which the CDK uses).
type movingWindow struct {
	rates []rate  // by interval, shortest first
	calls []int64 // the times of the calls counted (ms), one per unit of weight, in order
}

func newMovingWindow(rates []rate) *movingWindow {
	sorted := append([]rate(nil), rates...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].interval < sorted[j].interval })
	return &movingWindow{rates: sorted}
}

// since is the index of the first call at or after ms.
func (w *movingWindow) since(ms int64) int {
	return sort.Search(len(w.calls), func(i int) bool { return w.calls[i] >= ms })
}

// forget drops the calls no rate counts any more.
func (w *movingWindow) forget(now int64) {
	longest := w.rates[len(w.rates)-1].interval
	if i := w.since(now - longest); i > 0 {
		w.calls = append(w.calls[:0], w.calls[i:]...)
	}
}

// room is the first rate that has no room for weight calls at now, and how long until it
// has; ok when every rate has room.
func (w *movingWindow) room(now int64, weight int) (wait time.Duration, ok bool) {
	for _, r := range w.rates {
		counted := len(w.calls) - w.since(now-r.interval)
		if r.limit-counted >= weight {
			continue
		}
		// The call that must leave the window for weight calls to fit.
		bound := w.calls[len(w.calls)-1-(r.limit-weight)]
		return time.Duration(bound+r.interval+1-now) * time.Millisecond, false
	}
	return 0, true
}

// take counts a call of the given weight at now, or says how long to wait before asking
// again.
func (w *movingWindow) take(now time.Time, weight int) time.Duration {
	ms := w.clock(now)
	w.forget(ms)
	if wait, ok := w.room(ms, weight); !ok {
		return wait
	}
	for range weight {
		w.calls = append(w.calls, ms)
	}
	return 0
}

// update applies what a response said, as the CDK does: only "no call left" without a reset
// time counts, and it counts one more call when the shortest rate has room (the CDK's
// bucket takes one item there, not as many as would fill it).
func (w *movingWindow) update(now time.Time, remaining *int, reset *time.Time) {
	if remaining == nil || reset != nil || *remaining != 0 {
		return
	}
	ms := w.clock(now)
	w.forget(ms)
	if len(w.calls) >= w.rates[0].limit {
		return
	}
	if _, ok := w.room(ms, 1); ok {
		w.calls = append(w.calls, ms)
	}
}

// clock is now in milliseconds, never before the last call counted, so that the calls stay
// in order whatever the clock does.
func (w *movingWindow) clock(now time.Time) int64 {
	ms := now.UnixMilli()
	if n := len(w.calls); n > 0 && w.calls[n-1] > ms {
		return w.calls[n-1]
	}
	return ms
}
