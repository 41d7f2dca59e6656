package protocoltest

import (
	"fmt"
	"strings"
	"testing"
)

// One message of every type and kind the protocol has, as a source writes them, in an
// order the stream statuses allow.
var valid = []string{
	started,
	running,
	`{"type":"RECORD","record":{"stream":"books","data":{"id":1},"emitted_at":1700000000000}}`,
	`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books","namespace":"ns"},"status":"STARTED"}}}`,
	`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books","namespace":"ns"},"status":"RUNNING"}}}`,
	`{"type":"RECORD","record":{"namespace":"ns","stream":"books","data":{},"emitted_at":1700000000000,"meta":{"changes":[{"field":"title","change":"NULLED","reason":"SOURCE_FIELD_SIZE_LIMITATION"}]}}}`,
	`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books","namespace":"ns"},"status":"COMPLETE"}}}`,
	`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"books"},"stream_state":{"updated_at":"2024-01-01"}},"sourceStats":{"recordCount":2.0}}}`,
	`{"type":"STATE","state":{"type":"GLOBAL","global":{"shared_state":{"cdc":1},"stream_states":[{"stream_descriptor":{"name":"books","namespace":"ns"}}]}}}`,
	`{"type":"STATE","state":{"type":"LEGACY","data":{"books":{"updated_at":"2024-01-01"}}}}`,
	`{"type":"LOG","log":{"level":"INFO","message":"Starting syncing"}}`,
	`{"type":"SPEC","spec":{"connectionSpecification":{"type":"object"},"documentationUrl":"https://example.com/docs","supportsNormalization":false,"supportsDBT":false}}`,
	`{"type":"CONNECTION_STATUS","connectionStatus":{"status":"FAILED","message":"401 Unauthorized"}}`,
	`{"type":"CATALOG","catalog":{"streams":[{"name":"books","json_schema":{},"supported_sync_modes":["full_refresh","incremental"],"source_defined_cursor":true,"default_cursor_field":["updated_at"],"source_defined_primary_key":[["id"]],"is_resumable":true}]}}`,
	`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1700000000000.5,"error":{"message":"m","internal_message":"i","failure_type":"transient_error","stream_descriptor":{"name":"books"}}}}`,
	`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"INCOMPLETE","reasons":[{"type":"RATE_LIMITED","rate_limited":{"quota_reset":1700000060000}}]}}}`,
	`{"type":"TRACE","trace":{"type":"ESTIMATE","emitted_at":1700000000000,"estimate":{"name":"books","type":"STREAM","row_estimate":100}}}`,
	`{"type":"TRACE","trace":{"type":"ANALYTICS","emitted_at":1700000000000,"analytics":{"type":"cursor-used","value":"2"}}}`,
	`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1700000000000,"connectorConfig":{"config":{"refresh_token":"new"}}}}`,
}

