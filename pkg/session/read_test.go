package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"connector/pkg/redact"
)

// readDef has three streams at config.base_url: items (two pages of two records), gone (the
// API answers 404) and more (one page).
const readDef = `version: 6.5.0
type: DeclarativeSource
definitions:
  requester: {type: HttpRequester, url_base: "{{ config['base_url'] }}", authenticator: {type: BearerAuthenticator, api_token: "{{ config['api_key'] }}"}}
  selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/requester", path: /items}
      record_selector: {$ref: "#/definitions/selector"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 2, start_from_page: 1}
  - type: DeclarativeStream
    name: gone
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /gone}, record_selector: {$ref: "#/definitions/selector"}}
  - type: DeclarativeStream
    name: more
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/requester", path: /more}, record_selector: {$ref: "#/definitions/selector"}}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [base_url, api_key]
    properties:
      base_url: {type: string}
      api_key: {type: string, airbyte_secret: true}
`

func readAPI(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/items":
			if r.URL.Query().Get("page") == "2" {
				fmt.Fprint(w, `{"data":[{"id":3}]}`)
				return
			}
			fmt.Fprint(w, `{"data":[{"id":1},{"id":2}]}`)
		case "/more":
			fmt.Fprint(w, `{"data":[{"id":"m"}]}`)
		default:
			http.Error(w, `{"error":"no such thing"}`, http.StatusNotFound)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// readWith opens a session on readDef against a local API and reads it with spec (Out,
// State and Report filled here); it returns stdout, the events said as text, and the outcome.
func readWith(t *testing.T, spec ReadSpec) (string, []string, Outcome) {
	// The API's address is written API in what is returned.
	t.Helper()
	srv := readAPI(t)
	fixed := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s, err := open(t, readDef, "base_url: "+srv.URL+"\napi_key: key-secret-1\n", Inputs{},
		Env{Redactor: &redact.Redactor{}, Now: func() time.Time { return fixed }, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return readSession(t, s, srv.URL, spec)
}

// readSession reads s with spec (Out, Report, and State when unset, filled here) and
// closes it; it returns stdout, the events said as text, and the outcome, base written API
// in them.
func readSession(t *testing.T, s *Session, base string, spec ReadSpec) (string, []string, Outcome) {
	t.Helper()
	defer s.Close()
	if spec.State == nil {
		st, err := OpenState(StateFiles{})
		if err != nil {
			t.Fatal(err)
		}
		spec.State = st
	}
	var out bytes.Buffer
	var events []string
	spec.Out, spec.Workers = &out, 1
	spec.Report = func(ev Event) {
		switch ev := ev.(type) {
		case StreamEnded:
			events = append(events, fmt.Sprintf("ended %s %d records %d pages", ev.Result.Stream, ev.Result.Records, ev.Result.Pages))
		case StreamFailed:
			events = append(events, fmt.Sprintf("failed %s grouped=%v: %s", ev.Stream, ev.Grouped, ev.Message))
		case StoppedEarly:
			events = append(events, fmt.Sprintf("stopped early %s by %s after %d records", ev.Stream, ev.Limit, ev.Records))
		case Failures:
			events = append(events, fmt.Sprintf("failures %d of %d, %d not read", ev.Failed, ev.Streams, ev.NotRead))
		default:
			events = append(events, fmt.Sprintf("%T %+v", ev, ev))
		}
	}
	res, err := s.Read(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	for i := range events {
		events[i] = strings.ReplaceAll(events[i], base, "API")
	}
	return strings.ReplaceAll(out.String(), base, "API"), events, res
}

func TestReadEvents(t *testing.T) {
	out, events, res := readWith(t, ReadSpec{Format: "envelope", MaxRecords: 2})
	wantOut := `{"stream":"items","data":{"id":1}}
{"stream":"items","data":{"id":2}}
{"stream":"more","data":{"id":"m"}}
`
	if out != wantOut {
		t.Errorf("stdout:\n%s\nwant:\n%s", out, wantOut)
	}
	want := []string{
		"ended items 2 records 1 pages",
		"stopped early items by --max-records 2 after 2 records",
		"ended gone 0 records 0 pages",
		`failed gone grouped=false: stream gone, page 1: 404 Not Found from GET API/gone: {"error":"no such thing"} (0 records written before the failure)`,
		"ended more 1 records 1 pages",
		"failures 1 of 3, 0 not read",
	}
	if strings.Join(events, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(events, "\n"), strings.Join(want, "\n"))
	}
	if res.Failed != 1 || res.Stopped != nil || res.StateErr != nil {
		t.Errorf("outcome %+v", res)
	}
}

func TestReadFailFast(t *testing.T) {
	_, events, res := readWith(t, ReadSpec{Format: "records", FailFast: true})
	if got := events[len(events)-1]; got != "failures 1 of 3, 1 not read" {
		t.Errorf("last event %q; all:\n%s", got, strings.Join(events, "\n"))
	}
	if res.Failed != 1 {
		t.Errorf("outcome %+v", res)
	}
}

// The protocol read writes the CDK's LOG messages and statuses, and a closing TRACE ERROR
// naming the failed streams.
func TestReadProtocol(t *testing.T) {
	out, _, _ := readWith(t, ReadSpec{Format: "airbyte", Protocol: true, Missing: []string{"nowhere"}})
	got := protocolSummary(t, out)
	text := strings.Join(got, "\n")
	for _, want := range []string{
		"LOG INFO Starting syncing\nLOG WARN The stream 'nowhere' in your connection configuration was not found in the source.",
		"STATUS nowhere INCOMPLETE\nLOG INFO Marking stream items as STARTED\nLOG INFO Syncing stream: items\nSTATUS items STARTED",
		"STATUS items RUNNING\nRECORD items\nRECORD items\nRECORD items\nLOG INFO Read 3 records from items stream\nLOG INFO Marking stream items as STOPPED\nLOG INFO Finished syncing items\nSTATUS items COMPLETE\nSTATE",
		`LOG ERROR Exception while syncing stream gone: 404 Not Found from GET API/gone: {"error":"no such thing"}`,
		`TRACE ERROR stream gone, page 1: 404 Not Found from GET API/gone: {"error":"no such thing"} (0 records written before the failure)`,
		"STATUS more COMPLETE\nSTATE\nLOG INFO During the sync, the following streams did not sync successfully: gone: AirbyteTracedException('404 Not Found from GET API/gone: {\"error\":\"no such thing\"}')\nLOG FATAL During",
		"TRACE ERROR During the sync, the following streams did not sync successfully: gone: AirbyteTracedException(",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("protocol output lacks\n%s\nin\n%s", want, text)
		}
	}
	if strings.Contains(text, "Finished syncing\n") || strings.HasSuffix(text, "Finished syncing") {
		t.Errorf("a read with a failed stream ends without 'Finished syncing':\n%s", text)
	}
	if strings.Contains(out, "key-secret-1") {
		t.Error("the secret reached the output")
	}
}

// With CheckSchema, each stream's end reports what the checks of its records found: here
// no declared schema, no primary key, and a stream that returned nothing.
func TestReadCheckSchema(t *testing.T) {
	_, events, res := readWith(t, ReadSpec{Format: "records", CheckSchema: true})
	var got []string
	for _, e := range events {
		if strings.HasPrefix(e, "session.SchemaChecked") {
			got = append(got, e)
		}
	}
	want := []string{
		"session.SchemaChecked {Stream:items Report:{Records:3 Warnings:[] Counts:map[]} Err:<nil>}",
		"session.SchemaChecked {Stream:gone Report:{Records:0 Warnings:[the stream returned no records] Counts:map[no_records:1]} Err:<nil>}",
		"session.SchemaChecked {Stream:more Report:{Records:1 Warnings:[] Counts:map[]} Err:<nil>}",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") || res.SchemaWarnings != 1 {
		t.Errorf("got\n%s\nwant\n%s\n(%d warnings)", strings.Join(got, "\n"), strings.Join(want, "\n"), res.SchemaWarnings)
	}
}

// The check plan: check.stream_names in their order; the first page of a stream read with
// its records checked when asked.
func TestCheckPlanAndStream(t *testing.T) {
	srv := readAPI(t)
	def := strings.Replace(readDef, "streams:\n", "check: {type: CheckStream, stream_names: [more, gone]}\nstreams:\n", 1)
	s, err := open(t, def, "base_url: "+srv.URL+"\napi_key: k-secret\n", Inputs{}, Env{Redactor: &redact.Redactor{}, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	plan := s.CheckPlan()
	if len(plan.Targets) != 2 || plan.Targets[0].Stream == nil || plan.Targets[0].Name != "more" || plan.Targets[1].Name != "gone" {
		t.Fatalf("plan %+v", plan)
	}
	res := s.CheckStream(context.Background(), plan.Targets[0].Stream, true)
	if res.Err != nil || res.Records != 1 || res.Schema == nil || res.Schema.Records != 1 || res.Schema.Total() != 0 {
		t.Errorf("check of more: %+v", res)
	}
	res = s.CheckStream(context.Background(), plan.Targets[1].Stream, true)
	if res.Err == nil || !strings.HasPrefix(res.Reason, "404 Not Found from GET ") || res.Schema != nil {
		t.Errorf("check of gone: %+v", res)
	}
}

// protocolSummary says each protocol message of out in a line: "LOG LEVEL MESSAGE",
// "RECORD STREAM", "STATUS STREAM STATUS [REASON]", "TRACE TYPE MESSAGE", or its type.
func protocolSummary(t *testing.T, out string) []string {
	t.Helper()
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m struct {
			Type  string
			Log   struct{ Level, Message string }
			Trace struct {
				Type   string
				Error  struct{ Message string }
				Stream struct {
					StreamDescriptor struct{ Name string } `json:"stream_descriptor"`
					Status           string
					Reasons          []struct {
						RateLimited struct{} `json:"rate_limited"`
						Type        string
					}
				} `json:"stream_status"`
			}
			Record struct{ Stream string }
		}
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch m.Type {
		case "LOG":
			got = append(got, "LOG "+m.Log.Level+" "+m.Log.Message)
		case "RECORD":
			got = append(got, "RECORD "+m.Record.Stream)
		case "TRACE":
			if m.Trace.Type == "STREAM_STATUS" {
				line := "STATUS " + m.Trace.Stream.StreamDescriptor.Name + " " + m.Trace.Stream.Status
				for _, r := range m.Trace.Stream.Reasons {
					line += " " + r.Type
				}
				got = append(got, line)
			} else {
				got = append(got, "TRACE "+m.Trace.Type+" "+m.Trace.Error.Message)
			}
		default:
			got = append(got, m.Type)
		}
	}
	return got
}
