package httpx

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"connector/pkg/diag"
)

// DefaultMaxBody is the largest response body read when Client.MaxBody is 0: 256 MiB,
// counted after decompression.
const DefaultMaxBody = 256 << 20

// BodyLimit is the largest response body the client reads: MaxBody, or DefaultMaxBody.
func (c *Client) BodyLimit() int64 {
	if c.MaxBody > 0 {
		return c.MaxBody
	}
	return DefaultMaxBody
}

// errTooLarge is a body longer than the limit.
var errTooLarge = errors.New("body larger than the limit")

// netBody is the body as it comes from the network: it notes how many bytes came and the
// error that cut it short, so that a failure of the network is told from one of decoding.
type netBody struct {
	r   io.Reader
	n   int64
	err error
}

func (b *netBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}

// readResponse reads the body of res, undoing a gzip or deflate Content-Encoding as it
// reads, into memory: reuse when it is large enough. It reads at most limit bytes of the
// decoded body, so a compression bomb stops there; a body announced (Content-Length) longer
// than limit fails before anything is read. The error is errTooLarge for a body over the
// limit; src.err is set when the network cut the body short; any other error is one of
// decoding. decoded says the body was decoded here (the Content-Encoding no longer holds).
// On an error, data is the start of the body when there is one, for the message.
func readResponse(res *http.Response, reuse []byte, limit int64) (data []byte, decoded bool, src *netBody, err error) {
	src = &netBody{r: res.Body}
	var r io.Reader = src
	size := res.ContentLength
	if enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))); enc != "" && !res.Uncompressed {
		dr, err := Decoder(enc, src)
		if err == io.EOF && src.err == nil {
			return []byte{}, false, src, nil // an empty body: nothing to decode
		}
		if err != nil {
			return nil, false, src, err
		}
		if dr != nil {
			r, size, decoded = dr, -1, true
		}
	}
	if size > limit {
		return nil, decoded, src, errTooLarge
	}
	data, err = readBody(r, size, limit, reuse)
	return data, decoded, src, err
}

// Decoder returns a reader of body decoded from a gzip or deflate Content-Encoding (enc in
// lower case), or nil for an encoding it does not know (the body is then kept as it came).
// It reads the stream's header: io.EOF means an empty body.
func Decoder(enc string, body io.Reader) (io.Reader, error) {
	switch enc {
	case "gzip", "x-gzip":
		return gzip.NewReader(body)
	case "deflate":
		// RFC 9110 deflate is zlib-wrapped; some servers send raw deflate. The first two
		// bytes tell them apart.
		br := bufio.NewReader(body)
		head, err := br.Peek(2)
		if len(head) == 0 && err != nil {
			return nil, err
		}
		if zlibHeader(head) {
			return zlib.NewReader(br)
		}
		return flate.NewReader(br), nil
	}
	return nil, nil
}

// zlibHeader reports whether b starts a zlib stream without a preset dictionary (RFC 1950:
// compression method 8, a window of at most 32 KiB, a check on the first two bytes).
func zlibHeader(b []byte) bool {
	return len(b) == 2 && b[0]&0x0f == 8 && b[0]>>4 <= 7 && b[1]&0x20 == 0 && (uint(b[0])<<8|uint(b[1]))%31 == 0
}

// Growth of a body of unknown length: the first buffer, then chunks that double what is read
// so far, up to maxChunk each, then one buffer of the exact length into which the chunks are
// copied. Chunks of mappedChunk bytes or more are memory mapped apart from the Go heap and
// unmapped as soon as they are copied (see newChunk), so a large body costs about its own
// size plus one chunk, not the twice or thrice of a buffer grown by doubling.
const (
	firstBuffer = 64 << 10
	maxChunk    = 8 << 20
)

// readBody reads r to its end into one buffer, at most limit bytes: more is errTooLarge.
// size is the length announced, or -1. reuse is memory to read into when it is large
// enough (see Request.Buffer). On an error it returns the start of the body.
func readBody(r io.Reader, size, limit int64, reuse []byte) ([]byte, error) {
	want := int64(firstBuffer)
	if size >= 0 {
		want = size + 1 // a byte more, so that the read that meets the end has room
	}
	want = min(want, limit+1)
	first := reuse[:0:min(int64(cap(reuse)), limit+1)]
	if int64(cap(first)) < want && (size >= 0 || cap(first) == 0) {
		first = make([]byte, 0, want)
	}
	buf := first
	var chunks []chunk // once first is full: every buffer read into, first first and buf last
	var before int64   // the bytes in the buffers before buf
	defer func() {
		for _, c := range chunks {
			c.free()
		}
	}()
	for {
		if len(buf) == cap(buf) {
			if len(chunks) == 0 {
				chunks = append(chunks, chunk{b: buf})
			} else {
				chunks[len(chunks)-1].b = buf
			}
			before += int64(len(buf))
			c := newChunk(int(min(max(before, firstBuffer), maxChunk, limit+1-before)))
			chunks = append(chunks, c)
			buf = c.b
		}
		k, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+k]
		if before+int64(len(buf)) > limit {
			return first, errTooLarge
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if len(chunks) > 0 {
				return first, err
			}
			return buf, err
		}
	}
	if len(chunks) == 0 {
		return buf, nil
	}
	chunks[len(chunks)-1].b = buf
	out := make([]byte, 0, before+int64(len(buf)))
	for i := range chunks {
		out = append(out, chunks[i].b...)
		chunks[i].free()
		chunks[i] = chunk{}
	}
	return out, nil
}

