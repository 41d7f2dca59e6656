// Package httpx sends the requests of a run: one timeout per attempt, retries of 429, 5xx and
// network errors with exponential backoff that honours Retry-After, and a report of every
// attempt (for paginate-trace) that never carries a secret.
package httpx

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"connector/pkg/diag"
	"connector/pkg/manifest"

	"connector/pkg/redact"
)

// Request is what to send. Kind labels it in traces: "data", "token", "login", "validate"
// or "job", and Step says what it does within its kind (see the Step constants).
type Request struct {
	Kind string
	Step string
	// Stream names the stream a data request reads (for traces).
	Stream string
	// Read names the stream whose read the request serves: Stream itself, or the stream a
	// parent stream is read for (the waits of a budget are counted per read).
	Read string
	// Unpaced sends the request outside the API budget (Pacer): the CDK sends its OAuth
	// token requests and the legacy session login with plain `requests`, not through the
	// HttpClient that holds the budget.
	Unpaced bool
	Method  string
	URL     string
	Header  http.Header
	Body    []byte
	// Handler is the requester's error handler; nil is the default behaviour.
	Handler *Handler
	// Secret names the headers an authenticator filled (canonical names): they are masked
	// whole wherever the request is reported.
	Secret map[string]bool
	// Buffer, when set, is memory the response body is read into if it fits, so that a read
	// of many pages does not allocate a body per page. The body then shares the buffer's
	// memory: the caller must be done with any earlier body read into it.
	Buffer []byte
	// Signer, when set, signs every attempt of the request and hears every response (an
	// authenticator that picks its credential per attempt).
	Signer Signer
	// Sink, when set, takes the body of a 2xx response in place of Response.Body, as it
	// arrives (a file downloaded to disk, never held in memory), decoded from its
	// Content-Encoding and cut at the body limit (a longer one fails the request, never
	// retried). It is called once per attempt that is answered 2xx, and says how many
	// bytes it took; when the attempt fails after it (the network cut the body short), the
	// next attempt's call starts over. Other statuses are read into Response.Body as usual.
	Sink func(body io.Reader) (int64, error)
	// CacheAs names the store of Client.Cache the request's answer is kept in and looked up
	// in ("": not cached): the stream's name, for a requester the CDK caches.
	CacheAs string
}

// Signer is an authenticator that chooses the credential of each attempt once the request
// is complete, and learns from each response (RateLimitedMultipleTokenAuthenticator: which
// token a call is charged to, what the API says is left of its quota). The CDK applies its
// authenticator again before every retry; a Signer is how that reaches this client.
type Signer interface {
	// Sign sets the credential of the next attempt of req; it may wait (for a quota reset).
	Sign(ctx context.Context, req *Request) error
	// Update reads a response to req (the attempt Sign last signed).
	Update(req *Request, status int, header http.Header)
	// Rotates reports that a rate-limited req can be tried again at once with another
	// credential, instead of waiting for the one that sent it.
	Rotates(req *Request) bool
}

// RotationWait is the pause before a rate-limited attempt is tried again with another
// credential (the CDK's HttpClient waits a tenth of a second).
const RotationWait = 100 * time.Millisecond

// Response is a complete response: the body is read (and gzip/deflate decoded) before Do
// returns.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// URL is the URL finally answered (after redirects).
	URL string
	// Sunk is the size of a body that Request.Sink took (Body is then empty).
	Sunk int64
	// Ignored is set when the error handler said IGNORE: the response yields no records
	// and ends the stream's pagination. Reason says why, for traces.
	Ignored bool
	Reason  string
}

// ResetError is a response the error handler answered with RESET_PAGINATION: the read of
// the slice starts its pagination again (pkg/run), and anything else fails on it.
type ResetError struct {
	Method, URL string
	Status      int
	// Message is the filter's error_message, rendered (empty when none).
	Message string
}

func (e *ResetError) Error() string {
	text := fmt.Sprintf("%s %s answered %d %s, which the error handler answers with RESET_PAGINATION", e.Method, e.URL,
		e.Status, http.StatusText(e.Status))
	if e.Message != "" {
		text += ": " + e.Message
	}
	return text
}

