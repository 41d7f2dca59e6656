package slice

import (
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"context"
	"fmt"
	"iter"
	"strings"
)

// unionRouter is the union of several routers' partitions, each named by partition_field.
var unionRouter = routerKind{
	make: func(m *manifest.Router, env Env, vars map[string]any) (Router, error) {
		routers, err := children(m, env)
		if err != nil {
			return nil, err
		}
		field, err := render(m, vars, m.PartitionField, "partition_field")
		if err != nil {
			return nil, err
		}
		return &union{field: field, routers: routers}, nil
	},
	describe: func(m *manifest.Router, d describer) string { return describeChildren(m, d, " ∪ ") },
}

// children are the routers of a union or a cartesian product.
func children(m *manifest.Router, env Env) ([]Router, error) {
	var out []Router
	for _, c := range m.Routers {
		r, err := NewRouter(c, env)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// describeChildren says the routers of a union or a product joined by sep.
func describeChildren(m *manifest.Router, d describer, sep string) string {
	var subs []string
	for _, sub := range m.Routers {
		subs = append(subs, d.router(sub))
	}
	return m.Type + ": " + strings.Join(subs, sep)
}

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
