package builder

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"connector/pkg/demoapi"
	"connector/pkg/redact"
	"connector/pkg/session"
	"connector/pkg/values"
)

// api is a local API whose answers carry no Date, so that a StreamRead is the same on every
// run. It writes down every request it gets as "METHOD /path?query body".
type api struct {
	*httptest.Server
	mu  sync.Mutex
	got []string
}

// serve starts an API answering path → body (JSON, 200); a path missing from answers is a
// 404. A body "STATUS:N BODY" is answered with status N.
func serve(t *testing.T, answers map[string]string) *api {
	t.Helper()
	a := &api{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		a.mu.Lock()
		a.got = append(a.got, strings.TrimSpace(r.Method+" "+r.URL.RequestURI()+" "+string(body)))
		a.mu.Unlock()
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "application/json")
		answer, ok := answers[r.URL.RequestURI()]
		if !ok {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"no such page"}`)
			return
		}
		if rest, ok := strings.CutPrefix(answer, "STATUS:"); ok {
			code, body, _ := strings.Cut(rest, " ")
			n, _ := strconv.Atoi(code)
			w.WriteHeader(n)
			answer = body
		}
		io.WriteString(w, answer)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *api) requests() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.got...)
}

// open opens a session of def (YAML) with the testing values vals (YAML), base_url set to
// the API's URL, on a fixed clock.
func open(t *testing.T, a *api, def, vals string) *session.Session {
	t.Helper()
	d, err := session.Load(context.Background(), "def.yaml", []byte(def))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(path, []byte("base_url: "+a.URL+"\n"+vals), 0o600); err != nil {
		t.Fatal(err)
	}
	v, err := values.Load(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	now := func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }
	s, err := session.Open(session.Inputs{DefName: "def.yaml", Def: d, Values: v}, session.Env{Now: now, Redactor: &redact.Redactor{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// testRead runs a test read of stream and returns its StreamRead as indented JSON, the
// API's URL written http://API.
func testRead(t *testing.T, a *api, s *session.Session, stream string, lim Limits) string {
	t.Helper()
	sr, err := TestRead(context.Background(), s, stream, Options{Limits: lim})
	if err != nil {
		t.Fatal(err)
	}
	text, err := sr.Indented()
	if err != nil {
		t.Fatal(err)
	}
	return strings.ReplaceAll(string(text), a.URL, "http://API")
}

// decode decodes a StreamRead's JSON, its raw parts compact.
func decode(t *testing.T, text string) StreamRead {
	t.Helper()
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(text)); err != nil {
		t.Fatal(err)
	}
	var sr StreamRead
	if err := json.Unmarshal(buf.Bytes(), &sr); err != nil {
		t.Fatal(err)
	}
	return sr
}

func check(t *testing.T, got, want string) {
	t.Helper()
	if got != want {
		t.Errorf("StreamRead:\n%s\nwant:\n%s", got, want)
	}
}

func checkRequests(t *testing.T, a *api, want ...string) {
	t.Helper()
	if got := a.requests(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("requests:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// stream is a definition with one stream at config.base_url: its name, path, paginator,
// and more of the retriever and the stream (YAML indented for them).
func stream(name, path, retriever, more string) string {
	return `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: ` + name + `
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: ` + path + `
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
` + retriever + more
}

const pageIncrement = `      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
`

// A stream of three pages read with 2 pages per slice. The CDK's test read decorates the
// paginator (PaginatorTestReadDecorator, default_paginator.py): the slice ends after its
// second page without asking for the third, and TestReader._has_reached_limit says the
// limit was reached, a slice having as many pages as the limit. The one slice of a stream
// without partitions is described by the repr of its empty StreamSlice, the text "{}"
// (SliceLogger.create_slice_log_message: json.dumps(default=str) of a falsy slice). Its
// state is the STATE message the FinalStateCursor emits at the stream's end, laid out by
// dataclasses.asdict (global_, recordCount a float). A page's request and response are those
// of format_http_message: headers as a dict, the response body as text. Where the CDK's
// first request carries no page (inject_on_first_request), the seed's rule sends page=1.
func TestPaginatedStreamReachesThePageLimit(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/items?page=1": `{"data":[{"id":1},{"id":2}]}`,
		"/items?page=2": `{"data":[{"id":3},{"id":4}]}`,
		"/items?page=3": `{"data":[{"id":5}]}`,
	})
	s := open(t, a, stream("items", "/items", pageIncrement, ""), "")
	got := testRead(t, a, s, "items", Limits{Records: 100, PagesPerSlice: 2, Slices: 5})
	check(t, got, `{
  "logs": [],
  "slices": [
    {
      "pages": [
        {
          "records": [
            {
              "id": 1
            },
            {
              "id": 2
            }
          ],
          "request": {
            "url": "http://API/items?page=1",
            "headers": {},
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 200,
            "body": "{\"data\":[{\"id\":1},{\"id\":2}]}",
            "headers": {
              "Content-Length": "28",
              "Content-Type": "application/json"
            }
          }
        },
        {
          "records": [
            {
              "id": 3
            },
            {
              "id": 4
            }
          ],
          "request": {
            "url": "http://API/items?page=2",
            "headers": {},
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 200,
            "body": "{\"data\":[{\"id\":3},{\"id\":4}]}",
            "headers": {
              "Content-Length": "28",
              "Content-Type": "application/json"
            }
          }
        }
      ],
      "slice_descriptor": "{}",
      "state": [
        {
          "type": "STREAM",
          "stream": {
            "stream_descriptor": {
              "name": "items",
              "namespace": null
            },
            "stream_state": {
              "__ab_no_cursor_state_message": true
            }
          },
          "global_": null,
          "data": null,
          "sourceStats": {
            "recordCount": 4.0
          },
          "destinationStats": null
        }
      ],
      "auxiliary_requests": []
    }
  ],
  "test_read_limit_reached": true,
  "auxiliary_requests": [],
  "inferred_schema": null,
  "inferred_datetime_formats": null,
  "latest_config_update": null
}`)
	checkRequests(t, a, "GET /items?page=1", "GET /items?page=2")

	// With room for every page, the limit is not reached: 5 records < 100, 3 pages < 5.
	s = open(t, a, stream("items", "/items", pageIncrement, ""), "")
	sr := decode(t, testRead(t, a, s, "items", Limits{}))
	if sr.TestReadLimitReached || len(sr.Slices) != 1 || len(sr.Slices[0].Pages) != 3 {
		t.Errorf("with the default limits: limit reached %v, %d slices", sr.TestReadLimitReached, len(sr.Slices))
	}
}

// The records limit does not stop the read: the CDK 7.28.2 passes max_records to nothing
// that reads (get_message_groups takes it and never looks at it; no partition is built with
// a max_records_limit), so every page the other limits allow is read, and
// _has_reached_limit says the limit was reached once the records are as many.
func TestRecordsLimitOnlyReports(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/items?page=1": `{"data":[{"id":1},{"id":2}]}`,
		"/items?page=2": `{"data":[{"id":3},{"id":4}]}`,
		"/items?page=3": `{"data":[{"id":5}]}`,
	})
	s := open(t, a, stream("items", "/items", pageIncrement, ""), "")
	sr, err := TestRead(context.Background(), s, "items", Options{Limits: Limits{Records: 3}})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, p := range sr.Slices[0].Pages {
		n += len(p.Records)
	}
	if n != 5 || !sr.TestReadLimitReached {
		t.Errorf("%d records, limit reached %v; want 5 records and the limit reached", n, sr.TestReadLimitReached)
	}
	checkRequests(t, a, "GET /items?page=1", "GET /items?page=2", "GET /items?page=3")
}

const listRouter = `      partition_router:
        type: ListPartitionRouter
        values: ["a", "b", "c"]
        cursor_field: tag
        request_option: {type: RequestOption, inject_into: request_parameter, field_name: tag}
`

// A ListPartitionRouter's partitions read with 2 slices: the CDK's test read takes the first
// two of the router's slices (StreamSlicerTestReadDecorator: islice), so "c" is never
// requested, and the limit is reached (as many slices as the limit). Each slice is
// described by its partition as a dict. The FinalStateCursor emits one STATE message, at
// the stream's end: the first slice closes before any (state []), the last one with it.
func TestPartitionsAreSlices(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/books?tag=a": `{"data":[{"id":1}]}`,
		"/books?tag=b": `{"data":[{"id":2}]}`,
		"/books?tag=c": `{"data":[{"id":3}]}`,
	})
	s := open(t, a, stream("books", "/books", listRouter, ""), "")
	got := testRead(t, a, s, "books", Limits{Slices: 2})
	check(t, got, `{
  "logs": [],
  "slices": [
    {
      "pages": [
        {
          "records": [
            {
              "id": 1
            }
          ],
          "request": {
            "url": "http://API/books?tag=a",
            "headers": {},
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 200,
            "body": "{\"data\":[{\"id\":1}]}",
            "headers": {
              "Content-Length": "19",
              "Content-Type": "application/json"
            }
          }
        }
      ],
      "slice_descriptor": {
        "tag": "a"
      },
      "state": [],
      "auxiliary_requests": []
    },
    {
      "pages": [
        {
          "records": [
            {
              "id": 2
            }
          ],
          "request": {
            "url": "http://API/books?tag=b",
            "headers": {},
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 200,
            "body": "{\"data\":[{\"id\":2}]}",
            "headers": {
              "Content-Length": "19",
              "Content-Type": "application/json"
            }
          }
        }
      ],
      "slice_descriptor": {
        "tag": "b"
      },
      "state": [
        {
          "type": "STREAM",
          "stream": {
            "stream_descriptor": {
              "name": "books",
              "namespace": null
            },
            "stream_state": {
              "__ab_no_cursor_state_message": true
            }
          },
          "global_": null,
          "data": null,
          "sourceStats": {
            "recordCount": 2.0
          },
          "destinationStats": null
        }
      ],
      "auxiliary_requests": []
    }
  ],
  "test_read_limit_reached": true,
  "auxiliary_requests": [],
  "inferred_schema": null,
  "inferred_datetime_formats": null,
  "latest_config_update": null
}`)
	checkRequests(t, a, "GET /books?tag=a", "GET /books?tag=b")
}

// A child of a paginated parent, read with 2 slices: the parent's pages are auxiliary
// requests of the read, titled as the CDK titles them (its substream factory lays
// {"airbyte_cdk": {"stream": {"is_substream": true}}, "http": {"is_auxiliary": true}} over
// the parent's logs: "Parent stream: " before the title, the type PARENT_STREAM), kept at the
// top level (only the jobs' requests go with their slice). The first parent page gives the
// two partitions the read takes; its second page is never asked for, as the CDK's islice
// draws no third partition. A slice is described by its partition with parent_slice.
func TestSubstreamParentPagesAreAuxiliary(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/parents?page=1":     `{"data":[{"id":1},{"id":2}]}`,
		"/parents?page=2":     `{"data":[{"id":3}]}`,
		"/parents/1/children": `{"data":[{"id":10}]}`,
		"/parents/2/children": `{"data":[{"id":20}]}`,
	})
	def := `version: 6.5.0
type: DeclarativeSource
definitions:
  requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}"}
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  parents:
    type: DeclarativeStream
    name: parents
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /parents}
      record_selector: {$ref: "#/definitions/selector"}
