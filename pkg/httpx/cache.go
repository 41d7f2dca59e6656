package httpx

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"sync"
	"sync/atomic"
)

// Cache keeps, for one run, the successful answers to the GET requests of the requesters the
// CDK caches (manifest.Cached: the parents of top-level streams, and the top-level streams
// read as parents), and answers the same request again from them. The CDK 7.28.2 does it
// with requests_cache: one store per stream name, a request matched by its method, its URL
// (query sorted), its body and every header; only 200 answers to GET or HEAD kept; nothing
// expires within the run. So does this, with one difference: an answer the error handler
// does not take as a success (a 200 its filters fail, ignore or retry) is not kept, where
// the CDK keeps it and answers its own retries with it.
//
// The answers are written to an unlinked temporary file, not held in memory: the index
// holds a hash of each request (32 bytes) and where its answer is. Limit bounds the file and
// MaxCacheEntries the number of answers; once full, later answers are not kept (Full says so)
// and their requests go to the API again. A Cache is safe for concurrent use. A request whose twin is in flight waits for
// the twin's answer rather than going out too, so that how many requests a run sends does not
// depend on --concurrency (the CDK's threads both send them).
type Cache struct {
	// Dir is where the file goes ("" : the system's temporary folder); Limit bounds it
	// (0: DefaultCacheLimit).
	Dir   string
	Limit int64

	mu    sync.Mutex
	file  *os.File
	size  int64
	index map[[32]byte]cached
	// inflight holds the requests being sent, each with a channel closed when it ends.
	inflight map[[32]byte]chan struct{}
	full     bool
	broken   bool // the file could not be made or written: nothing more is kept

	hits atomic.Int64
}

// DefaultCacheLimit bounds the answers a run keeps, in bytes; MaxCacheEntries bounds their
// number, so that the index (some 100 bytes an answer) stays small too.
const (
	DefaultCacheLimit = 1 << 30
	MaxCacheEntries   = 1 << 18
)

type cached struct {
	off        int64
	meta, body int
}

// cacheMeta is what is kept of an answer besides its body.
type cacheMeta struct {
	Status int         `json:"s"`
	URL    string      `json:"u"`
	Header http.Header `json:"h"`
}

// Hits is how many requests the cache answered.
func (c *Cache) Hits() int64 {
	if c == nil {
		return 0
	}
	return c.hits.Load()
}

// Full says an answer was not kept because the cache had reached its limit.
func (c *Cache) Full() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.full
}

// Close removes the cache's file.
func (c *Cache) Close() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.file == nil {
		return nil
	}
	name := c.file.Name()
	err := c.file.Close()
	_ = os.Remove(name) // already gone where the file could be unlinked when made
	c.file, c.index = nil, nil
	return err
}

// cacheable says whether req may be answered from c.
func (c *Cache) cacheable(req *Request) bool {
	return c != nil && req.CacheAs != "" && req.Sink == nil && (req.Method == http.MethodGet || req.Method == http.MethodHead)
}

// cacheKey is what identifies a request in the cache: the store's name, the method, the URL
// with its query sorted, every header and the body.
func cacheKey(req *Request) [32]byte {
	h := sha256.New()
	field := func(s string) { // length first: no two lists of fields write the same bytes
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		io.WriteString(h, s)
	}
	field(req.CacheAs)
	field(req.Method)
	u := req.URL
	if p, err := url.Parse(req.URL); err == nil {
		p.RawQuery = p.Query().Encode() // sorted by key
		p.Fragment = ""
		u = p.String()
	}
	field(u)
	names := make([]string, 0, len(req.Header))
	for k := range req.Header {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		field(k)
		for _, v := range req.Header[k] {
			field(v)
		}
	}
	field(string(req.Body))
	var key [32]byte
	h.Sum(key[:0])
	return key
}

// lookup returns the answer kept for key, its body read into buf when it fits; or, when the
// same request is in flight, a channel closed when it ends (then look again); or neither:
// the request is now in flight, the caller's to send, and the caller must call release.
func (c *Cache) lookup(key [32]byte, buf []byte) (*Response, <-chan struct{}) {
	c.mu.Lock()
	e, ok := c.index[key]
	f := c.file
	if !ok {
		defer c.mu.Unlock()
		if w, busy := c.inflight[key]; busy {
			return nil, w
		}
		if c.inflight == nil {
			c.inflight = map[[32]byte]chan struct{}{}
		}
		c.inflight[key] = make(chan struct{})
		return nil, nil
	}
	c.mu.Unlock()
	if resp, ok := c.read(f, e, buf); ok {
		return resp, nil
	}
	return nil, nil // unreadable: sent again, not kept again (the key is in the index)
}

// release ends the flight of the request key (lookup gave it to the caller to send).
func (c *Cache) release(key [32]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if w, ok := c.inflight[key]; ok {
		close(w)
		delete(c.inflight, key)
	}
}

// read reads the answer e of the file f.
func (c *Cache) read(f *os.File, e cached, buf []byte) (*Response, bool) {
	meta := make([]byte, e.meta)
	if _, err := f.ReadAt(meta, e.off); err != nil {
		return nil, false
	}
	var m cacheMeta
	if err := json.Unmarshal(meta, &m); err != nil {
		return nil, false
	}
	body := buf[:0]
	if cap(body) < e.body {
		body = make([]byte, e.body)
	}
	body = body[:e.body]
	if _, err := f.ReadAt(body, e.off+int64(e.meta)); err != nil {
		return nil, false
	}
	c.hits.Add(1)
	return &Response{Status: m.Status, Header: m.Header, Body: body, URL: m.URL}, true
}

// put keeps resp as the answer for key.
func (c *Cache) put(key [32]byte, resp *Response) {
	meta, err := json.Marshal(cacheMeta{Status: resp.Status, URL: resp.URL, Header: resp.Header})
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.broken {
		return
	}
	if _, ok := c.index[key]; ok {
		return
	}
	limit := c.Limit
	if limit <= 0 {
		limit = DefaultCacheLimit
	}
	n := int64(len(meta) + len(resp.Body))
	if c.size+n > limit || len(c.index) >= MaxCacheEntries {
		c.full = true
		return
	}
	if c.file == nil {
		f, err := os.CreateTemp(c.Dir, "connector-cache-*")
		if err != nil {
			c.broken = true
			return
		}
		_ = os.Remove(f.Name()) // unlinked: gone with the process, whatever ends it
		c.file, c.index = f, map[[32]byte]cached{}
	}
	if _, err := c.file.WriteAt(meta, c.size); err != nil {
		c.broken = true
		return
	}
	if _, err := c.file.WriteAt(resp.Body, c.size+int64(len(meta))); err != nil {
		c.broken = true
		return
	}
	c.index[key] = cached{off: c.size, meta: len(meta), body: len(resp.Body)}
	c.size += n
}
