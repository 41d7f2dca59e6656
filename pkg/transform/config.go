package transform

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// MigrateConfig applies the config_migrations of spec.config_normalization_rules to g.Config,
// in place, as the CDK does when the source starts (the CDK then writes the result back to
// the config file; connector never does). Their templates read g's clock.
func MigrateConfig(n *manifest.ConfigNormalization, g template.Globals) error {
	if n == nil {
		return nil
	}
	for _, m := range n.Migrations {
		if err := transformConfig(m, g); err != nil {
			return err
		}
	}
	return nil
}

// TransformConfig applies the transformations of spec.config_normalization_rules to the
// migrated config g.Config, in place. Their templates read g's clock.
func TransformConfig(n *manifest.ConfigNormalization, g template.Globals) error {
	if n == nil {
		return nil
	}
	return transformConfig(n.Transformations, g)
}

// configSteps are the transformations of config_normalization_rules, by their type in
// definitions, each next to its function below; their fields and checks are in
// pkg/manifest (ConfigTransformation).
var configSteps = map[string]func(t *manifest.ConfigTransformation, g template.Globals) error{
	manifest.ConfigAddFields:    configAddFields,
	manifest.ConfigRemoveFields: configRemoveFields,
	manifest.ConfigRemapField:   configRemap,
}

func transformConfig(steps []*manifest.ConfigTransformation, g template.Globals) error {
	for _, t := range steps {
		apply, ok := configSteps[t.Type]
		if !ok {
			return fmt.Errorf("%s: %s is not supported", t.Path, t.Type)
		}
		if err := apply(t, g); err != nil {
			return fmt.Errorf("%s (%s): %w", t.Path, t.Type, err)
		}
	}
	return nil
}

// configAddFields renders each value with the config as it is at that moment and, when the
// condition (which sees `value` and `path`) holds, sets it, creating missing objects.
func configAddFields(t *manifest.ConfigTransformation, g template.Globals) error {
	for _, f := range t.Fields {
		vars := g.Vars(nil)
		v, err := interpolate(f.Value, vars, f.ValueType)
		if err != nil {
			return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
		}
		v = plainValue(v)
		if t.Condition != nil {
			vars["value"], vars["path"] = v, toList(f.Path)
			ok, err := truth(t.Condition, vars)
			if err != nil {
				return fmt.Errorf("condition: %w", err)
			}
			if !ok {
				continue
			}
		}
		if err := newConfigPath(g.Config, f.Path, v); err != nil {
			return fmt.Errorf("field %s: %w", strings.Join(f.Path, "."), err)
		}
	}
	return nil
}

// newConfigPath is dpath.new on a plain object: missing objects on the way are created.
func newConfigPath(m map[string]any, path []string, v any) error {
	cur := m
	for i, k := range path[:len(path)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			if _, exists := cur[k]; exists && cur[k] != nil {
				return fmt.Errorf("%s is %s, not an object", strings.Join(path[:i+1], "."), kindOf(cur[k]))
			}
			next = map[string]any{}
			cur[k] = next
		}
		cur = next
	}
	cur[path[len(path)-1]] = v
	return nil
}

// configRemoveFields deletes every value each pointer (a dpath glob) matches, when the
// condition, evaluated once, holds; a pointer that matches nothing is no error.
func configRemoveFields(t *manifest.ConfigTransformation, g template.Globals) error {
	if t.Condition != nil {
		ok, err := truth(t.Condition, g.Vars(nil))
		if err != nil {
			return fmt.Errorf("condition: %w", err)
		}
		if !ok {
			return nil
		}
	}
	for _, p := range t.FieldPointers {
		deleteGlob(g.Config, p)
	}
	return nil
}

// deleteGlob deletes the values at glob under v: a key of an object goes, an item of a
// list becomes null (as dpath.delete does).
func deleteGlob(v any, glob []string) {
	if len(glob) == 0 {
		return
	}
	last := len(glob) == 1
	switch x := v.(type) {
	case map[string]any:
		for k := range x {
			if !fnmatch(k, glob[0]) {
				continue
			}
			if last {
				delete(x, k)
			} else {
				deleteGlob(x[k], glob[1:])
			}
		}
	case []any:
		for i := range x {
			if !fnmatch(strconv.Itoa(i), glob[0]) {
				continue
			}
			if last {
				x[i] = nil
			} else {
				deleteGlob(x[i], glob[1:])
			}
		}
	}
}

// configRemap replaces the value at field_path by its entry in map, when it has one; a
// path that does not lead to an object leaves the config as it is.
func configRemap(t *manifest.ConfigTransformation, g template.Globals) error {
	vars := g.Vars(nil)
	keys := make([]string, len(t.FieldPath))
	for i, k := range t.FieldPath {
		s, err := evalString(k, vars)
		if err != nil {
			return fmt.Errorf("field_path: %w", err)
		}
		keys[i] = s
	}
	cur := g.Config
	for _, k := range keys[:len(keys)-1] {
		next, ok := cur[k].(map[string]any)
		if !ok {
			return nil
		}
		cur = next
	}
	old, ok := cur[keys[len(keys)-1]]
	if !ok {
		return nil
	}
	for _, e := range t.Map {
		// The CDK renders the keys as strings: only a string value can match one.
		key, err := evalString(e.Key, vars)
		if err != nil {
			return fmt.Errorf("map: %w", err)
		}
		if s, ok := old.(string); !ok || s != key {
			continue
		}
		val := e.Raw
		if e.Value != nil {
			v, err := interpolate(e.Value, vars, "")
			if err != nil {
				return fmt.Errorf("map: %w", err)
			}
			val = plainValue(v)
		}
		cur[keys[len(keys)-1]] = val
		return nil
	}
	return nil
}

