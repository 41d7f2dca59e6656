package cmd

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestE2EExtractor checks which records `read` takes out of a response body
// DpathExtractor and RecordFilter) and that they are written byte for byte.
func TestE2EExtractor(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		body     string
		selector string
		values   string
		want     string
	}{
		{
			name:     "a list under a nested field path",
			body:     `{"result":{"items":[{"id":1},{"id":2}],"total":2}}`,
			selector: "extractor: {type: DpathExtractor, field_path: [result, items]}",
			want:     "{\"id\":1}\n{\"id\":2}\n",
		},
		{
			name:     "a templated field path segment",
			body:     `{"users":[{"id":1}],"teams":[{"id":9}]}`,
			selector: "extractor: {type: DpathExtractor, field_path: [\"{{ config['kind'] }}\"]}",
			values:   "kind: teams\n",
			want:     "{\"id\":9}\n",
		},
		{
			name:     "a * wildcard over the keys of an object",
			body:     `{"groups":{"a":{"members":[{"id":1},{"id":2}]},"b":{"members":[{"id":3}]}}}`,
			selector: "extractor: {type: DpathExtractor, field_path: [groups, \"*\", members]}",
			want:     "[{\"id\":1},{\"id\":2}]\n[{\"id\":3}]\n",
		},
		{
			name:     "a * wildcard over the elements of a list",
			body:     `{"pages":[{"row":{"id":1}},{"row":{"id":2}}]}`,
			selector: "extractor: {type: DpathExtractor, field_path: [pages, \"*\", row]}",
			want:     "{\"id\":1}\n{\"id\":2}\n",
		},
		{
			name:     "[] takes a whole object body as one record",
			body:     `{"id":7,"name":"only"}`,
			selector: e2eWholeBody,
			want:     "{\"id\":7,\"name\":\"only\"}\n",
		},
		{
			name:     "[] takes each element of a top-level array body",
			body:     `[{"id":1},{"id":2},{"id":3}]`,
			selector: e2eWholeBody,
			want:     "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n",
		},
		{
			name:     "an object at the field path is one record",
			body:     `{"data":{"id":5,"tags":["x"]}}`,
			selector: e2eDataPath,
			want:     "{\"id\":5,\"tags\":[\"x\"]}\n",
		},
		{
			name:     "a missing field path yields no record",
			body:     `{"other":[{"id":1}]}`,
			selector: e2eDataPath,
			want:     "",
		},
		{
			name:     "null at the field path yields no record",
			body:     `{"data":null}`,
			selector: e2eDataPath,
			want:     "",
		},
		{
			name: "a record filter keeps the records whose condition is true",
			body: `{"data":[{"id":1,"status":"open"},{"id":2,"status":"closed"},{"id":3,"status":"open","n":5}]}`,
			selector: `
extractor: {type: DpathExtractor, field_path: [data]}
record_filter:
  type: RecordFilter
  condition: "{{ record['status'] == config['status'] }}"`,
			values: "status: open\n",
			want:   "{\"id\":1,\"status\":\"open\"}\n{\"id\":3,\"status\":\"open\",\"n\":5}\n",
		},
		{
			name: "a record filter reading a missing key drops the record",
			body: `{"data":[{"id":1,"meta":{"deleted":false}},{"id":2},{"id":3,"meta":{"deleted":true}}]}`,
			selector: `
extractor: {type: DpathExtractor, field_path: [data]}
record_filter:
  condition: "{{ record.meta.deleted is false }}"`,
			want: "{\"id\":1,\"meta\":{\"deleted\":false}}\n",
		},
		{
			name:     "key order, 20-digit numbers, exponents and unicode are kept as received",
			body:     `{"data":[{"z":1,"a":2,"id":12345678901234567890,"f":1.50,"e":1E+3,"s":"é\u00e9"}]}`,
			selector: e2eDataPath,
			want:     "{\"z\":1,\"a\":2,\"id\":12345678901234567890,\"f\":1.50,\"e\":1E+3,\"s\":\"é\\u00e9\"}\n",
		},
		{
			name:     "<, > and & are not HTML-escaped",
			body:     `[{"html":"<a href=\"x\">&amp;</a>","u":"\u003c"}]`,
			selector: e2eWholeBody,
			want:     "{\"html\":\"<a href=\\\"x\\\">&amp;</a>\",\"u\":\"\\u003c\"}\n",
		},
		{
			name: "pretty-printed API JSON is compacted to one line per record",
			body: "{\n  \"data\": [\n    {\n      \"id\": 1,\n      \"name\": \"a b\",\n      \"tags\": [ \"x\" , \"y\" ]\n    },\n" +
				"\t{\"id\":2}\n  ]\n}\n",
			selector: e2eDataPath,
			want:     "{\"id\":1,\"name\":\"a b\",\"tags\":[\"x\",\"y\"]}\n{\"id\":2}\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			api := newRecorder(t, e2eAnswer(tt.body))
			requester := "url_base: \"{{ config['base_url'] }}\"\npath: /items\n"
			res := e2eRead(t, api, e2eOneStream(requester, tt.selector), tt.values)
			e2eCheckResult(t, api, res, 0, tt.want, "")
		})
	}
}

