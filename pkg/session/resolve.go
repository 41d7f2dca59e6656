package session

import (
	"context"
	"errors"
	"fmt"

	"connector/pkg/dynamic"
	"connector/pkg/manifest"
	"connector/pkg/run"
	"connector/pkg/slice"
)

// Resolve makes the streams of the definition's dynamic_streams, now that the values are
// known, and selects the streams of the run among all of them. The requests of an
// HttpComponentsResolver go through the run's client and their pages to obs (nil: nobody).
// A definition without dynamic streams has its streams selected already.
func (s *Session) Resolve(ctx context.Context, obs run.Observer) error {
	if len(s.Def.Dynamic) == 0 {
		return nil
	}
	o := s.Options()
	o.Observer = obs
	streams, err := dynamic.Resolve(ctx, s.Def, s.globals(), func(ctx context.Context, st *manifest.Stream, yield func(rec, sl any)) error {
		res := run.Components(ctx, o, st, func(rec any, sl *slice.Slice) bool {
			yield(rec, sl)
			return true
		})
		return res.Err
	})
	var de *dynamic.Error
	switch {
	case errors.As(err, &de):
		return &InvalidError{err}
	case err != nil:
		return fmt.Errorf("resolving dynamic_streams: %w", err)
	}
	def := *s.Def
	def.Streams = append(def.Streams[:len(def.Streams):len(def.Streams)], streams...)
	s.Def = &def
	s.Streams, err = Select(s.Def, s.in.Streams)
	return err
}
