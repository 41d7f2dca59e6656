package slice

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/request"
	"connector/pkg/template"
)

// Router makes the slices of a stream and puts a slice's values in its requests. A Router
// is made once per read of a stream; Slices may be called once.
type Router interface {
	// Slices yields the slices in order. A substream's slices come as its parent is read:
	// nothing is read beyond the slice asked for.
	Slices(ctx context.Context) iter.Seq2[*Slice, error]
	// Inject adds the slice's request options (request_option) to a request.
	Inject(b *request.Builder, sl *Slice) error
}

// Env is what routers need from the read.
type Env struct {
	// Globals are the run's testing values and clock, for the router's templates.
	Globals template.Globals
	// ReadParent reads a parent stream and calls yield with each of its records, in order,
	// with the slice it belongs to; it stops when yield returns false.
	ReadParent func(ctx context.Context, s *manifest.Stream, yield func(rec any, sl *Slice) bool) error
	// Skipped is told, once a parent stream has been read, how many of its records had no
	// value at parent_key (and so gave no partition).
	Skipped func(parent string, parentKey string, n int)
}

// routerKind is a partition router of the definition format, everything this package knows
// of it in one value: how it is made for a read, and how it is said (connector streams).
// Each kind is in the file of its router and is registered in routers by one line; its
// fields and their checks are the definition format's, in pkg/manifest (the Router model).
type routerKind struct {
	// make builds the router of m for a read; vars are m's template variables (config,
	// $parameters, the run's clock).
	make func(m *manifest.Router, env Env, vars map[string]any) (Router, error)
	// describe says m in a few words: `ListPartitionRouter: region, 3 values`.
	describe func(m *manifest.Router, d describer) string
}

// routers are the partition routers, by their type in definitions. They are registered at
// init because the routers that hold others (grouping, union, product) make them through
// NewRouter, which looks here.
var routers map[string]routerKind

func init() {
	routers = map[string]routerKind{
		manifest.ListRouter:      listRouter,
		manifest.SubstreamRouter: substreamRouter,
		manifest.GroupingRouter:  groupingRouter,
		manifest.UnionRouter:     unionRouter,
		manifest.CartesianRouter: cartesianRouter,
	}
}

// NewRouter builds the router of a stream; nil gives the one empty slice.
func NewRouter(m *manifest.Router, env Env) (Router, error) {
	if m == nil {
		return single{}, nil
	}
	k, ok := routers[m.Type]
	if !ok {
		return nil, fmt.Errorf("partition router %s is not supported", m.Type)
	}
	return k.make(m, env, env.Globals.Vars(m.Parameters))
}

// render renders a field of m's for the router; "" for a field not set.
func render(m *manifest.Router, vars map[string]any, t *template.Template, field string) (string, error) {
	if t == nil {
		return "", nil
	}
	s, err := t.Render(vars)
	if err != nil {
		return "", fmt.Errorf("%s %s: %w", m.Type, field, err)
	}
	return s, nil
}

// Describe says a partition router in a few words for a list of streams, its templates
// rendered with g where they can be (their source where they cannot: a value the testing
// values lack).
func Describe(m *manifest.Router, g template.Globals) string {
	return describer{g}.router(m)
}

// describer says routers with the run's globals.
type describer struct{ g template.Globals }

func (d describer) router(m *manifest.Router) string {
	if k, ok := routers[m.Type]; ok {
		return k.describe(m, d)
	}
	return m.Type
}

// text is t rendered with params, or its source when that gives nothing.
func (d describer) text(t *template.Template, params map[string]any) string {
	if t == nil {
		return ""
	}
	if s, err := t.Render(d.g.Vars(params)); err == nil && s != "" {
		return s
	}
	return t.Source()
}

// single is the router of a stream without one: one empty slice.
type single struct{}

func (single) Slices(context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) { yield(New(nil), nil) }
}

func (single) Inject(*request.Builder, *Slice) error { return nil }

// source names the partition router in request option conflicts.
const source = "the partition router"

// inject puts a slice's value of key at opt, as the CDK does: only a value that is truthy.
func inject(b *request.Builder, opt *request.Option, sl *Slice, key string) error {
	if opt == nil {
		return nil
	}
	v, ok := sl.Get(key)
	if !ok || !template.Truthy(v) {
		return nil
	}
	return opt.Inject(b, v, source)
}

// keyed is a value with its key, for the set of values a union or a grouping has seen:
// Python's equality, where 1, 1.0 and True are one value.
func keyed(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return "none", true
	case bool:
		if x {
			return "n:1", true
		}
		return "n:0", true
	case string:
		return "s:" + x, true
	}
	if f, ok := template.Numeric(v); ok {
		return "n:" + f, true
	}
	return "", false
}

// ownConflict reports a field set twice by the partition router itself (two routers of a
// product, two parent configs): the first value stays, as in the CDK's merged mapping.
func ownConflict(err error) bool {
	var ce *request.ConflictError
	return errors.As(err, &ce) && ce.First == source && ce.Second == source
}

// pathString joins a path for messages: data/id.
func pathString(p []string) string { return strings.Join(p, "/") }
