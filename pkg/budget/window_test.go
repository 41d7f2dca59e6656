package budget

import (
	"testing"
	"time"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

// step is one call asked for at a time, and the wait it must get (0: it goes).
type step struct {
	ms     int
	weight int
	wait   time.Duration
}

func TestFixedWindowOpensAtTheFirstCallAndRollsEveryPeriod(t *testing.T) {
	w := &fixedWindow{limit: 2, period: time.Second}
	for i, s := range []step{
		{0, 1, 0}, {10, 1, 0},
		{20, 1, 980 * time.Millisecond}, // the window [0, 1000) is spent
		{999, 1, time.Millisecond},
		{1000, 1, 0}, {1500, 1, 0}, {1999, 1, time.Millisecond},
		// after an idle time the window is the one that holds now: [5000, 6000)
		{5300, 1, 0}, {5400, 1, 0}, {5500, 1, 500 * time.Millisecond},
		{6000, 2, 0}, {6001, 1, 999 * time.Millisecond},
	} {
		if got := w.take(at(s.ms), s.weight); got != s.wait {
			t.Errorf("step %d at %d ms: wait %v, want %v", i, s.ms, got, s.wait)
		}
	}
}

func TestFixedWindowUpdate(t *testing.T) {
	w := &fixedWindow{limit: 10, period: time.Minute}
	w.take(at(0), 1)
	three := 3
	w.update(at(5), &three, nil) // the API has 3 calls left: fewer than the 9 we count
	if w.used != 7 {
		t.Fatalf("used %d after remaining 3, want 7", w.used)
	}
	five := 5
	w.update(at(6), &five, nil) // more than we count: ignored
	if w.used != 7 {
		t.Fatalf("used %d after remaining 5, want 7 (an update never gives calls back)", w.used)
	}
	reset := at(2000)
	zero := 0
	w.update(at(7), &zero, &reset)
	if got := w.take(at(8), 1); got != 1992*time.Millisecond {
		t.Fatalf("wait %v, want 1.992s (to the reset time the API gave)", got)
	}
	if got := w.take(at(2000), 1); got != 0 {
		t.Fatalf("wait %v at the reset time, want 0", got)
	}
	// The next window follows the reset by one period.
	if w.end != at(2000).Add(time.Minute) {
		t.Fatalf("window ends at %v, want one period after the reset", w.end)
	}
}

func TestMovingWindowCountsEachCallForItsIntervalIncluded(t *testing.T) {
	w := newMovingWindow([]rate{{limit: 2, interval: 1000}})
	for i, s := range []step{
		{0, 1, 0}, {6, 1, 0},
		// a call counts until its time + interval included: the first leaves at 1001 ms
		{7, 1, 994 * time.Millisecond},
		{1000, 1, time.Millisecond},
		{1001, 1, 0},
		{1002, 1, 5 * time.Millisecond}, // the call at 6 ms leaves at 1007
		{1007, 1, 0},
		{1500, 2, 508 * time.Millisecond}, // two calls need both to leave: the last at 1007 + 1000 + 1
		{2008, 2, 0},
	} {
		if got := w.take(at(s.ms), s.weight); got != s.wait {
			t.Errorf("step %d at %d ms: wait %v, want %v", i, s.ms, got, s.wait)
		}
	}
}

func TestMovingWindowSeveralRates(t *testing.T) {
	// 3 per second and 4 per 10 seconds (ticktick's 3/s and 60/min, smaller).
	w := newMovingWindow([]rate{{limit: 4, interval: 10000}, {limit: 3, interval: 1000}})
	for i, s := range []step{
		{0, 1, 0}, {1, 1, 0}, {2, 1, 0},
		{3, 1, 998 * time.Millisecond}, // the 1 s rate is full
		{1001, 1, 0},
		{1002, 1, 8999 * time.Millisecond}, // the 10 s rate is full: its first call leaves at 10001
		{10001, 1, 0},
	} {
		if got := w.take(at(s.ms), s.weight); got != s.wait {
			t.Errorf("step %d at %d ms: wait %v, want %v", i, s.ms, got, s.wait)
		}
	}
}

func TestMovingWindowUpdateCountsOneCallForNoneLeft(t *testing.T) {
	zero, one := 0, 1
	w := newMovingWindow([]rate{{limit: 3, interval: 1000}})
	w.take(at(0), 1)
	w.update(at(0), &one, nil) // only "none left" counts
	w.update(at(0), &zero, ptr(at(500)))
	if len(w.calls) != 1 {
		t.Fatalf("%d calls, want 1: remaining 1, or a reset time, change nothing", len(w.calls))
	}
	w.update(at(0), &zero, nil) // the CDK adds one call, not as many as fill the window
	if len(w.calls) != 2 {
		t.Fatalf("%d calls after none left, want 2", len(w.calls))
	}
	if got := w.take(at(1), 1); got != 0 {
		t.Fatalf("wait %v, want 0: one call is still free", got)
	}
	w.update(at(2), &zero, nil) // full: nothing more
	if len(w.calls) != 3 {
		t.Fatalf("%d calls, want 3", len(w.calls))
	}
}

func ptr[T any](v T) *T { return &v }
