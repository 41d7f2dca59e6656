package session

import (
	"context"
	"errors"

	"connector/pkg/manifest"
	"connector/pkg/run"
)

// CheckPlan is what a check of the session reads: the first page of each of Streams. With a
// CheckDynamicStream, NoStreams says the dynamic streams resolved to none (the check fails)
// and Skipped says use_check_availability is false (the check succeeds without a request).
type CheckPlan struct {
	Streams   []*manifest.Stream
	NoStreams bool
	Skipped   int
}

// CheckPlan is the check the definition asks for: check.stream_names, or every stream; for
// a CheckDynamicStream, the first stream_count of every stream.
func (s *Session) CheckPlan() CheckPlan {
	def := s.Def
	streams := def.Streams
	if def.CheckDynamic == nil && len(def.CheckStreams) > 0 {
		streams = nil
		for _, n := range def.CheckStreams {
			if st := def.Stream(n); st != nil {
				streams = append(streams, st)
			}
		}
	}
	cd := def.CheckDynamic
	switch {
	case cd == nil:
		return CheckPlan{Streams: streams}
	case len(streams) == 0:
		return CheckPlan{NoStreams: true}
	case !cd.UseCheckAvailability:
		return CheckPlan{Skipped: len(streams)}
	}
	return CheckPlan{Streams: streams[:min(cd.StreamCount, len(streams))]}
}

// CheckResult is the check of one stream: the records of its first page, or why it failed.
type CheckResult struct {
	Records int
	Err     error
	// Reason is Err without the "stream X, page 1:" in front: the check names the stream.
	Reason string
}

// CheckStream reads the first page of the first slice of st.
func (s *Session) CheckStream(ctx context.Context, st *manifest.Stream) CheckResult {
	o := s.Options()
	o.MaxSlices, o.MaxPages = 1, 1
	res := run.Stream(ctx, o, st)
	r := CheckResult{Records: res.FirstPageRecords, Err: res.Err}
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
