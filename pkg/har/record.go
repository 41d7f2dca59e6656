package har

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"connector/pkg/atomicfile"
	"connector/pkg/httpx"
	"connector/pkg/redact"
)

// Options configure a Recorder.
type Options struct {
	Creator Creator
	// Meta is written in the log's _connector field; its Values must already be masked
	// (MaskValues).
	Meta *Meta
	// Redactor is the run's: it knows every secret, and learns the tokens of token and
	// login answers from the Recorder.
	Redactor *redact.Redactor
	// Now is the run's clock (time.Now when nil): the start of each entry.
	Now func() time.Time
	// Tokens are places in the JSON answers of token and login requests where the
	// definition's authenticator finds tokens (session_token_path, access_token_name), with
	// the placeholder name each takes. Values under names such as access_token, token,
	// secret or password are learned as well.
	Tokens []TokenPath
}

// TokenPath is where an answer carries a token, and its placeholder name.
type TokenPath struct {
	Name string
	Path []string
}

// queueLength is how many finished exchanges may wait for the writer before the requests
// that finish next wait for it in turn: memory stays bounded when the disk is slower than
// the API.
const queueLength = 16

// Recorder is an http.RoundTripper that records every exchange it carries (see the package
// documentation). Requests are masked as they are sent; responses are masked and written
// by a goroutine of their own, in the order the requests were sent, while the run goes on.
type Recorder struct {
	next http.RoundTripper
	opts Options
	file *atomicfile.File
	out  *bufio.Writer

	seq    atomic.Int64
	mu     sync.RWMutex // held for reading to queue an exchange, for writing to close
	closed bool
	queue  chan *exchange
	done   chan struct{}

	// Owned by the writer goroutine until done is closed.
	written int
	werr    error
	buf     []byte
}

// exchange is one request on its way to the file: its entry (the request already masked)
// and what came back, raw.
type exchange struct {
	seq    int64
	entry  *Entry
	start  time.Time // monotonic, for the timings
	status int
	proto  string
	header http.Header
	body   []byte
}

// Create starts a recording into path (written only by Close, atomically), recording the
// exchanges next carries.
func Create(path string, next http.RoundTripper, opts Options) (*Recorder, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Redactor == nil {
		opts.Redactor = &redact.Redactor{}
	}
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cannot write the recording %s: %w", path, pathless(err))
	}
	r := &Recorder{next: next, opts: opts, file: f, out: bufio.NewWriterSize(f, 256<<10),
		queue: make(chan *exchange, queueLength), done: make(chan struct{})}
	head, err := appendHead(nil, opts.Creator, opts.Meta)
	if err != nil {
		f.Abort()
		return nil, err
	}
	r.out.Write(head)
	go r.write()
	return r, nil
}

// RoundTrip sends req through the next transport and records the exchange.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	body, err := requestBody(req)
	if err != nil {
		return nil, err
	}
	info := httpx.InfoOf(req.Context())
	x := &exchange{
		seq:   r.seq.Add(1) - 1,
		entry: &Entry{Started: r.opts.Now(), Kind: info.Kind, Stream: info.Stream},
		start: time.Now(),
	}
	x.entry.Request = r.request(req, body)
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		x.entry.Error = r.opts.Redactor.Placeholders(transportError(err))
		x.entry.Time = millis(time.Since(x.start))
		x.entry.Timings.Wait = x.entry.Time
		r.submit(x)
		return nil, err
	}
	x.entry.Timings.Wait = millis(time.Since(x.start))
	x.status, x.proto, x.header = resp.StatusCode, resp.Proto, resp.Header.Clone()
	resp.Body = &capture{ReadCloser: resp.Body, r: r, x: x}
	return resp, nil
}

// requestBody returns the body of req, leaving req able to send it.
func requestBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	if req.GetBody != nil {
		rc, err := req.GetBody()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		return io.ReadAll(rc)
	}
	data, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	req.Body = io.NopCloser(bytes.NewReader(data))
	return data, nil
}

// transportError is the message of a transport error without net/http's "Get \"url\": ".
func transportError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// request masks a request as it is sent: every secret the redactor knows is known by now
// (testing values, tokens in use, values templates derived from them).
func (r *Recorder) request(req *http.Request, body []byte) Request {
	red := r.opts.Redactor
	out := Request{
		Method:      req.Method,
		URL:         red.Placeholders(req.URL.String()),
		HTTPVersion: "HTTP/1.1",
		Cookies:     []NameValue{},
		Headers:     maskHeaders(red, req.Header),
		HeadersSize: -1,
		BodySize:    len(body),
	}
	out.QueryString = queryPairs(out.URL)
	if body != nil {
		out.PostData = &PostData{MimeType: red.Placeholders(req.Header.Get("Content-Type")), Text: red.Placeholders(string(body))}
	}
	return out
}

// maskHeaders lists h sorted by name, each value masked.
func maskHeaders(red *redact.Redactor, h http.Header) []NameValue {
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	out := make([]NameValue, 0, len(h))
	for _, k := range names {
		for _, v := range h[k] {
			out = append(out, NameValue{Name: k, Value: red.HeaderPlaceholders(k, v)})
		}
	}
	return out
}

