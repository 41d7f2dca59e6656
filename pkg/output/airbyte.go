package output

import (
	"fmt"
	"io"
	"time"

	"connector/pkg/airbyte"
	"connector/pkg/record"
)

// airbyteOutput is the airbyte format: Airbyte protocol messages, as the CDK writes them in
// a read. Each record is a RECORD, after its stream's RUNNING status before the first one;
// statuses, failures, states, logs and configs are TRACE, STATE, LOG and CONTROL messages.
// Every message is made by the protocol's encoder, airbyte.Encoder.
type airbyteOutput struct {
	*writer
	enc airbyte.Encoder
	// running holds the streams whose RUNNING status is written (before their first
	// record, as the CDK writes it). Guarded by the writer's mutex.
	running map[string]bool
	// logs adds the CDK's LOG message before each RUNNING status (see LogStatuses).
	logs bool
}

func newAirbyte(w io.Writer, now func() time.Time) *airbyteOutput {
	a := &airbyteOutput{enc: airbyte.Encoder{Now: now}, running: map[string]bool{}}
	a.writer = newWriter(w, a)
	return a
}

func (a *airbyteOutput) newPrefix(stream string) []byte { return airbyte.RecordPrefix(stream) }

func (a *airbyteOutput) appendRecord(b, prefix []byte, rec record.Record) ([]byte, error) {
	return a.enc.AppendRecord(b, prefix, rec)
}

// accept refuses a page of records of which one is not a JSON object: the data of an
// Airbyte RECORD is an object, and the CDK fails the stream of such a record.
func (a *airbyteOutput) accept(recs []record.Record) error {
	for _, rec := range recs {
		if rec.Object == nil && (len(rec.Raw) == 0 || rec.Raw[0] != '{') {
			return &RefusedError{fmt.Sprintf("a record is %s, not an object: an Airbyte RECORD's data is an object", jsonKind(rec.Raw))}
		}
	}
	return nil
}

// starting is the RUNNING status of stream, which is then running, once; the caller holds
// the writer's mutex.
func (a *airbyteOutput) starting(stream string) ([]byte, error) {
	if a.running[stream] {
		return nil, nil
	}
	a.running[stream] = true
	var b []byte
	if a.logs {
		var err error
		if b, err = a.enc.AppendLog(b, "INFO", "Marking stream "+stream+" as RUNNING"); err != nil {
			return nil, err
		}
	}
	return a.enc.AppendStreamStatus(b, stream, "RUNNING")
}

// LogStatuses makes the output write the LOG message the CDK writes before a stream's
// RUNNING status, as the protocol entry point does.
func (a *airbyteOutput) LogStatuses() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.logs = true
}

// Log writes a LOG message.
func (a *airbyteOutput) Log(level, message string) error {
	return a.message(a.enc.AppendLog(nil, level, message))
}

// StreamStatus writes a TRACE STREAM_STATUS message.
func (a *airbyteOutput) StreamStatus(stream, status string, reasons ...string) error {
	return a.message(a.enc.AppendStreamStatus(nil, stream, status, reasons...))
}

// Error writes a TRACE ERROR message, with the stream's descriptor when e names one.
func (a *airbyteOutput) Error(e ErrorTrace) error {
	return a.message(a.enc.AppendError(nil, e))
}

// State writes a per-stream STATE message, as the CDK does.
func (a *airbyteOutput) State(stream string, state *record.Object, records int) error {
	return a.message(a.enc.AppendState(nil, stream, state, records))
}

// Control writes a CONTROL message carrying the updated config, its top-level nulls left
// out as the CDK's serializer leaves them out.
func (a *airbyteOutput) Control(config any) error {
	return a.message(a.enc.AppendControl(nil, config))
}

// RefusedError is a batch of records the output refused whole, none of it written.
type RefusedError struct{ msg string }

func (e *RefusedError) Error() string { return e.msg }

// Refused says that none of the batch was written.
func (e *RefusedError) Refused() bool { return true }

// jsonKind names the kind of a JSON value from its compact text.
func jsonKind(raw []byte) string {
	if len(raw) == 0 {
		return "empty"
	}
	switch raw[0] {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