// Steps of a request within its Kind, for the faces that tell them apart (the Connector
// Builder's test read titles the auxiliary requests of a read by them). A request of no
// particular step has none ("").
const (
	// The requests of an asynchronous job (Kind "job"): its creation, its polling, the
	// request of its download_target_requester, its abort and its deletion.
	StepCreate = "create"
	StepPoll   = "poll"
	StepTarget = "download_target"
	StepAbort  = "abort"
	StepDelete = "delete"
	// StepLegacy marks the login of a LegacySessionTokenAuthenticator (Kind "login"), which,
	// like its validation (Kind "validate"), the CDK sends with plain requests, unlogged.
	StepLegacy = "legacy"
)

// Exchange is one attempt, reported to Client.Observe. Its text fields are redacted; the
// response's headers and body are given as they arrived (see RespHeader).
type Exchange struct {
	Kind    string
	Step    string
	Stream  string // the stream of a data request
	Method  string
	URL     string
	Header  http.Header
	Body    string
	Attempt int // 1 for the first try
	Status  int // 0 when no response arrived
	Size    int
	Err     string
	// Action is the error handler's decision: SUCCESS, FAIL, RETRY, IGNORE, RATE_LIMITED or
	// RESET_PAGINATION.
	Action string
	// Wait is the pause before the next attempt, when there is one.
	Wait     time.Duration
	Duration time.Duration
	// Paced is how long the attempt waited for the API budget before it went, and Policy
	// names the policy that held it back.
	Paced  time.Duration
	Policy string
	// RespHeader and RespBody are the response's headers and its body, decoded (nil when no
	// response arrived). They are not redacted: mask them (Redactor.Header, Redactor.String)
	// before showing them. RespBody is the response's own memory, valid during the call to
	// Observe only: an observer copies what it keeps.
	RespHeader http.Header
	RespBody   []byte
	// Cached says the answer came from Client.Cache: nothing was sent.
	Cached bool
}

// Pacer keeps the requests of a run within an API budget (pkg/budget). It is asked before
// every attempt and told every response; it is shared by every request of the run, so it
// must be safe for concurrent use.
type Pacer interface {
	// Acquire waits until req may go, and says how long it waited and for which policy. It
	// never refuses a request: it fails only when ctx ends.
	Acquire(ctx context.Context, req *Request) (Pace, error)
	// Update reads what a response says about the API's own budget.
	Update(req *Request, status int, header http.Header)
}

// Pace is what the budget cost one attempt.
type Pace struct {
	Wait   time.Duration
	Policy string
}

// Client sends requests. Its zero value is not usable: set at least HTTP.
type Client struct {
	HTTP *http.Client
	// Timeout bounds each attempt, the body read included (default 60 s).
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure is tried again when the request has
	// no error handler (default 5; -1: none).
	MaxRetries int
	// MaxWait caps any single pause between attempts (default 60 s).
	MaxWait time.Duration
	// Sleep waits between attempts; tests inject a fake (default: a timer that honours ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read Retry-After dates and reset times (default time.Now).
	Now      func() time.Time
	Redactor *redact.Redactor
	// Observe, when set, receives every attempt.
	Observe func(Exchange)
	// UserAgent is sent when the request sets none.
	UserAgent string
	// MaxBody is the largest response body read, in bytes after decompression (default
	// DefaultMaxBody). A longer body fails the request at once, without a retry.
	MaxBody int64
	// Pacer, when set, paces every attempt (the definition's api_budget).
	Pacer Pacer
	// OnRetry, when set, is told of every attempt that will be tried again, before the wait.
	OnRetry func(Retry)
	// NoRetries sends every request once, whatever its error handler says: the Connector
	// Builder's test read, whose HttpClient the CDK builds with its retries disabled. OAuth
	// token requests (Kind "token") keep their retries: the CDK sends them outside that
	// client, with a backoff of their own.
	NoRetries bool
	// FailFast gives up early on a server that does not answer, unless the error handler
	// sets max_retries: a connection that cannot be made (refused, a host that does not
	// resolve, a TLS failure) is tried again at most twice within UnreachableBudget, and a
	// timeout at most twice; and once a host could not be reached, every later request to it
	// fails at once, unsent, naming that first failure (an Unreachable NetError with
	// Earlier set). Off, connection failures and timeouts are retried as any other
	// network error (max_retries, 5 by default), as the CDK does.
	FailFast bool
	// Cache, when set, answers the requests that name a store (Request.CacheAs) when it
	// holds their answer, and keeps their successful answers.
	Cache *Cache

	downMu sync.Mutex
	down   map[string]*NetError // scheme://host → the failure that found it unreachable
}