// plainValue turns a rendered value into the plain JSON value the testing values hold:
// objects as maps, numbers as int64 or float64.
func plainValue(v any) any {
	switch x := v.(type) {
	case *record.Object:
		m := make(map[string]any, x.Len())
		for _, k := range x.Keys() {
			e, _ := x.Get(k)
			m[k] = plainValue(e)
		}
		return m
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainValue(e)
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = plainValue(e)
		}
		return m
	}
	return v
}

// ValidationError is a failed validation of spec.config_normalization_rules: which rule,
// on which key, and why, with no value of the testing values in it.
type ValidationError struct {
	// Rule locates the validator in the definition.
	Rule string
	// Key is the testing value checked (dotted), or "" for a PredicateValidator.
	Key    string
	Reason string
}

func (e *ValidationError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("%s: the value fails its ValidateAdheresToSchema: %s", e.Rule, e.Reason)
	}
	return fmt.Sprintf("testing value %q fails %s (ValidateAdheresToSchema): %s", e.Key, e.Rule, e.Reason)
}

// SchemaCheck checks a value against a JSON schema and says why it fails ("" when it
// passes). Reasons name keys and keywords, never values.
type SchemaCheck func(schema map[string]any, v any) (string, error)

// ValidateConfig runs the validations of spec.config_normalization_rules on the migrated and
// transformed config, in order, and returns the first failure as a *ValidationError. A
// DpathValidator whose path is not in the config is skipped, as in the CDK.
func ValidateConfig(n *manifest.ConfigNormalization, config map[string]any, check SchemaCheck) error {
	if n == nil {
		return nil
	}
	for _, v := range n.Validations {
		validate, ok := validators[v.Type]
		if !ok {
			return fmt.Errorf("%s: %s is not supported", v.Path, v.Type)
		}
		if err := validate(v, config, check); err != nil {
			return err
		}
	}
	return nil
}

// validators are the validations of config_normalization_rules, by their type in
// definitions; their fields and checks are in pkg/manifest (ConfigValidation).
var validators = map[string]func(v *manifest.ConfigValidation, config map[string]any, check SchemaCheck) error{
	manifest.PredicateValidator: predicateValidator,
	manifest.DpathValidator:     dpathValidator,
}

// predicateValidator checks its value, as written in the definition.
func predicateValidator(v *manifest.ConfigValidation, _ map[string]any, check SchemaCheck) error {
	return checkOne(v, "", v.Value, check)
}

// dpathValidator checks each value of the config its field_path matches.
func dpathValidator(v *manifest.ConfigValidation, config map[string]any, check SchemaCheck) error {
	// The CDK renders the path's keys without the config.
	path := make([]string, len(v.FieldPath))
	for i, t := range v.FieldPath {
		s, err := evalString(t, template.Globals{Config: map[string]any{}}.Vars(nil))
		if err != nil {
			return fmt.Errorf("%s field_path: %w", v.Path, err)
		}
		path[i] = s
	}
	for _, m := range matchAll(config, path, nil) {
		if err := checkOne(v, strings.Join(m.at, "."), m.v, check); err != nil {
			return err
		}
	}
	return nil
}

func checkOne(v *manifest.ConfigValidation, key string, val any, check SchemaCheck) error {
	if s, ok := val.(string); ok {
		var decoded any
		d := json.NewDecoder(strings.NewReader(s))
		d.UseNumber()
		if err := d.Decode(&decoded); err != nil || d.More() {
			return &ValidationError{Rule: v.Path, Key: key, Reason: "the value is a string that is not JSON"}
		}
		val = plainValue(decoded)
	}
	reason, err := check(v.Schema, val)
	if err != nil {
		return fmt.Errorf("%s base_schema: %w", v.Path, err)
	}
	if reason != "" {
		return &ValidationError{Rule: v.Path, Key: key, Reason: reason}
	}
	return nil
}

type found struct {
	at []string
	v  any
}

// matchAll is dpath: the values at path under v, where a "*" key matches every key of an
// object and every index of a list; other keys are literal (a list index is its decimal).
func matchAll(v any, path, at []string) []found {
	if len(path) == 0 {
		return []found{{at: at, v: v}}
	}
	var out []found
	switch x := v.(type) {
	case map[string]any:
		if path[0] == "*" {
			for _, k := range sortedKeys(x) {
				out = append(out, matchAll(x[k], path[1:], append(append([]string{}, at...), k))...)
			}
		} else if e, ok := x[path[0]]; ok {
			out = matchAll(e, path[1:], append(append([]string{}, at...), path[0]))
		}
	case []any:
		for i, e := range x {
			if path[0] == "*" || path[0] == strconv.Itoa(i) {
				out = append(out, matchAll(e, path[1:], append(append([]string{}, at...), strconv.Itoa(i)))...)
			}
		}
	}
	return out
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