// e2eTwoStreams is a definition with the streams users (/users, records under data) and teams
// (/teams, a top-level array).
const e2eTwoStreams = `version: 6.0.0
type: DeclarativeSource
definitions:
  requester:
    type: HttpRequester
    url_base: "{{ config['base_url'] }}"
    path: "/{{ parameters['name'] }}"
streams:
  - type: DeclarativeStream
    name: users
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", $parameters: {name: users}}
      record_selector: {extractor: {field_path: [data]}}
  - type: DeclarativeStream
    name: teams
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", $parameters: {name: teams}}
      record_selector: {extractor: {field_path: []}}
`

// e2eTwoStreamsAPI answers /users and /teams; a path listed in fail answers 404.
func e2eTwoStreamsAPI(t *testing.T, fail ...string) *recorder {
	return newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		for _, f := range fail {
			if r.URL.Path == f {
				w.WriteHeader(http.StatusNotFound)
				w.Write([]byte(`{"error":"no such thing"}`))
				return
			}
		}
		switch r.URL.Path {
		case "/users":
			w.Write([]byte(`{"data":[{"id":1,"name":"<Ann>"},{"id":2,"name":"Bob"}]}`))
		case "/teams":
			w.Write([]byte(`[{"id":10}]`))
		default:
			w.WriteHeader(http.StatusNotFound)
		}
	})
}

