// Package serve is the Connector Builder's engine as an HTTP API: the routes, request and
// response bodies of the CDK's manifest_server (health, capabilities, and under /v1/manifest
// test_read, check, discover, resolve and full_resolve), so that the Airbyte platform can be
// pointed at it instead of the Python service. Every request is its own session: nothing
// mutable is shared between requests, and the secrets of one request's config are masked in
// everything its answer and the access log say.
package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"connector/pkg/airbyte"
	"connector/pkg/builder"
	"connector/pkg/manifest"
	"connector/pkg/protocol"
	"connector/pkg/redact"
	"connector/pkg/resolve"
	"connector/pkg/session"
)

// Limits of a request.
const (
	// DefaultMaxBody is the largest request body read.
	DefaultMaxBody = 32 << 20
	// DefaultTimeout bounds the work of one request.
	DefaultTimeout = 5 * time.Minute
)

// TestReadRequest is what a test read is asked with, its limits already checked.
type TestReadRequest struct {
	Stream                             string
	RecordLimit, PageLimit, SliceLimit int
	// State is the state the read starts from, as test_read's body gives it (a list of
	// state messages) or as a state file holds it; nil: none.
	State json.RawMessage
}

// TestReader runs the Builder's test read of one stream of an open session and returns the
// StreamRead answer (JSON-encodable). Its error is the reason a read could not be made.
type TestReader func(ctx context.Context, s *session.Session, req TestReadRequest) (any, error)

// Config is how a server runs.
type Config struct {
	// Transport, Now and Sleep are where the sessions reach the world (nil: the machine's).
	Transport http.RoundTripper
	Now       func() time.Time
	Sleep     func(ctx context.Context, d time.Duration) error
	UserAgent string
	// JWTSecret, when set, makes every /v1 request need an HS256 bearer token signed with
	// it (AB_JWT_SIGNATURE_SECRET, as the CDK's server checks).
	JWTSecret string
	// MaxBody and Timeout bound a request (0: DefaultMaxBody, DefaultTimeout).
	MaxBody int64
	Timeout time.Duration
	// AccessLog receives one JSON line per request (nil: none).
	AccessLog io.Writer
	// TestRead answers test_read (nil: BuilderTestRead).
	TestRead TestReader
}

// Server is the HTTP handler of the API.
type Server struct {
	cfg   Config
	mux   *http.ServeMux
	logMu sync.Mutex
}

// New returns the API's handler.
func New(cfg Config) *Server {
	if cfg.MaxBody <= 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.TestRead == nil {
		cfg.TestRead = BuilderTestRead
	}
	s := &Server{cfg: cfg, mux: http.NewServeMux()}
	s.mux.HandleFunc("GET /health/", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	})
	s.mux.HandleFunc("GET /capabilities/", func(w http.ResponseWriter, r *http.Request) {
		// No custom Python components here, whatever AIRBYTE_ENABLE_UNSAFE_CODE says.
		writeJSON(w, http.StatusOK, map[string]bool{"custom_code_execution": false})
	})
	s.mux.Handle("POST /v1/manifest/test_read", s.api(s.testRead))
	s.mux.Handle("POST /v1/manifest/check", s.api(s.check))
	s.mux.Handle("POST /v1/manifest/discover", s.api(s.discover))
	s.mux.Handle("POST /v1/manifest/resolve", s.api(s.resolve))
	s.mux.Handle("POST /v1/manifest/full_resolve", s.api(s.fullResolve))
	return s
}

// ServeHTTP answers one request and writes its access log line.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	s.mux.ServeHTTP(rec, r)
	if s.cfg.AccessLog == nil {
		return
	}
	line := struct {
		Time     string  `json:"time"`
		Method   string  `json:"method"`
		Path     string  `json:"path"`
		Status   int     `json:"status"`
		Duration float64 `json:"duration_ms"`
		Stream   string  `json:"stream,omitempty"`
	}{start.UTC().Format(time.RFC3339Nano), r.Method, r.URL.Path, rec.status,
		float64(s.cfg.Now().Sub(start).Microseconds()) / 1000, rec.stream}
	b, _ := json.Marshal(line)
	s.logMu.Lock()
	defer s.logMu.Unlock()
	s.cfg.AccessLog.Write(append(b, '\n'))
}

// recorder keeps the status of an answer, and the stream of a test read, for the access log.
type recorder struct {
	http.ResponseWriter
	status int
	stream string
}

