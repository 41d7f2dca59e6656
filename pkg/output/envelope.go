package output

import (
	"io"

	"connector/pkg/airbyte"
	"connector/pkg/record"
)

// envelopeOutput is the envelope format: each record in an object that names its stream,
// {"stream":"books","data":{…}}, with where its file went when a file_uploader downloaded
// one ("file_reference", as in the Airbyte protocol), and nothing else on stdout.
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
	if rec.File != nil {
		b = airbyte.AppendFileReference(append(b, `,"file_reference":`...), rec.File)
	}
	return append(b, "}\n"...), nil
}
