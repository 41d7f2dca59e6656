package har

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"connector/pkg/redact"
)

// Replayer is an http.RoundTripper that answers every request from a recording, without a
// network and without waiting.
//
// Matching: a request is masked as the recording was (its secrets, which in a replay are
// the recording's placeholders, and the tokens the recorded answers hand out), then answered
// by the first recorded request not used yet that is identical to it: same method, URL
// (query parameters in any order), headers set by the definition or the authenticator, and
// body. A read one request at a time thus replays the recording in order, identical
// requests (a retry, a token refresh) in the order they were recorded; a read with
// --concurrency or --prefetch, whose requests go out in another order, finds each of them
// wherever it is. A placeholder of the recording also matches any other text in its place
// (a value that spelled a secret by chance). A request that matches nothing fails, not
// retried, with its differences from the nearest recorded request not used yet.
//
// Clock: the replay's clock starts at the recording's start; answering a request moves it
// to the time the recorded answer ended, and Sleep moves it on without waiting. Templates
// that read the time (now_utc(), a default end date) and token expiry see the recording's
// time.
type Replayer struct {
	file string
	red  *redact.Redactor

	mu      sync.Mutex
	entries []replayEntry
	buckets map[string][]int // entry indexes by method and URL without query
	used    []bool
	n       int // requests received
	now     time.Time
	failure *NoMatchError // the first request without an answer
}

type replayEntry struct {
	e *Entry
	s shape
}

// placeholder finds the placeholders of a recording.
var placeholder = regexp.MustCompile(`\*\*\*\*[A-Za-z0-9._+-]+\*\*\*\*`)

// NewReplayer replays the archive read from file (named in messages). red is the replay's
// redactor: it learns every placeholder of the recording as a secret named by itself, so
// that a live request carrying one, in any encoding, masks to it.
func NewReplayer(a *Archive, file string, red *redact.Redactor) *Replayer {
	if red == nil {
		red = &redact.Redactor{}
	}
	r := &Replayer{file: file, red: red, buckets: map[string][]int{}, now: a.Log.Connector.Started}
	seen := map[string]bool{}
	learn := func(text string) {
		for _, p := range placeholder.FindAllString(text, -1) {
			if !seen[p] {
				seen[p] = true
				red.Add(p)
			}
		}
	}
	learnValues(a.Log.Connector.Values, learn)
	for _, e := range a.Log.Entries {
		learn(e.Request.URL)
		for _, h := range e.Request.Headers {
			learn(h.Value)
		}
		if e.Request.PostData != nil {
			learn(e.Request.PostData.Text)
		}
		for _, h := range e.Response.Headers {
			learn(h.Value)
		}
		if e.Response.Content.Encoding == "" {
			learn(e.Response.Content.Text)
		}
	}
	for i, e := range a.Log.Entries {
		s := recordedShape(&e.Request)
		r.entries = append(r.entries, replayEntry{e: e, s: s})
		r.buckets[s.key()] = append(r.buckets[s.key()], i)
	}
	r.used = make([]bool, len(r.entries))
	return r
}

func learnValues(v any, learn func(string)) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			learnValues(e, learn)
		}
	case []any:
		for _, e := range x {
			learnValues(e, learn)
		}
	case string:
		learn(x)
	}
}

// NoMatchError is a request of the replay that no recorded request answers. It is
// permanent: the client does not retry it.
type NoMatchError struct {
	// N counts the requests of the replay, from 1.
	N      int
	Method string
	URL    string // masked
	// Diff says how the request differs from the nearest recorded request not used yet
	// (entry Nearest, from 1; 0 when every recorded request was used).
	Diff    string
	Nearest int
	File    string
}

func (e *NoMatchError) Error() string {
	if e.Nearest == 0 {
		return fmt.Sprintf("request %d: %s (replaying %s)", e.N, e.Diff, e.File)
	}
	return fmt.Sprintf("request %d: %s (no recorded request matches; the nearest is entry %d of %s)", e.N, e.Diff, e.Nearest, e.File)
}

// Permanent says a retry cannot help.
func (e *NoMatchError) Permanent() bool { return true }

// recordedError is the error a recorded request met (no response came): the replay meets
// it again, and the client may retry as it did.
type recordedError struct{ msg string }

func (e *recordedError) Error() string { return e.msg }

