package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Config transformation and validation types of spec.config_normalization_rules.
const (
	ConfigAddFields         = "ConfigAddFields"
	ConfigRemapField        = "ConfigRemapField"
	ConfigRemoveFields      = "ConfigRemoveFields"
	DpathValidator          = "DpathValidator"
	PredicateValidator      = "PredicateValidator"
	ValidateAdheresToSchema = "ValidateAdheresToSchema"
)

// ConfigNormalization is spec.config_normalization_rules: what the CDK does to the testing
// values before any stream reads them. Migrations run first (each ConfigMigration's
// transformations in order), then Transformations, then Validations on the result.
type ConfigNormalization struct {
	Migrations      [][]*ConfigTransformation
	Transformations []*ConfigTransformation
	Validations     []*ConfigValidation
}

// ConfigTransformation is a ConfigAddFields, ConfigRemapField or ConfigRemoveFields.
type ConfigTransformation struct {
	Type string
	// Path locates it in the definition, for messages.
	Path string
	// Fields are ConfigAddFields' (their values see only `config`).
	Fields []*AddedField
	// Condition is ConfigAddFields' (per field, with `value` and `path`) or
	// ConfigRemoveFields' (once) condition; nil when none.
	Condition *template.Template
	// FieldPointers are ConfigRemoveFields' paths (dpath globs).
	FieldPointers [][]string
	// FieldPath is ConfigRemapField's field_path, each key a template of `config`.
	FieldPath []*template.Template
	// Map is ConfigRemapField's map: keys and string values are templates of `config`.
	Map []MapEntry
}

// MapEntry is one entry of ConfigRemapField's map. Value is a template when the written
// value is a string, else Raw holds it as written.
type MapEntry struct {
	Key   *template.Template
	Value *template.Template
	Raw   any
}

// ConfigValidation is a DpathValidator or a PredicateValidator with its
// ValidateAdheresToSchema strategy.
type ConfigValidation struct {
	Type string
	Path string
	// FieldPath is DpathValidator's field_path; the CDK renders its keys without config.
	FieldPath []*template.Template
	// Value is PredicateValidator's value, as written (the CDK does not render it).
	Value any
	// Schema is the strategy's base_schema.
	Schema map[string]any
}

var configTemplateVars = []string{"config", "parameters"}
var configConditionVars = []string{"config", "parameters", "value", "path"}

// configNormalization reads spec.config_normalization_rules (nil when it cannot be used).
func (l *loader) configNormalization(n *yaml.Node, path string) *ConfigNormalization {
	c, ok := l.component(n, path, nil, "ConfigNormalizationRules")
	if !ok {
		return nil
	}
	if c.typ != "ConfigNormalizationRules" {
		l.unsupported(n, path, c.typ, "config_normalization_rules")
		return nil
	}
	c.checkFields("ConfigNormalizationRules")
	out := &ConfigNormalization{}
	good := true
	for i, m := range l.list(c, "config_migrations") {
		mp := fmt.Sprintf("%s[%d]", c.fieldPath("config_migrations"), i)
		mc, ok := l.component(m, mp, nil, "ConfigMigration")
		if !ok {
			good = false
			continue
		}
		if mc.typ != "ConfigMigration" {
			l.unsupported(m, mp, mc.typ, "config_migrations")
			good = false
			continue
		}
		mc.checkFields("ConfigMigration")
		var steps []*ConfigTransformation
		mc.require("transformations")
		for j, t := range l.list(mc, "transformations") {
			ct, ok := l.configTransformation(t, fmt.Sprintf("%s[%d]", mc.fieldPath("transformations"), j))
			good = good && ok
			steps = append(steps, ct)
		}
		out.Migrations = append(out.Migrations, steps)
	}
	for i, t := range l.list(c, "transformations") {
		ct, ok := l.configTransformation(t, fmt.Sprintf("%s[%d]", c.fieldPath("transformations"), i))
		good = good && ok
		out.Transformations = append(out.Transformations, ct)
	}
	for i, v := range l.list(c, "validations") {
		cv, ok := l.configValidation(v, fmt.Sprintf("%s[%d]", c.fieldPath("validations"), i))
		good = good && ok
		out.Validations = append(out.Validations, cv)
	}
	if !good {
		return nil
	}
	return out
}

// list returns the items of a list field (none when absent; a type error when not a list).
func (l *loader) list(c *comp, f string) []*yaml.Node {
	v := c.get(f)
	if isEmpty(v) {
		return nil
	}
	if v.Kind != yaml.SequenceNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a list, not %s", f, kindName(v)), "")
		return nil
	}
	return v.Content
}

