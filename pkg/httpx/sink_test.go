package httpx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// Request.Sink takes a 2xx body as it arrives, decoded from its Content-Encoding, within the
// limit: a body over it fails unretried; a body cut short is tried again with a new call;
// another status is read into Response.Body as usual, for the error handler.
func TestSink(t *testing.T) {
	file := bytes.Repeat([]byte("0123456789"), 5000) // 50,000 bytes
	cuts := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/file":
			w.Write(file)
		case "/gzip":
			w.Header().Set("Content-Encoding", "gzip")
			w.Write(compressed(t, "gzip", file))
		case "/cut":
			if cuts++; cuts == 1 {
				w.Header().Set("Content-Length", "50000")
				w.Write(file[:100])
				w.(http.Flusher).Flush()
				panic(http.ErrAbortHandler)
			}
			w.Write(file)
		case "/missing":
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"error":"not_found"}`))
		}
	}))
	defer srv.Close()
	type call struct{ got []byte }
	do := func(path string, limit int64) ([]call, *Response, error) {
		var calls []call
		c := &Client{HTTP: srv.Client(), MaxBody: limit, MaxRetries: 3, Sleep: noWait}
		h := http.Header{}
		h.Set("Accept-Encoding", "gzip") // the body comes as sent; connector decodes it
		resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + path, Header: h,
			Sink: func(body io.Reader) (int64, error) {
				b, err := io.ReadAll(body)
				calls = append(calls, call{got: b})
				return int64(len(b)), err
			}})
		return calls, resp, err
	}
	for _, path := range []string{"/file", "/gzip"} {
		calls, resp, err := do(path, 1<<20)
		if err != nil || len(calls) != 1 || !bytes.Equal(calls[0].got, file) || resp.Sunk != int64(len(file)) || len(resp.Body) != 0 {
			t.Errorf("%s: error %v, %d calls, sunk %d", path, err, len(calls), resp.Sunk)
		}
	}
	calls, _, err := do("/file", 40000)
	var ne *NetError
	if !errors.As(err, &ne) || !ne.Permanent || len(calls) != 1 ||
		strings.ReplaceAll(err.Error(), srv.URL, "URL") != "GET URL/file answered 200 with a body larger than 40000 bytes (--max-body raises the limit)" {
		t.Errorf("over the limit: %v, %d calls", err, len(calls))
	}
	calls, resp, err := do("/cut", 1<<20)
	if err != nil || len(calls) != 2 || len(calls[0].got) != 100 || !bytes.Equal(calls[1].got, file) || resp.Sunk != int64(len(file)) {
		t.Errorf("cut short: error %v, %d calls", err, len(calls))
	}
	calls, resp, err = do("/missing", 1<<20)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 404 || len(calls) != 0 || string(resp.Body) != `{"error":"not_found"}` {
		t.Errorf("404: %v, %d calls", err, len(calls))
	}
}
