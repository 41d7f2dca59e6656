package builder

import (
	"encoding/json"

	"connector/pkg/infer"
	"connector/pkg/manifest"
	"connector/pkg/protocol"
	"connector/pkg/record"
)

// SchemaInference is the CDK's inference for a test read of st: its SchemaInferrer, which
// marks the primary key and the cursor field required (the primary key as the test reader
// gives it, [[]] when the stream has none; the cursor field only when there is one), and
// its DatetimeFormatInferrer. config renders the cursor field.
func SchemaInference(config map[string]any) func(st *manifest.Stream) Inferrer {
	return func(st *manifest.Stream) Inferrer {
		pk := st.PrimaryKeyPaths()
		if len(pk) == 0 {
			pk = [][]string{{}}
		}
		var cursor [][]string
		if field, _ := protocol.CursorOf(st, config); field != "" {
			cursor = [][]string{{field}}
		}
		return &inference{stream: st.Name, schema: infer.NewSchemaInferrer(pk, cursor), formats: &infer.DatetimeFormats{}}
	}
}

type inference struct {
	stream  string
	schema  *infer.SchemaInferrer
	formats *infer.DatetimeFormats
	err     error
}

func (i *inference) Record(rec json.RawMessage) {
	if i.err != nil {
		return
	}
	v, err := record.Decode(rec)
	if err != nil {
		i.err = err
		return
	}
	if err := i.schema.Accumulate(i.stream, v); err != nil {
		i.err = err
		return
	}
	i.err = i.formats.Accumulate(v)
}

func (i *inference) Result() Inferred {
	var out Inferred
	if b, err := record.Marshal(i.formats.Formats()); err == nil {
		out.DatetimeFormats = b
	}
	if i.err != nil {
		out.Errors = append(out.Errors, i.err.Error())
		return out
	}
	schema, problems, err := i.schema.Schema(i.stream)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
		return out
	}
	out.Errors = append(out.Errors, problems...)
	if schema != nil {
		if b, err := record.Marshal(schema); err == nil {
			out.Schema = b
		}
	}
	return out
}
