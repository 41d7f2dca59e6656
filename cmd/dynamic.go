package cmd

import (
	"context"
	"errors"
	"fmt"

	"connector/pkg/dynamic"
	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/slice"
)

// resolve makes the streams of the definition's dynamic_streams, once the testing values
// are known, and selects the streams of the run among all of them (--stream). The requests
// of an HttpComponentsResolver go through the run's client and their pages to obs (nil:
// nobody). A definition without dynamic streams has its streams selected already.
func (p *prepared) resolve(ctx context.Context, obs run.Observer) error {
	if len(p.def.Dynamic) == 0 {
		return nil
	}
	o := p.options()
	o.Observer = obs
	streams, err := dynamic.Resolve(ctx, p.def, p.values.Map, func(ctx context.Context, s *manifest.Stream, yield func(rec, sl any)) error {
		res := run.Components(ctx, o, s, func(rec any, sl *slice.Slice) bool {
			yield(rec, sl)
			return true
		})
		return res.Err
	})
	var de *dynamic.Error
	switch {
	case errors.As(err, &de):
		return &invalidError{err}
	case err != nil:
		return fmt.Errorf("resolving dynamic_streams: %w", err)
	}
	def := *p.def
	def.Streams = append(def.Streams[:len(def.Streams):len(def.Streams)], streams...)
	p.def = &def
	p.streams, err = selectStreams(p.def, p.names)
	return err
}

// checkDynamic picks the streams a CheckDynamicStream checks: the first stream_count of the
// source (static streams first). No stream at all fails the check; use_check_availability
// false passes it without a request (nil streams, nil error).
func checkDynamic(s *ioStreams, cd *manifest.CheckDynamic, streams []*manifest.Stream) ([]*manifest.Stream, error) {
	if len(streams) == 0 {
		fmt.Fprintln(s.Out, "FAILED  no streams to connect to: the dynamic streams resolved to none")
		return nil, &silentError{code: exitFailure}
	}
	if !cd.UseCheckAvailability {
		fmt.Fprintf(s.Err, "check: use_check_availability is false: %s resolved, none requested\n", plural(len(streams), "stream"))
		return nil, nil
	}
	return streams[:min(cd.StreamCount, len(streams))], nil
}
