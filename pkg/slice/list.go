package slice

import (
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
	"connector/pkg/template"
	"context"
	"fmt"
	"iter"
	"strconv"
)

// listRouter is ListPartitionRouter: one slice per value of values, {cursor_field: value}.
var listRouter = routerKind{
	make: func(m *manifest.Router, env Env, vars map[string]any) (Router, error) {
		r := &list{}
		var err error
		if r.field, err = render(m, vars, m.CursorField, "cursor_field"); err != nil {
			return nil, err
		}
		if r.values, err = listValues(m, vars); err != nil {
			return nil, err
		}
		if r.opt, err = request.NewOption(m.RequestOption, vars); err != nil {
			return nil, fmt.Errorf("%s request_option: %w", m.Type, err)
		}
		return r, nil
	},
	describe: func(m *manifest.Router, d describer) string {
		field := d.text(m.CursorField, m.Parameters)
		values, err := listValues(m, d.g.Vars(m.Parameters))
		switch {
		case err != nil:
			return fmt.Sprintf("ListPartitionRouter: %s from %s", field, m.ValuesTemplate.Source())
		case len(values) == 1:
			return fmt.Sprintf("ListPartitionRouter: %s, 1 value", field)
		}
		return fmt.Sprintf("ListPartitionRouter: %s, %d values", field, len(values))
	},
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
