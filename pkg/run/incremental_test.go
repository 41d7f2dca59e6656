package run

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"connector/pkg/auth"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/redact"
	"connector/pkg/template"
)

// Incremental streams read against a local API: the exact requests, records and
// checkpoints (the state after each slice read whole, and at the end). The same cases run
// through the CLI in cmd/incremental_e2e_test.go, checked there against the CDK.

// readWith loads def, reads its stream named stream against api (base_url in the testing
// values) with the options set by opts, and returns the records, the result and the
// checkpoints, each "slice STATE (n records)" or "final STATE"; a checkpoint that is no
// STATE message is marked "(no message)".
func readWith(t *testing.T, api *partAPI, def, stream string, opts func(o *Options)) ([]string, Result, []string) {
	t.Helper()
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	s := d.Stream(stream)
	if s == nil {
		t.Fatalf("no stream %s", stream)
	}
	cfg := map[string]any{"base_url": api.URL}
	client := &httpx.Client{HTTP: &http.Client{}, Redactor: &redact.Redactor{}}
	a, err := auth.New(d.Authenticator, auth.Env{Globals: template.Globals{Config: cfg}, Client: client, Redactor: client.Redactor, Now: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	out := &emitter{}
	var cps []string
	o := &Options{Config: cfg, Auth: a, Client: client, Overlap: true, Out: out,
		Checkpoint: func(cp Checkpoint) {
			text, err := record.Marshal(cp.State)
			if err != nil {
				t.Error(err)
			}
			line := fmt.Sprintf("slice %s (%d records)", text, cp.Records)
			if cp.Final {
				line = "final " + string(text)
			}
			if !cp.Message {
				line += " (no message)"
			}
			if cp.Failed {
				line += " (failed)"
			}
			cps = append(cps, line)
		}}
	if opts != nil {
		opts(o)
	}
	res := Stream(context.Background(), o, s)
	return out.lines, res, cps
}

// stateOf gives the input states of a read from JSON texts by stream.
func stateOf(t *testing.T, states map[string]string) func(string) *record.Object {
	return func(name string) *record.Object {
		text, ok := states[name]
		if !ok {
			return nil
		}
		v, err := record.Decode([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return v.(*record.Object)
	}
}

const eventsStream = `
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /events}
      record_selector: {$ref: "#/definitions/sel"}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-03"
      step: P1D
      cursor_granularity: P1D
      start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
      end_time_option: {type: RequestOption, inject_into: request_parameter, field_name: until}
`

// A DatetimeBasedCursor stream: a request per interval, a checkpoint after each slice
// with the records written since the last one, the final state at the end; an input state
// starts the read where it stands.
func TestIncrementalCheckpoints(t *testing.T) {
	routes := map[string]any{
		"GET /events?since=2024-01-01&until=2024-01-01": `{"data":[{"id":1,"updated":"2024-01-01"}]}`,
		"GET /events?since=2024-01-02&until=2024-01-03": `{"data":[{"id":2,"updated":"2024-01-03"},{"id":3,"updated":"2024-01-02"}]}`,
	}
	t.Run("from the start", func(t *testing.T) {
		api := servePartitions(t, routes)
		recs, res, cps := readWith(t, api, partitionsDef(eventsStream), "events", nil)
		checkLines(t, "requests", api.requests(), []string{"GET /events?since=2024-01-01&until=2024-01-01", "GET /events?since=2024-01-02&until=2024-01-03"})
		checkLines(t, "records", recs, []string{`{"id":1,"updated":"2024-01-01"}`, `{"id":2,"updated":"2024-01-03"}`, `{"id":3,"updated":"2024-01-02"}`})
		checkLines(t, "checkpoints", cps, []string{`slice {"updated":"2024-01-01"} (1 records)`, `slice {"updated":"2024-01-03"} (2 records)`, `final {"updated":"2024-01-03"}`})
		checkResult(t, res, 2, 2, 3, "")
	})
	t.Run("from a state", func(t *testing.T) {
		api := servePartitions(t, routes)
		_, res, cps := readWith(t, api, partitionsDef(eventsStream), "events", func(o *Options) {
			o.StateOf = stateOf(t, map[string]string{"events": `{"updated":"2024-01-02"}`})
		})
		checkLines(t, "requests", api.requests(), []string{"GET /events?since=2024-01-02&until=2024-01-03"})
		checkLines(t, "checkpoints", cps, []string{`slice {"updated":"2024-01-03"} (2 records)`, `final {"updated":"2024-01-03"}`})
		checkResult(t, res, 1, 1, 2, "")
	})
	t.Run("a failed slice is not taken in", func(t *testing.T) {
		failing := map[string]any{
			"GET /events?since=2024-01-01&until=2024-01-01": routes["GET /events?since=2024-01-01&until=2024-01-01"],
			"GET /events?since=2024-01-02&until=2024-01-03": partAnswer{Status: 400, Body: `{"error":"bad"}`},
		}
		api := servePartitions(t, failing)
		_, res, cps := readWith(t, api, partitionsDef(eventsStream), "events", nil)
		checkLines(t, "checkpoints", cps, []string{`slice {"updated":"2024-01-01"} (1 records)`, `final {"updated":"2024-01-01"} (failed)`})
		if res.Err == nil || res.FailedSlices != 1 {
			t.Errorf("result %+v, want the second slice failed", res)
		}
	})
}

// A full refresh stream read to its end has the CDK's state of no cursor; a failed one has
// it too, as the CDK's FinalStateCursor emits it whatever happened, marked failed so that no
// state file keeps it.
func TestFullRefreshFinalCheckpoint(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /items}
      record_selector: {$ref: "#/definitions/sel"}
`)
	api := servePartitions(t, map[string]any{"GET /items": `{"data":[{"id":1}]}`})
	_, _, cps := readWith(t, api, def, "items", nil)
	checkLines(t, "checkpoints", cps, []string{`final {"__ab_no_cursor_state_message":true}`})

	failing := servePartitions(t, map[string]any{})
	_, res, cps := readWith(t, failing, def, "items", nil)
	if res.Err == nil {
		t.Errorf("no error; want a failure")
	}
	checkLines(t, "checkpoints of the failed stream", cps, []string{`final {"__ab_no_cursor_state_message":true} (failed)`})
}

// CheckState finds a state that does not fit before anything is read; the error names the
// stream and the key.
func TestCheckState(t *testing.T) {
	d, diags := manifest.Parse("def.yaml", []byte(partitionsDef(eventsStream)))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	o := &Options{StateOf: stateOf(t, map[string]string{"events": `{"updated":"yesterday"}`})}
	err := CheckState(o, d.Streams)
	var se *StateError
	if !errors.As(err, &se) || se.Stream != "events" {
		t.Fatalf("error %v, want a *StateError for events", err)
	}
	want := `the state of stream events does not fit its incremental_sync: key "updated": no format in ['%Y-%m-%d'] matching yesterday`
	if err.Error() != want {
		t.Errorf("error:\n  %s\nwant:\n  %s", err, want)
	}
	if errors.Unwrap(err) == nil {
		t.Error("a StateError unwraps to its cause")
	}
	o.StateOf = stateOf(t, map[string]string{"events": `{"updated":"2024-01-02"}`})
	if err := CheckState(o, d.Streams); err != nil {
		t.Errorf("a state that fits: %v", err)
	}
}

const delegating = `
  - type: StateDelegatingStream
    name: customers
    api_retention_period: "{{ config.retention }}"
    full_refresh_stream:
      type: DeclarativeStream
      name: customers
      retriever:
        type: SimpleRetriever
        requester: {$ref: "#/definitions/req", path: /customers}
        record_selector: {$ref: "#/definitions/sel"}
    incremental_stream:
      type: DeclarativeStream
      name: customers
      retriever:
        type: SimpleRetriever
        requester: {$ref: "#/definitions/req", path: /customer_events}
        record_selector: {$ref: "#/definitions/sel"}
      incremental_sync:
        type: DatetimeBasedCursor
        cursor_field: updated
        datetime_format: "%Y-%m-%dT%H:%M:%SZ"
        start_datetime: "2024-03-01T00:00:00Z"
        end_datetime: "2024-03-10T00:00:00Z"
        start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
`

// A StateDelegatingStream reads its incremental stream when it has a state within the
// API's retention period (or a full refresh's own state), else its full refresh stream,
// with a note for a state too old.
func TestStateDelegatingStream(t *testing.T) {
	tests := []struct {
		name, state, retention string
		want                   []string
		warnings               []string
	}{
		{"no state", "", "P30D", []string{"GET /customers"}, nil},
		{"a recent state", `{"updated":"2024-03-04T10:00:00Z"}`, "P30D", []string{"GET /customer_events?since=2024-03-04T10%3A00%3A00Z"}, nil},
		{"a full refresh's state", `{"__ab_no_cursor_state_message":true}`, "P30D", []string{"GET /customer_events?since=2024-03-01T00%3A00%3A00Z"}, nil},
		{"an old state", `{"updated":"2024-01-04T10:00:00Z"}`, "P30D", []string{"GET /customers"},
			[]string{"customers: the state's cursor value is older than the API's retention period of P30D (cutoff 2024-02-19T00:00:00Z): reading the full refresh stream so that nothing is lost"}},
		{"a retention that is no duration", `{"updated":"2024-01-04T10:00:00Z"}`, "a month", []string{"GET /customer_events?since=2024-03-01T00%3A00%3A00Z"},
			[]string{`customers: api_retention_period "a month" is not an ISO 8601 duration; the state is used as it is`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			api := servePartitions(t, map[string]any{
				"GET /customers": `{"data":[]}`,
				"GET /customer_events?since=2024-03-04T10%3A00%3A00Z": `{"data":[]}`,
				"GET /customer_events?since=2024-03-01T00%3A00%3A00Z": `{"data":[]}`,
			})
			var warnings []string
			_, res, _ := readWith(t, api, partitionsDef(delegating), "customers", func(o *Options) {
				o.Config["retention"] = tt.retention
				o.Now = func() time.Time { return time.Date(2024, 3, 20, 0, 0, 0, 0, time.UTC) }
				o.Warn = func(s string) { warnings = append(warnings, s) }
				if tt.state != "" {
					o.StateOf = stateOf(t, map[string]string{"customers": tt.state})
				}
			})
			if res.Err != nil {
				t.Fatal(res.Err)
			}
			checkLines(t, "requests", api.requests(), tt.want)
			checkLines(t, "warnings", warnings, tt.warnings)
		})
	}
}

// A child whose parent is incremental with incremental_dependency carries the parent's
// state under parent_state, and a resumed read starts the parent from it.
func TestIncrementalDependency(t *testing.T) {
	def := partitionsDef(`
  - type: DeclarativeStream
    name: comments
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/posts/{{ stream_partition.post }}/comments"}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - type: ParentStreamConfig
            parent_key: id
            partition_field: post
            incremental_dependency: true
            stream:
              type: DeclarativeStream
              name: posts
              retriever:
                type: SimpleRetriever
                requester: {$ref: "#/definitions/req", path: /posts}
                record_selector: {$ref: "#/definitions/sel"}
              incremental_sync:
                type: DatetimeBasedCursor
                cursor_field: updated
                datetime_format: "%Y-%m-%d"
                start_datetime: "2024-01-01"
                end_datetime: "2024-01-05"
                start_time_option: {type: RequestOption, inject_into: request_parameter, field_name: since}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      end_datetime: "2024-01-05"
`)
	api := servePartitions(t, map[string]any{
		"GET /posts?since=2024-01-01": `{"data":[{"id":"p1","updated":"2024-01-02"},{"id":"p2","updated":"2024-01-04"}]}`,
		"GET /posts?since=2024-01-04": `{"data":[]}`,
		"GET /posts/p1/comments":      `{"data":[{"c":1,"updated":"2024-01-03"}]}`,
		"GET /posts/p2/comments":      `{"data":[]}`,
	})
	clock := time.Date(2024, 3, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	recs, res, cps := readWith(t, api, def, "comments", func(o *Options) { o.Now = now })
	checkLines(t, "requests", api.requests(), []string{"GET /posts?since=2024-01-01", "GET /posts/p1/comments", "GET /posts/p2/comments"})
	checkLines(t, "records", recs, []string{`{"c":1,"updated":"2024-01-03"}`})
	checkResult(t, res, 2, 2, 1, "")
	final := `{"use_global_cursor":false,"states":[{"partition":{"parent_slice":{},"post":"p1"},"cursor":{"updated":"2024-01-03"}},{"partition":{"parent_slice":{},"post":"p2"},"cursor":{"updated":"2024-01-01"}}],"state":{"updated":"2024-01-03"},"lookback_window":0,"parent_state":{"posts":{"updated":"2024-01-04"}}}`
	if len(cps) == 0 || cps[len(cps)-1] != "final "+final {
		t.Errorf("checkpoints:\n  %s\nwant the last:\n  final %s", strings.Join(cps, "\n  "), final)
	}
	_, _, _ = readWith(t, api, def, "comments", func(o *Options) {
		o.Now = now
		o.StateOf = stateOf(t, map[string]string{"comments": final})
	})
	reqs := api.requests()
	if got := reqs[3]; got != "GET /posts?since=2024-01-04" {
		t.Errorf("a resumed read starts the parent at %s, want GET /posts?since=2024-01-04 (requests %v)", got, reqs)
	}
}
