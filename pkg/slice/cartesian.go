package slice

import (
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"context"
	"iter"
)

// cartesianRouter is CartesianProductStreamSlicer: every combination of its routers'
// partitions.
var cartesianRouter = routerKind{
	make: func(m *manifest.Router, env Env, _ map[string]any) (Router, error) {
		routers, err := children(m, env)
		if err != nil {
			return nil, err
		}
		return &cartesian{routers: routers}, nil
	},
	describe: func(m *manifest.Router, d describer) string { return describeChildren(m, d, " × ") },
}

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

// Inject puts each child's request options as the CDK merges them (a ChainMap of the
// children's options): a field two children set takes the first child's value, and the
// fields come in the order of the last child's options, then the new ones of the child
// before it, and so on. Children set their options last to first, each replacing a value of
// a later one.
func (r *cartesian) Inject(b *request.Builder, sl *Slice) error {
	return b.Overwriting(source, func() error {
		for i := len(r.routers) - 1; i >= 0; i-- {
			if err := r.routers[i].Inject(b, sl); err != nil && !ownConflict(err) {
				return err
			}
		}
		return nil
	})
}
