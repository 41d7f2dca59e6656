package dev

import (
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"time"
)

// The page: plain HTML, CSS and JavaScript, embedded in the binary; nothing is fetched from
// anywhere else.
//
//go:embed web
var web embed.FS

// TokenHeader is the header that carries the server's token on the page's API calls (the
// event stream, which cannot set headers, carries it as the token query parameter).
const TokenHeader = "X-Connector-Token"

// NewToken returns a new random token for a server.
func NewToken() string {
	b := make([]byte, 16)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Server serves the page and its API for a workspace.
//
// Another page in the same browser must not be able to read the test reads or drive them:
// every API call needs the token, which only the URL printed at the start carries; and a
// request whose Host is not the address served is refused, so that a name an attacker
// points at 127.0.0.1 (DNS rebinding) cannot reach the API as same-origin.
type Server struct {
	ws    *Workspace
	token string
	port  string
	// names are the host names accepted besides IP literals: localhost, and the name the
	// server was told to listen on.
	names map[string]bool
	mux   *http.ServeMux
	// KeepAlive is how often an idle event stream gets a comment (0: 15 s).
	KeepAlive time.Duration
}

// NewServer returns the handler of the page for ws, served at addr (the listener's address,
// host:port) under token. listenHost is the host --addr named, accepted in Host headers when
// it is a name.
func NewServer(ws *Workspace, addr, listenHost, token string) *Server {
	_, port, _ := net.SplitHostPort(addr)
	s := &Server{ws: ws, token: token, port: port, names: map[string]bool{"localhost": true}, mux: http.NewServeMux()}
	if listenHost != "" && net.ParseIP(listenHost) == nil {
		s.names[strings.ToLower(listenHost)] = true
	}
	static, _ := fs.Sub(web, "web")
	files := http.FileServerFS(static)
	s.mux.Handle("GET /{$}", files)
	s.mux.Handle("GET /app.js", files)
	s.mux.Handle("GET /style.css", files)
	s.mux.HandleFunc("GET /api/view", s.api(s.view))
	s.mux.HandleFunc("GET /api/events", s.api(s.events))
	s.mux.HandleFunc("POST /api/choose", s.api(s.choose))
	s.mux.HandleFunc("POST /api/read", s.api(s.readAgain))
	return s
}

// URL is the page's address, token included, for a server listening at addr.
func URL(addr, token string) string {
	return "http://" + addr + "/?token=" + token
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !s.hostAllowed(r.Host) {
		http.Error(w, "connector dev: refused: the Host header names another server than this one", http.StatusMisdirectedRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer") // the page's URL holds the token
	h.Set("Cache-Control", "no-store")
	s.mux.ServeHTTP(w, r)
}

// hostAllowed accepts a Host of this server's port whose host is an IP literal (it cannot
// be rebound), localhost, or the name it was told to listen on.
func (s *Server) hostAllowed(hostport string) bool {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || port != s.port {
		return false
	}
	host = strings.ToLower(host)
	return net.ParseIP(strings.Trim(host, "[]")) != nil || s.names[host]
}

// api wraps an API route: the token is required.
func (s *Server) api(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get(TokenHeader)
		if got == "" && r.URL.Path == "/api/events" {
			got = r.URL.Query().Get("token")
		}
		if subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) != 1 {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "this API needs the token of the URL connector dev printed"})
			return
		}
		h(w, r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	writeRaw(w, status, b)
}

func writeRaw(w http.ResponseWriter, status int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func (s *Server) view(w http.ResponseWriter, r *http.Request) {
	raw := s.ws.Current()
	if raw == nil {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": "the workspace has not loaded yet"})
		return
	}
	writeRaw(w, http.StatusOK, raw)
}

// events streams every new view as a Server-Sent Event "view" whose data is the view.
func (s *Server) events(w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	wake, stop := s.ws.Subscribe()
	defer stop()
	every := s.KeepAlive
	if every <= 0 {
		every = 15 * time.Second
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	var sent []byte
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
			io.WriteString(w, ": still here\n\n")
		case <-wake:
			raw := s.ws.Current()
			if raw == nil || string(raw) == string(sent) {
				continue
			}
			sent = raw
			// The view is compact JSON: one data line.
			io.WriteString(w, "event: view\ndata: ")
			w.Write(raw)
			io.WriteString(w, "\n\n")
		}
		fl.Flush()
	}
}

// decodeBody reads a small JSON body into dst.
func decodeBody(w http.ResponseWriter, r *http.Request, dst any) bool {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
		writeJSON(w, http.StatusUnsupportedMediaType, map[string]string{"error": "send JSON (Content-Type: application/json)"})
		return false
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<10)).Decode(dst); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "the body is not the JSON expected: " + err.Error()})
		return false
	}
	return true
}

func (s *Server) choose(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Stream string `json:"stream"`
		Limits Limits `json:"limits"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	s.answer(w, s.ws.Choose(r.Context(), body.Stream, body.Limits))
}

func (s *Server) readAgain(w http.ResponseWriter, r *http.Request) {
	var body struct {
		FromState bool `json:"from_state"`
	}
	if !decodeBody(w, r, &body) {
		return
	}
	s.answer(w, s.ws.ReadAgain(r.Context(), body.FromState))
}

func (s *Server) answer(w http.ResponseWriter, err error) {
	if err != nil {
		status := http.StatusBadRequest
		if errors.Is(err, errStopped) {
			status = http.StatusServiceUnavailable
		}
		writeJSON(w, status, map[string]string{"error": s.ws.red.String(err.Error())})
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]bool{"ok": true})
}