// Limits of FailFast.
const (
	// QuickRetries is how many times a connection that cannot be made, or a timeout, is
	// tried again.
	QuickRetries = 2
	// UnreachableBudget bounds the time spent on a connection that cannot be made, its
	// attempts and waits together.
	UnreachableBudget = 10 * time.Second
)

// Retry is a failed attempt about to be tried again.
type Retry struct {
	Method, URL string // URL redacted
	// Attempt is the number of the attempt that failed (1 for the first); Of is how many
	// attempts there may be in all (0 when no count bounds them: RATE_LIMITED); Wait is the
	// pause before the next.
	Attempt int
	Of      int
	Wait    time.Duration
	// Cause is what failed: "500 Internal Server Error", or the network error (redacted).
	Cause string
	// Stream is the stream the request is for ("" for none).
	Stream string
	// RateLimited says the API limited the rate: a 429, or a RATE_LIMITED decision of the
	// error handler (the CDK reports such a wait as a RUNNING status with that reason).
	RateLimited bool
}

// StatusError is an HTTP status the error handler failed (at once, or after retries).
type StatusError struct {
	Method, URL string // URL redacted
	Status      int
	Body        string // the start of the body, redacted
	// Message is the error_message of the response filter that failed the request (redacted).
	Message string
	// FailureType is the filter's failure_type, as written (empty when none).
	FailureType string
	// GaveUp says why the retries stopped, when there were some.
	GaveUp string
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%d %s from %s %s", e.Status, http.StatusText(e.Status), e.Method, e.URL)
	switch {
	case e.Message != "" && e.Body != "":
		msg += ": " + e.Message + " (body: " + e.Body + ")"
	case e.Message != "":
		msg += ": " + e.Message
	case e.Body != "":
		msg += ": " + e.Body
	}
	if e.GaveUp != "" {
		msg += " (" + e.GaveUp + ")"
	}
	return msg
}

// IsAuth reports a 401 or 403.
func (e *StatusError) IsAuth() bool { return e.Status == 401 || e.Status == 403 }

// NetError is a request that got no complete response.
type NetError struct {
	Method, URL string // URL redacted
	Err         string // redacted
	// Detail, when set, says more about Err, in the parentheses of the message with GaveUp.
	Detail  string
	Timeout bool
	// Unreachable is set when no connection could be made: refused, a host that does not
	// resolve, no connection within the timeout, a TLS handshake that failed. Host is the
	// host (and port) named in the URL, and Cause the failure in a few words.
	Unreachable bool
	Host, Cause string
	// Earlier is set on a request that was not sent because an earlier request of the run
	// found its host unreachable (Client.FailFast).
	Earlier bool
	// Permanent is set for failures a retry cannot fix: an invalid URL, an unknown host, a
	// TLS failure, too many redirects, a body over the limit, and an error of the transport
	// that says so with a method Permanent() bool (a replay that has no answer).
	Permanent bool
	// Answered is the status of a response whose body was refused (larger than
	// Client.MaxBody); Err then completes "GET URL answered 200 with …".
	Answered int
	// GaveUp says why the retries stopped, when there were some.
	GaveUp string
	// Scheme says the URL, or a redirect, named a scheme other than http and https (the
	// CDK's InvalidSchema: the config's error, not a transient one).
	Scheme bool
}

func (e *NetError) Error() string {
	msg := fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Err)
	if e.Answered != 0 {
		msg = fmt.Sprintf("%s %s answered %d with %s", e.Method, e.URL, e.Answered, e.Err)
	}
	switch {
	case e.Detail != "" && e.GaveUp != "":
		msg += " (" + e.Detail + "; " + e.GaveUp + ")"
	case e.Detail != "":
		msg += " (" + e.Detail + ")"
	case e.GaveUp != "":
		msg += " (" + e.GaveUp + ")"
	}
	return msg
}