// RoundTrip answers req from the recording.
func (r *Replayer) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	if req.Body != nil {
		req.Body.Close()
	}
	live := liveShape(req, body, r.red)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.n++
	i := r.match(&live)
	if i < 0 {
		nm := r.noMatch(&live, req.Method)
		if r.failure == nil {
			r.failure = nm
		}
		return nil, nm
	}
	r.used[i] = true
	e := r.entries[i].e
	if end := e.Started.Add(time.Duration(e.Time * float64(time.Millisecond))); end.After(r.now) {
		r.now = end
	}
	if e.Error != "" {
		return nil, &recordedError{msg: e.Error}
	}
	return response(e, req)
}

// match returns the entry that answers live: the first unused identical one, else the
// first unused one that matches with placeholders standing for other text; -1 if none.
func (r *Replayer) match(live *shape) int {
	for _, i := range r.buckets[live.key()] {
		if !r.used[i] && exact(&r.entries[i].s, live) {
			return i
		}
	}
	for i := range r.entries {
		if !r.used[i] && equal(&r.entries[i].s, live) {
			return i
		}
	}
	return -1
}

// noMatch describes live against the nearest unused recorded request.
func (r *Replayer) noMatch(live *shape, method string) *NoMatchError {
	nm := &NoMatchError{N: r.n, Method: method, File: r.file}
	best, bestW := -1, 0
	var bestDiffs []string
	for i := range r.entries {
		if r.used[i] {
			continue
		}
		diffs, w := differences(&r.entries[i].s, live)
		if best < 0 || w < bestW {
			best, bestW, bestDiffs = i, w, diffs
		}
	}
	if best < 0 {
		nm.Diff = fmt.Sprintf("%s %s is beyond the recording: all %d recorded requests were replayed", method, live.origin+live.path, len(r.entries))
		return nm
	}
	for i := range r.entries {
		if r.used[i] && equal(&r.entries[i].s, live) {
			nm.Diff = fmt.Sprintf("%s %s is made more often than recorded (entry %d answered it already); the nearest request not replayed yet differs: %s",
				method, live.origin+live.path, i+1, strings.Join(bestDiffs, "; "))
			nm.Nearest = best + 1
			return nm
		}
	}
	nm.Diff, nm.Nearest = strings.Join(bestDiffs, "; "), best+1
	return nm
}

// response builds the recorded answer to req.
func response(e *Entry, req *http.Request) (*http.Response, error) {
	body := []byte(e.Response.Content.Text)
	if e.Response.Content.Encoding == "base64" {
		var err error
		if body, err = base64.StdEncoding.DecodeString(e.Response.Content.Text); err != nil {
			return nil, fmt.Errorf("the recorded body is not base64: %w", err)
		}
	}
	// The headers as recorded; a Content-Length only where the answer had one (not a
	// chunked answer), made to fit the body as recorded.
	h := http.Header{}
	sized := false
	for _, nv := range e.Response.Headers {
		if strings.EqualFold(nv.Name, "Content-Length") {
			sized = true
			continue
		}
		h.Add(nv.Name, nv.Value)
	}
	if sized {
		h.Set("Content-Length", strconv.Itoa(len(body)))
	}
	proto := e.Response.HTTPVersion
	major, minor, ok := http.ParseHTTPVersion(proto)
	if !ok {
		proto, major, minor = "HTTP/1.1", 1, 1
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", e.Response.Status, http.StatusText(e.Response.Status)),
		StatusCode:    e.Response.Status,
		Proto:         proto,
		ProtoMajor:    major,
		ProtoMinor:    minor,
		Header:        h,
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}, nil
}

// Now is the replay's clock.
func (r *Replayer) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

// Sleep moves the replay's clock by d at once.
func (r *Replayer) Sleep(ctx context.Context, d time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d > 0 {
		r.now = r.now.Add(d)
	}
	return nil
}

// Requests is how many requests the replay answered or refused so far.
func (r *Replayer) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n
}

// Failure is the first request that no recorded request answered, or nil.
func (r *Replayer) Failure() *NoMatchError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failure
}

// Unused lists the recorded requests the replay did not make (entries from 1), leaving out
// those the recording saw cancelled.
func (r *Replayer) Unused() []Unused {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Unused
	for i, used := range r.used {
		e := r.entries[i].e
		if used || strings.Contains(e.Error, "context canceled") {
			continue
		}
		out = append(out, Unused{Entry: i + 1, Method: e.Request.Method, URL: e.Request.URL})
	}
	return out
}

// Unused is a recorded request a replay did not make.
type Unused struct {
	Entry       int
	Method, URL string
}
