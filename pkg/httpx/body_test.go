package httpx

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"connector/internal/racetest"
	"connector/pkg/redact"
)

// pieces reads data a few bytes to a few KiB at a time, as a network does.
type pieces struct {
	data []byte
	n    int
}

func (p *pieces) Read(b []byte) (int, error) {
	if len(p.data) == 0 {
		return 0, io.EOF
	}
	p.n++
	k := min(len(b), len(p.data), 1+(p.n*7919)%9000)
	copy(b, p.data[:k])
	p.data = p.data[k:]
	return k, nil
}

// readBody returns the whole body when it is at most the limit, and errTooLarge when it is
// longer, whatever was announced and whatever memory was offered; a large body of unknown
// length goes through mapped chunks.
func TestReadBody(t *testing.T) {
	racetest.Sequential(t)
	for _, size := range []int{0, 1, firstBuffer - 1, firstBuffer, firstBuffer + 1, 3<<20 + 7, 20<<20 + 3} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte('a' + i%26)
		}
		for _, announced := range []bool{true, false} {
			for _, reuse := range []int{0, 16, size + 1, size + 4096} {
				for _, limit := range []int64{int64(size), int64(size) - 1, int64(size) + 1, 64 << 20} {
					if limit < 1 {
						continue
					}
					name := fmt.Sprintf("size %d, announced %v, reuse %d, limit %d", size, announced, reuse, limit)
					n := int64(-1)
					if announced {
						n = int64(size)
					}
					got, err := readBody(&pieces{data: data}, n, limit, make([]byte, 0, reuse))
					if int64(size) > limit {
						if !errors.Is(err, errTooLarge) {
							t.Errorf("%s: error %v, want errTooLarge", name, err)
						}
						continue
					}
					if err != nil || !bytes.Equal(got, data) {
						t.Errorf("%s: %d bytes, error %v; want the %d bytes", name, len(got), err, size)
					}
				}
			}
		}
	}
}

// A body that fits the offered memory is read into it; one that does not never writes into it
// past what it holds (the earlier body it may still belong to is the caller's to reuse).
func TestReadBodyReusesTheOfferedMemory(t *testing.T) {
	buf := make([]byte, 0, 100)
	got, err := readBody(strings.NewReader(strings.Repeat("x", 99)), -1, 1<<20, buf)
	if err != nil || len(got) != 99 || &got[0] != &buf[:1][0] {
		t.Errorf("a 99-byte body of unknown length was not read into the 100-byte buffer (%v)", err)
	}
	got, err = readBody(strings.NewReader(strings.Repeat("y", 5000)), -1, 1<<20, buf)
	if err != nil || string(got) != strings.Repeat("y", 5000) || &got[0] == &buf[:1][0] {
		t.Errorf("a 5000-byte body: %d bytes, %v, or returned in the 100-byte buffer", len(got), err)
	}
}

func compressed(t *testing.T, how string, body []byte) []byte {
	var b bytes.Buffer
	var w io.WriteCloser
	switch how {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	case "raw":
		w, _ = flate.NewWriter(&b, flate.BestCompression)
	default:
		t.Fatal(how)
	}
	w.Write(body)
	w.Close()
	return b.Bytes()
}

// Bodies are decoded as they are read and the limit counts the decoded bytes: a body that
// decodes to the limit is read, one byte more fails at once (never retried), whether Go's
// transport decodes gzip or connector does.
func TestBodyLimitAfterDecoding(t *testing.T) {
	const limit = 100 << 10
	atLimit := []byte(`{"data":[` + strings.Repeat(" ", limit-11) + `]}`)
	over := append([]byte(" "), atLimit...)
	bodies := map[string][]byte{}
	for _, how := range []string{"gzip", "zlib", "raw"} {
		bodies["/"+how+"/at"] = compressed(t, how, atLimit)
		bodies["/"+how+"/over"] = compressed(t, how, over)
	}
	encodings := map[string]string{"gzip": "gzip", "zlib": "deflate", "raw": "deflate", "br": "br", "plain": ""}
	bodies["/br/at"], bodies["/br/over"] = atLimit, over // an encoding connector does not know: counted as it came
	bodies["/plain/at"], bodies["/plain/over"] = atLimit, over
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		how, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
		if enc := encodings[how]; enc != "" {
			w.Header().Set("Content-Encoding", enc)
		}
		w.Write(bodies[r.URL.Path])
	}))
	defer srv.Close()
	for _, ourselves := range []bool{false, true} {
		for how, enc := range encodings {
			if !ourselves && enc != "gzip" && enc != "" {
				continue // Go's transport decodes only gzip
			}
			attempts := 0
			c := &Client{HTTP: srv.Client(), MaxBody: limit, MaxRetries: 3, Sleep: noWait,
				Observe: func(Exchange) { attempts++ }}
			h := http.Header{}
			if ourselves {
				h.Set("Accept-Encoding", "gzip, deflate, br") // Go's transport then leaves the body alone
			}
			resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/" + how + "/at", Header: h})
			if err != nil || !bytes.Equal(resp.Body, atLimit) {
				t.Errorf("%s (decoded by connector: %v), at the limit: error %v", how, ourselves, err)
			} else if resp.Header.Get("Content-Encoding") != "" && enc != "br" {
				t.Errorf("%s: the decoded response still says Content-Encoding %q", how, resp.Header.Get("Content-Encoding"))
			}
			_, err = c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/" + how + "/over", Header: h})
			want := "GET URL/" + how + "/over answered 200 with a body larger than 100 KiB (--max-body raises the limit)"
			var ne *NetError
			if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want || !errors.As(err, &ne) || !ne.Permanent {
				t.Errorf("%s (decoded by connector: %v), over the limit:\n got %v\nwant %s", how, ourselves, err, want)
			}
			if attempts != 2 {
				t.Errorf("%s: %d attempts for two requests: a body over the limit was retried", how, attempts)
			}
		}
	}
}