` + pageIncrement + `streams:
  - $ref: "#/definitions/parents"
  - type: DeclarativeStream
    name: children
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: "/parents/{{ stream_partition.parent_id }}/children"}
      record_selector: {$ref: "#/definitions/selector"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: parent_id}
`
	s := open(t, a, def, "")
	sr := decode(t, testRead(t, a, s, "children", Limits{Slices: 2}))
	aux, err := json.MarshalIndent(sr.AuxiliaryRequests, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	check(t, string(aux), `[
  {
    "title": "Parent stream: Stream 'parents' request",
    "type": "PARENT_STREAM",
    "description": "Request performed in order to extract records for stream 'parents'",
    "request": {
      "url": "http://API/parents?page=1",
      "headers": {},
      "http_method": "GET",
      "body": null
    },
    "response": {
      "status": 200,
      "body": "{\"data\":[{\"id\":1},{\"id\":2}]}",
      "headers": {
        "Content-Length": "28",
        "Content-Type": "application/json"
      }
    }
  }
]`)
	var descriptors, pages []string
	for _, sl := range sr.Slices {
		descriptors = append(descriptors, string(sl.SliceDescriptor))
		for _, p := range sl.Pages {
			pages = append(pages, p.Request.URL+" → "+string(p.Records[0]))
		}
	}
	if want := `{"parent_id":1,"parent_slice":{}} {"parent_id":2,"parent_slice":{}}`; strings.Join(descriptors, " ") != want {
		t.Errorf("slice descriptors %s, want %s", descriptors, want)
	}
	if want := `http://API/parents/1/children → {"id":10} http://API/parents/2/children → {"id":20}`; strings.Join(pages, " ") != want {
		t.Errorf("pages %s, want %s", pages, want)
	}
	if !sr.TestReadLimitReached {
		t.Error("2 slices of a limit of 2: the limit is reached")
	}
	checkRequests(t, a, "GET /parents?page=1", "GET /parents/1/children", "GET /parents/2/children")
}

