package dev

import (
	"context"
	"encoding/json"

	"connector/pkg/builder"
	"connector/pkg/infer"
	"connector/pkg/manifest"
	"connector/pkg/protocol"
	"connector/pkg/record"
	"connector/pkg/serve"
	"connector/pkg/session"
)

// TestRead is the Connector Builder's test read (pkg/builder) as a serve.TestReader, with the
// CDK's schema and datetime format inference: what a workspace reads with unless told
// otherwise. The state of the request is a state file's text or test_read's list of state
// messages.
func TestRead(ctx context.Context, s *session.Session, req serve.TestReadRequest) (any, error) {
	o := builder.Options{
		Limits: builder.Limits{Records: req.RecordLimit, PagesPerSlice: req.PageLimit, Slices: req.SliceLimit},
		NewInferrer: func(st *manifest.Stream) builder.Inferrer {
			return newInferrer(st, s.Values.Map)
		},
	}
	if len(req.State) > 0 {
		state, err := session.OpenState(session.StateFiles{Given: req.State, GivenName: "the state"})
		if err != nil {
			return nil, err
		}
		o.StateOf = state.Of
	}
	return builder.TestRead(ctx, s, req.Stream, o)
}

// inferrer infers from a test read's records their schema and the formats of their datetime
// fields, as the CDK's test read does (pkg/infer).
type inferrer struct {
	stream  string
	schema  *infer.SchemaInferrer
	formats infer.DatetimeFormats
	errs    []string
}

func newInferrer(st *manifest.Stream, config map[string]any) *inferrer {
	var cursor [][]string
	if field, _ := protocol.CursorOf(st, config); field != "" {
		cursor = [][]string{{field}}
	}
	return &inferrer{stream: st.Name, schema: infer.NewSchemaInferrer(st.PrimaryKeyPaths(), cursor)}
}

func (in *inferrer) Record(rec json.RawMessage) {
	v, err := record.Decode(rec)
	if err == nil {
		err = in.schema.Accumulate(in.stream, v)
	}
	if err == nil {
		err = in.formats.Accumulate(v)
	}
	if err != nil && len(in.errs) < 10 {
		in.errs = append(in.errs, err.Error())
	}
}

func (in *inferrer) Result() builder.Inferred {
	out := builder.Inferred{Errors: in.errs}
	schema, problems, err := in.schema.Schema(in.stream)
	out.Errors = append(out.Errors, problems...)
	if err != nil {
		out.Errors = append(out.Errors, err.Error())
	}
	if schema != nil {
		out.Schema, _ = record.Marshal(schema)
		out.DatetimeFormats, _ = record.Marshal(in.formats.Formats())
	}
	return out
}
