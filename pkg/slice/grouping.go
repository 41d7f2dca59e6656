package slice

import (
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"context"
	"fmt"
	"iter"
)

// groupingRouter is GroupingPartitionRouter: the partitions of the underlying router,
// group_size at a time.
var groupingRouter = routerKind{
	make: func(m *manifest.Router, env Env, _ map[string]any) (Router, error) {
		under, err := NewRouter(m.Underlying, env)
		if err != nil {
			return nil, err
		}
		return &grouping{size: m.GroupSize, dedupe: m.Deduplicate, under: under}, nil
	},
	describe: func(m *manifest.Router, d describer) string {
		return fmt.Sprintf("GroupingPartitionRouter: %d at a time of %s", m.GroupSize, d.router(m.Underlying))
	},
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