// An incremental stream: one slice per day, each followed by the STATE message the CDK's
// ConcurrentCursor emits when it closes the slice's partition (close_partition), so each
// slice shows the state after it, with the number of records since the one before; the
// last slice shows the state emitted at the stream's end
// (ensure_at_least_one_state_emitted), which came after it, with no record since. The
// slices are described by their window (start_time, end_time).
func TestIncrementalStateAfterEachSlice(t *testing.T) {
	t.Parallel()
	q := func(day string) string {
		return "/events?since=2024-01-" + day + "T00%3A00%3A00Z&until=2024-01-" + day + "T23%3A59%3A59Z"
	}
	a := serve(t, map[string]string{
		q("01"): `{"data":[{"id":1,"updated_at":"2024-01-01T10:00:00Z"},{"id":2,"updated_at":"2024-01-01T12:00:00Z"}]}`,
		q("02"): `{"data":[]}`,
		q("03"): `{"data":[{"id":3,"updated_at":"2024-01-03T08:00:00Z"}]}`,
	})
	incremental := `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated_at
      datetime_format: "%Y-%m-%dT%H:%M:%SZ"
      start_datetime: "2024-01-01T00:00:00Z"
      end_datetime: "2024-01-03T23:59:59Z"
      step: P1D
      cursor_granularity: PT1S
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
`
	s := open(t, a, stream("events", "/events", "", incremental), "")
	sr := decode(t, testRead(t, a, s, "events", Limits{}))
	var got []string
	for _, sl := range sr.Slices {
		var st struct {
			Stream struct {
				State json.RawMessage `json:"stream_state"`
			} `json:"stream"`
			Stats struct {
				Count json.Number `json:"recordCount"`
			} `json:"sourceStats"`
		}
		if len(sl.State) != 1 || json.Unmarshal(sl.State[0], &st) != nil {
			t.Fatalf("slice %s has the state %s", sl.SliceDescriptor, sl.State)
		}
		got = append(got, fmt.Sprintf("%s %d pages → %s %s", sl.SliceDescriptor, len(sl.Pages), st.Stream.State, st.Stats.Count))
	}
	want := []string{
		`{"start_time":"2024-01-01T00:00:00Z","end_time":"2024-01-01T23:59:59Z"} 1 pages → {"updated_at":"2024-01-01T12:00:00Z"} 2.0`,
		`{"start_time":"2024-01-02T00:00:00Z","end_time":"2024-01-02T23:59:59Z"} 1 pages → {"updated_at":"2024-01-01T12:00:00Z"} 0.0`,
		`{"start_time":"2024-01-03T00:00:00Z","end_time":"2024-01-03T23:59:59Z"} 1 pages → {"updated_at":"2024-01-03T08:00:00Z"} 0.0`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slices:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkRequests(t, a, "GET "+q("01"), "GET "+q("02"), "GET "+q("03"))
}

// A request that fails: the CDK's test read sends it once (its HttpClient is built with
// disable_retries), logs the response all the same (HttpClient._send logs before it
// handles the error), so the page shows the 500 and its body, and the failure comes as a
// TRACE ERROR message, which TestReader._categorise_groups makes an ERROR log (its texts
// are connector's own: the failure as a person reads it, and the cause beneath). The
// FinalStateCursor emits its state whatever happened, with no record.
func TestFailingRequestIsLogged(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{"/items?page=1": `STATUS:500 {"error":"boom"}`})
	s := open(t, a, stream("items", "/items", pageIncrement, ""), "")
	got := testRead(t, a, s, "items", Limits{})
	check(t, got, `{
  "logs": [
    {
      "message": "stream items, page 1: 500 Internal Server Error from GET http://API/items?page=1: {\"error\":\"boom\"}",
      "level": "ERROR",
      "internal_message": "500 Internal Server Error from GET http://API/items?page=1: {\"error\":\"boom\"}",
      "stacktrace": null
    }
  ],
  "slices": [
    {
      "pages": [
        {
          "records": [],
          "request": {
            "url": "http://API/items?page=1",
            "headers": {},
            "http_method": "GET",
            "body": null
          },
          "response": {
            "status": 500,
            "body": "{\"error\":\"boom\"}",
            "headers": {
              "Content-Length": "16",
              "Content-Type": "application/json"
            }
          }
        }
      ],
      "slice_descriptor": "{}",
      "state": [
        {
          "type": "STREAM",
          "stream": {
            "stream_descriptor": {
              "name": "items",
              "namespace": null
            },
            "stream_state": {
              "__ab_no_cursor_state_message": true
            }
          },
          "global_": null,
          "data": null,
          "sourceStats": {
            "recordCount": 0.0
          },
          "destinationStats": null
        }
      ],
      "auxiliary_requests": []
    }
  ],
  "test_read_limit_reached": false,
  "auxiliary_requests": [],
  "inferred_schema": null,
  "inferred_datetime_formats": null,
  "latest_config_update": null
}`)
	checkRequests(t, a, "GET /items?page=1")
}

