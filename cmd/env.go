package cmd

import (
	"context"
	"io"
	"net/http"
	"strings"
	"time"
)

// Env is what one run of the command line takes from the world outside the program: its
// streams, its environment variables, its clock, its way of waiting and its way of
// reaching the network. main passes the process's own; tests pass theirs, so that many
// runs can share one process at the same time. Nothing in cmd reads the process
// environment, the clock or the network any other way.
//
// A nil field means the real thing (a stream: nothing to read, or output discarded),
// except Getenv: nil means that no variable is set.
type Env struct {
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	// Getenv looks up an environment variable (NO_COLOR, CONNECTOR_*), as os.LookupEnv.
	Getenv func(name string) (string, bool)
	// Now is the clock: emitted_at, token expiry, Retry-After dates, progress rates.
	Now func() time.Time
	// Sleep waits between the attempts of a request; it returns early with ctx's error.
	Sleep func(ctx context.Context, d time.Duration) error
	// Transport carries the HTTP requests of a run and of the OAuth code exchange. When nil,
	// a read keeps enough idle connections per host for every request it has in flight.
	Transport http.RoundTripper
}

// withDefaults returns e with empty streams in place of nil ones.
func (e Env) withDefaults() Env {
	if e.Stdin == nil {
		e.Stdin = strings.NewReader("")
	}
	if e.Stdout == nil {
		e.Stdout = io.Discard
	}
	if e.Stderr == nil {
		e.Stderr = io.Discard
	}
	return e
}

// lookup reads an environment variable of the run.
func (e *Env) lookup(name string) (string, bool) {
	if e.Getenv == nil {
		return "", false
	}
	return e.Getenv(name)
}

// noColor reports that NO_COLOR turns colour off: set to a value that is not empty, as
// no-color.org says (NO_COLOR= leaves colour on).
func (e *Env) noColor() bool {
	v, _ := e.lookup("NO_COLOR")
	return v != ""
}

// clock is the run's clock.
func (e *Env) clock() func() time.Time {
	if e.Now == nil {
		return time.Now
	}
	return e.Now
}
