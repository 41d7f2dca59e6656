package demoapi

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Defaults used when the matching Options field is zero, and the bounds of
// the page-size parameters.
const (
	DefaultAccessTokenTTL = time.Hour
	DefaultSessionTTL     = 30 * time.Minute
	DefaultRecords        = 250
	DefaultLimit          = 25  // limit / per_page when the request sends none
	MaxLimit              = 100 // larger limit / per_page values are refused with 400
)

// Demo credentials. They are public on purpose: the demo API exists so that
// every authentication method can be tried offline.
const (
	DemoUsername             = "demo"
	DemoPassword             = "demo-password"
	DemoReaderUsername       = "reader" // Basic HTTP account whose password is empty
	DemoBearerToken          = "demo-bearer-token"
	DemoAPIKey               = "demo-api-key"
	DemoClientID             = "demo-client"
	DemoClientSecret         = "demo-client-secret"
	DemoRefreshToken         = "demo-refresh-token"          // reusable, for /oauth/token and /oauth/dated/token
	DemoRotatingRefreshToken = "demo-rotating-refresh-token" // first single-use token of /oauth/rotating/token
)

// Options configure the demo server. Zero values give the documented defaults.
type Options struct {
	Now            func() time.Time // clock for token expiry (default time.Now)
	AccessTokenTTL time.Duration    // OAuth access token lifetime (default 1h)
	SessionTTL     time.Duration    // session token lifetime (default 30m)
	Records        int              // records of books and authors (default 250)
	Events         int              // records of events and reviews (default 500)
	Log            io.Writer        // if non-nil, one line per request: "GET /v1/... 200"
	// QuotaWindow is how long a quota window of the area "quota" lasts (default 1m).
	QuotaWindow time.Duration
}

// Stats are counters tests can assert on. They only grow.
type Stats struct {
	Requests                int // every request received
	DataRequests            int // requests to a collection answered with 200
	Unauthorized            int // responses with status 401 (any endpoint)
	RefreshTokenGrants      int // successful grant_type=refresh_token requests, all token endpoints
	ClientCredentialsGrants int // successful grant_type=client_credentials requests
	TokenErrors             int // refused token requests (4xx from a token endpoint)
	Logins                  int // successful session logins
	FailedLogins            int // refused session logins
}

// TokenRequest describes one request received by a token endpoint, so tests
// can check how a client talked to it.
type TokenRequest struct {
	Endpoint    string   // request path, e.g. "/oauth/token"
	ContentType string   // "json", "form" or the media type received
	GrantType   string   // grant_type as received
	ClientID    string   // client_id as received (body or Basic header)
	Scopes      []string // requested scopes, nil when none were sent
	Status      int      // status of the answer
}

// Server is the demo API with state inspection for tests. Use New.
type Server struct {
	opts            Options
	collections     map[string]*collection
	byAuthor        map[int]*collection // the books of each author id
	reviewsByAuthor map[int]*collection // the reviews of each author id

	mu           sync.Mutex
	stats        Stats
	accessTokens map[string]time.Time // token → expiry
	sessions     map[string]time.Time // token → expiry
	usedRotating map[string]bool      // rotating refresh tokens already spent
	issued       int                  // counter behind access and session token names
	flaky        map[string]int       // key → failures served by /v1/errors/flaky
	tokenLog     []TokenRequest
	codes        map[string]authCode // authorization codes from /oauth/authorize
	jobs         jobStore            // report jobs of /v1/{area}/jobs
	quotaStart   time.Time           // first request of the area "quota": its windows start there
	quotaReset   time.Time           // end of the window quotaUsed counts
	quotaUsed    map[string]int      // calls of each token of the area "quota" in the window

	logMu sync.Mutex
}

// New returns a demo server with fresh state.
func New(opts Options) *Server {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.AccessTokenTTL <= 0 {
		opts.AccessTokenTTL = DefaultAccessTokenTTL
	}
	if opts.SessionTTL <= 0 {
		opts.SessionTTL = DefaultSessionTTL
	}
	if opts.Records <= 0 {
		opts.Records = DefaultRecords
	}
	if opts.Events <= 0 {
		opts.Events = DefaultEvents
	}
	collections := newCollections(opts.Records)
	events, reviews := timedCollections(opts.Events)
	collections["events"], collections["reviews"] = events, reviews
	return &Server{
		opts:            opts,
		collections:     collections,
		byAuthor:        booksByAuthor(opts.Records),
		reviewsByAuthor: reviewsByAuthor(reviews),
		accessTokens:    map[string]time.Time{},
		sessions:        map[string]time.Time{},
		usedRotating:    map[string]bool{},
		flaky:           map[string]int{},
	}
}