// The statuses of the stream books before its records.
const (
	started = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"STARTED"}}}`
	running = `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1700000000000,"stream_status":{"stream_descriptor":{"name":"books"},"status":"RUNNING"}}}`
)

func TestValidAcceptsEveryMessageType(t *testing.T) {
	if err := Validate(strings.Join(valid, "\n") + "\n"); err != nil {
		t.Error(err)
	}
	if err := Validate(""); err != nil {
		t.Errorf("no output: %v", err)
	}
}

// Each broken message is reported with its line number, where it breaks and the keyword.
func TestValidateReportsEveryBrokenLine(t *testing.T) {
	const protocol, message = "airbyte_protocol.schema.json#/definitions/", "airbyte_message.schema.json#/"
	tests := []struct{ name, line, want string }{
		{"emitted_at of a record is an integer",
			`{"type":"RECORD","record":{"stream":"a","data":{},"emitted_at":1.5}}`,
			"at /record/emitted_at: got number, want integer (" + protocol + "AirbyteRecordMessage/properties/emitted_at/type)"},
		{"emitted_at is a number, not a string",
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":"1","stream_status":{"stream_descriptor":{"name":"a"},"status":"STARTED"}}}`,
			"at /trace/emitted_at: got string, want number (" + protocol + "AirbyteTraceMessage/properties/emitted_at/type)"},
		{"record data is an object",
			`{"type":"RECORD","record":{"stream":"a","data":[1],"emitted_at":1}}`,
			"at /record/data: got array, want object (" + protocol + "AirbyteRecordMessage/properties/data/type)"},
		{"a record names its stream",
			`{"type":"RECORD","record":{"data":{},"emitted_at":1}}`,
			"at /record: missing property 'stream' (" + protocol + "AirbyteRecordMessage/required)"},
		{"stream status values",
			`{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"a"},"status":"DONE"}}}`,
			"at /trace/stream_status/status: value must be one of 'STARTED', 'RUNNING', 'COMPLETE', 'INCOMPLETE' (" + protocol + "AirbyteStreamStatus/enum)"},
		{"failure types",
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1,"error":{"message":"m","failure_type":"http_error"}}}`,
			"at /trace/error/failure_type: value must be one of 'system_error', 'config_error', 'transient_error' (" + protocol + "AirbyteErrorTraceMessage/properties/failure_type/enum)"},
		{"log levels",
			`{"type":"LOG","log":{"level":"WARNING","message":"m"}}`,
			"at /log/level: value must be one of 'FATAL', 'ERROR', 'WARN', 'INFO', 'DEBUG', 'TRACE' (" + protocol + "AirbyteLogMessage/properties/level/enum)"},
		{"state types",
			`{"type":"STATE","state":{"type":"PER_STREAM","stream":{"stream_descriptor":{"name":"a"}}}}`,
			"at /state/type: value must be one of 'GLOBAL', 'STREAM', 'LEGACY' (" + protocol + "AirbyteStateType/enum)"},
		{"record counts are numbers",
			`{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"a"}},"sourceStats":{"recordCount":"2"}}}`,
			"at /state/sourceStats/recordCount: got string, want number (" + protocol + "AirbyteStateStats/properties/recordCount/type)"},
		{"the documentation address is a URI",
			`{"type":"SPEC","spec":{"connectionSpecification":{},"documentationUrl":"docs"}}`,
			"at /spec/documentationUrl: 'docs' is not valid uri: relative url (" + protocol + "ConnectorSpecification/properties/documentationUrl/format)"},
		{"a stream supports a sync mode",
			`{"type":"CATALOG","catalog":{"streams":[{"name":"a","json_schema":{},"supported_sync_modes":[]}]}}`,
			"at /catalog/streams/0/supported_sync_modes: minItems: got 0, want 1 (" + protocol + "AirbyteStream/properties/supported_sync_modes/minItems)"},
		{"connection statuses",
			`{"type":"CONNECTION_STATUS","connectionStatus":{"status":"OK"}}`,
			"at /connectionStatus/status: value must be one of 'SUCCEEDED', 'FAILED' (" + protocol + "AirbyteConnectionStatus/properties/status/enum)"},
		{"a control message carries a config",
			`{"type":"CONTROL","control":{"type":"CONNECTOR_CONFIG","emitted_at":1,"connectorConfig":{}}}`,
			"at /control/connectorConfig: missing property 'config' (" + protocol + "AirbyteControlConnectorConfigMessage/required)"},
		{"message types",
			`{"type":"RECORDS"}`,
			"at /type: value must be one of 'RECORD', 'STATE', 'LOG', 'SPEC', 'CONNECTION_STATUS', 'CATALOG', 'TRACE', 'CONTROL', 'DESTINATION_CATALOG' (" + protocol + "AirbyteMessage/properties/type/enum)"},
		// What the protocol's schema leaves optional and airbyte_message.schema.json requires.
		{"a record message carries its record",
			`{"type":"RECORD","stream":"a","data":{}}`,
			"at /: missing property 'record' (" + message + "allOf/1/then/required)"},
		{"an error trace carries its error",
			`{"type":"TRACE","trace":{"type":"ERROR","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"a"},"status":"INCOMPLETE"}}}`,
			"at /trace: missing property 'error' (" + message + "allOf/10/properties/trace/allOf/0/then/required)"},
		{"a per-stream state carries its stream",
			`{"type":"STATE","state":{"type":"STREAM","data":{}}}`,
			"at /state: missing property 'stream' (" + message + "allOf/10/properties/state/allOf/0/then/required)"},
		{"not JSON", `{"type":"LOG",`, "not one JSON value: unexpected EOF"},
		{"two values", `{"type":"LOG","log":{"level":"INFO","message":"m"}}{}`, "not one JSON value: invalid character after top-level value"},
		{"not an object", `"RECORD"`, `not a JSON object: "\"RECORD\""`},
		{"an empty line", ``, `not a JSON object: ""`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The broken line is the third, after the statuses of a running stream.
			err := Validate(started + "\n" + running + "\n" + tt.line + "\n")
			want := "line 3: " + tt.want
			if err == nil || err.Error() != want {
				t.Errorf("got  %v\nwant %s", err, want)
			}
		})
	}
}

