package run

import (
	"context"
	"errors"
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/normalize"
	"connector/pkg/schema"
	"connector/pkg/slice"
)

// loadSchema reads the stream's schema from the API, when its records are normalized to
// a DynamicSchemaLoader's schema (schema_normalization: Default), before its first slice.
// The loader's retriever is read as a parent stream is (its own pagination and error
// handling, none of the read's limits), with one empty slice as the CDK reads it, up to
// its first record; its pages are reported to the observer under the stream's name, as
// the pages of its schema. A stream that needs no such schema sends nothing.
func (st *stream) loadSchema(ctx context.Context) error {
	d := st.s.DynamicSchema
	if d == nil || d.Retriever == nil || st.s.Selector == nil ||
		st.s.Selector.Normalization != manifest.NormalizationDefault || st.normalize != nil {
		return nil
	}
	o := st.o.helper()
	rs := *d.Retriever
	rs.Router = nil // read_records({}): the CDK reads one empty slice, never the router's
	inner, err := newStream(o, &rs, st.s.Name, nil)
	if o.Observer != nil {
		ss := StreamStart{Stream: rs.Name, ParentOf: st.s.Name, Schema: true}
		if inner != nil {
			ss.Pagination = inner.pag.Describe()
		}
		o.Observer.StreamStart(ss)
	}
	res := Result{Stream: rs.Name, ParentOf: st.s.Name, Schema: true}
	var first any
	if err != nil {
		res.Err = err
	} else {
		inner.read = st.read
		res = inner.readAll(ctx, func(sl *slice.Slice) Emitter {
			return &partitions{slice: sl, yield: func(rec any, _ *slice.Slice) bool {
				first = rec
				return false
			}}
		})
		res.Schema = true
		if errors.Is(res.Err, errStop) {
			res.Err = nil
		}
	}
	if o.Observer != nil {
		o.Observer.StreamEnd(res)
	}
	if res.Err != nil {
		return fmt.Errorf("schema_loader: %w", res.Err)
	}
	s, err := schema.Build(d, st.o.globals(), first)
	if err != nil {
		return fmt.Errorf("schema_loader: %w", err)
	}
	st.normalize = normalize.New(s)
	return nil
}
