package slice

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
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

// NewRouter builds the router of a stream; nil gives the one empty slice.
func NewRouter(m *manifest.Router, env Env) (Router, error) {
	if m == nil {
		return single{}, nil
	}
	vars := env.Globals.Vars(m.Parameters)
	render := func(t *template.Template, field string) (string, error) {
		if t == nil {
			return "", nil
		}
		s, err := t.Render(vars)
		if err != nil {
			return "", fmt.Errorf("%s %s: %w", m.Type, field, err)
		}
		return s, nil
	}
	switch m.Type {
	case manifest.ListRouter:
		r := &list{}
		var err error
		if r.field, err = render(m.CursorField, "cursor_field"); err != nil {
			return nil, err
		}
		if r.values, err = listValues(m, vars); err != nil {
			return nil, err
		}
		if r.opt, err = request.NewOption(m.RequestOption, vars); err != nil {
			return nil, fmt.Errorf("%s request_option: %w", m.Type, err)
		}
		return r, nil
	case manifest.SubstreamRouter:
		r := &substream{env: env}
		for i, pc := range m.Parents {
			p, err := newParent(pc, env)
			if err != nil {
				return nil, fmt.Errorf("%s parent_stream_configs[%d]: %w", m.Type, i, err)
			}
			r.parents = append(r.parents, p)
		}
		return r, nil
	case manifest.GroupingRouter:
		under, err := NewRouter(m.Underlying, env)
		if err != nil {
			return nil, err
		}
		return &grouping{size: m.GroupSize, dedupe: m.Deduplicate, under: under}, nil
	case manifest.UnionRouter, manifest.CartesianRouter:
		var children []Router
		for _, c := range m.Routers {
			r, err := NewRouter(c, env)
			if err != nil {
				return nil, err
			}
			children = append(children, r)
		}
		if m.Type == manifest.CartesianRouter {
			return &cartesian{routers: children}, nil
		}
		field, err := render(m.PartitionField, "partition_field")
		if err != nil {
			return nil, err
		}
		return &union{field: field, routers: children}, nil
	}
	return nil, fmt.Errorf("partition router %s is not supported", m.Type)
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

// list is a ListPartitionRouter: one slice per value, {cursor_field: value}.
type list struct {
	field  string
	values []any
	opt    *request.Option
}

// listValues are the router's values: as written, or the list a template renders (a string
// that spells a Python or JSON list, as the CDK's literal_eval reads it).
func listValues(m *manifest.Router, vars map[string]any) ([]any, error) {
	if m.ValuesTemplate == nil {
		return m.Values, nil
	}
	v, err := m.ValuesTemplate.Eval(vars)
	if err != nil {
		return nil, fmt.Errorf("%s values: %w", m.Type, err)
	}
	shown := template.ToString(v)
	if s, ok := v.(string); ok {
		shown = strconv.Quote(s)
		if parsed, err := template.LiteralEval(s); err == nil {
			v = parsed
		}
	}
	l, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%s values: %s gives %s, not a list: make the testing value a list, or split a text in the template (.split(','))",
			m.Type, m.ValuesTemplate.Source(), shown)
	}
	return l, nil
}

func (r *list) Slices(ctx context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) {
		for _, v := range r.values {
			p := &record.Object{}
			p.Set(r.field, v)
			if !yield(New(p), nil) {
				return
			}
		}
	}
}

func (r *list) Inject(b *request.Builder, sl *Slice) error { return inject(b, r.opt, sl, r.field) }

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

// grouping is a GroupingPartitionRouter: the partitions of the underlying router, group_size
// at a time, each key's values in a list.
type grouping struct {
	size   int
	dedupe bool
	under  Router
}

func (r *grouping) Slices(ctx context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) {
		var batch []*Slice
		seen := map[string]bool{}
		for sl, err := range r.under.Slices(ctx) {
			if err != nil {
				yield(nil, err)
				return
			}
			var keys []string
			for _, k := range sl.Partition.Keys() {
				if k != "parent_slice" {
					keys = append(keys, k)
				}
			}
			if len(keys) != 1 {
				yield(nil, fmt.Errorf("GroupingPartitionRouter expects a single partition key, got %s", sl))
				return
			}
			v, _ := sl.Partition.Get(keys[0])
			if r.dedupe {
				k, ok := keyed(v)
				if !ok {
					k = show(v)
				}
				if seen[k] {
					continue
				}
				seen[k] = true
			}
			batch = append(batch, sl)
			if len(batch) == r.size {
				if !yield(group(batch), nil) {
					return
				}
				batch = nil
			}
		}
		if len(batch) > 0 {
			yield(group(batch), nil)
		}
	}
}