func (r *recorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

// httpError is an answer other than 200: {"detail": …}, or FastAPI's list of problems for a
// body that does not fit its model (422).
type httpError struct {
	status int
	detail any
	header http.Header
}

func (e *httpError) Error() string { return fmt.Sprint(e.detail) }

func fail(status int, format string, args ...any) *httpError {
	return &httpError{status: status, detail: fmt.Sprintf(format, args...)}
}

// call is one API request: its body decoded, its redactor, its deadline.
type call struct {
	ctx  context.Context
	body []byte
	red  *redact.Redactor
	rec  *recorder
}

// api wraps a route: the bearer token when a secret is set, the body limit, the time limit,
// and the answer as JSON.
func (s *Server) api(h func(c *call) (any, error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec, _ := w.(*recorder)
		if err := s.authorize(r); err != nil {
			writeError(w, err)
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.MaxBody))
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			writeError(w, fail(http.StatusRequestEntityTooLarge, "the request body is larger than %d bytes (a limit of connector serve)", s.cfg.MaxBody))
			return
		}
		if err != nil {
			writeError(w, fail(http.StatusBadRequest, "cannot read the request body: %v", err))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.Timeout)
		defer cancel()
		c := &call{ctx: ctx, body: body, red: &redact.Redactor{}, rec: rec}
		out, err := h(c)
		if err == nil && ctx.Err() == context.DeadlineExceeded {
			err = fail(http.StatusGatewayTimeout, "the request took longer than %s (a limit of connector serve)", s.cfg.Timeout)
		}
		if err != nil {
			var he *httpError
			if !errors.As(err, &he) {
				he = fail(http.StatusInternalServerError, "%v", err)
			}
			if d, ok := he.detail.(string); ok {
				he.detail = c.red.String(d)
			}
			writeError(w, he)
			return
		}
		writeJSON(w, http.StatusOK, out)
	})
}

