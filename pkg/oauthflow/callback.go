package oauthflow

import (
	"connector/pkg/diag"
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Callback is the local listener the provider redirects the browser to.
type Callback struct {
	ln net.Listener
}

// Listen opens the callback listener on 127.0.0.1:port (port 0: a free one).
func Listen(port int) (*Callback, error) {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("cannot listen for the OAuth callback: %w", err)
	}
	return &Callback{ln: ln}, nil
}

// RedirectURI is the address to give the provider: http://127.0.0.1:PORT/callback.
func (c *Callback) RedirectURI() string {
	return "http://" + c.ln.Addr().String() + "/callback"
}

// Close stops listening (Wait does it too).
func (c *Callback) Close() error { return c.ln.Close() }

// DeniedError is the provider's redirect with an error instead of a code
// (error=access_denied when the user refused).
type DeniedError struct {
	Code, Description string
}

func (e *DeniedError) Error() string {
	msg := "the provider refused the authorization: " + e.Code
	if e.Description != "" {
		msg += " (" + e.Description + ")"
	}
	return msg
}

// TimeoutError is the end of the wait without a callback.
type TimeoutError struct {
	After       time.Duration
	RedirectURI string
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("no authorization callback on %s within %s (open the consent URL in a browser, or raise --timeout)", e.RedirectURI, diag.Duration(e.After))
}

type outcome struct {
	code string
	err  error
}

// Wait serves the callback until the provider redirects to it with the state sent, or ctx
// ends, and returns the authorization code. A callback with another state (or none) is
// answered 400 and refused, whatever else it carries, and the wait goes on: whoever sent it
// cannot end the flow nor deny it. The browser is answered with a short page. timeout is
// only used in the message of a TimeoutError (ctx carries the deadline).
func (f *Flow) Wait(ctx context.Context, c *Callback, timeout time.Duration) (string, error) {
	done := make(chan outcome, 1)
	finish := func(o outcome) {
		select {
		case done <- o:
		default:
		}
	}
	k := f.Spec.keys
	mux := http.NewServeMux()
	mux.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		switch {
		case subtle.ConstantTimeCompare([]byte(q.Get(k.state)), []byte(f.State)) != 1:
			page(w, http.StatusBadRequest, "Redirect refused", "The state of this redirect does not match the one connector sent (a stale or forged redirect). connector is still waiting for the right one.")
			if f.Refused != nil {
				f.Refused()
			}
		case q.Get("error") != "":
			err := &DeniedError{Code: q.Get("error"), Description: q.Get("error_description")}
			page(w, http.StatusOK, "Authorization refused", err.Error()+". You can close this window.")
			finish(outcome{err: err})
		case q.Get(k.authCode) == "":
			err := fmt.Errorf("the callback has no authorization code (query parameter %q)", k.authCode)
			page(w, http.StatusBadRequest, "Authorization failed", "The redirect carried no authorization code. You can close this window.")
			finish(outcome{err: err})
		default:
			page(w, http.StatusOK, "Authorization received", "connector received the authorization. You can close this window.")
			finish(outcome{code: q.Get(k.authCode)})
		}
	})
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(c.ln)
	defer func() {
		shutdown, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(shutdown)
	}()
	select {
	case o := <-done:
		return o.code, o.err
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return "", &TimeoutError{After: timeout, RedirectURI: c.RedirectURI()}
		}
		return "", ctx.Err()
	}
}

func page(w http.ResponseWriter, status int, title, text string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprintf(w, "<!doctype html>\n<title>%s</title>\n<h1>%s</h1>\n<p>%s</p>\n", html.EscapeString(title), html.EscapeString(title), html.EscapeString(text))
}