// group makes one slice of a batch: every key of the first partition with the list of the
// batch's values, and the extra fields likewise (keys in the order first met).
func group(batch []*Slice) *Slice {
	p := &record.Object{}
	for _, k := range batch[0].Partition.Keys() {
		vals := make([]any, len(batch))
		for i, sl := range batch {
			vals[i], _ = sl.Partition.Get(k)
		}
		p.Set(k, vals)
	}
	out := New(p)
	for _, sl := range batch {
		for _, k := range sl.Extra.Keys() {
			if _, ok := out.Extra.Get(k); ok {
				continue
			}
			vals := make([]any, len(batch))
			for i, b := range batch {
				vals[i], _ = b.Extra.Get(k)
			}
			out.Extra.Set(k, vals)
		}
	}
	return out
}

func (r *grouping) Inject(*request.Builder, *Slice) error { return nil }

// union is a UnionPartitionRouter: the partitions of its children in order, each value once,
// every partition reduced to {partition_field: value} with its other keys moved to the
// extra fields. A child's lazy_read_pointer is not followed: the CDK reads a parent record's
// page only directly under a SubstreamPartitionRouter, so every slice of a union is requested.
type union struct {
	field   string
	routers []Router
}

func (r *union) Slices(ctx context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) {
		seen := map[string]bool{}
		for _, child := range r.routers {
			for sl, err := range child.Slices(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				v, ok := sl.Partition.Get(r.field)
				if !ok {
					yield(nil, fmt.Errorf("UnionPartitionRouter expects every child to give the partition field %q, got %s: name it %s in every child (cursor_field, partition_field)", r.field, sl, r.field))
					return
				}
				k, hashable := keyed(v)
				if !hashable {
					yield(nil, fmt.Errorf("UnionPartitionRouter can only deduplicate single values, got %s for %q", show(v), r.field))
					return
				}
				if seen[k] {
					continue
				}
				seen[k] = true
				p := &record.Object{}
				p.Set(r.field, v)
				out := New(p)
				for _, ek := range sl.Extra.Keys() {
					ev, _ := sl.Extra.Get(ek)
					out.Extra.Set(ek, ev)
				}
				for _, pk := range sl.Partition.Keys() {
					if pk != r.field {
						pv, _ := sl.Partition.Get(pk)
						out.Extra.Set(pk, pv)
					}
				}
				if !yield(out, nil) {
					return
				}
			}
		}
	}
}

func (r *union) Inject(*request.Builder, *Slice) error { return nil }

// cartesian is a list of routers: every combination of their slices, the first router's
// varying slowest (itertools.product). Each child's slices are read whole first.
type cartesian struct {
	routers []Router
}

func (r *cartesian) Slices(ctx context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) {
		all := make([][]*Slice, len(r.routers))
		for i, child := range r.routers {
			for sl, err := range child.Slices(ctx) {
				if err != nil {
					yield(nil, err)
					return
				}
				all[i] = append(all[i], sl)
			}
			if len(all[i]) == 0 {
				return
			}
		}
		idx := make([]int, len(all))
		for {
			combo := make([]*Slice, len(all))
			for i := range all {
				combo[i] = all[i][idx[i]]
			}
			if !yield(product(combo), nil) {
				return
			}
			i := len(idx) - 1
			for ; i >= 0; i-- {
				idx[i]++
				if idx[i] < len(all[i]) {
					break
				}
				idx[i] = 0
			}
			if i < 0 {
				return
			}
		}
	}
}

// product merges the slices of one combination as Python's dict(ChainMap(...)) does: for a
// key in several, the first slice's value; keys in the order of the last slice's, then the
// one before it, and so on.
func product(combo []*Slice) *Slice {
	out := New(nil)
	parts := make([]*record.Object, len(combo))
	extras := make([]*record.Object, len(combo))
	for i, sl := range combo {
		parts[i], extras[i] = sl.Partition, sl.Extra
		if sl.Cursor.Len() > 0 {
			out.Cursor = sl.Cursor
		}
	}
	out.Partition = chainMap(parts)
	out.Extra = chainMap(extras)
	return out
}

func chainMap(maps []*record.Object) *record.Object {
	out := &record.Object{}
	for i := len(maps) - 1; i >= 0; i-- {
		for _, k := range maps[i].Keys() {
			if _, ok := out.Get(k); !ok {
				out.Set(k, nil)
			}
		}
	}
	for _, k := range out.Keys() {
		for _, m := range maps {
			if v, ok := m.Get(k); ok {
				out.Set(k, v)
				break
			}
		}
	}
	return out
}

// Inject puts each child's request options, the first child's winning where two set the
// same field (ChainMap).
func (r *cartesian) Inject(b *request.Builder, sl *Slice) error {
	for _, child := range r.routers {
		if err := child.Inject(b, sl); err != nil && !ownConflict(err) {
			return err
		}
	}
	return nil
}

// ownConflict reports a field set twice by the partition router itself (two routers of a
// product, two parent configs): the first value stays, as in the CDK's merged mapping.
func ownConflict(err error) bool {
	var ce *request.ConflictError
	return errors.As(err, &ce) && ce.First == source && ce.Second == source
}

// pathString joins a path for messages: data/id.
func pathString(p []string) string { return strings.Join(p, "/") }
