package output

import (
	"io"

	"connector/pkg/record"
)

// envelopeOutput is the envelope format: each record in an object that names its stream,
// {"stream":"books","data":{…}}, and nothing else on stdout.
type envelopeOutput struct {
	*writer
	recordsOnly
}

func newEnvelope(w io.Writer) *envelopeOutput {
	e := &envelopeOutput{}
	e.writer = newWriter(w, e)
	return e
}

func (*envelopeOutput) newPrefix(stream string) []byte {
	b := append([]byte(`{"stream":`), jsonString(stream)...)
	return append(b, `,"data":`...)
}

func (*envelopeOutput) appendRecord(b, prefix []byte, rec record.Record) ([]byte, error) {
	b, err := rec.AppendJSON(append(b, prefix...))
	if err != nil {
		return nil, err
	}
	return append(b, "}\n"...), nil
}