// An unknown stream and limits below 0 are errors, not a StreamRead.
func TestTestReadErrors(t *testing.T) {
	t.Parallel()
	a := serve(t, nil)
	s := open(t, a, stream("items", "/items", "", ""), "")
	_, err := TestRead(context.Background(), s, "nope", Options{})
	var ae *session.ArgumentError
	if !errors.As(err, &ae) || !strings.Contains(err.Error(), `unknown stream "nope"`) {
		t.Errorf("an unknown stream: %v", err)
	}
	_, err = TestRead(context.Background(), s, "items", Options{Limits: Limits{Slices: -1}})
	if err == nil || err.Error() != "the test read's limit of slices must be at least 1, not -1" {
		t.Errorf("a limit below 0: %v", err)
	}
	if len(a.requests()) != 0 {
		t.Errorf("requests %v, want none", a.requests())
	}
}

const rotatingOAuth = `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    primary_key: [id]
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        authenticator:
          type: OAuthAuthenticator
          token_refresh_endpoint: "{{ config['base_url'] }}/token"
          grant_type: refresh_token
          client_id: "{{ config['client_id'] }}"
          client_secret: "{{ config['client_secret'] }}"
          refresh_token: "{{ config['credentials']['refresh_token'] }}"
          access_token_value: "{{ config['credentials']['access_token'] }}"
          token_expiry_date: "{{ config['credentials']['token_expiry_date'] }}"
          refresh_token_updater:
            refresh_token_name: refresh_token
            refresh_token_config_path: [credentials, refresh_token]
            access_token_config_path: [credentials, access_token]
            token_expiry_date_config_path: [credentials, token_expiry_date]
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      client_id: {type: string, airbyte_secret: true}
      client_secret: {type: string, airbyte_secret: true}
      credentials:
        type: object
        properties:
          refresh_token: {type: string, airbyte_secret: true}
          access_token: {type: string, airbyte_secret: true}
          token_expiry_date: {type: string}
`

