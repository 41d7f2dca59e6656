package transform

import (
	"fmt"
	"strings"

	"connector/pkg/record"
)

// keysToLowerKind is KeysToLower: the record's top-level keys in lower case.
var keysToLowerKind = kind{
	apply: func(_ *step2, rec *record.Object, _ map[string]any, _ []fixedValue) error {
		rename(rec, false, strings.ToLower)
		return nil
	},
}

// keysToSnakeCaseKind is KeysToSnakeCase: every key, nested ones too, in snake_case as the
// CDK spells it (snake.go).
var keysToSnakeCaseKind = kind{
	apply: func(_ *step2, rec *record.Object, _ map[string]any, _ []fixedValue) error {
		var bad error
		rename(rec, true, func(k string) string {
			out, err := snakeCase(k)
			if err != nil && bad == nil {
				bad = err
			}
			return out
		})
		return bad
	},
}

// keysReplaceKind is KeysReplace: old replaced by new in every key, nested ones too; both
// are rendered per record.
var keysReplaceKind = kind{
	apply: func(s *step2, rec *record.Object, base map[string]any, _ []fixedValue) error {
		m := s.m
		vars := set(base, m.Parameters, "record", rec)
		old, err := evalString(m.Old, vars)
		if err != nil {
			return fmt.Errorf("old: %w", err)
		}
		repl, err := evalString(m.New, vars)
		if err != nil {
			return fmt.Errorf("new: %w", err)
		}
		rename(rec, true, func(k string) string { return strings.ReplaceAll(k, old, repl) })
		return nil
	},
}

// rename renames keys in place, keeping their order; deep also renames the keys of nested
// objects (not of objects inside lists, as in the CDK). When two keys get the same name,
// the later value wins at the first one's place.
func rename(o *record.Object, deep bool, f func(string) string) {
	keys := append([]string{}, o.Keys()...)
	vals := make([]any, len(keys))
	for i, k := range keys {
		vals[i], _ = o.Get(k)
	}
	for _, k := range keys {
		o.Delete(k)
	}
	for i, k := range keys {
		v := vals[i]
		if sub, ok := v.(*record.Object); ok && deep {
			rename(sub, true, f)
		}
		o.Set(f(k), v)
	}
}