// rawJSON is an answer already encoded, written as it is (json.Marshal would escape its
// <, > and &, which the CDK's server writes plainly).
type rawJSON []byte

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	var err error
	if r, ok := v.(rawJSON); ok {
		b = r
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"detail":"the answer could not be encoded"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeError(w http.ResponseWriter, err *httpError) {
	for k, v := range err.header {
		w.Header()[k] = v
	}
	writeJSON(w, err.status, map[string]any{"detail": err.detail})
}

// session opens the session of a request: the manifest (JSON, which is YAML) and the config,
// every secret of the config registered with the call's redactor. what words a failure
// ("Error reading stream"), as the CDK's routes do.
func (s *Server) session(c *call, m manifestField, config json.RawMessage, what string) (*session.Session, error) {
	def, err := session.Load(c.ctx, "manifest", m.definition())
	if err != nil {
		return nil, loadFailure(err, what)
	}
	sess, err := s.open(c, def, config)
	if err != nil {
		return nil, fail(http.StatusBadRequest, "%s: Config validation error: %s", what, protocol.Reason(err))
	}
	return sess, nil
}

// open opens the session of a request's definition with its config, as the protocol opens
// one, every secret of the config registered with the call's redactor.
func (s *Server) open(c *call, def *manifest.Definition, config json.RawMessage) (*session.Session, error) {
	return protocol.Open(def, "manifest", "config", config, protocol.Env{
		Transport: s.cfg.Transport, Now: s.cfg.Now, Sleep: s.cfg.Sleep, Redactor: c.red, UserAgent: s.cfg.UserAgent,
	})
}

func (s *Server) check(c *call) (any, error) {
	var req struct {
		Manifest manifestField   `json:"manifest"`
		Config   json.RawMessage `json:"config"`
	}
	if err := decode(c.body, &req, "manifest", "config"); err != nil {
		return nil, err
	}
	def, err := session.Load(c.ctx, "manifest", req.Manifest.definition())
	if err != nil {
		return nil, loadFailure(err, "Error checking connection")
	}
	sess, err := s.open(c, def, req.Config)
	if err != nil {
		// The CDK's entry point answers an invalid config with a FAILED status.
		return checkResponse{Message: ptr(c.red.String("Config validation error: " + protocol.Reason(err)))}, nil
	}
	defer sess.Close()
	if err := sess.Resolve(c.ctx, nil); err != nil {
		return checkResponse{Message: ptr(c.red.String(err.Error()))}, nil
	}
	st, err := protocol.CheckConnection(c.ctx, sess)
	if err != nil {
		return nil, err
	}
	r := checkResponse{Success: st.Succeeded}
	if !st.Succeeded {
		r.Message = &st.Message
	}
	return r, nil
}

type checkResponse struct {
	Success bool    `json:"success"`
	Message *string `json:"message"`
}

func ptr(s string) *string { return &s }

func (s *Server) discover(c *call) (any, error) {
	var req struct {
		Manifest manifestField   `json:"manifest"`
		Config   json.RawMessage `json:"config"`
	}
	if err := decode(c.body, &req, "manifest", "config"); err != nil {
		return nil, err
	}
	const what = "Error discovering streams"
	sess, err := s.session(c, req.Manifest, req.Config, what)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	if err := sess.Resolve(c.ctx, nil); err != nil {
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	streams := protocol.Catalog(sess)
	if streams == nil {
		streams = []airbyte.Stream{}
	}
	return map[string]any{"catalog": map[string]any{"streams": streams}}, nil
}

func (s *Server) testRead(c *call) (any, error) {
	req := struct {
		Manifest             manifestField   `json:"manifest"`
		Config               json.RawMessage `json:"config"`
		StreamName           string          `json:"stream_name"`
		State                json.RawMessage `json:"state"`
		CustomComponentsCode *string         `json:"custom_components_code"`
		RecordLimit          *int            `json:"record_limit"`
		PageLimit            *int            `json:"page_limit"`
		SliceLimit           *int            `json:"slice_limit"`
	}{}
	if err := decode(c.body, &req, "manifest", "config", "stream_name"); err != nil {
		return nil, err
	}
	limits := TestReadRequest{Stream: req.StreamName, RecordLimit: 100, PageLimit: 5, SliceLimit: 5}
	var problems []problem
	for _, l := range []struct {
		name    string
		v       *int
		dst     *int
		max     int
		present bool
	}{{"record_limit", req.RecordLimit, &limits.RecordLimit, 5000, req.RecordLimit != nil},
		{"page_limit", req.PageLimit, &limits.PageLimit, 20, req.PageLimit != nil},
		{"slice_limit", req.SliceLimit, &limits.SliceLimit, 20, req.SliceLimit != nil}} {
		if !l.present {
			continue
		}
		switch {
		case *l.v < 1:
			problems = append(problems, rangeProblem(l.name, *l.v, "greater_than_equal", "greater than or equal to 1", 1))
		case *l.v > l.max:
			problems = append(problems, rangeProblem(l.name, *l.v, "less_than_equal", fmt.Sprintf("less than or equal to %d", l.max), l.max))
		default:
			*l.dst = *l.v
		}
	}
	if len(problems) > 0 {
		return nil, &httpError{status: http.StatusUnprocessableEntity, detail: problems}
	}
	if c.rec != nil {
		c.rec.stream = req.StreamName
	}
	if len(req.State) > 0 && string(req.State) != "null" {
		limits.State = req.State
	}
	const what = "Error reading stream"
	if req.CustomComponentsCode != nil && *req.CustomComponentsCode != "" {
		return nil, fail(http.StatusBadRequest, "%s: %s", what, customCodeNotPermitted)
	}
	sess, err := s.session(c, req.Manifest, req.Config, what)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	if err := sess.Resolve(c.ctx, nil); err != nil {
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	out, err := s.cfg.TestRead(c.ctx, sess, limits)
	if err != nil {
		var he *httpError
		if errors.As(err, &he) {
			return nil, he
		}
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	return out, nil
}

// BuilderTestRead is the Connector Builder's test read (pkg/builder) with the CDK's schema
// and datetime format inference: what test_read answers. The state of the request is a
// state file's text or test_read's list of state messages.
func BuilderTestRead(ctx context.Context, s *session.Session, req TestReadRequest) (any, error) {
	o := builder.Options{
		Limits:      builder.Limits{Records: req.RecordLimit, PagesPerSlice: req.PageLimit, Slices: req.SliceLimit},
		NewInferrer: builder.SchemaInference(s.Values.Map),
	}
	if len(req.State) > 0 {
		state, err := session.OpenState(session.StateFiles{Given: req.State, GivenName: "the state"})
		if err != nil {
			return nil, err
		}
		o.StateOf = state.Of
	}
	return builder.TestRead(ctx, s, req.Stream, o)
}

// customCodeNotPermitted is the CDK's AirbyteCustomCodeNotPermittedError, which this server
// always answers: it runs no Python.
const customCodeNotPermitted = "Custom connector code is not permitted in this environment. " +
	"If you need to run custom code, please ask your administrator to set the `AIRBYTE_ENABLE_UNSAFE_CODE` " +
	"environment variable to 'true' in your Airbyte environment. " +
	"If you see this message in Airbyte Cloud, your workspace does not allow executing " +
	"custom connector code."

func (s *Server) resolve(c *call) (any, error) {
	var req struct {
		Manifest manifestField `json:"manifest"`
	}
	if err := decode(c.body, &req, "manifest"); err != nil {
		return nil, err
	}
	const what = "Error resolving manifest"
	if _, err := session.Load(c.ctx, "manifest", req.Manifest.definition()); err != nil {
		return nil, loadFailure(err, what)
	}
	m, err := s.resolved(req.Manifest)
	if err != nil {
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	return manifestAnswer(m)
}

// fullResolve is resolve with the streams of dynamic_streams made from the request's config
// (an HttpComponentsResolver requests its API), at most stream_limit of each definition.
func (s *Server) fullResolve(c *call) (any, error) {
	var req struct {
		Manifest    manifestField   `json:"manifest"`
		Config      json.RawMessage `json:"config"`
		StreamLimit *int            `json:"stream_limit"`
	}
	if err := decode(c.body, &req, "manifest", "config"); err != nil {
		return nil, err
	}
	limit := resolve.DefaultStreamLimit
	if l := req.StreamLimit; l != nil {
		switch {
		case *l < 1:
			return nil, unprocessable(rangeProblem("stream_limit", *l, "greater_than_equal", "greater than or equal to 1", 1))
		case *l > resolve.DefaultStreamLimit:
			return nil, unprocessable(rangeProblem("stream_limit", *l, "less_than_equal", fmt.Sprintf("less than or equal to %d", resolve.DefaultStreamLimit), resolve.DefaultStreamLimit))
		}
		limit = *l
	}
	const what = "Error full resolving manifest"
	sess, err := s.session(c, req.Manifest, req.Config, what)
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	m, err := s.resolved(req.Manifest)
	if err != nil {
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	made, err := sess.DynamicEdits(c.ctx, nil)
	if err == nil {
		m, err = resolve.Full(m, made, limit, c.red.String)
	}
	if err != nil {
		return nil, fail(http.StatusBadRequest, "%s: %v", what, err)
	}
	return manifestAnswer(m)
}

// resolved is the CDK's resolved form of a request's manifest.
func (s *Server) resolved(m manifestField) (*resolve.Object, error) {
	tree, err := resolve.Parse(m.raw)
	if err != nil {
		return nil, err
	}
	return resolve.Manifest(tree, resolve.Options{Now: s.cfg.Now})
}

// manifestAnswer is {"manifest": m}, written as the CDK's server writes it.
func manifestAnswer(m *resolve.Object) (any, error) {
	b, err := resolve.Encode(m, "")
	if err != nil {
		return nil, err
	}
	return rawJSON(append(append([]byte(`{"manifest":`), b...), '}')), nil
}

// loadFailure is the answer to a manifest the loader refuses.
func loadFailure(err error, what string) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fail(http.StatusBadRequest, "%s: %s", what, protocol.Reason(err))
}

// manifestField is the manifest of a request: a JSON object, kept as sent (its key order is
// the definition's).
type manifestField struct{ raw json.RawMessage }

func (m *manifestField) UnmarshalJSON(b []byte) error {
	if t := strings.TrimSpace(string(b)); !strings.HasPrefix(t, "{") {
		return errNotObject
	}
	m.raw = append(json.RawMessage(nil), b...)
	return nil
}

var errNotObject = errors.New("not an object")

// definition is the manifest the engine loads: without the Builder's __should_normalize and
// __should_migrate when they are true, as the CDK's server takes them out before it reads a
// manifest (they ask for passes over its resolved form, which change nothing a run does).
func (m manifestField) definition() []byte {
	if !bytes.Contains(m.raw, []byte(`"__should_`)) {
		return m.raw
	}
	tree, err := resolve.Parse(m.raw)
	if err != nil {
		return m.raw
	}
	if norm, mig := resolve.BuilderKeys(tree); !norm && !mig {
		return m.raw
	}
	b, err := resolve.Encode(tree, "")
	if err != nil {
		return m.raw
	}
	return b
}
