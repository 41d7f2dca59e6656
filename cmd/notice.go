package cmd

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"connector/pkg/diag"
	"connector/pkg/httpx"
)

// addVerbosity adds --quiet and --verbose (read, check, paginate-trace).
func (f *runFlags) addVerbosity(c *cobra.Command) {
	c.Flags().BoolVarP(&f.quiet, "quiet", "q", false, "write nothing on stderr but errors: no retries, waits, warnings or notes")
	c.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "write every request on stderr as it completes (method, URL, status, size, time)")
}

// notices tell a person on stderr what a run is doing while it waits: every retry and its
// pause, every wait for the API budget, and with --verbose every request. On a terminal a
// retry or a wait is one line that the next one replaces (and the next error clears); on
// anything else each is a line of its own.
type notices struct {
	mu      sync.Mutex
	io      *ioStreams
	live    bool
	verbose bool
}

func newNotices(s *ioStreams, f *runFlags) *notices {
	if f.quiet {
		return nil
	}
	return &notices{io: s, live: s.errTTY, verbose: f.verbose}
}

// say writes one notice: a line, or on a terminal the updating line.
func (n *notices) say(text string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	text = n.io.redactor.String(text)
	if n.live {
		io.WriteString(n.io.Err, "\r\033[K"+text+"\r")
		return
	}
	io.WriteString(n.io.Err, text+"\n")
}

// retry: "retrying GET URL in 4 s (attempt 2 of 6): connection refused by …".
func (n *notices) retry(r httpx.Retry) {
	of := ""
	if r.Of > 0 {
		of = fmt.Sprintf(" of %d", r.Of)
	}
	n.say(fmt.Sprintf("retrying %s %s in %s (attempt %d%s): %s", r.Method, r.URL, diag.Duration(r.Wait), r.Attempt+1, of, r.Cause))
}

// budgetWait: "waiting 1.0 s for the API budget before GET URL (policy 2 (…))".
func (n *notices) budgetWait(method, url string, d time.Duration, policy string) {
	n.say(fmt.Sprintf("waiting %s for the API budget before %s %s (%s)", diag.Duration(d), method, url, policy))
}

// exchange (--verbose): "GET URL → 200 OK (1204 bytes, 120 ms)", a line each, also on a
// terminal.
func (n *notices) exchange(ex httpx.Exchange) {
	result := fmt.Sprintf("%s (%s)", ex.Err, diag.Duration(ex.Duration))
	if ex.Err == "" {
		result = fmt.Sprintf("%d %s (%s, %s)", ex.Status, http.StatusText(ex.Status), httpx.FormatSize(int64(ex.Size)), diag.Duration(ex.Duration))
		if ex.Cached {
			result = fmt.Sprintf("%d %s (%s, from the run's cache: not sent)", ex.Status, http.StatusText(ex.Status), httpx.FormatSize(int64(ex.Size)))
		}
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	prefix := ""
	if n.live {
		prefix = "\r\033[K"
	}
	io.WriteString(n.io.Err, prefix+n.io.redactor.String(fmt.Sprintf("%s %s → %s", ex.Method, ex.URL, result))+"\n")
}