func (l *loader) configTransformation(n *yaml.Node, path string) (*ConfigTransformation, bool) {
	c, ok := l.component(n, path, nil, "")
	if !ok {
		return nil, false
	}
	t := &ConfigTransformation{Type: c.typ, Path: path}
	switch c.typ {
	case ConfigAddFields:
		c.checkFields(ConfigAddFields)
		if c.require("fields") == nil {
			return nil, false
		}
		for i, fd := range l.list(c, "fields") {
			f, good := l.addedField(fd, fmt.Sprintf("%s[%d]", c.fieldPath("fields"), i), nil, configTemplateVars, "ConfigAddFields fields")
			if !good {
				ok = false
				continue
			}
			t.Fields = append(t.Fields, f)
		}
		if v := c.get("condition"); v != nil && !(isString(v) && v.Value == "") {
			l.stringTemplate(c, "condition", configConditionVars, &t.Condition)
		}
	case ConfigRemoveFields:
		c.checkFields(ConfigRemoveFields)
		pn := c.require("field_pointers")
		if pn == nil {
			return nil, false
		}
		t.FieldPointers, ok = l.pointers(pn, c.fieldPath("field_pointers"))
		if v := c.get("condition"); v != nil && !(isString(v) && v.Value == "") {
			l.stringTemplate(c, "condition", configTemplateVars, &t.Condition)
		}
	case ConfigRemapField:
		c.checkFields(ConfigRemapField)
		fp, mn := c.require("field_path"), c.require("map")
		if fp == nil || mn == nil {
			return nil, false
		}
		t.FieldPath, ok = l.configPath(c, "field_path")
		if len(t.FieldPath) == 0 && ok {
			l.at(fp, c.fieldPath("field_path"), diag.CodeType, "`field_path` must name at least one key", "")
			ok = false
		}
		if mn.Kind != yaml.MappingNode {
			// The CDK's InterpolatedMapping iterates the map: a template string fails there.
			l.at(mn, c.fieldPath("map"), diag.CodeType, fmt.Sprintf("`map` must be a mapping, not %s", kindName(mn)), "")
			return nil, false
		}
		t.Map = make([]MapEntry, len(mn.Content)/2)
		for i := 0; i+1 < len(mn.Content); i += 2 {
			k, v, e := mn.Content[i], mn.Content[i+1], &t.Map[i/2]
			l.tmpl(k, c.fieldPath("map"), "map", configTemplateVars, &e.Key)
			if isString(v) {
				l.tmpl(v, join(c.fieldPath("map"), k.Value), "map", configTemplateVars, &e.Value)
			} else {
				e.Raw = toValue(v)
			}
		}
	default:
		l.unsupported(n, path, c.typ, "transformations")
		return nil, false
	}
	return t, ok
}

// configPath reads a list of string templates of `config` (a field path).
func (l *loader) configPath(c *comp, f string) ([]*template.Template, bool) {
	v := c.get(f)
	if v.Kind != yaml.SequenceNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a list of strings, not %s", f, kindName(v)), "")
		return nil, false
	}
	out := make([]*template.Template, len(v.Content))
	ok := true
	for i, seg := range v.Content {
		p := fmt.Sprintf("%s[%d]", c.fieldPath(f), i)
		if seg.Kind != yaml.ScalarNode {
			l.at(seg, p, diag.CodeType, fmt.Sprintf("an item of `%s` must be a string, not %s", f, kindName(seg)), "")
			ok = false
			continue
		}
		l.tmpl(seg, p, f, configTemplateVars, &out[i])
	}
	return out, ok
}

func (l *loader) configValidation(n *yaml.Node, path string) (*ConfigValidation, bool) {
	c, ok := l.component(n, path, nil, "")
	if !ok {
		return nil, false
	}
	v := &ConfigValidation{Type: c.typ, Path: path}
	switch c.typ {
	case DpathValidator:
		c.checkFields(DpathValidator)
		if c.require("field_path") == nil {
			ok = false
		} else {
			v.FieldPath, ok = l.configPath(c, "field_path")
			if len(v.FieldPath) == 0 && ok {
				l.at(c.get("field_path"), c.fieldPath("field_path"), diag.CodeType, "`field_path` must name at least one key", "")
				ok = false
			}
		}
	case PredicateValidator:
		c.checkFields(PredicateValidator)
		if vn := c.require("value"); vn == nil {
			ok = false
		} else {
			v.Value = toValue(vn)
		}
	default:
		l.unsupported(n, path, c.typ, "validations")
		return nil, false
	}
	sn := c.require("validation_strategy")
	if sn == nil {
		return nil, false
	}
	sc, sok := l.component(sn, c.fieldPath("validation_strategy"), nil, "")
	if !sok {
		return nil, false
	}
	if sc.typ != ValidateAdheresToSchema {
		l.unsupported(sn, sc.path, sc.typ, "validation_strategy")
		return nil, false
	}
	sc.checkFields(ValidateAdheresToSchema)
	bs := sc.require("base_schema")
	switch {
	case bs == nil:
		return nil, false
	case bs.Kind != yaml.MappingNode:
		l.unsupported(bs, sc.fieldPath("base_schema"), "ValidateAdheresToSchema base_schema as a string", "base_schema")
		return nil, false
	}
	v.Schema, _ = toValue(bs).(map[string]any)
	return v, ok
}
