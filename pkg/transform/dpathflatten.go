package transform

import (
	"fmt"
	"strings"

	"connector/pkg/record"
)

// dpathFlattenFieldsKind is DpathFlattenFields: the object at field_path merged into the
// record, or put in its place. Its path and key_transformation are rendered once, with the
// config.
var dpathFlattenFieldsKind = kind{
	prepare: func(s *step2, vars map[string]any) error {
		m := s.m
		for _, t := range m.FieldPath {
			seg, err := evalString(t, vars)
			if err != nil {
				return fmt.Errorf("DpathFlattenFields field_path: %w", err)
			}
			s.path = append(s.path, seg)
		}
		var err error
		if m.KeyPrefix != nil {
			if s.prefix, err = evalString(m.KeyPrefix, vars); err != nil {
				return fmt.Errorf("key_transformation prefix: %w", err)
			}
		}
		if m.KeySuffix != nil {
			if s.suffix, err = evalString(m.KeySuffix, vars); err != nil {
				return fmt.Errorf("key_transformation suffix: %w", err)
			}
		}
		return nil
	},
	apply: func(s *step2, rec *record.Object, _ map[string]any, _ []fixedValue) error {
		return s.dpathFlatten(rec)
	},
}

// dpathFlatten is DpathFlattenFields: the object at field_path is merged into the record
// (when none of its keys is taken), or replaces it.
func (s *step2) dpathFlatten(rec *record.Object) error {
	m := s.m
	var extracted any
	if containsStar(s.path) {
		for _, pv := range walk(rec, nil, nil) {
			if match(pv.path, s.path) {
				extracted = pv.value
				break
			}
		}
	} else if isGlob(s.path) {
		// dpath.get: the path is a glob that must match one value at most.
		n := 0
		for _, pv := range walk(rec, nil, nil) {
			if match(pv.path, s.path) {
				extracted = pv.value
				n++
			}
		}
		if n > 1 {
			return fmt.Errorf("field_path %q matches %d values, not one", s.path, n)
		}
	} else {
		steps := make([]step, len(s.path))
		for i, seg := range s.path {
			steps[i] = step{key: seg}
		}
		v, ok := get(rec, steps)
		if !ok {
			return nil
		}
		extracted = v
	}
	obj, ok := extracted.(*record.Object)
	if !ok {
		return nil
	}
	if s.prefix != "" || s.suffix != "" {
		renamed := &record.Object{}
		for _, k := range obj.Keys() {
			v, _ := obj.Get(k)
			renamed.Set(s.prefix+k+s.suffix, v)
		}
		obj = renamed
	}
	if m.ReplaceRecord && obj.Len() > 0 {
		replace(rec, obj)
		return nil
	}
	for _, k := range obj.Keys() {
		if _, taken := rec.Get(k); taken {
			return nil
		}
	}
	if m.DeleteOrigin {
		if _, err := deleteMatching(rec, s.path, nil); err != nil {
			return err
		}
	}
	for _, k := range obj.Keys() {
		v, _ := obj.Get(k)
		rec.Set(k, v)
	}
	return nil
}

// isGlob reports whether a path has fnmatch's special characters.
func isGlob(p []string) bool {
	for _, s := range p {
		if strings.ContainsAny(s, "*?[") {
			return true
		}
	}
	return false
}

func containsStar(p []string) bool {
	for _, s := range p {
		if s == "*" {
			return true
		}
	}
	return false
}