// Retries words a number of retries: "1 retry", "5 retries".
func Retries(n int) string {
	if n == 1 {
		return "1 retry"
	}
	return fmt.Sprintf("%d retries", n)
}

const bodyExcerpt = 200

// excerptWindow is how much of a body is redacted to make an excerpt of it: far more than an
// excerpt shows (whitespace collapses), without redacting a page of megabytes for one line.
// A secret cut at the window's end could show in part, so the window's last excerptMargin
// bytes are dropped after redaction when the body is longer.
const (
	excerptWindow = 64 << 10
	excerptMargin = 4 << 10
)

// RedactedExcerpt is the start of body, redacted, as one line for an error message.
func (c *Client) RedactedExcerpt(body []byte) string {
	if len(body) <= excerptWindow {
		return Excerpt(c.Redactor.Bytes(body))
	}
	red := c.Redactor.Bytes(body[:excerptWindow])
	return Excerpt(red[:max(len(red)-excerptMargin, 0)])
}

// Excerpt returns the start of a body as one line, for error messages. The body must be
// redacted already: quoting or cutting first could hide a secret from the redactor.
func Excerpt(body []byte) string {
	s := strings.Join(strings.Fields(strings.ToValidUTF8(string(body), "\ufffd")), " ")
	if len(s) > bodyExcerpt {
		cut := bodyExcerpt
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// Do sends req and applies its error handler to every attempt: filters first, then the
// default (429, 5xx and network errors retried with exponential backoff honouring
// Retry-After). Retries stop at max_retries (RETRY) or at the attempt ceiling
// (RATE_LIMITED), and never run past max_time. A failed status is a *StatusError carrying
// the response, which is returned too; no response is a *NetError.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	h := req.Handler
	maxRetries, budget := c.MaxRetries, defaultMaxTime
	if maxRetries == 0 {
		maxRetries = defaultMaxRetries
	}
	if h != nil {
		maxRetries, budget = h.maxRetries, h.maxTime
	}
	maxRetries = max(maxRetries, 0)
	single := c.NoRetries && req.Kind != "token"
	// FailFast: a server that does not answer is tried again at most QuickRetries times
	// (the default waits: 1 s, 2 s), unless the definition's error handler asks for more.
	quick := c.FailFast && !h.setsRetries()
	var key [32]byte
	cacheable := c.Cache.cacheable(req)
	if cacheable {
		// Before the budget and the signer: an answer from the cache costs the API nothing
		// (the CDK's cached session answers before its limiter).
		key = cacheKey(req)
		for {
			resp, wait := c.Cache.lookup(key, req.Buffer)
			if resp != nil {
				if c.Observe != nil {
					ex := c.exchange(req, 1)
					ex.Action, ex.Cached = manifest.ActionSuccess, true
					ex.Status, ex.Size = resp.Status, len(resp.Body)
					ex.RespHeader, ex.RespBody = resp.Header, resp.Body
					c.Observe(ex)
				}
				return resp, nil
			}
			if wait == nil {
				break
			}
			select {
			case <-wait:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		defer c.Cache.release(key)
	}
	if c.FailFast {
		if ne := c.earlier(req); ne != nil {
			return nil, ne
		}
	}
	var spent time.Duration
	retries, limited := 0, 0
	for attempt := 1; ; attempt++ {
		var pace Pace
		paced := c.Pacer != nil && !req.Unpaced
		if paced {
			var err error
			if pace, err = c.Pacer.Acquire(ctx, req); err != nil {
				return nil, err
			}
		}
		if req.Signer != nil {
			if err := req.Signer.Sign(ctx, req); err != nil {
				return nil, err
			}
		}
		start := time.Now()
		resp, err := c.once(ctx, req)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if paced && resp != nil {
			c.Pacer.Update(req, resp.Status, resp.Header)
		}
		if req.Signer != nil && resp != nil {
			req.Signer.Update(req, resp.Status, resp.Header)
		}
		took := time.Since(start)
		spent += took
		o := &outcome{resp: resp, err: err}
		d := h.decide(o)
		retrying, gaveUp, of := false, "", 0
		switch {
		case single:
			// One attempt: the decision stands as it is (a retry becomes the failure).
		case d.action == manifest.ActionRetry:
			retries++
			limit := maxRetries
			if quick && err != nil && (err.Unreachable || err.Timeout) {
				limit = min(limit, QuickRetries)
			}
			retrying, of = retries <= limit, limit+1
			if !retrying && limit > 0 {
				gaveUp = "gave up after " + Retries(limit)
			}
		case d.action == manifest.ActionRateLimited:
			limited++
			retrying = limited < rateLimitedCeiling
			if !retrying {
				gaveUp = fmt.Sprintf("gave up after %d rate-limited attempts", limited)
			}
		}
		var wait time.Duration
		if retrying {
			bh := h
			if quick && err != nil && (err.Unreachable || err.Timeout) {
				bh = nil // the default waits, not the handler's (meant for rate limits)
			}
			w, werr := c.backoff(bh, o, attempt, retries+limited)
			// A 429 no filter decided on is rate limited too (the CDK's default mapping).
			limitedNow := d.action == manifest.ActionRateLimited || !d.explicit && resp != nil && resp.Status == http.StatusTooManyRequests
			if limitedNow && req.Signer != nil && req.Signer.Rotates(req) {
				// Another credential has calls left: the wait the response asks for is the
				// spent credential's, not the next attempt's.
				w, werr = RotationWait, nil
			}
			switch {
			case werr != nil:
				retrying, gaveUp = false, c.Redactor.String(werr.Error())
			case quick && err != nil && err.Unreachable && spent+w > UnreachableBudget:
				retrying = false
				gaveUp = fmt.Sprintf("gave up after %s: another would pass %s", Retries(retries-1), diag.Duration(UnreachableBudget))
			case spent+w > budget:
				retrying = false
				gaveUp = fmt.Sprintf("gave up: waiting %s more would pass the error handler's max_time of %s", diag.Duration(w), diag.Duration(budget))
			default:
				wait = w
			}
		}
		if c.Observe != nil {
			// Redacting the headers is not free: done only for somebody who listens.
			ex := c.exchange(req, attempt)
			ex.Duration, ex.Action = took, d.action
			ex.Paced, ex.Policy = pace.Wait, pace.Policy
			if err != nil {
				ex.Err = err.Error()
			} else {
				ex.Status, ex.Size = resp.Status, len(resp.Body)+int(resp.Sunk)
				ex.RespHeader, ex.RespBody = resp.Header, resp.Body
			}
			if retrying {
				ex.Wait = wait
			}
			c.Observe(ex)
		}
		if retrying && c.OnRetry != nil {
			cause := ""
			if o.err != nil {
				cause = o.err.Err
			} else if resp != nil {
				cause = fmt.Sprintf("%d %s", resp.Status, http.StatusText(resp.Status))
				if ra := strings.TrimSpace(resp.Header.Get("Retry-After")); ra != "" {
					cause += " (Retry-After: " + ra + ")"
				}
			}
			c.OnRetry(Retry{Method: req.Method, URL: c.Redactor.String(req.URL), Attempt: attempt, Of: of, Wait: wait, Cause: cause,
				Stream: req.Stream, RateLimited: d.action == manifest.ActionRateLimited || resp != nil && resp.Status == http.StatusTooManyRequests})
		}
		if retrying {
			if err := c.Wait(ctx, wait); err != nil {
				return nil, err
			}
			spent += wait
			continue
		}
		if cacheable && err == nil && resp.Status == http.StatusOK && d.action == manifest.ActionSuccess {
			c.Cache.put(key, resp)
		}
		return c.result(req, o, d, gaveUp)
	}
}

// result turns the final decision into what Do returns.
func (c *Client) result(req *Request, o *outcome, d decision, gaveUp string) (*Response, error) {
	if o.err != nil {
		ne := *o.err
		ne.GaveUp = gaveUp
		if d.message != "" {
			ne.Err += ": " + c.Redactor.String(d.message)
		}
		if c.FailFast && ne.Unreachable {
			c.remember(req, &ne)
		}
		return nil, &ne
	}
	resp := o.resp
	switch d.action {
	case manifest.ActionSuccess:
		return resp, nil
	case manifest.ActionIgnore:
		resp.Ignored = true
		resp.Reason = fmt.Sprintf("%d %s ignored by the error handler", resp.Status, http.StatusText(resp.Status))
		if d.message != "" {
			resp.Reason += ": " + c.Redactor.String(d.message)
		}
		return resp, nil
	case manifest.ActionResetPagination:
		return resp, &ResetError{Method: req.Method, URL: c.Redactor.String(req.URL), Status: resp.Status,
			Message: c.Redactor.String(d.message)}
	}
	return resp, &StatusError{
		Method: req.Method, URL: c.Redactor.String(req.URL), Status: resp.Status,
		Body: c.RedactedExcerpt(resp.Body), Message: c.Redactor.String(d.message),
		FailureType: d.failureType, GaveUp: gaveUp,
	}
}

// downKey is what FailFast remembers an unreachable host by: its scheme and host (a TLS
// failure on https says nothing of http).
func downKey(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return u.Scheme + "://" + u.Host
}

// remember keeps the first failure that found a host unreachable.
func (c *Client) remember(req *Request, ne *NetError) {
	key := downKey(req.URL)
	if key == "" {
		return
	}
	c.downMu.Lock()
	defer c.downMu.Unlock()
	if c.down == nil {
		c.down = map[string]*NetError{}
	}
	if _, ok := c.down[key]; !ok {
		c.down[key] = ne
	}
}

// earlier fails, unsent, a request to a host an earlier request found unreachable.
func (c *Client) earlier(req *Request) *NetError {
	c.downMu.Lock()
	none := len(c.down) == 0
	c.downMu.Unlock()
	if none { // the usual case: no URL to parse
		return nil
	}
	key := downKey(req.URL)
	c.downMu.Lock()
	first, ok := c.down[key]
	c.downMu.Unlock()
	if !ok || key == "" {
		return nil
	}
	return &NetError{
		Method: req.Method, URL: c.Redactor.String(req.URL), Unreachable: true, Earlier: true,
		Permanent: first.Permanent, Timeout: first.Timeout, Host: first.Host, Cause: first.Cause,
		Err: c.Redactor.String(fmt.Sprintf("not sent: %s could not be reached earlier in this run (%s)", first.Host, first.Cause)),
	}
}

func (c *Client) exchange(req *Request, attempt int) Exchange {
	h := http.Header{}
	for k, vs := range req.Header {
		for _, v := range vs {
			h.Add(k, c.Redactor.Header(k, v, req.Secret[k]))
		}
	}
	return Exchange{
		Kind: req.Kind, Step: req.Step, Stream: req.Stream, Method: req.Method, URL: c.Redactor.String(req.URL),
		Header: h, Body: c.Redactor.String(string(req.Body)), Attempt: attempt,
	}
}

// Info is what the transport of a request may learn about it from the request's context:
// its kind ("data", "token", "login", "validate", "job") and the stream it reads. A
// recording (pkg/har) keeps them.
type Info struct {
	Kind, Stream string
}

type infoKey struct{}

// InfoOf returns the Info of the request whose context is ctx (empty when it was not sent
// by a Client).
func InfoOf(ctx context.Context) Info {
	info, _ := ctx.Value(infoKey{}).(Info)
	return info
}

// maxRedirects is how many redirects one attempt follows.
const maxRedirects = 10

func (c *Client) once(ctx context.Context, req *Request) (*Response, *NetError) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	fail := func(permanent bool, format string, args ...any) *NetError {
		return &NetError{Method: req.Method, URL: c.Redactor.String(req.URL), Permanent: permanent,
			Err: c.Redactor.String(fmt.Sprintf(format, args...))}
	}
	u, err := url.Parse(req.URL)
	if err != nil {
		return nil, fail(true, "invalid URL: %s", cleanURLError(err))
	}
	switch {
	case u.Scheme == "":
		return nil, fail(true, "invalid URL: it has no scheme; it must start with http:// or https://")
	case u.Scheme != "http" && u.Scheme != "https":
		ne := fail(true, "unsupported URL scheme %q: only http and https are supported", u.Scheme)
		ne.Scheme = true
		return nil, ne
	case u.Host == "":
		return nil, fail(true, "invalid URL: it has no host")
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	actx = context.WithValue(actx, infoKey{}, Info{Kind: req.Kind, Stream: req.Stream})
	// Whether a connection was made tells a server that does not answer from one that
	// cannot be reached, when the timeout ends the attempt.
	var connected atomic.Bool
	actx = httptrace.WithClientTrace(actx, &httptrace.ClientTrace{GotConn: func(httptrace.GotConnInfo) { connected.Store(true) }})
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(actx, req.Method, req.URL, body)
	if err != nil {
		return nil, fail(true, "invalid request: %s", cleanURLError(err))
	}
	for k, vs := range req.Header {
		hr.Header[k] = vs
	}
	if hr.Header.Get("User-Agent") == "" && c.UserAgent != "" {
		hr.Header.Set("User-Agent", c.UserAgent)
	}
	hc := *c.HTTP
	hc.CheckRedirect = c.checkRedirect
	res, err := hc.Do(hr)
	if err != nil {
		ne := c.netError(req, actx, err, timeout)
		if ne.Timeout && !connected.Load() {
			ne.Unreachable, ne.Host, ne.Cause = true, hostOf(req.URL), "no connection within "+diag.Duration(timeout)
			ne.Err = c.Redactor.String(fmt.Sprintf("no connection to %s within %s", ne.Host, diag.Duration(timeout)))
			ne.Detail = ""
		}
		return nil, ne
	}
	defer res.Body.Close()
	limit := c.BodyLimit()
	if req.Sink != nil && res.StatusCode/100 == 2 {
		return c.sink(req, res, actx, timeout, fail)
	}
	data, decoded, src, err := readResponse(res, req.Buffer, limit)
	switch {
	case errors.Is(err, errTooLarge):
		ne := fail(true, "a body larger than %s (--max-body raises the limit)", FormatSize(limit))
		ne.Answered = res.StatusCode
		return nil, ne
	case src.err != nil:
		ne := c.cutShort(req, res, actx, src, timeout)
		if ex := c.RedactedExcerpt(data); ex != "" {
			ne.Err += ": " + strconv.Quote(ex)
		}
		return nil, ne
	case err != nil:
		enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding")))
		return nil, fail(false, "%d %s, but the %s body cannot be decoded: %v", res.StatusCode, http.StatusText(res.StatusCode), enc, err)
	}
	if decoded {
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data, URL: res.Request.URL.String()}, nil
}

// redirectError stops a redirect chain; it is never retried.
type redirectError struct {
	msg    string
	scheme bool // to a scheme other than http and https
}

func (e *redirectError) Error() string { return e.msg }

// checkRedirect follows at most maxRedirects redirects, refuses a loop and any scheme but
// http and https, and drops the credentials when a redirect leaves the host of the original
// request.
func (c *Client) checkRedirect(next *http.Request, via []*http.Request) error {
	if s := next.URL.Scheme; s != "http" && s != "https" {
		return &redirectError{msg: fmt.Sprintf("redirect to %s refused: only http and https URLs are followed", c.Redactor.String(next.URL.String())), scheme: true}
	}
	for _, prev := range via {
		if prev.URL.String() == next.URL.String() {
			chain := make([]string, 0, len(via)+1)
			for _, r := range via {
				chain = append(chain, c.Redactor.String(r.URL.String()))
			}
			chain = append(chain, c.Redactor.String(next.URL.String()))
			return &redirectError{msg: "redirect loop: " + strings.Join(chain, " → ")}
		}
	}
	if len(via) >= maxRedirects {
		return &redirectError{msg: fmt.Sprintf("stopped after %d redirects (last to %s)", maxRedirects, c.Redactor.String(next.URL.String()))}
	}
	if next.URL.Host != via[0].URL.Host {
		for name, vs := range next.Header {
			if credentialHeader(name) || c.carriesSecret(vs) {
				next.Header.Del(name)
			}
		}
	}
	return nil
}

// credentialHeader reports a header name that carries credentials: Authorization and the
// usual API-key header names.
func credentialHeader(name string) bool {
	n := strings.ToLower(name)
	switch n {
	case "authorization", "proxy-authorization", "cookie":
		return true
	}
	for _, w := range []string{"key", "token", "auth", "secret", "session", "password", "signature", "credential"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

func (c *Client) carriesSecret(vs []string) bool {
	for _, v := range vs {
		if c.Redactor.String(v) != v {
			return true
		}
	}
	return false
}

func (c *Client) netError(req *Request, actx context.Context, err error, timeout time.Duration) *NetError {
	ne := &NetError{Method: req.Method, URL: c.Redactor.String(req.URL)}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		// A connection, then no answer: the server took the request and sits on it. A longer
		// --timeout rarely helps a server that says nothing; the retries may.
		ne.Timeout = true
		ne.Err = fmt.Sprintf("no answer within %s", diag.Duration(timeout))
		ne.Detail = "the server accepted the connection but did not answer"
		return ne
	}
	var re *redirectError
	var dns *net.DNSError
	var cert *tls.CertificateVerificationError
	var hostErr x509.HostnameError
	var authErr x509.UnknownAuthorityError
	var recErr tls.RecordHeaderError
	var fixed interface{ Permanent() bool }
	var op *net.OpError
	unreachable := func(cause string) {
		ne.Unreachable, ne.Host, ne.Cause = true, hostOf(req.URL), cause
	}
	switch {
	case errors.As(err, &re):
		ne.Permanent, ne.Err, ne.Scheme = true, re.msg, re.scheme
	case errors.As(err, &dns):
		ne.Permanent = dns.IsNotFound
		ne.Err = fmt.Sprintf("cannot resolve the host %s: %s", dns.Name, dns.Err)
		unreachable(dns.Err)
	case errors.As(err, &cert), errors.As(err, &hostErr), errors.As(err, &authErr):
		ne.Permanent = true
		ne.Err = "TLS failure: " + cleanURLError(err)
		unreachable("TLS failure")
	case errors.As(err, &recErr):
		ne.Permanent = true
		ne.Err = "TLS failure: the server did not answer with TLS (is the URL http:// rather than https://?)"
		unreachable("TLS failure")
	case errors.As(err, &fixed) && fixed.Permanent():
		ne.Permanent, ne.Err = true, cleanURLError(err)
	case errors.Is(err, syscall.ECONNREFUSED):
		ne.Err = fmt.Sprintf("connection refused by %s (is the server running?)", hostOf(req.URL))
		unreachable("connection refused")
	case errors.As(err, &op) && op.Op == "dial":
		// unreachable network, no route, a dial timeout of the transport
		ne.Err = fmt.Sprintf("cannot connect to %s: %s", hostOf(req.URL), op.Err)
		unreachable(op.Err.Error())
	default:
		ne.Err = cleanURLError(err)
	}
	ne.Err = c.Redactor.String(ne.Err)
	return ne
}

func hostOf(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.Host != "" {
		return u.Host
	}
	return raw
}

// cleanURLError drops the "Get \"url\": " prefix net/http puts on errors: callers name the
// request themselves.
func cleanURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// backoff is the pause before the next attempt: the error handler's backoff strategies,
// else exponential (1 s, 2 s, 4 s, …) honouring Retry-After; at most MaxWait. retries is
// the number of attempts so far that asked for a retry.
func (c *Client) backoff(h *Handler, o *outcome, attempt, retries int) (time.Duration, error) {
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = 60 * time.Second
	}
	wait, ok, err := h.wait(o, attempt, c.now())
	if err != nil {
		return 0, err
	}
	if !ok {
		wait = time.Second << min(retries-1, 20)
		if o.resp != nil {
			if d, ok := retryAfter(o.resp.Header.Get("Retry-After"), c.now()); ok {
				wait = d
			}
		}
	}
	return min(max(wait, 0), maxWait), nil
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Wait pauses d, or until ctx ends, with the client's Sleep when it has one (tests inject
// a fake clock there); a nil client waits on a timer. Every pause of a run goes through it.
func (c *Client) Wait(ctx context.Context, d time.Duration) error {
	if c != nil && c.Sleep != nil {
		return c.Sleep(ctx, d)
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// retryAfter reads a Retry-After header: a number of seconds or an HTTP date.
func retryAfter(v string, now time.Time) (time.Duration, bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if n, err := strconv.ParseFloat(v, 64); err == nil && n >= 0 {
		return time.Duration(n * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return t.Sub(now), true
	}
	return 0, false
}
