// Package racetest lets a test that runs on one goroutine stand aside under the race
// detector. `make test` runs every test once without -race, then the packages where
// goroutines meet once more with it; a long single-goroutine test (a table of thousands of
// cases, a walk of the corpus, a limit pushed to its end) has nothing for the detector to
// find in that second run and costs it ten times its time.
package racetest

import "testing"

// Sequential skips tb under the race detector: the test runs one goroutine and has run
// without -race already. Call it first in a test that starts no goroutine of its own.
func Sequential(tb testing.TB) {
	tb.Helper()
	if Enabled {
		tb.Skip("one goroutine: run by the pass without -race (make test runs both)")
	}
}