// queryPairs are the query parameters of raw, decoded, in order.
func queryPairs(raw string) []NameValue {
	out := []NameValue{}
	_, query, ok := strings.Cut(raw, "?")
	if !ok {
		return out
	}
	query, _, _ = strings.Cut(query, "#")
	for part := range strings.SplitSeq(query, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		out = append(out, NameValue{Name: unescape(k), Value: unescape(v)})
	}
	return out
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

// capture keeps the bytes of a response body as the run reads them; the exchange is done
// when the body ends or is closed.
type capture struct {
	io.ReadCloser
	r        *Recorder
	x        *exchange
	once     sync.Once
	finished atomic.Bool
}

func (c *capture) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	if n > 0 && !c.finished.Load() {
		body := c.x.body
		if len(body)+n > cap(body) {
			// Doubling: append grows a large slice by a quarter, copying a page of
			// megabytes many times over.
			grown := make([]byte, len(body), max(2*cap(body), len(body)+n, 32<<10))
			copy(grown, body)
			body = grown
		}
		c.x.body = append(body, p[:n]...)
	}
	if err != nil {
		c.finish()
	}
	return n, err
}

func (c *capture) Close() error {
	c.finish()
	return c.ReadCloser.Close()
}

func (c *capture) finish() {
	c.once.Do(func() {
		c.finished.Store(true)
		e := c.x.entry
		e.Time = millis(time.Since(c.x.start))
		e.Timings.Receive = max(e.Time-e.Timings.Wait, 0)
		switch e.Kind {
		case "token", "login", "validate":
			// The authenticator reads its token from this answer as soon as the body is
			// returned: the tokens are learned first, so that nothing can be written
			// with them, here or in a later entry.
			c.r.learn(c.x)
		}
		c.r.submit(c.x)
	})
}

// submit hands a finished exchange to the writer; after Close it is dropped.
func (r *Recorder) submit(x *exchange) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if !r.closed {
		r.queue <- x
	}
}

// learn registers the tokens of a token or login answer with the redactor: the
// definition's token paths first, then string values under credential names, then the
// values of credential headers.
func (r *Recorder) learn(x *exchange) {
	red := r.opts.Redactor
	body, _, err := decodedBody(x.header, x.body)
	if err == nil {
		var doc any
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if dec.Decode(&doc) == nil {
			for _, tp := range r.opts.Tokens {
				if s, ok := lookup(doc, tp.Path); ok {
					red.AddAs(tp.Name, s)
				}
			}
			walkTokens(doc, "", red)
		}
	}
	names := make([]string, 0, len(x.header))
	for k := range x.header {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if tokenHeader(k) {
			for _, v := range x.header[k] {
				if len(v) >= minToken {
					red.AddAs(strings.ToLower(k), v)
				}
			}
		}
	}
}

// minToken is the shortest value taken for a token by its name alone.
const minToken = 8

// lookup follows path (keys, or list indexes) in doc to a string or number.
func lookup(doc any, path []string) (string, bool) {
	for _, k := range path {
		switch x := doc.(type) {
		case map[string]any:
			doc = x[k]
		case []any:
			i, err := parseIndex(k, len(x))
			if err != nil {
				return "", false
			}
			doc = x[i]
		default:
			return "", false
		}
	}
	switch x := doc.(type) {
	case string:
		return x, x != ""
	case json.Number:
		return x.String(), true
	}
	return "", false
}

func parseIndex(s string, n int) (int, error) {
	var i int
	if _, err := fmt.Sscanf(s, "%d", &i); err != nil {
		return 0, err
	}
	if i < 0 {
		i += n
	}
	if i < 0 || i >= n {
		return 0, errors.New("out of range")
	}
	return i, nil
}

// walkTokens registers the strings of doc held under a credential name.
func walkTokens(doc any, key string, red *redact.Redactor) {
	switch x := doc.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			walkTokens(x[k], k, red)
		}
	case []any:
		for _, e := range x {
			walkTokens(e, key, red)
		}
	case string:
		if len(x) >= minToken && CredentialKey(key) {
			red.AddAs(key, x)
		}
	}
}

// CredentialKey reports a key whose string value is a credential: access_token, token,
// client_secret, password, api_key, session_id; not token_type, expires_at or scope.
func CredentialKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range []string{"type", "expir", "scope", "date", "time", "url", "uri"} {
		if strings.Contains(k, w) {
			return false
		}
	}
	for _, w := range []string{"token", "secret", "password", "passwd", "apikey", "api_key", "session_id", "sessionid"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}

// tokenHeader reports a response header that may carry a credential (X-Session-Token,
// X-Api-Key).
func tokenHeader(name string) bool {
	n := strings.ToLower(name)
	if strings.HasPrefix(n, "content-") || n == "www-authenticate" || n == "set-cookie" {
		return false
	}
	for _, w := range []string{"token", "session", "key", "secret", "auth"} {
		if strings.Contains(n, w) {
			return true
		}
	}
	return false
}

