// Package har records the HTTP exchanges of a run in an HTTP Archive (HAR 1.2) file and
// replays them without a network.
//
// A Recorder is the transport of a run: every request (logins, token refreshes, data
// requests, parent streams, asynchronous jobs, each redirect) goes through it and is written
// to the file in the order it was sent, with every secret the run's redactor knows replaced
// by its named placeholder (****api_key****) in URLs, headers and bodies of requests and
// responses. Tokens in the answers of token and login requests are learned before anything
// is written. The file also holds the testing values, secrets replaced, in the custom field
// _connector of the log, so that a replay needs no values file.
//
// A Replayer is the transport of a replay: it answers each request with the response of the
// matching recorded request, at once, and keeps a clock that follows the recording's (see
// Replayer for the matching rules).
package har

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// Version is the HAR version written and read.
const Version = "1.2"

// Archive is a HAR file.
type Archive struct {
	Log Log `json:"log"`
}

// Log is the HAR log.
type Log struct {
	Version   string   `json:"version"`
	Creator   Creator  `json:"creator"`
	Connector *Meta    `json:"_connector,omitempty"`
	Entries   []*Entry `json:"entries"`
}

// Creator names the program that wrote the file.
type Creator struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Meta is connector's own part of the log (a HAR custom field, _connector): what a replay
// needs besides the exchanges.
type Meta struct {
	// Command is the command recorded: read, check or paginate-trace.
	Command string `json:"command"`
	// Definition is the definition file, as given on the command line.
	Definition string `json:"definition"`
	// Started is the run's clock when the recording began; a replay's clock starts there.
	Started time.Time `json:"started"`
	// Values are the testing values of the run (after --set and the specification's
	// defaults), every secret replaced by its placeholder.
	Values map[string]any `json:"values"`
	// The limits of the read recorded: connector test reads the same.
	Streams    []string `json:"streams,omitempty"`
	MaxRecords int      `json:"max_records,omitempty"`
	MaxPages   int      `json:"max_pages,omitempty"`
	MaxSlices  int      `json:"max_slices,omitempty"`
	Prefetch   int      `json:"prefetch,omitempty"`
	// State is the state file the read began with (--state), secrets replaced: a replay
	// without --state begins with it too.
	State json.RawMessage `json:"state,omitempty"`
}

// Entry is one exchange. A request that got no response has status 0 and Error.
type Entry struct {
	Started  time.Time `json:"startedDateTime"`
	Time     float64   `json:"time"` // milliseconds, request sent to body read
	Request  Request   `json:"request"`
	Response Response  `json:"response"`
	Cache    struct{}  `json:"cache"`
	Timings  Timings   `json:"timings"`
	// Kind is what the request was for (data, token, login, validate, job), Stream the
	// stream it read; Error the transport's error when no response came.
	Kind   string `json:"_kind,omitempty"`
	Stream string `json:"_stream,omitempty"`
	Error  string `json:"_error,omitempty"`
}

