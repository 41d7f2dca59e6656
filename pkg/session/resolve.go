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
	streams, err := dynamic.Resolve(ctx, s.Def, s.globals(), s.componentReader(obs))
	if err != nil {
		return dynamicError(err)
	}
	// A group may name a stream that dynamic_streams make, as the CDK matches groups by name.
	manifest.ApplyGroups(streams, s.Def.Groups)
	def := *s.Def
	def.Streams = append(def.Streams[:len(def.Streams):len(def.Streams)], streams...)
	s.Def = &def
	s.Streams, err = Select(s.Def, s.in.Streams)
	return err
}

// DynamicEdits reads the components of every dynamic stream definition as Resolve does and
// returns, for each definition in order, the edits that make each of its streams from its
// template, without building them (the resolved manifest of full_resolve shows them).
func (s *Session) DynamicEdits(ctx context.Context, obs run.Observer) ([][][]manifest.Edit, error) {
	edits, err := dynamic.Edits(ctx, s.Def, s.globals(), s.componentReader(obs))
	if err != nil {
		return nil, dynamicError(err)
	}
	return edits, nil
}

// componentReader reads an HttpComponentsResolver's retriever through the run's client, its
// pages going to obs (nil: nobody).
func (s *Session) componentReader(obs run.Observer) dynamic.ReadComponents {
	o := s.Options()
	o.Observer = obs
	return func(ctx context.Context, st *manifest.Stream, yield func(rec, sl any)) error {
		res := run.Components(ctx, o, st, func(rec any, sl *slice.Slice) bool {
			yield(rec, sl)
			return true
		})
		return res.Err
	}
}

// dynamicError is a failure to make the dynamic streams: the definition's or the values'
// fault (an InvalidError), or a failed request.
func dynamicError(err error) error {
	var de *dynamic.Error
	if errors.As(err, &de) {
		return &InvalidError{err}
	}
	return fmt.Errorf("resolving dynamic_streams: %w", err)
}