// TestE2EOutputFormats checks the three formats of `read`.
func TestE2EOutputFormats(t *testing.T) {
	t.Parallel()
	t.Run("records", func(t *testing.T) {
		t.Parallel()
		api := e2eTwoStreamsAPI(t)
		res := e2eRead(t, api, e2eTwoStreams, "", "--format", "records")
		e2eCheckResult(t, api, res, 0, "{\"id\":1,\"name\":\"<Ann>\"}\n{\"id\":2,\"name\":\"Bob\"}\n{\"id\":10}\n", "")
	})
	t.Run("envelope", func(t *testing.T) {
		t.Parallel()
		api := e2eTwoStreamsAPI(t)
		res := e2eRead(t, api, e2eTwoStreams, "", "--format", "envelope")
		e2eCheckResult(t, api, res, 0,
			`{"stream":"users","data":{"id":1,"name":"<Ann>"}}`+"\n"+
				`{"stream":"users","data":{"id":2,"name":"Bob"}}`+"\n"+
				`{"stream":"teams","data":{"id":10}}`+"\n", "")
	})
	t.Run("airbyte", func(t *testing.T) {
		t.Parallel()
		api := e2eTwoStreamsAPI(t)
		res := e2eRead(t, api, e2eTwoStreams, "", "--format", "airbyte")
		e2eCheckResult(t, api, res, 0, res.Stdout, "")
		e2eCheckAirbyte(t, res.Stdout,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"users"},"status":"STARTED"}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"users"},"status":"RUNNING"}}}`,
			`{"type":"RECORD","record":{"stream":"users","data":{"id":1,"name":"<Ann>"},"emitted_at":0}}`,
			`{"type":"RECORD","record":{"stream":"users","data":{"id":2,"name":"Bob"},"emitted_at":0}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"users"},"status":"COMPLETE"}}}`,
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":2.0}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"STARTED"}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"RUNNING"}}}`,
			`{"type":"RECORD","record":{"stream":"teams","data":{"id":10},"emitted_at":0}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"COMPLETE"}}}`,
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"teams"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":1.0}}}`,
		)
	})
	t.Run("airbyte with a failing stream", func(t *testing.T) {
		t.Parallel()
		api := e2eTwoStreamsAPI(t, "/users")
		res := e2eRead(t, api, e2eTwoStreams, "", "--format", "airbyte")
		e2eCheckResult(t, api, res, 1, res.Stdout,
			"error: stream users, page 1: 404 Not Found from GET http://API/users: {\"error\":\"no such thing\"} (0 records written before the failure)\n"+
				"1 of 2 streams failed\n")
		e2eCheckAirbyte(t, e2eScrub(res.Stdout, api),
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"users"},"status":"STARTED"}}}`,
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"stream users, page 1: 404 Not Found from GET http://API/users: {\"error\":\"no such thing\"} (0 records written before the failure)","internal_message":"404 Not Found from GET http://API/users: {\"error\":\"no such thing\"}","failure_type":"system_error","stream_descriptor":{"name":"users"}}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"users"},"status":"INCOMPLETE"}}}`,
			// The failed stream's state of no cursor, as the CDK's FinalStateCursor emits it.
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"users"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":0.0}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"STARTED"}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"RUNNING"}}}`,
			`{"type":"RECORD","record":{"stream":"teams","data":{"id":10},"emitted_at":0}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"teams"},"status":"COMPLETE"}}}`,
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"teams"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":1.0}}}`,
		)
	})
	// The data of an Airbyte RECORD is an object: a record that is not one fails its stream
	// (the CDK fails it too, a system_error, on dict(record)) and nothing of its page is
	// written; the other formats write it as sent. The count of records written before the
	// failure counts none of that page.
	t.Run("airbyte with a record that is not an object", func(t *testing.T) {
		t.Parallel()
		api := newRecorder(t, e2eAnswer(`{"data":[{"id":1},"x",{"id":2}]}`))
		def := e2eOneStream("url_base: '{{ config.base_url }}'\npath: /items\n", e2eDataPath)
		res := e2eRead(t, api, def, "", "--format", "airbyte")
		e2eCheckResult(t, api, res, 1, res.Stdout,
			"error: stream items, page 1: a record is a string, not an object: an Airbyte RECORD's data is an object (0 records written before the failure)\n")
		e2eCheckAirbyte(t, res.Stdout,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"items"},"status":"STARTED"}}}`,
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":0,"error":{"message":"stream items, page 1: a record is a string, not an object: an Airbyte RECORD's data is an object (0 records written before the failure)","internal_message":"a record is a string, not an object: an Airbyte RECORD's data is an object","failure_type":"system_error","stream_descriptor":{"name":"items"}}}}`,
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":0,"stream_status":{"stream_descriptor":{"name":"items"},"status":"INCOMPLETE"}}}`,
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"items"},"stream_state":{"__ab_no_cursor_state_message":true}},"sourceStats":{"recordCount":0.0}}}`,
		)
		res = e2eRead(t, api, def, "", "--format", "records")
		e2eCheckResult(t, api, res, 0, `{"id":1}`+"\n"+`"x"`+"\n"+`{"id":2}`+"\n", "")
	})
}

// e2eCheckAirbyte compares airbyte messages with want line by line. emitted_at is the time of
// the run: it must be a plausible time in milliseconds, and is compared as 0.
func e2eCheckAirbyte(t *testing.T, stdout string, want ...string) {
	t.Helper()
	got := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), stdout)
	}
	stamp := regexp.MustCompile(`"emitted_at":(\d+)`)
	for i, line := range got {
		m := stamp.FindStringSubmatch(line)
		if m == nil && !strings.HasPrefix(line, `{"type":"STATE"`) { // the CDK's STATE has none
			t.Errorf("line %d has no emitted_at: %s", i+1, line)
			continue
		}
		if m != nil {
			if ms, _ := strconv.ParseInt(m[1], 10, 64); ms < 1_600_000_000_000 || ms > 4_000_000_000_000 {
				t.Errorf("line %d: emitted_at %s is not a time in milliseconds", i+1, m[1])
			}
		}
		if norm := stamp.ReplaceAllString(line, `"emitted_at":0`); norm != want[i] {
			t.Errorf("line %d:\n got %s\nwant %s", i+1, norm, want[i])
		}
		var v any
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			t.Errorf("line %d is not JSON: %v", i+1, err)
		}
	}
}