// Request is a recorded request.
type Request struct {
	Method      string      `json:"method"`
	URL         string      `json:"url"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	QueryString []NameValue `json:"queryString"`
	PostData    *PostData   `json:"postData,omitempty"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

// PostData is the body of a request.
type PostData struct {
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
}

// Response is a recorded response.
type Response struct {
	Status      int         `json:"status"`
	StatusText  string      `json:"statusText"`
	HTTPVersion string      `json:"httpVersion"`
	Cookies     []NameValue `json:"cookies"`
	Headers     []NameValue `json:"headers"`
	Content     Content     `json:"content"`
	RedirectURL string      `json:"redirectURL"`
	HeadersSize int         `json:"headersSize"`
	BodySize    int         `json:"bodySize"`
}

// Content is the body of a response: text as is when it is UTF-8, else base64 (Encoding).
type Content struct {
	Size     int    `json:"size"`
	MimeType string `json:"mimeType"`
	Text     string `json:"text"`
	Encoding string `json:"encoding,omitempty"`
}

// NameValue is a header, a query parameter or a cookie.
type NameValue struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Timings are the phases of an exchange, in milliseconds.
type Timings struct {
	Send    float64 `json:"send"`
	Wait    float64 `json:"wait"`
	Receive float64 `json:"receive"`
}

// FileError is a recording that cannot be used: Unreadable when the file cannot be read
// (missing, a folder), else its content is not a recording.
type FileError struct {
	Path       string
	Unreadable bool
	Err        error
}

func (e *FileError) Error() string {
	if e.Unreadable {
		return fmt.Sprintf("cannot read the recording %s: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("%s is not a recording of connector: %v", e.Path, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// Load reads and checks the recording at path.
func Load(path string) (*Archive, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Unreadable: true, Err: pathless(err)}
	}
	defer f.Close()
	if info, err := f.Stat(); err == nil && info.IsDir() {
		return nil, &FileError{Path: path, Unreadable: true, Err: errors.New("is a directory")}
	}
	a, err := Decode(f)
	if err != nil {
		var fe *FileError
		if errors.As(err, &fe) {
			fe.Path = path
			return nil, fe
		}
		return nil, &FileError{Path: path, Unreadable: true, Err: err}
	}
	return a, nil
}

// Decode reads a recording from r and checks it: a HAR 1.2 log with connector's _connector
// field and well-formed entries.
func Decode(r io.Reader) (*Archive, error) {
	dec := json.NewDecoder(r)
	dec.UseNumber()
	var a Archive
	if err := dec.Decode(&a); err != nil {
		var syn *json.SyntaxError
		var typ *json.UnmarshalTypeError
		switch {
		case errors.As(err, &syn):
			return nil, &FileError{Err: fmt.Errorf("invalid JSON at byte %d: %v", syn.Offset, syn)}
		case errors.As(err, &typ) && typ.Field == "":
			return nil, &FileError{Err: fmt.Errorf("the file is a JSON %s, not an object holding a HAR log", typ.Value)}
		case errors.As(err, &typ) && typ.Type.String() == "time.Time":
			return nil, &FileError{Err: fmt.Errorf("%s must be a date and time (RFC 3339), not a JSON %s", typ.Field, typ.Value)}
		case errors.As(err, &typ):
			return nil, &FileError{Err: fmt.Errorf("%s must be a JSON %s, not a JSON %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)}
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return nil, &FileError{Err: errors.New("the file is empty or cut short")}
		}
		return nil, err
	}
	if err := a.check(); err != nil {
		return nil, &FileError{Err: err}
	}
	return &a, nil
}

func (a *Archive) check() error {
	l := &a.Log
	switch {
	case l.Version == "":
		return errors.New(`no "log" with a "version": not a HAR file`)
	case l.Version != Version:
		return fmt.Errorf("HAR version %q; connector reads version %s", l.Version, Version)
	case l.Connector == nil:
		return errors.New(`no "_connector" field in the log: the file was not recorded with connector --record`)
	case l.Connector.Started.IsZero():
		return errors.New(`"_connector" has no "started" time`)
	}
	for i, e := range l.Entries {
		if e == nil {
			return fmt.Errorf("entry %d is null", i+1)
		}
		if e.Request.Method == "" || e.Request.URL == "" {
			return fmt.Errorf("entry %d has no request method or URL", i+1)
		}
		if e.Response.Status == 0 && e.Error == "" {
			return fmt.Errorf("entry %d has neither a response status nor an _error", i+1)
		}
		if e.Response.Content.Encoding != "" && e.Response.Content.Encoding != "base64" {
			return fmt.Errorf("entry %d: content encoding %q (only base64 is read)", i+1, e.Response.Content.Encoding)
		}
	}
	return nil
}

// jsonKind is the JSON name of a Go kind.
func jsonKind(kind string) string {
	switch {
	case kind == "string":
		return "string"
	case kind == "bool":
		return "boolean"
	case strings.HasPrefix(kind, "int"), strings.HasPrefix(kind, "float"), strings.HasPrefix(kind, "uint"):
		return "number"
	case kind == "slice":
		return "array"
	}
	return "object"
}

// pathless drops the operation and path from a file error: they are named by the caller.
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
