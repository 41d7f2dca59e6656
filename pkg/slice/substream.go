package slice

import (
	"context"
	"fmt"
	"iter"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
)

// substreamRouter is SubstreamPartitionRouter: one partition per record of each parent
// stream, read as the partitions are needed.
var substreamRouter = routerKind{
	make: func(m *manifest.Router, env Env, _ map[string]any) (Router, error) {
		r := &substream{env: env}
		for i, pc := range m.Parents {
			p, err := newParent(pc, env)
			if err != nil {
				return nil, fmt.Errorf("%s parent_stream_configs[%d]: %w", m.Type, i, err)
			}
			r.parents = append(r.parents, p)
		}
		return r, nil
	},
	describe: func(m *manifest.Router, d describer) string {
		var parents []string
		for _, pc := range m.Parents {
			parents = append(parents, fmt.Sprintf("%s.%s → %s", pc.Stream.Name,
				d.text(pc.ParentKey, pc.Parameters), d.text(pc.PartitionField, pc.Parameters)))
		}
		return "SubstreamPartitionRouter: " + strings.Join(parents, ", ")
	},
}

// parent is one ParentStreamConfig, its templates rendered.
type parent struct {
	stream *manifest.Stream
	// key is parent_key split into its path ("a/b" → a, b); keyText as written.
	key     []string
	keyText string
	field   string
	opt     *request.Option
	extra   [][]string
	lazy    []string
}

func newParent(pc *manifest.ParentConfig, env Env) (*parent, error) {
	vars := env.Globals.Vars(pc.Parameters)
	render := func(t *template.Template, field string) (string, error) {
		if t == nil {
			return "", nil
		}
		s, err := t.Render(vars)
		if err != nil {
			return "", fmt.Errorf("%s: %w", field, err)
		}
		return s, nil
	}
	p := &parent{stream: pc.Stream}
	var err error
	if p.keyText, err = render(pc.ParentKey, "parent_key"); err != nil {
		return nil, err
	}
	for _, seg := range strings.Split(p.keyText, "/") {
		if seg != "" {
			p.key = append(p.key, seg)
		}
	}
	if len(p.key) == 0 {
		return nil, fmt.Errorf("parent_key %q names no field", p.keyText)
	}
	if p.field, err = render(pc.PartitionField, "partition_field"); err != nil {
		return nil, err
	}
	if p.opt, err = request.NewOption(pc.RequestOption, vars); err != nil {
		return nil, fmt.Errorf("request_option: %w", err)
	}
	for _, path := range pc.ExtraFields {
		var segs []string
		for _, t := range path {
			s, err := render(t, "extra_fields")
			if err != nil {
				return nil, err
			}
			segs = append(segs, s)
		}
		p.extra = append(p.extra, segs)
	}
	for _, t := range pc.LazyReadPointer {
		s, err := render(t, "lazy_read_pointer")
		if err != nil {
			return nil, err
		}
		p.lazy = append(p.lazy, s)
	}
	return p, nil
}

// substream is a SubstreamPartitionRouter: for each parent config in order, one slice per
// record of the parent stream, {partition_field: the value at parent_key, parent_slice: the
// parent record's own partition}. A record without a value at parent_key gives no slice.
type substream struct {
	env     Env
	parents []*parent
}

func (r *substream) Slices(ctx context.Context) iter.Seq2[*Slice, error] {
	return func(yield func(*Slice, error) bool) {
		for _, p := range r.parents {
			skipped, stopped := 0, false
			var bad error
			err := r.env.ReadParent(ctx, p.stream, func(rec any, psl *Slice) bool {
				sl, ok, err := p.slice(rec, psl)
				switch {
				case err != nil:
					bad = err
					return false
				case !ok:
					skipped++
					return true
				case !yield(sl, nil):
					stopped = true
					return false
				}
				return true
			})
			if stopped {
				return
			}
			if bad != nil {
				yield(nil, fmt.Errorf("parent stream %s: %w", p.stream.Name, bad))
				return
			}
			if err != nil {
				yield(nil, err)
				return
			}
			if skipped > 0 && r.env.Skipped != nil {
				r.env.Skipped(p.stream.Name, p.keyText, skipped)
			}
		}
	}
}

// slice makes the slice of one parent record; ok is false when the record has no value at
// parent_key.
func (p *parent) slice(rec any, psl *Slice) (sl *Slice, ok bool, err error) {
	v, found, err := dpathGet(rec, p.key)
	if err != nil || !found {
		return nil, false, err
	}
	part := &record.Object{}
	part.Set(p.field, v)
	parentPartition := &record.Object{}
	if psl != nil {
		parentPartition = psl.Partition
	}
	part.Set("parent_slice", parentPartition)
	sl = New(part)
	for _, path := range p.extra {
		ev, found, err := dpathGet(rec, path)
		if err != nil {
			return nil, false, err
		}
		if !found {
			ev = nil
		}
		sl.Extra.Set(strings.Join(path, "."), ev)
	}
	if p.lazy != nil {
		child, found, err := dpathGet(rec, p.lazy)
		if err != nil {
			return nil, false, err
		}
		if !found {
			child = []any{}
		}
		if sl.Lazy, err = record.Marshal(child); err != nil {
			return nil, false, err
		}
	}
	return sl, true, nil
}

func (r *substream) Inject(b *request.Builder, sl *Slice) error {
	for _, p := range r.parents {
		if err := inject(b, p.opt, sl, p.field); err != nil && !ownConflict(err) {
			return err
		}
	}
	return nil
}

// dpathGet is dpath.get of the CDK: the value at path in a record (a key of an object, or
// an index of a list); a `*` segment matches any key or index but must lead to one value
// only. found is false when nothing is there.
func dpathGet(v any, path []string) (any, bool, error) {
	matches := []any{v}
	for _, seg := range path {
		var next []any
		for _, m := range matches {
			next = append(next, step(m, seg)...)
		}
		matches = next
		if len(matches) == 0 {
			return nil, false, nil
		}
	}
	if len(matches) > 1 {
		return nil, false, fmt.Errorf("the path %s matches %d values, not one", pathString(path), len(matches))
	}
	return matches[0], true, nil
}

func step(v any, seg string) []any {
	switch x := v.(type) {
	case *record.Object:
		if seg == "*" {
			out := make([]any, 0, x.Len())
			for _, k := range x.Keys() {
				e, _ := x.Get(k)
				out = append(out, e)
			}
			return out
		}
		if e, ok := x.Get(seg); ok {
			return []any{e}
		}
	case map[string]any:
		if seg == "*" {
			out := make([]any, 0, len(x))
			for _, e := range x {
				out = append(out, e)
			}
			return out
		}
		if e, ok := x[seg]; ok {
			return []any{e}
		}
	case []any:
		if seg == "*" {
			return x
		}
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(x) {
			return []any{x[i]}
		}
	}
	return nil
}