// FormatSize writes a number of bytes as ParseSize reads it: in GiB, MiB or KiB when it is a
// whole number of them, else in bytes.
func FormatSize(n int64) string {
	for _, u := range sizeUnits {
		if n >= u.n && n%u.n == 0 {
			return strconv.FormatInt(n/u.n, 10) + " " + u.name
		}
	}
	if n == 1 {
		return "1 byte"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}

var sizeUnits = []struct {
	name string
	n    int64
}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}

// ParseSize reads a positive size: a number of bytes, or a number followed by KiB, MiB or
// GiB (powers of 1024), KB, MB or GB (powers of 1000), or B; e.g. 64MiB, 1GiB, 1048576.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	mult := int64(0)
	switch strings.ToLower(unit) {
	case "", "b":
		mult = 1
	case "kib", "k":
		mult = 1 << 10
	case "mib", "m":
		mult = 1 << 20
	case "gib", "g":
		mult = 1 << 30
	case "kb":
		mult = 1e3
	case "mb":
		mult = 1e6
	case "gb":
		mult = 1e9
	}
	f, err := strconv.ParseFloat(num, 64)
	if num == "" || err != nil || mult == 0 {
		return 0, errors.New("not a size: write a number of bytes, or one with KiB, MiB or GiB, e.g. 64MiB")
	}
	n := f * float64(mult)
	if n < 1 || n > 1<<62 {
		return 0, errors.New("out of range: a size is from 1 byte to 4 EiB")
	}
	return int64(n), nil
}

// sink hands the body of res to req.Sink as it arrives: decoded from its Content-Encoding
// and cut at the body limit, so that a download never sits in memory. A failure of the
// network is a *NetError that the error handler may retry (the next attempt's Sink starts
// over); a body over the limit, or one the Sink could not take, is not retried.
func (c *Client) sink(req *Request, res *http.Response, actx context.Context, timeout time.Duration,
	fail func(permanent bool, format string, args ...any) *NetError) (*Response, *NetError) {
	limit := c.BodyLimit()
	src := &netBody{r: res.Body}
	var r io.Reader = src
	size := res.ContentLength
	decoded := false
	if enc := strings.ToLower(strings.TrimSpace(res.Header.Get("Content-Encoding"))); enc != "" && !res.Uncompressed {
		dr, err := Decoder(enc, src)
		switch {
		case err == io.EOF && src.err == nil:
			r = strings.NewReader("") // an empty body: nothing to decode
		case err != nil && src.err == nil:
			return nil, fail(false, "%d %s, but the %s body cannot be decoded: %v", res.StatusCode, http.StatusText(res.StatusCode), enc, err)
		case dr != nil:
			r, size, decoded = dr, -1, true
		}
	}
	tooLarge := func() *NetError {
		ne := fail(true, "a body larger than %s (--max-body raises the limit)", FormatSize(limit))
		ne.Answered = res.StatusCode
		return ne
	}
	if size > limit {
		return nil, tooLarge()
	}
	lr := &limitedBody{r: r, left: limit}
	n, err := req.Sink(lr)
	switch {
	case lr.over:
		return nil, tooLarge()
	case src.err != nil:
		return nil, c.cutShort(req, res, actx, src, timeout)
	case err != nil:
		return nil, fail(true, "%d %s, but the body could not be kept: %v", res.StatusCode, http.StatusText(res.StatusCode), err)
	}
	if decoded {
		res.Header.Del("Content-Encoding")
		res.Header.Del("Content-Length")
	}
	return &Response{Status: res.StatusCode, Header: res.Header, Body: []byte{}, Sunk: n, URL: res.Request.URL.String()}, nil
}

// limitedBody reads r and fails, noting it, once more than left bytes came.
type limitedBody struct {
	r    io.Reader
	left int64
	over bool
}

func (l *limitedBody) Read(p []byte) (int, error) {
	if int64(len(p)) > l.left+1 {
		p = p[:l.left+1]
	}
	n, err := l.r.Read(p)
	l.left -= int64(n)
	if l.left < 0 {
		l.over = true
		return 0, errTooLarge
	}
	return n, err
}

// cutShort is the failure of a body the network cut short (or that did not complete in
// time): how far it came.
func (c *Client) cutShort(req *Request, res *http.Response, actx context.Context, src *netBody, timeout time.Duration) *NetError {
	ne := c.netError(req, actx, src.err, timeout)
	if !ne.Timeout {
		ne.Err = c.Redactor.String(fmt.Sprintf("%d %s, but the body was cut short after %d bytes (%s)",
			res.StatusCode, http.StatusText(res.StatusCode), src.n, cleanURLError(src.err)))
	} else {
		ne.Err = fmt.Sprintf("the body did not complete within %s", diag.Duration(timeout))
		ne.Detail = fmt.Sprintf("%d %s, %d bytes of the body received; --timeout waits longer", res.StatusCode, http.StatusText(res.StatusCode), src.n)
	}
	return ne
}
