// Package httpx sends the requests of a run: one timeout per attempt, retries of 429, 5xx and
// network errors with exponential backoff that honours Retry-After, and a report of every
// attempt (for paginate-trace) that never carries a secret.
package httpx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"connector/pkg/redact"
)

// Request is what to send. Kind labels it in traces: "data", "token" or "login".
type Request struct {
	Kind   string
	Method string
	URL    string
	Header http.Header
	Body   []byte
}

// Response is a complete response: the body is read before Do returns.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
	// URL is the URL finally answered (after redirects).
	URL string
}

// Exchange is one attempt, reported to Client.Observe. Its text fields are redacted.
type Exchange struct {
	Kind    string
	Method  string
	URL     string
	Header  http.Header
	Body    string
	Attempt int // 1 for the first try
	Status  int // 0 when no response arrived
	Size    int
	Err     string
	// Wait is the pause before the next attempt, when there is one.
	Wait     time.Duration
	Duration time.Duration
}

// Client sends requests. Its zero value is not usable: set at least HTTP.
type Client struct {
	HTTP *http.Client
	// Timeout bounds each attempt, the body read included (default 60 s).
	Timeout time.Duration
	// MaxRetries is how many times a retryable failure is tried again (default 5; -1: none).
	MaxRetries int
	// MaxWait caps any single pause between attempts (default 60 s).
	MaxWait time.Duration
	// Sleep waits between attempts; tests inject a fake (default: a timer that honours ctx).
	Sleep func(ctx context.Context, d time.Duration) error
	// Now is the clock used to read Retry-After dates (default time.Now).
	Now      func() time.Time
	Redactor *redact.Redactor
	// Observe, when set, receives every attempt.
	Observe func(Exchange)
	// UserAgent is sent when the request sets none.
	UserAgent string
}

// StatusError is an HTTP error status that was not, or no longer, retried.
type StatusError struct {
	Method, URL string // URL redacted
	Status      int
	Body        string // the start of the body, redacted
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%d %s from %s %s", e.Status, http.StatusText(e.Status), e.Method, e.URL)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// IsAuth reports a 401 or 403.
func (e *StatusError) IsAuth() bool { return e.Status == 401 || e.Status == 403 }

// NetError is a request that got no response.
type NetError struct {
	Method, URL string // URL redacted
	Err         string // redacted
	Timeout     bool
}

func (e *NetError) Error() string {
	return fmt.Sprintf("%s %s: %s", e.Method, e.URL, e.Err)
}

const bodyExcerpt = 200

// Excerpt returns the start of a body as one line, for error messages.
func Excerpt(body []byte) string {
	s := strings.Join(strings.Fields(string(body)), " ")
	if len(s) > bodyExcerpt {
		s = s[:bodyExcerpt] + "…"
	}
	return s
}

// Do sends req, retrying 429, 5xx and network errors. A final status ≥ 400 is a *StatusError
// carrying the response; the response is returned too so callers can inspect it.
func (c *Client) Do(ctx context.Context, req *Request) (*Response, error) {
	maxRetries := c.MaxRetries
	if maxRetries == 0 {
		maxRetries = 5
	}
	if maxRetries < 0 {
		maxRetries = 0
	}
	for attempt := 1; ; attempt++ {
		start := time.Now()
		resp, err := c.once(ctx, req)
		ex := c.exchange(req, attempt)
		ex.Duration = time.Since(start)
		retry := false
		if err != nil {
			ex.Err = c.Redactor.String(err.Error())
			retry = ctx.Err() == nil
		} else {
			ex.Status, ex.Size = resp.Status, len(resp.Body)
			retry = resp.Status == 429 || resp.Status >= 500
		}
		if !retry || attempt > maxRetries {
			if c.Observe != nil {
				c.Observe(ex)
			}
			return c.result(req, resp, err)
		}
		wait := c.backoff(attempt, resp)
		ex.Wait = wait
		if c.Observe != nil {
			c.Observe(ex)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

func (c *Client) exchange(req *Request, attempt int) Exchange {
	h := http.Header{}
	for k, vs := range req.Header {
		for _, v := range vs {
			h.Add(k, c.Redactor.String(v))
		}
	}
	return Exchange{
		Kind: req.Kind, Method: req.Method, URL: c.Redactor.String(req.URL),
		Header: h, Body: c.Redactor.String(string(req.Body)), Attempt: attempt,
	}
}

func (c *Client) result(req *Request, resp *Response, err error) (*Response, error) {
	if err != nil {
		var ne *NetError
		if errors.As(err, &ne) {
			return nil, ne
		}
		return nil, err
	}
	if resp.Status >= 400 {
		return resp, &StatusError{
			Method: req.Method, URL: c.Redactor.String(req.URL), Status: resp.Status,
			Body: c.Redactor.String(Excerpt(resp.Body)),
		}
	}
	return resp, nil
}

func (c *Client) once(ctx context.Context, req *Request) (*Response, error) {
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var body io.Reader
	if req.Body != nil {
		body = bytes.NewReader(req.Body)
	}
	hr, err := http.NewRequestWithContext(actx, req.Method, req.URL, body)
	if err != nil {
		return nil, &NetError{Method: req.Method, URL: c.Redactor.String(req.URL),
			Err: c.Redactor.String(cleanURLError(err))}
	}
	for k, vs := range req.Header {
		hr.Header[k] = vs
	}
	if hr.Header.Get("User-Agent") == "" && c.UserAgent != "" {
		hr.Header.Set("User-Agent", c.UserAgent)
	}
	res, err := c.HTTP.Do(hr)
	if err != nil {
		return nil, c.netError(req, actx, err, timeout)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, c.netError(req, actx, fmt.Errorf("reading the body after %d bytes: %w", len(data), err), timeout)
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: data, URL: res.Request.URL.String()}, nil
}

func (c *Client) netError(req *Request, actx context.Context, err error, timeout time.Duration) *NetError {
	ne := &NetError{Method: req.Method, URL: c.Redactor.String(req.URL)}
	if errors.Is(actx.Err(), context.DeadlineExceeded) {
		ne.Timeout = true
		ne.Err = fmt.Sprintf("no complete response within %s (set --timeout to wait longer)", timeout)
		return ne
	}
	ne.Err = c.Redactor.String(cleanURLError(err))
	return ne
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

func (c *Client) backoff(attempt int, resp *Response) time.Duration {
	maxWait := c.MaxWait
	if maxWait <= 0 {
		maxWait = 60 * time.Second
	}
	wait := time.Second << (attempt - 1)
	if resp != nil {
		if d, ok := retryAfter(resp.Header.Get("Retry-After"), c.now()); ok {
			wait = d
		}
	}
	if wait > maxWait {
		wait = maxWait
	}
	if wait < 0 {
		wait = 0
	}
	return wait
}

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

func (c *Client) sleep(ctx context.Context, d time.Duration) error {
	if c.Sleep != nil {
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
