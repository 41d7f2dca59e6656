package output

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"connector/pkg/record"
)

// The format's name picks its type, once; an unknown name is refused.
func TestNewRecordOutputPicksTheFormatsType(t *testing.T) {
	for format, want := range map[string]string{
		FormatRecords:  "*output.recordsOutput",
		FormatEnvelope: "*output.envelopeOutput",
		FormatAirbyte:  "*output.airbyteOutput",
	} {
		out, err := NewRecordOutput(&bytes.Buffer{}, format, nil)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		if got := fmt.Sprintf("%T", out); got != want {
			t.Errorf("%s: %s, want %s", format, got, want)
		}
		out.Close()
	}
	if len(Formats) != 3 {
		t.Errorf("Formats %v: a format without its case here", Formats)
	}
	_, err := NewRecordOutput(&bytes.Buffer{}, "csv", nil)
	if want := `unknown output format "csv" (use records, envelope or airbyte)`; err == nil || err.Error() != want {
		t.Errorf("csv: error %v, want %s", err, want)
	}
}

// writeAll writes what a read of stream s writes: a log, its STARTED status, pages of its
// records with a state and an updated config after the first page, a failure and its
// INCOMPLETE status; it returns stdout. Every call must succeed.
func writeAll(t *testing.T, out RecordOutput, buf *bytes.Buffer, pages ...[]record.Record) string {
	t.Helper()
	state := &record.Object{}
	state.Set("updated_at", "2024-01-02")
	check := func(errs ...error) {
		t.Helper()
		for _, err := range errs {
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	out.LogStatuses()
	check(out.Log("INFO", "Starting syncing"), out.StreamStatus("s", "STARTED"))
	for i, page := range pages {
		check(out.Records("s", page), out.EndPage())
		if i == 0 {
			check(out.State("s", state, len(page)), out.Control(map[string]any{"token": "t2", "none": nil}))
		}
	}
	check(out.Error(ErrorTrace{Stream: "s", Message: "m", InternalMessage: "i", FailureType: "system_error"}),
		out.StreamStatus("s", "INCOMPLETE"), out.Close())
	return buf.String()
}

// edited is a record a transformation edited: written as its object encoded.
func edited() record.Record {
	o := &record.Object{}
	o.Set("id", json.Number("12345678901234567890"))
	o.Set("name", "<b> & é")
	o.Set("gone", nil)
	return record.Record{Object: o}
}

// fixedNow is the clock of the tests.
func fixedNow() time.Time { return time.UnixMilli(1700000000123) }