// decodedBody undoes a gzip or deflate Content-Encoding of body; decoded says it did.
func decodedBody(h http.Header, body []byte) (out []byte, decoded bool, err error) {
	enc := strings.ToLower(strings.TrimSpace(h.Get("Content-Encoding")))
	if enc == "" || enc == "identity" || len(body) == 0 {
		return body, false, nil
	}
	dr, err := httpx.Decoder(enc, bytes.NewReader(body))
	if err != nil || dr == nil {
		if err == nil {
			err = fmt.Errorf("unknown Content-Encoding %q", enc)
		}
		return body, false, err
	}
	out, err = io.ReadAll(dr)
	if err != nil {
		return body, false, err
	}
	return out, true, nil
}

// write is the writer goroutine: it masks each finished exchange and writes it, in the
// order the requests were sent.
func (r *Recorder) write() {
	defer close(r.done)
	waiting := map[int64]*exchange{}
	var next int64
	for x := range r.queue {
		waiting[x.seq] = x
		for {
			y, ok := waiting[next]
			if !ok {
				break
			}
			delete(waiting, next)
			r.writeEntry(y)
			next++
		}
	}
	// Requests that never finished leave gaps: what remains goes in order.
	rest := make([]int64, 0, len(waiting))
	for seq := range waiting {
		rest = append(rest, seq)
	}
	slices.Sort(rest)
	for _, seq := range rest {
		r.writeEntry(waiting[seq])
	}
}

func (r *Recorder) writeEntry(x *exchange) {
	if r.werr != nil {
		return
	}
	e := x.entry
	if e.Error == "" {
		e.Response = r.response(x)
	} else {
		e.Response = Response{HTTPVersion: "", Cookies: []NameValue{}, Headers: []NameValue{}, HeadersSize: -1, BodySize: -1}
	}
	r.buf = r.buf[:0]
	if r.written > 0 {
		r.buf = append(r.buf, ',')
	}
	r.buf = append(r.buf, '\n')
	r.buf = appendEntry(r.buf, e)
	if _, err := r.out.Write(r.buf); err != nil {
		r.werr = err
		return
	}
	r.written++
	if cap(r.buf) > 1<<20 {
		r.buf = nil // one large body does not hold its memory for the rest of the run
	}
}

// response masks what came back. A compressed body is kept decoded, so that its secrets are
// found; a body that is not UTF-8 is kept in base64.
func (r *Recorder) response(x *exchange) Response {
	red := r.opts.Redactor
	body, decoded, _ := decodedBody(x.header, x.body)
	h := x.header
	if decoded {
		h = h.Clone()
		h.Del("Content-Encoding")
		h.Del("Content-Length")
	}
	// body is not written again: a view of it spares a copy of each page.
	text := red.Placeholders(unsafe.String(unsafe.SliceData(body), len(body)))
	if h.Get("Content-Length") != "" {
		h = h.Clone()
		h.Set("Content-Length", strconv.Itoa(len(text)))
	}
	content := Content{Size: len(text), MimeType: red.Placeholders(h.Get("Content-Type")), Text: text}
	if !utf8.ValidString(text) {
		content.Text, content.Encoding = base64.StdEncoding.EncodeToString([]byte(text)), "base64"
	}
	proto := x.proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	return Response{
		Status:      x.status,
		StatusText:  http.StatusText(x.status),
		HTTPVersion: proto,
		Cookies:     []NameValue{},
		Headers:     maskHeaders(red, h),
		Content:     content,
		RedirectURL: red.Placeholders(h.Get("Location")),
		HeadersSize: -1,
		BodySize:    len(text),
	}
}

// Close waits for the exchanges under way to be written, ends the file and puts it in
// place atomically. It returns how many exchanges were recorded. Requests still running
// after Close are not recorded.
func (r *Recorder) Close() (int, error) {
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return r.written, errors.New("the recording is closed")
	}
	r.closed = true
	close(r.queue)
	r.mu.Unlock()
	<-r.done
	if r.werr == nil {
		tail := "\n    ]\n  }\n}\n"
		if r.written == 0 {
			tail = "]\n  }\n}\n"
		}
		r.out.WriteString(tail)
		r.werr = r.out.Flush()
	}
	if r.werr != nil {
		r.file.Abort()
		return r.written, fmt.Errorf("cannot write the recording: %w", r.werr)
	}
	if err := r.file.Commit(); err != nil {
		return r.written, fmt.Errorf("cannot write the recording: %w", err)
	}
	return r.written, nil
}

// millis is d in milliseconds.
func millis(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// MaskValues returns a copy of the testing values v with every secret in its strings
// replaced by its placeholder.
func MaskValues(v any, red *redact.Redactor) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = MaskValues(e, red)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = MaskValues(e, red)
		}
		return out
	case string:
		return red.Placeholders(x)
	case nil, bool:
		return v
	}
	// A secret number (a PIN) is registered by its text: it becomes the text of its
	// placeholder, which the specification may refuse in a replay, but never shows.
	if text := fmt.Sprint(v); red.Contains(text) {
		return red.Placeholders(text)
	}
	return v
}
