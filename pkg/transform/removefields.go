package transform

import (
	"fmt"

	"connector/pkg/record"
)

// removeFieldsKind is RemoveFields: the fields at its pointers deleted, or, with a
// condition, the leaves the condition holds for.
var removeFieldsKind = kind{
	apply: func(s *step2, rec *record.Object, _ map[string]any, _ []fixedValue) error {
		return s.removeFields(rec)
	},
}

// removeFields deletes the fields at the pointers; with a condition, dpath deletes every
// leaf of the record the condition holds for (property = the leaf's value).
func (s *step2) removeFields(rec *record.Object) error {
	m := s.m
	var filter func(any) (bool, error)
	if m.Condition != nil {
		filter = func(v any) (bool, error) {
			vars := s.g.Vars(m.Parameters)
			vars["property"] = v
			return truth(m.Condition, vars)
		}
	}
	for _, p := range m.FieldPointers {
		if _, err := deleteMatching(rec, p, filter); err != nil {
			return fmt.Errorf("condition: %w", err)
		}
	}
	return nil
}