// A body announced longer than the limit fails before it is read; an empty compressed body
// is an empty body; a compressed body cut short by the network is reported as cut short.
func TestBodyEdges(t *testing.T) {
	gz := compressed(t, "gzip", []byte(`{"data":[{"id":1}]}`))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/announced":
			w.Header().Set("Content-Length", strconv.Itoa(DefaultMaxBody+1))
			w.WriteHeader(http.StatusOK)
			w.Write([]byte(`{"data":[`)) // and no more
		case "/empty":
			w.Header().Set("Content-Encoding", "gzip")
		case "/cut":
			w.Header().Set("Content-Encoding", "gzip")
			w.Header().Set("Content-Length", strconv.Itoa(len(gz)))
			w.Write(gz[:len(gz)-10])
		}
	}))
	defer srv.Close()
	c := &Client{HTTP: srv.Client(), Sleep: noWait, MaxRetries: -1}
	h := http.Header{"Accept-Encoding": {"gzip"}}
	_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/announced"})
	if want := "GET URL/announced answered 200 with a body larger than 256 MiB (--max-body raises the limit)"; err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	resp, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/empty", Header: h})
	if err != nil || len(resp.Body) != 0 {
		t.Errorf("an empty gzip body: %v", err)
	}
	_, err = c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/cut", Header: h})
	// The decoder had all the records before the cut (the gzip trailer was lost).
	want := fmt.Sprintf(`GET URL/cut: 200 OK, but the body was cut short after %d bytes (unexpected EOF): "{\"data\":[{\"id\":1}]}"`, len(gz)-10)
	if err == nil || strings.ReplaceAll(err.Error(), srv.URL, "URL") != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
}

// A redirect to a scheme other than http and https fails at once, naming the target with its
// secrets masked.
func TestRedirectToAnotherScheme(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", r.URL.Query().Get("to"))
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	var r redact.Redactor
	r.Add("k3y-s3cret")
	for to, want := range map[string]string{
		"file:///etc/passwd?k=k3y-s3cret": "redirect to file:///etc/passwd?k=**** refused: only http and https URLs are followed",
		"ftp://127.0.0.1/x":               "redirect to ftp://127.0.0.1/x refused: only http and https URLs are followed",
		"gopher://127.0.0.1/x":            "redirect to gopher://127.0.0.1/x refused: only http and https URLs are followed",
	} {
		waits := 0
		c := &Client{HTTP: &http.Client{}, Redactor: &r, MaxRetries: 3,
			Sleep: func(context.Context, time.Duration) error { waits++; return nil }}
		_, err := c.Do(context.Background(), &Request{Method: "GET", URL: srv.URL + "/?to=" + url.QueryEscape(to)})
		var ne *NetError
		if !errors.As(err, &ne) || !ne.Permanent || ne.Err != want {
			t.Errorf("%s:\n got %v\nwant %s", to, err, want)
		}
		if waits != 0 {
			t.Errorf("%s: retried %d times", to, waits)
		}
	}
}

func TestSizes(t *testing.T) {
	for in, want := range map[string]int64{
		"1": 1, "1048576": 1 << 20, "64MiB": 64 << 20, "64mib": 64 << 20, "1GiB": 1 << 30, "1 GiB": 1 << 30, "512KiB": 512 << 10,
		"1.5GiB": 3 << 29, "10MB": 10_000_000, "2kb": 2000, "1G": 1 << 30, "100B": 100,
	} {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "-1", "0", "0.1", "64XB", "1e3", "1..2MiB", "99999999999GiB"} {
		if n, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{256 << 20: "256 MiB", 1 << 30: "1 GiB", 3 << 29: "1536 MiB", 1024: "1 KiB", 1000: "1000 bytes", 1: "1 byte"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}