const rotatingValues = `client_id: client-id-secret
client_secret: client-secret-value
credentials:
  refresh_token: refresh-secret-1
  access_token: access-expired-0
  token_expiry_date: "2020-01-01T00:00:00Z"
`

// An OAuth stream whose refresh token rotates. The CDK logs the token request with the
// title "Refresh token", the type AUTH and the description "Obtains access token"
// (AbstractOauth2Authenticator._log_response), an auxiliary request of the read, and, its
// refresh_token_updater having stored the new tokens, emits a CONTROL message with the whole
// config, which TestReader._get_latest_config_update shows without the "__" keys
// (clean_config). Here every secret is masked in both, the tokens the endpoint gave
// included (the CDK masks the access token it learns, not the rotated refresh token, and
// shows the config as it is). The token request's body is JSON, the seed's rule (the CDK
// sends a form).
func TestOAuthTokenRequestAndConfigUpdate(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/token": `{"access_token":"access-secret-new","expires_in":3600,"refresh_token":"refresh-secret-2"}`,
		"/items": `{"data":[{"id":1}]}`,
	})
	s := open(t, a, rotatingOAuth, rotatingValues)
	sr := decode(t, testRead(t, a, s, "items", Limits{}))
	aux, err := json.MarshalIndent(sr.AuxiliaryRequests, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	check(t, string(aux), `[
  {
    "title": "Refresh token",
    "type": "AUTH",
    "description": "Obtains access token",
    "request": {
      "url": "http://API/token",
      "headers": {
        "Content-Type": "application/json"
      },
      "http_method": "POST",
      "body": "{\"client_id\":\"****\",\"client_secret\":\"****\",\"refresh_token\":\"****\",\"grant_type\":\"refresh_token\"}"
    },
    "response": {
      "status": 200,
      "body": "{\"access_token\":\"****\",\"expires_in\":3600,\"refresh_token\":\"****\"}",
      "headers": {
        "Content-Length": "89",
        "Content-Type": "application/json"
      }
    }
  }
]`)
	if got, want := string(sr.LatestConfigUpdate), `{"base_url":"http://API","client_id":"****","client_secret":"****","credentials":{"access_token":"****","refresh_token":"****","token_expiry_date":"2026-03-04T06:06:07Z"}}`; got != want {
		t.Errorf("latest_config_update %s\nwant %s", got, want)
	}
	if got := *sr.Slices[0].Pages[0].Request; got.Headers["Authorization"] != "Bearer ****" {
		t.Errorf("the data request's headers %v", got.Headers)
	}
	checkRequests(t, a,
		`POST /token {"client_id":"client-id-secret","client_secret":"client-secret-value","refresh_token":"refresh-secret-1","grant_type":"refresh_token"}`,
		"GET /items")
}