// Handler returns the demo API as an http.Handler (for httptest.NewServer in tests).
func Handler(opts Options) http.Handler { return New(opts) }

// Stats returns a copy of the counters.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// TokenRequests returns every request received by the token endpoints, oldest first.
func (s *Server) TokenRequests() []TokenRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]TokenRequest, len(s.tokenLog))
	for i, t := range s.tokenLog {
		t.Scopes = append([]string(nil), t.Scopes...)
		out[i] = t
	}
	return out
}

// ServeHTTP routes one request and records it in Stats and the log.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	s.route(rec, r)
	s.mu.Lock()
	s.stats.Requests++
	if rec.status == http.StatusUnauthorized {
		s.stats.Unauthorized++
	}
	if rec.data && rec.status == http.StatusOK {
		s.stats.DataRequests++
	}
	s.mu.Unlock()
	if s.opts.Log != nil {
		s.logMu.Lock()
		fmt.Fprintf(s.opts.Log, "%s %s %d\n", r.Method, redactURI(r.URL), rec.status)
		s.logMu.Unlock()
	}
}

func (s *Server) route(w *recorder, r *http.Request) {
	p := r.URL.Path
	switch {
	case p == "/":
		s.index(w, r)
	case p == "/oauth/authorize":
		s.authorize(w, r)
	case p == "/oauth/code/token":
		s.codeToken(w, r)
	case p == "/oauth/token":
		s.token(w, r, grantPlain)
	case p == "/oauth/rotating/token":
		s.token(w, r, grantRotating)
	case p == "/oauth/dated/token":
		s.token(w, r, grantDated)
	case p == "/auth/login":
		s.login(w, r)
	case strings.HasPrefix(p, "/v1/quota/") && !isJobPath(p):
		s.quota(w, r)
	case strings.HasPrefix(p, "/v1/errors/"):
		s.errorHelpers(w, r)
	case strings.HasPrefix(p, "/v1/") && isFilesPath(p):
		s.files(w, r)
	case strings.HasPrefix(p, "/v1/") && isJobPath(p):
		s.reportJobs(w, r)
	case strings.HasPrefix(p, "/v1/") && strings.Count(p, "/") == 3 && strings.HasSuffix(p, "/tables"):
		s.tables(w, r)
	case strings.HasPrefix(p, "/v1/"):
		s.data(w, r)
	default:
		writeError(w, http.StatusNotFound, "not_found", "no such endpoint: "+p+" (GET / lists the endpoints)")
	}
}

// data serves /v1/{area}/{collection}[/{style}] and /v1/{area}/authors/{id}/{books|reviews}[/{style}].
func (s *Server) data(w *recorder, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	author := 0 // the author of /v1/{area}/authors/{id}/books or /reviews
	if len(parts) >= 4 && parts[1] == "authors" && (parts[3] == "books" || parts[3] == "reviews") {
		id, err := strconv.Atoi(parts[2])
		if err != nil || id < 1 {
			writeError(w, http.StatusNotFound, "not_found", "expected /v1/{area}/authors/{id}/"+parts[3]+"[/{pagination}] with a numeric id, got "+quote(parts[2]))
			return
		}
		author = id
		parts = append([]string{parts[0], parts[3]}, parts[4:]...)
	}
	if len(parts) < 2 || len(parts) > 3 {
		writeError(w, http.StatusNotFound, "not_found", "expected /v1/{area}/{collection}[/{pagination}] or /v1/{area}/authors/{id}/books[/{pagination}]")
		return
	}
	check, ok := areas[parts[0]]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown area "+quote(parts[0]))
		return
	}
	c, ok := s.collections[parts[1]]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown collection "+quote(parts[1]))
		return
	}
	name := "offset"
	if len(parts) == 3 {
		name = parts[2]
	}
	style, ok := styles[name]
	if !ok {
		writeError(w, http.StatusNotFound, "not_found", "unknown pagination style "+quote(name))
		return
	}
	q, ok := s.admit(w, r, check, http.MethodGet, http.MethodPost)
	if !ok {
		return
	}
	var err *apiError
	if c.name == "books" || c.name == "reviews" {
		if c, err = s.authorFilter(q, author, c); err != nil {
			err.write(w)
			return
		}
	}
	if c, err = timeFilter(q, c); err != nil {
		err.write(w)
		return
	}
	w.data = true
	if err := style(w, r, q, c); err != nil {
		err.write(w)
	}
}

