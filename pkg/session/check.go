package session

import (
	"context"
	"errors"

	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/schemacheck"
)

// CheckPlan is what a check of the session reads: the first page of the stream of each of
// Targets. With a CheckDynamicStream, NoStreams says the dynamic streams resolved to none
// (the check fails) and Skipped says use_check_availability is false (the check succeeds
// without a request).
type CheckPlan struct {
	Targets   []CheckTarget
	NoStreams bool
	Skipped   int
}

// CheckTarget is a stream the check names, and the stream of that name: nil when the
// definition, as the testing values made it, has none (Missing says why). A name validate
// accepted may be missing once the testing values are known: the stream of a
// ConditionalStreams whose condition is false, or a dynamic stream not made. The CDK's
// CheckStream fails on it ("is not part of the catalog").
type CheckTarget struct {
	Name    string
	Stream  *manifest.Stream
	Missing string
}

// CheckPlan is the check the definition asks for: check.stream_names, or every stream; for
// a CheckDynamicStream, the first stream_count of every stream.
func (s *Session) CheckPlan() CheckPlan {
	def := s.Def
	if cd := def.CheckDynamic; cd != nil {
		switch {
		case len(def.Streams) == 0:
			return CheckPlan{NoStreams: true}
		case !cd.UseCheckAvailability:
			return CheckPlan{Skipped: len(def.Streams)}
		}
		return CheckPlan{Targets: targetsOf(def.Streams[:min(cd.StreamCount, len(def.Streams))])}
	}
	if len(def.CheckStreams) == 0 {
		return CheckPlan{Targets: targetsOf(def.Streams)}
	}
	var plan CheckPlan
	for _, n := range def.CheckStreams {
		t := CheckTarget{Name: n, Stream: def.Stream(n)}
		if t.Stream == nil {
			t.Missing = "not among the streams: no stream of that name is defined or made by dynamic_streams"
			if p, ok := def.LeftOut[n]; ok {
				t.Missing = "not among the streams: " + LeftOutReason(p)
			}
		}
		plan.Targets = append(plan.Targets, t)
	}
	return plan
}

func targetsOf(streams []*manifest.Stream) []CheckTarget {
	out := make([]CheckTarget, len(streams))
	for i, s := range streams {
		out[i] = CheckTarget{Name: s.Name, Stream: s}
	}
	return out
}

// CheckResult is the check of one stream: the records of its first page, or why it failed.
type CheckResult struct {
	Records int
	Err     error
	// Reason is Err without the "stream X, page 1:" in front: the check names the stream.
	Reason string
	// Schema is what the checks of the page's records found, when they were asked for;
	// SchemaErr why the declared schema could not be used.
	Schema    *schemacheck.Report
	SchemaErr error
}

// CheckStream reads the first page of the first slice of st; with checkSchema, its records
// are checked against the stream's declared schema and primary key.
func (s *Session) CheckStream(ctx context.Context, st *manifest.Stream, checkSchema bool) CheckResult {
	o := s.Options()
	o.MaxSlices, o.MaxPages = 1, 1
	var checks *SchemaChecks
	if checkSchema {
		checks = NewSchemaChecks([]*manifest.Stream{st})
		o.Out = checks
	}
	res := run.Stream(ctx, o, st)
	r := CheckResult{Records: res.FirstPageRecords, Err: res.Err}
	if checks != nil && res.Err == nil {
		rep, err := checks.Report(st.Name)
		r.Schema, r.SchemaErr = &rep, err
	}
	if res.Err != nil {
		cause := res.Err
		var se *run.StreamError
		if errors.As(res.Err, &se) {
			cause = se.Err
		}
		r.Reason = cause.Error()
	}
	return r
}