// Secrets are masked in the URL, the headers and the bodies of every request and response,
// and in the logs; the records are data and stay as the API sent them.
func TestSecretsMaskedRecordsKept(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/items?key=key-secret-42": `{"data":[{"id":1,"echo":"key-secret-42"}],"note":"your key is key-secret-42"}`,
	})
	def := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: "{{ config['base_url'] }}"
        path: /items
        request_parameters: {key: "{{ config['api_key'] }}"}
        request_headers: {X-Echo: "{{ config['api_key'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
spec:
  type: Spec
  connection_specification:
    type: object
    properties:
      api_key: {type: string, airbyte_secret: true}
`
	s := open(t, a, def, "api_key: key-secret-42\n")
	got := testRead(t, a, s, "items", Limits{})
	sr := decode(t, got)
	p := sr.Slices[0].Pages[0]
	if p.Request.URL != "http://API/items?key=****" || p.Request.Headers["X-Echo"] != "****" {
		t.Errorf("request %+v", *p.Request)
	}
	if want := `{"data":[{"id":1,"echo":"****"}],"note":"your key is ****"}`; *p.Response.Body != want {
		t.Errorf("response body %s, want %s", *p.Response.Body, want)
	}
	if want := `{"id":1,"echo":"key-secret-42"}`; string(p.Records[0]) != want {
		t.Errorf("record %s, want %s", p.Records[0], want)
	}
	if strings.Count(got, "key-secret-42") != 1 {
		t.Errorf("the secret shows outside the record:\n%s", got)
	}
}

// Two test reads at once, each with its session, share nothing: each gets its own pages,
// records and limits (run with -race).
func TestConcurrentTestReads(t *testing.T) {
	t.Parallel()
	a := serve(t, map[string]string{
		"/items?page=1": `{"data":[{"id":1},{"id":2}]}`,
		"/items?page=2": `{"data":[{"id":3},{"id":4}]}`,
		"/items?page=3": `{"data":[{"id":5}]}`,
	})
	const n = 8
	var wg sync.WaitGroup
	results := make([]StreamRead, n)
	for i := range n {
		s := open(t, a, stream("items", "/items", pageIncrement, ""), "")
		wg.Add(1)
		go func() {
			defer wg.Done()
			sr, err := TestRead(context.Background(), s, "items", Options{Limits: Limits{PagesPerSlice: 1 + i%3}})
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = *sr
		}()
	}
	wg.Wait()
	for i, sr := range results {
		pages := 1 + i%3
		if len(sr.Slices) != 1 || len(sr.Slices[0].Pages) != pages {
			t.Errorf("read %d: %d slices, want 1 of %d pages", i, len(sr.Slices), pages)
			continue
		}
		for j, p := range sr.Slices[0].Pages {
			if want := fmt.Sprintf("/items?page=%d", j+1); !strings.HasSuffix(p.Request.URL, want) {
				t.Errorf("read %d, page %d: %s", i, j+1, p.Request.URL)
			}
		}
	}
}

// clock is a clock that a sleep moves on, for the demo API's jobs and the read's polling.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Sleep(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return nil
}

// An AsyncRetriever stream of two partitions (definitions/async-job.yaml against the demo
// API). The CDK logs a job's creation, polling and deletion as auxiliary requests of the
// types ASYNC_CREATE, ASYNC_POLL and ASYNC_DELETE (http_job_repository.py), which its
// grouper keeps with the slice rather than the read; but it keeps them in one list for the
// whole read that it never empties, and each slice that ends while the list holds some
// refers to that one list: every slice shows the requests of every job of the read. Its
// downloads are the pages; a slice of a job is described by the job's partition, which has
// no keys ({}). The creation's description gives polling_job_timeout as Python writes a
// timedelta.
func TestAsyncJobRequestsGoWithTheSlices(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)}
	srv := httptest.NewServer(demoapi.New(demoapi.Options{Now: clk.Now}))
	defer srv.Close()
	src, err := os.ReadFile(filepath.Join("..", "..", "definitions", "async-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := session.Load(context.Background(), "async-job.yaml", src)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := values.Parse("values.yaml", []byte("base_url: "+srv.URL+"\napi_key: demo-api-key\n"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := session.Open(session.Inputs{DefName: "async-job.yaml", Def: def, Values: vals},
		session.Env{Now: clk.Now, Sleep: clk.Sleep, Redactor: &redact.Redactor{}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sr, err := TestRead(context.Background(), s, "author_report", Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, sl := range sr.Slices {
		got = append(got, fmt.Sprintf("slice %d %s", i+1, sl.SliceDescriptor))
		for _, p := range sl.Pages {
			got = append(got, fmt.Sprintf("  page %s: %d records", strings.TrimPrefix(p.Request.URL, srv.URL), len(p.Records)))
		}
		for _, a := range sl.AuxiliaryRequests {
			got = append(got, fmt.Sprintf("  %s (%s) %s %s → %d", a.Title, a.Type, a.Request.HTTPMethod, strings.TrimPrefix(a.Request.URL, srv.URL), a.Response.Status))
		}
	}
	jobs := []string{
		"  Async Job -- Create (ASYNC_CREATE) POST /v1/apikey-query/jobs?api_key=**** → 201",
		"  Async Job -- Polling (ASYNC_POLL) GET /v1/apikey-query/jobs/job-000001?api_key=**** → 200",
		"  Async Job -- Polling (ASYNC_POLL) GET /v1/apikey-query/jobs/job-000001?api_key=**** → 200",
		"  Async Job -- Delete (ASYNC_DELETE) POST /v1/apikey-query/jobs/job-000001/delete?api_key=**** → 204",
		"  Async Job -- Create (ASYNC_CREATE) POST /v1/apikey-query/jobs?api_key=**** → 201",
		"  Async Job -- Polling (ASYNC_POLL) GET /v1/apikey-query/jobs/job-000002?api_key=**** → 200",
		"  Async Job -- Polling (ASYNC_POLL) GET /v1/apikey-query/jobs/job-000002?api_key=**** → 200",
		"  Async Job -- Delete (ASYNC_DELETE) POST /v1/apikey-query/jobs/job-000002/delete?api_key=**** → 204",
	}
	want := append(append([]string{"slice 1 {}",
		"  page /v1/apikey-query/jobs/job-000001/files/1?api_key=****: 25 records",
		"  page /v1/apikey-query/jobs/job-000001/files/2?api_key=****: 11 records"}, jobs...),
		"slice 2 {}",
		"  page /v1/apikey-query/jobs/job-000002/files/1?api_key=****: 25 records",
		"  page /v1/apikey-query/jobs/job-000002/files/2?api_key=****: 11 records")
	want = append(want, jobs...)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("slices:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if d := sr.Slices[0].AuxiliaryRequests[0].Description; d != "Create the server-side async job. Timeout after: 0:10:00" {
		t.Errorf("the creation's description %q", d)
	}
	if len(sr.AuxiliaryRequests) != 0 {
		t.Errorf("auxiliary requests of the read: %v", sr.AuxiliaryRequests)
	}
}

func TestPyTimedelta(t *testing.T) {
	for s, want := range map[float64]string{0: "0:00:00", 900: "0:15:00", 5400: "1:30:00", 86400: "1 day, 0:00:00", 3*86400 + 61: "3 days, 0:01:01"} {
		if got := pyTimedelta(s); got != want {
			t.Errorf("pyTimedelta(%v) = %q, want %q", s, got, want)
		}
	}
}