func TestValidateWantsTheLastNewline(t *testing.T) {
	err := Validate(started + "\n" + running)
	if want := "the last line has no newline"; err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

// The statuses of a stream come in the protocol's order, and its records while it runs.
func TestValidateFollowsTheStreamStatuses(t *testing.T) {
	status := func(name, st string) string {
		return `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"` + name + `"},"status":"` + st + `"}}}`
	}
	limitedStatus := func(name string) string {
		return `{"type":"TRACE","trace":{"type":"STREAM_STATUS","emitted_at":1,"stream_status":{"stream_descriptor":{"name":"` + name + `"},"status":"RUNNING","reasons":[{"type":"RATE_LIMITED"}]}}}`
	}
	record := func(name string) string {
		return `{"type":"RECORD","record":{"stream":"` + name + `","data":{},"emitted_at":1}}`
	}
	state := `{"type":"STATE","state":{"type":"STREAM","stream":{"stream_descriptor":{"name":"a"}}}}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"a whole read", []string{status("a", "STARTED"), status("a", "RUNNING"), record("a"), state, status("a", "COMPLETE"), state,
			status("b", "STARTED"), status("b", "COMPLETE")}, ""},
		{"a failed stream", []string{status("a", "STARTED"), status("a", "RUNNING"), record("a"), status("a", "INCOMPLETE")}, ""},
		{"a stream of the catalog the source lacks", []string{status("a", "INCOMPLETE")}, ""},
		{"a record before RUNNING", []string{status("a", "STARTED"), record("a")},
			`line 2: a RECORD of stream "a" after its STARTED status, not RUNNING`},
		{"a record of a stream never started", []string{record("a")},
			`line 1: a RECORD of stream "a", which has no RUNNING status before it`},
		{"a record of another stream", []string{status("a", "STARTED"), status("a", "RUNNING"), record("b")},
			`line 3: a RECORD of stream "b", which has no RUNNING status before it`},
		{"a record after the end", []string{status("a", "STARTED"), status("a", "RUNNING"), status("a", "COMPLETE"), record("a")},
			`line 4: a RECORD of stream "a" after its COMPLETE status, not RUNNING`},
		{"RUNNING twice", []string{status("a", "STARTED"), status("a", "RUNNING"), status("a", "RUNNING")},
			`line 3: stream "a" is RUNNING after RUNNING`},
		{"RUNNING again around a rate-limited wait, as the CDK reports it",
			[]string{status("a", "STARTED"), limitedStatus("a"), status("a", "RUNNING"), record("a"), limitedStatus("a"), limitedStatus("a"), status("a", "RUNNING"), status("a", "COMPLETE")}, ""},
		{"RUNNING before STARTED", []string{status("a", "RUNNING")},
			`line 1: stream "a" is RUNNING without a STARTED status before`},
		{"COMPLETE without STARTED", []string{status("a", "COMPLETE")},
			`line 1: stream "a" is COMPLETE without a STARTED status before`},
		{"two ends", []string{status("a", "STARTED"), status("a", "INCOMPLETE"), status("a", "COMPLETE")},
			`line 3: stream "a" is COMPLETE after INCOMPLETE`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(strings.Join(tt.lines, "\n") + "\n")
			if got := fmt.Sprint(err); tt.want == "" && err != nil || tt.want != "" && got != tt.want {
				t.Errorf("got  %v\nwant %s", err, tt.want)
			}
		})
	}
}

// Check fails the test and shows the output.
func TestCheckFailsTheTest(t *testing.T) {
	var rec recorder
	Check(&rec, started+"\n")
	if rec.failed {
		t.Errorf("valid output failed: %s", rec.msg)
	}
	Check(&rec, `{"type":"RECORD"}`+"\n"+started+"\n"+started+"\n")
	want := "stdout is not the Airbyte protocol:\nline 1: at /: missing property 'record' (airbyte_message.schema.json#/allOf/1/then/required)\n" +
		"line 3: stream \"books\" is STARTED after STARTED\n--- stdout ---\n{\"type\":\"RECORD\"}\n" + started + "\n" + started + "\n"
	if !rec.failed || rec.msg != want {
		t.Errorf("failed %v with %q, want %q", rec.failed, rec.msg, want)
	}
}

// recorder is a testing.TB that keeps what Errorf was given.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.failed = true
	r.msg = fmt.Sprintf(format, args...)
}
