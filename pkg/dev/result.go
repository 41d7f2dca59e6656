package dev

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/schemacheck"
	"connector/pkg/serve"
)

// readJob is one test read to make.
type readJob struct {
	stream string
	def    *manifest.Definition
	// files are the files as the read found them (a snapshot is never changed, only
	// replaced).
	files      snapshot
	limits     Limits
	round, gen int
	// state is the state the read starts from (nil: none): the state file's, or the state
	// of the last read when fromResult.
	state      json.RawMessage
	stateErr   error
	fromResult bool
}

// Result is one stream's test read, with what the page shows beside the StreamRead: the
// warnings about its records, the inferred schema laid beside the declared one, and the
// state it ended with.
type Result struct {
	Stream string `json:"stream"`
	Round  int    `json:"round"`
	gen    int
	// At is when the read ended (Unix milliseconds); Took how long it took, in milliseconds.
	At     int64   `json:"at"`
	Took   float64 `json:"took_ms"`
	Limits Limits  `json:"limits"`
	// From says where the state the read started from came from: "" (none), "file" (the
	// state file) or "read" (the state the read before ended with); StartState is that
	// state.
	From       string          `json:"from,omitempty"`
	StartState json.RawMessage `json:"start_state,omitempty"`
	// Error is why the read could not be made; the rest is then empty.
	Error string `json:"error,omitempty"`
	// Read is the test read's StreamRead JSON.
	Read json.RawMessage `json:"read,omitempty"`
	// Errors are the messages of the read's ERROR logs (a stream that failed).
	Errors       []string `json:"errors"`
	Records      int      `json:"records"`
	Pages        int      `json:"pages"`
	Slices       int      `json:"slices"`
	LimitReached bool     `json:"limit_reached"`
	// Check are the warnings about the records, by record number in read order.
	Check schemacheck.Report `json:"check"`
	// SchemaNote says why the records were not checked against the declared schema.
	SchemaNote string `json:"schema_note,omitempty"`
	// Declared is the stream's declared schema (absent when it declares none).
	Declared json.RawMessage `json:"declared_schema,omitempty"`
	// Fields lay the inferred schema beside the declared one; SchemaYAML is the inferred
	// schema as a schema_loader to paste.
	Fields     []schemacheck.Field `json:"fields"`
	SchemaYAML string              `json:"schema_yaml,omitempty"`
	// State is the state the read ended with: the last state message of its slices.
	State json.RawMessage `json:"state,omitempty"`
}

// read makes one test read and works out what the page shows about it. Everything it keeps
// of the answer is masked.
func (w *Workspace) read(ctx context.Context, job readJob) *Result {
	start := time.Now()
	r := &Result{Stream: job.stream, Round: job.round, gen: job.gen, Limits: job.limits,
		Errors: []string{}, Fields: []schemacheck.Field{}}
	defer func() {
		r.Took = float64(time.Since(start).Microseconds()) / 1000
		r.At = time.Now().UnixMilli()
	}()
	fail := func(err error) *Result {
		r.Error = w.red.String(err.Error())
		return r
	}
	if job.stateErr != nil {
		return fail(job.stateErr)
	}
	if job.state != nil {
		r.From, r.StartState = "file", json.RawMessage(w.red.Bytes(job.state))
		if job.fromResult {
			r.From = "read"
		}
	}
	sess, err := w.open(job.def, job.files)
	if err != nil {
		return fail(err)
	}
	defer sess.Close()
	if err := sess.Resolve(ctx, nil); err != nil {
		return fail(err)
	}
	out, err := w.cfg.TestRead(ctx, sess, serve.TestReadRequest{
		Stream: job.stream, RecordLimit: job.limits.Records, PageLimit: job.limits.Pages, SliceLimit: job.limits.Slices,
		State: job.state,
	})
	if err != nil {
		return fail(err)
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return fail(fmt.Errorf("the test read's answer cannot be encoded: %w", err))
	}
	r.Read = w.red.Bytes(raw)
	if err := r.digest(sess.Def.Stream(job.stream)); err != nil {
		return fail(err)
	}
	return r
}

// streamRead is what the result needs of the CDK's StreamRead.
type streamRead struct {
	Logs []struct {
		Level   string `json:"level"`
		Message string `json:"message"`
	} `json:"logs"`
	Slices []struct {
		Pages []struct {
			Records []json.RawMessage `json:"records"`
		} `json:"pages"`
		State []json.RawMessage `json:"state"`
	} `json:"slices"`
	InferredSchema json.RawMessage `json:"inferred_schema"`
	LimitReached   bool            `json:"test_read_limit_reached"`
}

// digest works out from the read's StreamRead the counts, the warnings, the schemas side by
// side and the final state. stream is the stream as the definition declares it (nil: not
// known, nothing is checked against it).
func (r *Result) digest(stream *manifest.Stream) error {
	var sr streamRead
	if err := json.Unmarshal(r.Read, &sr); err != nil {
		return fmt.Errorf("the test read's answer is not a StreamRead: %w", err)
	}
	for _, l := range sr.Logs {
		if l.Level == "ERROR" || l.Level == "FATAL" {
			r.Errors = append(r.Errors, l.Message)
		}
	}
	var declared any
	var pk [][]string
	if stream != nil {
		declared, pk = stream.Schema, stream.PrimaryKeyPaths()
		if declared != nil {
			if b, err := record.Marshal(declared); err == nil {
				r.Declared = b
			}
		}
		if stream.DynamicSchema != nil {
			r.SchemaNote = "the declared schema comes from the API (DynamicSchemaLoader): the records are not checked against it here"
		}
	}
	check, err := schemacheck.New(declared, pk)
	if err != nil {
		r.SchemaNote = err.Error()
	}
	r.Slices, r.LimitReached = len(sr.Slices), sr.LimitReached
	for _, sl := range sr.Slices {
		r.Pages += len(sl.Pages)
		for _, p := range sl.Pages {
			for _, rec := range p.Records {
				if err := check.AddJSON(rec); err != nil {
					return err
				}
			}
		}
		if n := len(sl.State); n > 0 {
			r.State = sl.State[n-1]
		}
	}
	r.Check = check.Finish()
	r.Records = r.Check.Records
	if len(sr.InferredSchema) > 0 && string(sr.InferredSchema) != "null" {
		inferred, err := record.Decode(sr.InferredSchema)
		if err != nil {
			return fmt.Errorf("the inferred schema is not JSON: %w", err)
		}
		r.Fields = schemacheck.Compare(declared, inferred)
		if r.SchemaYAML, err = schemacheck.LoaderYAML(inferred); err != nil {
			return err
		}
	}
	return nil
}

// readState reads the state file the reads start from.
func readState(path string) (json.RawMessage, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read the state file: %w", err)
	}
	if !json.Valid(b) {
		return nil, fmt.Errorf("the state file %s is not JSON", path)
	}
	return b, nil
}
