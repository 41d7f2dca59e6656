// Package output writes what the commands produce: records in the formats of `read`, and the
// reports people read.
package output

import (
	"fmt"
	"io"
	"time"

	"connector/pkg/airbyte"
	"connector/pkg/record"
)

// Record formats of `read`.
const (
	FormatRecords  = "records"
	FormatEnvelope = "envelope"
	FormatAirbyte  = "airbyte"
)

// Protocol reports a format a platform reads as the Airbyte protocol: the read then keeps
// the CDK's behaviour where the CLI's differs for people (the retries of a server that
// cannot be reached).
func Protocol(format string) bool { return format == FormatAirbyte }

// Formats lists the record formats, for flag help and validation.
var Formats = []string{FormatRecords, FormatEnvelope, FormatAirbyte}

// RecordOutput is where a read writes, in one of the formats: the records of each page, and
// what happens around them (a stream's status, a failure, a checkpoint's state, logs, an
// updated config). A format that has no place for one of these ignores it. Records are
// gathered and written out page by page on a goroutine of the output's own (see
// asyncWriter); EndPage, Flush and Close say how far. It is safe for concurrent use; each
// line is written whole. The formats are the types of this package (records, envelope,
// airbyte), made by NewRecordOutput.
type RecordOutput interface {
	// Records writes records of stream, one line each, in order; their lines are not
	// interleaved with those of other streams. A record is written as the bytes received
	// (already compact), nothing decoded or re-encoded, or, when a transformation edited it,
	// as its object encoded. A page the format cannot carry is refused whole (a
	// *RefusedError), none of it written. The error is that of an earlier write, if one
	// failed.
	Records(stream string, recs []record.Record) error
	// EndPage queues what is gathered for writing without waiting for it to be written; the
	// read loop calls it after every page, so records reach stdout page by page. The error
	// is that of an earlier write, if one failed.
	EndPage() error
	// Flush writes out everything gathered so far and returns once it is written, with the
	// first write error.
	Flush() error
	// Close flushes and stops the writer goroutine. The output must not be used afterwards.
	Close() error

	// StreamStatus says that stream is STARTED, RUNNING, COMPLETE or INCOMPLETE, with the
	// reasons given (RUNNING because RATE_LIMITED).
	StreamStatus(stream, status string, reasons ...string) error
	// Error says that a stream, or the whole read when e.Stream is "", failed.
	Error(e ErrorTrace) error
	// State writes the state of stream at a checkpoint and the number of records written
	// since its previous state.
	State(stream string, state *record.Object, records int) error
	// Log writes a message for the person who reads the output, at level (DEBUG, INFO,
	// WARN, ERROR, FATAL); it must already be redacted.
	Log(level, message string) error
	// LogStatuses makes the output log a stream's RUNNING status before it writes it
	// ("Marking stream books as RUNNING"), as the CDK's entry point does.
	LogStatuses()
	// Control writes the updated config: a map[string]any (keys in sorted order) or a
	// *record.Object (keys in its order).
	Control(config any) error

	// base is the writer the format's type is built on, for a Sequencer.
	base() *writer
}

// ErrorTrace is a failed stream, or a failed read: the protocol's TRACE ERROR, which the
// airbyte format writes as it is. Both messages must already be redacted.
type ErrorTrace = airbyte.ErrorTrace

// NewRecordOutput writes to w in the named format (one of Formats). now stamps the
// messages that carry a time (nil: time.Now).
func NewRecordOutput(w io.Writer, format string, now func() time.Time) (RecordOutput, error) {
	if now == nil {
		now = time.Now
	}
	switch format {
	case FormatRecords:
		return newRecords(w), nil
	case FormatEnvelope:
		return newEnvelope(w), nil
	case FormatAirbyte:
		return newAirbyte(w, now), nil
	}
	return nil, fmt.Errorf("unknown output format %q (use records, envelope or airbyte)", format)
}

// recordsOnly is what a format that carries nothing but records does with the rest: it
// accepts any JSON value as a record, writes nothing before a stream's first record, and
// drops statuses, failures, states, logs and configs (stderr tells people about them).
type recordsOnly struct{}

func (recordsOnly) accept([]record.Record) error                 { return nil }
func (recordsOnly) starting(string) ([]byte, error)              { return nil, nil }
func (recordsOnly) StreamStatus(string, string, ...string) error { return nil }
func (recordsOnly) Error(ErrorTrace) error                       { return nil }
func (recordsOnly) State(string, *record.Object, int) error      { return nil }
func (recordsOnly) Log(string, string) error                     { return nil }
func (recordsOnly) LogStatuses()                                 {}
func (recordsOnly) Control(any) error                            { return nil }
