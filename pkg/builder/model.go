package builder

import (
	"bytes"
	"encoding/json"
)

// StreamRead is the result of a test read, the Connector Builder's JSON: the CDK's
// StreamRead dataclass (airbyte_cdk/connector_builder/models.py), with its field names and
// its field order. Every text in it is masked, but the records, which are data.
type StreamRead struct {
	Logs                 []LogMessage       `json:"logs"`
	Slices               []Slice            `json:"slices"`
	TestReadLimitReached bool               `json:"test_read_limit_reached"`
	AuxiliaryRequests    []AuxiliaryRequest `json:"auxiliary_requests"`
	// InferredSchema and InferredDatetimeFormats are the Inferrer's (null without one);
	// LatestConfigUpdate is the config after the last rotation of OAuth tokens (null when
	// none rotated).
	InferredSchema          json.RawMessage `json:"inferred_schema"`
	InferredDatetimeFormats json.RawMessage `json:"inferred_datetime_formats"`
	LatestConfigUpdate      json.RawMessage `json:"latest_config_update"`
}

// LogMessage is one entry of StreamRead.logs: a failure (ERROR), a note (WARN).
type LogMessage struct {
	Message         string  `json:"message"`
	Level           string  `json:"level"`
	InternalMessage *string `json:"internal_message"`
	Stacktrace      *string `json:"stacktrace"`
}

// Slice is one slice of the stream read: its pages, the slice as the CDK describes it, and
// the stream's state after it.
type Slice struct {
	Pages []Page `json:"pages"`
	// SliceDescriptor is the slice's keys as an object ({"author_id": 1, "parent_slice": {}};
	// {} for a slice of an asynchronous job), or, for the one empty slice of a stream
	// without partitions, the text "{}", as the CDK writes it.
	SliceDescriptor json.RawMessage `json:"slice_descriptor"`
	// State holds the last STATE message the read had emitted when the slice ended, as the
	// CDK lays it out (empty before the first).
	State []json.RawMessage `json:"state"`
	// AuxiliaryRequests are the requests of the slice's asynchronous jobs.
	AuxiliaryRequests []AuxiliaryRequest `json:"auxiliary_requests"`
}

// Page is one data request of a slice, its response, and the records the read emitted from
// it. Request and Response are null for records that came without a request (a first page
// read from the parent record).
type Page struct {
	Records  []json.RawMessage `json:"records"`
	Request  *HTTPRequest      `json:"request"`
	Response *HTTPResponse     `json:"response"`
}

// HTTPRequest is a request as sent: its headers one value each (several joined with ", "),
// its body as text (null when it has none).
type HTTPRequest struct {
	URL        string            `json:"url"`
	Headers    map[string]string `json:"headers"`
	HTTPMethod string            `json:"http_method"`
	Body       *string           `json:"body"`
}

// HTTPResponse is a response as received: the body as text, decoded.
type HTTPResponse struct {
	Status  int               `json:"status"`
	Body    *string           `json:"body"`
	Headers map[string]string `json:"headers"`
}

// AuxiliaryRequest is a request that serves the read without giving its records: a token
// refresh, a login, a parent stream's page, a step of an asynchronous job, a dynamic schema.
type AuxiliaryRequest struct {
	Title       string       `json:"title"`
	Type        string       `json:"type"`
	Description string       `json:"description"`
	Request     HTTPRequest  `json:"request"`
	Response    HTTPResponse `json:"response"`
}

// The types of auxiliary requests.
const (
	AuxAuth         = "AUTH"
	AuxParentStream = "PARENT_STREAM"
	AuxHTTP         = "HTTP"
	AuxAsyncCreate  = "ASYNC_CREATE"
	AuxAsyncPoll    = "ASYNC_POLL"
	AuxAsyncAbort   = "ASYNC_ABORT"
	AuxAsyncDelete  = "ASYNC_DELETE"
)

// JSON is the StreamRead as compact JSON, nothing HTML-escaped (a record's "<" stays "<").
func (r *StreamRead) JSON() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// Indented is the StreamRead as JSON indented by two spaces, for a person.
func (r *StreamRead) Indented() ([]byte, error) {
	compact, err := r.JSON()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, compact, "", "  "); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
