package transform

import (
	"fmt"
	"strings"

	"connector/pkg/record"
)

// addFieldsKind is AddFields: each field's value, rendered per record, set at its path
// (creating the objects on the way), when the condition holds for it.
var addFieldsKind = kind{
	apply: func(s *step2, rec *record.Object, base map[string]any, fixed []fixedValue) error {
		return s.addFields(rec, base, fixed)
	},
}

// addFields sets each field's value at its path (when the condition, if any, holds).
// fixed holds the values evaluated once for a Batch (nil: none).
func (s *step2) addFields(rec *record.Object, vars map[string]any, fixed []fixedValue) error {
	m := s.m
	vars["record"] = rec
	for j, f := range m.Fields {
		var v any
		at := -1
		if fixed != nil {
			at = s.fixed[j]
		}
		if at >= 0 && fixed[at].ok {
			v = fixed[at].v
		} else {
			if s.params[j] {
				// Set for the template that reads it: every template sets its own first.
				vars["parameters"] = params(f.Parameters)
			}
			var err error
			if v, err = interpolate(f.Value, vars, f.ValueType); err != nil {
				return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
			}
			if at >= 0 && !container(v) {
				fixed[at] = fixedValue{v: v, ok: true}
			}
		}
		if m.Condition != nil {
			cv := set(vars, m.Parameters, "value", v)
			cv["path"] = toList(f.Path)
			ok, err := truth(m.Condition, cv)
			if err != nil {
				return fmt.Errorf("condition: %w", err)
			}
			if !ok {
				continue
			}
		}
		if err := newPath(rec, f.Path, v); err != nil {
			return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
		}
	}
	return nil
}

// container reports a value a later step could change in place: an object or a list.
func container(v any) bool {
	switch v.(type) {
	case *record.Object, []any, map[string]any:
		return true
	}
	return false
}

func toList(p []string) []any {
	out := make([]any, len(p))
	for i, s := range p {
		out[i] = s
	}
	return out
}