// authorFilter narrows the books (or reviews) to those of one author: the author of the
// path (author > 0), or the author_id parameter. An author that does not exist is a 404;
// one without books has an empty list.
func (s *Server) authorFilter(q *request, author int, books *collection) (*collection, *apiError) {
	text, given, err := q.param("author_id")
	if err != nil {
		return nil, err
	}
	switch {
	case given && author > 0:
		return nil, badRequest("author_id given twice: in the path and as a parameter")
	case given:
		id, convErr := strconv.Atoi(strings.TrimSpace(text))
		if convErr != nil || id < 1 {
			return nil, badRequest("author_id must be an integer >= 1, got %q", text)
		}
		author = id
	case author == 0:
		return books, nil
	}
	if author > s.opts.Records {
		return nil, &apiError{status: http.StatusNotFound, code: "not_found", message: fmt.Sprintf("no author %d (authors are 1 to %d)", author, s.opts.Records)}
	}
	return s.childOf(books.name, author), nil
}

func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet {
		writeError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use GET")
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	io.WriteString(w, indexText)
}

const indexText = `connector demo API: a fictional bookshop. Demo values only.

Data:     GET|POST /v1/{area}/{collection}[/{pagination}]
          GET|POST /v1/{area}/authors/{id}/books[/{pagination}]   (or books?author_id=id)
          GET|POST /v1/{area}/authors/{id}/reviews[/{pagination}] (or reviews?author_id=id)
  areas:       public basic bearer apikey-header apikey-query apikey-form
               apikey-json apikey-json-nested oauth session quota
  collections: books authors events reviews
  events and reviews: since= until= (inclusive, 2024-03-01T00:00:00Z) filter updated_at
  pagination:  offset (default) pages pages-from-zero cursor cursor-header
               link link-relative next-url after array range repeat-cursor
Tokens:   POST /oauth/token  /oauth/rotating/token  /oauth/dated/token
Consent:  GET /oauth/authorize (redirects with a code)  POST /oauth/code/token
Session:  POST /auth/login (JSON or form body)  GET /auth/login (Basic)
Quota:    GET /v1/quota/rate_limit (a quota token's calls left; costs none)
Jobs:     POST /v1/{area}/jobs {"country":"SE"[,"polls":2][,"fail":true]}
          GET /v1/{area}/jobs/{id}   GET /v1/{area}/jobs/{id}/files/{n}
          DELETE /v1/{area}/jobs/{id} (or POST /v1/{area}/jobs/{id}/delete)
Files:    GET /v1/{area}/exports/authors.csv[?gzip=true]
          GET /v1/{area}/attachments   GET /v1/{area}/attachments/{id}/content
Errors:   /v1/errors/status/{code}  /v1/errors/not-json  /v1/errors/flaky?key=K&failures=N

See pkg/demoapi/README.md for parameters and credentials.
`

// recorder remembers the status written and whether the request reached a collection.
type recorder struct {
	http.ResponseWriter
	status int
	data   bool
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// redactURI hides credential query parameters in log lines.
func redactURI(u *url.URL) string {
	if u.RawQuery == "" {
		return u.Path
	}
	q := u.Query()
	for _, k := range []string{"api_key", "session_token"} {
		if _, ok := q[k]; ok {
			q[k] = []string{"****"}
		}
	}
	return u.Path + "?" + q.Encode()
}

// apiError is an error response: status plus the JSON body {"error", "message"}.
type apiError struct {
	status  int
	code    string
	message string
	header  map[string]string
	oauth   bool // body uses error_description, as RFC 6749 token errors do
}

func (e *apiError) write(w http.ResponseWriter) {
	for k, v := range e.header {
		w.Header().Set(k, v)
	}
	if e.oauth {
		writeJSON(w, e.status, struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}{e.code, e.message})
		return
	}
	writeError(w, e.status, e.code, e.message)
}

func badRequest(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "bad_request", message: fmt.Sprintf(format, args...)}
}

func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{code, message})
}

// writeJSON writes v as JSON with the key order of its struct fields and
// without HTML escaping, so "<html> & co" arrives byte for byte.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

func quote(s string) string { return fmt.Sprintf("%q", s) }
