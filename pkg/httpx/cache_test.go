package httpx

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// cacheAPI answers every request with its own method, path and query, and logs it.
type cacheAPI struct {
	mu   sync.Mutex
	log  []string
	hold chan struct{} // when set, each answer waits for it to be closed
}

func (a *cacheAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a.mu.Lock()
	a.log = append(a.log, r.Method+" "+r.URL.RequestURI())
	hold := a.hold
	a.mu.Unlock()
	if hold != nil {
		<-hold
	}
	status := http.StatusOK
	if r.URL.Query().Get("status") != "" {
		fmt.Sscan(r.URL.Query().Get("status"), &status)
	}
	w.Header().Set("X-Answer", r.URL.RawQuery)
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"asked": %q}`, r.Method+" "+r.URL.RequestURI())
}

func (a *cacheAPI) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.log...)
}

// cachedClient is a client with a cache of its own (limit 0: the default) sending to a new
// server in front of api; its base URL is returned with it.
func cachedClient(t *testing.T, api *cacheAPI, limit int64) (*Client, *Cache, string) {
	t.Helper()
	srv := httptest.NewServer(api)
	t.Cleanup(srv.Close)
	cache := &Cache{Limit: limit}
	t.Cleanup(func() { cache.Close() })
	return &Client{HTTP: srv.Client(), MaxRetries: -1, Cache: cache}, cache, srv.URL
}

func cacheGet(t *testing.T, c *Client, base, uri, cacheAs string, header http.Header) (*Response, error) {
	t.Helper()
	if header == nil {
		header = http.Header{}
	}
	return c.Do(context.Background(), &Request{Kind: "data", Method: "GET", URL: base + uri, Header: header, CacheAs: cacheAs})
}

// What the cache answers and what it sends, as the CDK's requests_cache session does for a
// cached stream: the same GET (its query in any order) once; another header, another store
// or another path goes out; a request that names no store is never cached.
func TestCacheAnswersTheSameRequest(t *testing.T) {
	api := &cacheAPI{}
	c, cache, base := cachedClient(t, api, 0)
	var seen []Exchange
	c.Observe = func(e Exchange) { seen = append(seen, e) }
	get := func(uri, as string, h http.Header) *Response {
		t.Helper()
		resp, err := cacheGet(t, c, base, uri, as, h)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := get("/items?a=1&b=2", "items", nil)
	again := get("/items?b=2&a=1", "items", nil)
	if string(again.Body) != string(first.Body) || again.Status != 200 || again.Header.Get("X-Answer") != "a=1&b=2" ||
		again.URL != first.URL {
		t.Errorf("the cached answer: %d %q %v %s; the first: %q %s", again.Status, again.Body, again.Header, again.URL, first.Body, first.URL)
	}
	get("/items?a=1&b=2", "items", http.Header{"Authorization": {"Bearer other"}})
	get("/items?a=1&b=2", "other", nil)
	get("/items?a=1&b=2", "", nil)
	get("/items?a=1&b=2", "", nil)
	get("/items?a=1&b=2", "items", http.Header{"Authorization": {"Bearer other"}})
	want := []string{"GET /items?a=1&b=2", "GET /items?a=1&b=2", "GET /items?a=1&b=2", "GET /items?a=1&b=2", "GET /items?a=1&b=2"}
	if got := api.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the API received\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if cache.Hits() != 2 {
		t.Errorf("%d hits, want 2", cache.Hits())
	}
	var cached []bool
	for _, e := range seen {
		cached = append(cached, e.Cached)
	}
	if fmt.Sprint(cached) != "[false true false false false false true]" {
		t.Errorf("exchanges marked cached: %v", cached)
	}
	if e := seen[1]; e.Status != 200 || e.Action != "SUCCESS" || e.Size != len(first.Body) || string(e.RespBody) != string(first.Body) {
		t.Errorf("the cached exchange: %+v", e)
	}
}

// Only a 200 answer to a GET the error handler takes as a success is kept: another status,
// a failure, a POST go out every time.
func TestCacheKeepsOnly200(t *testing.T) {
	api := &cacheAPI{}
	c, _, base := cachedClient(t, api, 0)
	for range 2 {
		cacheGet(t, c, base, "/x?status=201", "s", nil)
		if _, err := cacheGet(t, c, base, "/x?status=404", "s", nil); err == nil {
			t.Fatal("a 404 succeeded")
		}
		if _, err := c.Do(context.Background(), &Request{Kind: "data", Method: "POST", URL: base + "/x", CacheAs: "s"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := api.requests(); len(got) != 6 {
		t.Errorf("the API received %d requests, want 6: %v", len(got), got)
	}
}

// Once the answers kept reach Limit, later ones are not kept (Full); those kept still answer.
func TestCacheLimit(t *testing.T) {
	api := &cacheAPI{}
	c, cache, base := cachedClient(t, api, 200)
	for range 2 {
		for _, uri := range []string{"/a", "/bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"} {
			if _, err := cacheGet(t, c, base, uri, "s", nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	if got := api.requests(); len(got) != 3 || got[0] != "GET /a" || got[2] == "GET /a" {
		t.Errorf("the API received %v, want /a once and the long path twice", got)
	}
	if !cache.Full() {
		t.Error("Full() is false after an answer was not kept")
	}
}

// Requests that are the same and go out together: one is sent, the others wait for its
// answer, whatever their number.
func TestCacheSendsTwinsOnce(t *testing.T) {
	api := &cacheAPI{hold: make(chan struct{})}
	c, cache, base := cachedClient(t, api, 0)
	var wg sync.WaitGroup
	bodies := make([]string, 8)
	for i := range bodies {
		wg.Go(func() {
			resp, err := cacheGet(t, c, base, "/same", "s", nil)
			if err != nil {
				t.Error(err)
				return
			}
			bodies[i] = string(resp.Body)
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(api.requests()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	time.Sleep(20 * time.Millisecond) // the others reach the cache and wait
	close(api.hold)
	wg.Wait()
	if got := api.requests(); len(got) != 1 {
		t.Errorf("the API received %d requests, want 1", len(got))
	}
	for i, b := range bodies {
		if b != `{"asked": "GET /same"}` {
			t.Errorf("request %d: body %q", i, b)
		}
	}
	if cache.Hits() != 7 {
		t.Errorf("%d hits, want 7", cache.Hits())
	}
}

// A twin whose request fails is sent again by a waiting one, and a wait ends with its context.
func TestCacheWaitAfterAFailure(t *testing.T) {
	api := &cacheAPI{}
	c, cache, base := cachedClient(t, api, 0)
	for range 2 {
		if _, err := cacheGet(t, c, base, "/x?status=500", "s", nil); err == nil {
			t.Fatal("a 500 succeeded")
		}
	}
	if got := api.requests(); len(got) != 2 {
		t.Errorf("the API received %v, want the failing request twice", got)
	}
	// A request in flight that never ends: its twin gives up with its context.
	key := cacheKey(&Request{Method: "GET", URL: base + "/stuck", CacheAs: "s", Header: http.Header{}})
	if resp, wait := cache.lookup(key, nil); resp != nil || wait != nil {
		t.Fatal("the first lookup of a request is not its sender's")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	_, err := c.Do(ctx, &Request{Kind: "data", Method: "GET", URL: base + "/stuck", Header: http.Header{}, CacheAs: "s"})
	if err != context.DeadlineExceeded {
		t.Errorf("the twin's wait ended with %v, want its context's end", err)
	}
	cache.release(key)
}

// An answer from the cache costs the API budget nothing: the pacer is not asked.
func TestCacheHitIsNotPaced(t *testing.T) {
	api := &cacheAPI{}
	c, _, base := cachedClient(t, api, 0)
	p := &countingPacer{}
	c.Pacer = p
	for range 3 {
		if _, err := cacheGet(t, c, base, "/x", "s", nil); err != nil {
			t.Fatal(err)
		}
	}
	if p.acquired != 1 {
		t.Errorf("the pacer was asked %d times, want 1", p.acquired)
	}
}

// Once MaxCacheEntries answers are kept, the next is not (Full), and is asked for again.
func TestCacheEntryLimit(t *testing.T) {
	api := &cacheAPI{}
	c, cache, base := cachedClient(t, api, 0)
	// Fill the index as put would, without as many requests.
	key0 := cacheKey(&Request{Method: "GET", URL: base + "/first", CacheAs: "s", Header: http.Header{}})
	if _, err := cacheGet(t, c, base, "/first", "s", nil); err != nil {
		t.Fatal(err)
	}
	cache.mu.Lock()
	for i := len(cache.index); i < MaxCacheEntries; i++ {
		cache.index[[32]byte{byte(i), byte(i >> 8), byte(i >> 16), 1}] = cached{}
	}
	cache.mu.Unlock()
	for range 2 {
		if _, err := cacheGet(t, c, base, "/second", "s", nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cacheGet(t, c, base, "/first", "s", nil); err != nil {
		t.Fatal(err)
	}
	if got := api.requests(); len(got) != 3 || got[1] != "GET /second" || got[2] != "GET /second" {
		t.Errorf("the API received %v, want /first once and /second twice", got)
	}
	if !cache.Full() {
		t.Error("Full() is false after an answer was not kept")
	}
	if _, ok := cache.index[key0]; !ok {
		t.Error("the first answer is gone")
	}
}
