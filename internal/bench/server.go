package main

import (
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// token is the Bearer token the generator server accepts.
const token = "bench-secret-token"

// generator serves `total` records, `pageSize` per page, in three pagination styles:
//
//	/offset?offset=N&limit=L   {"data":[…]}
//	/page?page=P&per_page=L    {"data":[…]}            (pages count from 1)
//	/cursor?cursor=C&limit=L   {"data":[…],"next":"C'"} ("next":null on the last page)
//
// A page is rendered once, at start, with fixed-width id slots; a request copies that page
// and writes the ids into the slots, so serving costs a memcpy and no JSON encoding.
type generator struct {
	total, pageSize int
	delay           time.Duration

	page  []byte // pageSize records after `{"data":[`, each followed by ','
	ends  []int  // ends[i]: the end of record i in page (before its comma)
	slots [][]int
	pool  sync.Pool

	srv      *http.Server
	addr     string
	first    atomic.Int64 // unix nanoseconds of the first request since reset
	requests atomic.Int64
}

// idWidth is the width of the zero-padded id written into every slot.
const idWidth = 10

// recordTemplate is one record of about 300 bytes; each # marks an id slot.
const recordTemplate = `{"id":"#","name":"Customer #","email":"customer#@example.com","active":true,` +
	`"score":12345.678,"created_at":"2024-01-15T10:30:00Z","tags":["alpha","beta","gamma"],` +
	`"address":{"street":"123 Main Street","city":"Springfield","zip":"12345","country":"US"},` +
	`"balance":98765432109876543210,"notes":"lorem ipsum dolor sit amet"}`

func newGenerator(total, pageSize int, delay time.Duration) (*generator, error) {
	g := &generator{total: total, pageSize: pageSize, delay: delay}
	g.render()
	g.pool.New = func() any { b := make([]byte, 0, len(g.page)+64); return &b }
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	g.addr = "http://" + ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/offset", g.offset)
	mux.HandleFunc("/page", g.pageNumber)
	mux.HandleFunc("/cursor", g.cursor)
	mux.HandleFunc("/parents", g.parentsPage)
	mux.HandleFunc("/children", g.children)
	mux.HandleFunc("/daily", g.daily)
	g.srv = &http.Server{Handler: mux}
	go g.srv.Serve(ln)
	return g, nil
}

func (g *generator) close() { g.srv.Close() }

func (g *generator) render() {
	g.page = g.page[:0]
	for i := 0; i < g.pageSize; i++ {
		var slots []int
		for _, c := range []byte(recordTemplate) {
			if c == '#' {
				slots = append(slots, len(g.page))
				for range idWidth {
					g.page = append(g.page, '0')
				}
				continue
			}
			g.page = append(g.page, c)
		}
		g.ends = append(g.ends, len(g.page))
		g.slots = append(g.slots, slots)
		g.page = append(g.page, ',')
	}
}

// reset forgets the first request, before a new measured run.
func (g *generator) reset() {
	g.first.Store(0)
	g.requests.Store(0)
}

// firstRequest is when the first request since reset arrived.
func (g *generator) firstRequest() time.Time { return time.Unix(0, g.first.Load()) }

func (g *generator) arrive(w http.ResponseWriter, r *http.Request) bool {
	g.first.CompareAndSwap(0, time.Now().UnixNano())
	g.requests.Add(1)
	if r.Header.Get("Authorization") != "Bearer "+token {
		http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		return false
	}
	if g.delay > 0 {
		time.Sleep(g.delay)
	}
	return true
}

func intParam(r *http.Request, name string, def int) int {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return def
	}
	return n
}

func (g *generator) offset(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	g.write(w, intParam(r, "offset", 0), intParam(r, "limit", g.pageSize), "")
}

func (g *generator) pageNumber(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	limit := intParam(r, "per_page", g.pageSize)
	page := max(intParam(r, "page", 1), 1)
	g.write(w, (page-1)*limit, limit, "")
}

func (g *generator) cursor(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	start := 0
	if c := r.URL.Query().Get("cursor"); len(c) > 1 {
		start, _ = strconv.Atoi(c[1:])
	}
	limit := intParam(r, "limit", g.pageSize)
	next := "null"
	if start+limit < g.total {
		next = `"c` + strconv.Itoa(start+limit) + `"`
	}
	g.write(w, start, limit, next)
}

// Partitioned reads: /parents?offset=N&limit=L serves the first `parents` records as the
// parent stream (offset pagination); /children?parent=ID serves the `perParent` records of
// that parent, one page.
const (
	parents   = 1000
	perParent = 5
)

func (g *generator) parentsPage(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	start := intParam(r, "offset", 0)
	limit := min(intParam(r, "limit", g.pageSize), parents-start)
	g.write(w, start, max(limit, 0), "")
}

func (g *generator) children(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	id, err := strconv.Atoi(r.URL.Query().Get("parent"))
	if err != nil || id < 1 {
		http.Error(w, `{"error":"no parent"}`, http.StatusBadRequest)
		return
	}
	g.write(w, (id-1)*perParent, perParent, "")
}

// write answers with the records [start, start+limit) that exist; next, when not empty, is
// the JSON value of the body's "next" property.
func (g *generator) write(w http.ResponseWriter, start, limit int, next string) {
	limit = min(limit, g.pageSize)
	n := max(min(limit, g.total-start), 0)
	bp := g.pool.Get().(*[]byte)
	b := append((*bp)[:0], `{"data":[`...)
	if n > 0 {
		base := len(b)
		b = append(b, g.page[:g.ends[n-1]]...)
		for i := range n {
			id := start + i + 1
			for _, at := range g.slots[i] {
				putID(b[base+at:base+at+idWidth], id)
			}
		}
	}
	b = append(b, ']')
	if next != "" {
		b = append(b, `,"next":`...)
		b = append(b, next...)
	}
	b = append(b, '}')
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	*bp = b
	g.pool.Put(bp)
}

// putID writes id zero-padded into dst.
func putID(dst []byte, id int) {
	for i := len(dst) - 1; i >= 0; i-- {
		dst[i] = byte('0' + id%10)
		id /= 10
	}
}

// Incremental reads: /daily?since=S&until=U serves the `perDay` records of every day of
// `days` days from firstDay whose updated_at is within [S, U] (both inclusive, format
// 2006-01-02T15:04:05Z), one page, no pagination: a stream sliced by day asks once a day.
const (
	days      = 365
	perDay    = 10
	dayFormat = "2006-01-02T15:04:05Z"
)

var firstDay = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

func (g *generator) daily(w http.ResponseWriter, r *http.Request) {
	if !g.arrive(w, r) {
		return
	}
	since, err1 := time.Parse(dayFormat, r.URL.Query().Get("since"))
	until, err2 := time.Parse(dayFormat, r.URL.Query().Get("until"))
	if err1 != nil || err2 != nil {
		http.Error(w, `{"error":"since and until are required"}`, http.StatusBadRequest)
		return
	}
	b := []byte(`{"data":[`)
	n := 0
	step := 24 * time.Hour / perDay
	for i := range days * perDay {
		at := firstDay.Add(time.Duration(i) * step)
		if at.Before(since) || at.After(until) {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = fmt.Appendf(b, `{"id":%d,"updated_at":"%s","name":"Customer %d","email":"customer%d@example.com",`+
			`"score":12345.678,"tags":["alpha","beta"],"balance":98765432109876543210}`, i+1, at.Format(dayFormat), i+1, i+1)
	}
	b = append(b, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
}
