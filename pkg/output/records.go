package output

import (
	"io"

	"connector/pkg/record"
)

// recordsOutput is the records format: each record alone on its line, any JSON value, and
// nothing else on stdout.
type recordsOutput struct {
	*writer
	recordsOnly
}

func newRecords(w io.Writer) *recordsOutput {
	r := &recordsOutput{}
	r.writer = newWriter(w, r)
	return r
}

// newPrefix is nothing: a line is the record alone.
func (*recordsOutput) newPrefix(string) []byte { return nil }

func (*recordsOutput) appendRecord(b, _ []byte, rec record.Record) ([]byte, error) {
	b, err := rec.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}
