package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Transformation types, as written in definitions.
const (
	AddFields          = "AddFields"
	RemoveFields       = "RemoveFields"
	KeysToLower        = "KeysToLower"
	KeysToSnakeCase    = "KeysToSnakeCase"
	KeysReplace        = "KeysReplace"
	FlattenFields      = "FlattenFields"
	DpathFlattenFields = "DpathFlattenFields"
)

// Transformation is one of a stream's transformations, applied to each record in order.
type Transformation struct {
	Type string
	Pos  Pos
	// AddFields: the fields, and the condition each value must meet.
	Fields []*AddedField
	// Condition is AddFields' and RemoveFields' condition (nil: none).
	Condition *template.Template
	// FieldPointers are RemoveFields' paths (dpath globs).
	FieldPointers [][]string
	// Old and New are KeysReplace's.
	Old, New *template.Template
	// FlattenLists is FlattenFields' flatten_lists (default true).
	FlattenLists bool
	// DpathFlattenFields.
	FieldPath                   []*template.Template
	DeleteOrigin, ReplaceRecord bool
	// KeyPrefix and KeySuffix are its key_transformation (nil: none).
	KeyPrefix, KeySuffix *template.Template
	Parameters           map[string]any
}

// AddedField is one field AddFields adds.
type AddedField struct {
	Path  []string
	Value *template.Template
	// ValueType is value_type: "", string, number, integer or boolean.
	ValueType  string
	Parameters map[string]any
}

var (
	addedValueVars  = []string{"config", "parameters", "record", "stream_slice", "stream_partition", "stream_interval", "stream_state"}
	conditionVars   = []string{"config", "parameters", "property", "value", "path", "record", "stream_slice", "stream_partition", "stream_interval", "stream_state"}
	keysReplaceVars = []string{"config", "parameters", "record", "stream_slice", "stream_partition", "stream_interval", "stream_state"}
	configVars      = []string{"config", "parameters"}
)

// transformations reads DeclarativeStream.transformations.
func (l *loader) transformations(n *yaml.Node, path string, parent *params) ([]*Transformation, bool) {
	if n.Kind != yaml.SequenceNode {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`transformations` must be a list, not %s", kindName(n)), "")
		return nil, false
	}
	ok := true
	var out []*Transformation
	for i, item := range n.Content {
		t, good := l.transformation(item, fmt.Sprintf("%s[%d]", path, i), parent)
		ok = ok && good
		if t != nil {
			out = append(out, t)
		}
	}
	return out, ok
}

func (l *loader) transformation(n *yaml.Node, path string, parent *params) (*Transformation, bool) {
	c, ok := l.component(n, path, parent, "")
	if !ok {
		return nil, false
	}
	t := &Transformation{Type: c.typ, Pos: pos(n), Parameters: c.params.values()}
	switch c.typ {
	case AddFields:
		c.checkFields(AddFields)
		fn := c.require("fields")
		if fn == nil {
			return nil, false
		}
		if fn.Kind != yaml.SequenceNode {
			l.at(fn, c.fieldPath("fields"), diag.CodeType, fmt.Sprintf("`fields` must be a list, not %s", kindName(fn)), "")
			return nil, false
		}
		for i, fd := range fn.Content {
			f, good := l.addedField(fd, fmt.Sprintf("%s[%d]", c.fieldPath("fields"), i), c.params, addedValueVars, "AddFields fields")
			if !good {
				ok = false
				continue
			}
			t.Fields = append(t.Fields, f)
		}
		l.condition(c, t)
	case RemoveFields:
		c.checkFields(RemoveFields)
		if pn := c.require("field_pointers"); pn != nil {
			t.FieldPointers, ok = l.pointers(pn, c.fieldPath("field_pointers"))
		} else {
			ok = false
		}
		l.condition(c, t)
	case KeysToLower, KeysToSnakeCase:
		c.checkFields(c.typ)
	case KeysReplace:
		c.checkFields(KeysReplace)
		for _, f := range []struct {
			name string
			dst  **template.Template
		}{{"old", &t.Old}, {"new", &t.New}} {
			if c.require(f.name) == nil {
				ok = false
				continue
			}
			l.stringTemplate(c, f.name, keysReplaceVars, f.dst)
		}
	case FlattenFields:
		c.checkFields(FlattenFields)
		t.FlattenLists = true
		if v, set := l.boolField(c, "flatten_lists"); set {
			t.FlattenLists = v
		}
	case DpathFlattenFields:
		c.checkFields(DpathFlattenFields)
		fp := c.require("field_path")
		switch {
		case fp == nil:
			ok = false
		case fp.Kind != yaml.SequenceNode:
			l.at(fp, c.fieldPath("field_path"), diag.CodeType, fmt.Sprintf("`field_path` must be a list, not %s", kindName(fp)), "")
			ok = false
		default:
			t.FieldPath = make([]*template.Template, len(fp.Content))
			for i, seg := range fp.Content {
				p := fmt.Sprintf("%s[%d]", c.fieldPath("field_path"), i)
				if seg.Kind != yaml.ScalarNode {
					l.at(seg, p, diag.CodeType, fmt.Sprintf("a `field_path` segment must be a string, not %s", kindName(seg)), "")
					ok = false
					continue
				}
				l.tmpl(seg, p, "field_path", configVars, &t.FieldPath[i])
			}
		}
		t.DeleteOrigin, _ = l.boolField(c, "delete_origin_value")
		t.ReplaceRecord, _ = l.boolField(c, "replace_record")
		if kn := c.get("key_transformation"); kn != nil {
			kc, kok := l.component(kn, c.fieldPath("key_transformation"), c.params, "KeyTransformation")
			if kok {
				kc.checkFields("KeyTransformation")
				l.stringTemplate(kc, "prefix", configVars, &t.KeyPrefix)
				l.stringTemplate(kc, "suffix", configVars, &t.KeySuffix)
			} else {
				ok = false
			}
		}
	default:
		l.unsupported(n, path, c.typ, "transformations")
		return nil, false
	}
	return t, ok
}

// condition reads the condition of AddFields or RemoveFields ("" is none).
func (l *loader) condition(c *comp, t *Transformation) {
	if v := c.get("condition"); v != nil && !(isString(v) && v.Value == "") {
		l.stringTemplate(c, "condition", conditionVars, &t.Condition)
	}
}

// addedField reads an AddedFieldDefinition of AddFields (slot "AddFields fields") or of
// ConfigAddFields; vars are what its value template may read.
func (l *loader) addedField(n *yaml.Node, path string, parent *params, vars []string, slot string) (*AddedField, bool) {
	c, ok := l.component(n, path, parent, "AddedFieldDefinition")
	if !ok {
		return nil, false
	}
	if c.typ != "AddedFieldDefinition" {
		l.unsupported(n, path, c.typ, slot)
		return nil, false
	}
	c.checkFields("AddedFieldDefinition")
	f := &AddedField{Parameters: c.params.values()}
	pn := c.require("path")
	vn := c.require("value")
	if pn == nil || vn == nil {
		return nil, false
	}
	segs, good := l.stringList(c, "path")
	if !good {
		return nil, false
	}
	if len(segs) == 0 {
		l.at(pn, c.fieldPath("path"), diag.CodeType, "an added field's `path` must name at least one key", "")
		return nil, false
	}
	f.Path = segs
	if vn.Kind != yaml.ScalarNode {
		l.at(vn, c.fieldPath("value"), diag.CodeType, fmt.Sprintf("`value` must be a string, not %s", kindName(vn)), "")
		return nil, false
	}
	l.tmpl(vn, c.fieldPath("value"), "value", vars, &f.Value)
	switch vt := l.plainString(c, "value_type", ""); vt {
	case "", "string", "number", "integer", "boolean":
		f.ValueType = vt
	default:
		l.at(c.get("value_type"), c.fieldPath("value_type"), diag.CodeType,
			fmt.Sprintf("`value_type` must be string, number, integer or boolean, not %q", vt), "")
		return nil, false
	}
	return f, true
}

// pointers reads RemoveFields' field_pointers: a list of paths, each a list of keys.
func (l *loader) pointers(n *yaml.Node, path string) ([][]string, bool) {
	if n.Kind != yaml.SequenceNode {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`field_pointers` must be a list of paths, not %s", kindName(n)), "")
		return nil, false
	}
	var out [][]string
	ok := true
	for i, p := range n.Content {
		pp := fmt.Sprintf("%s[%d]", path, i)
		if p.Kind != yaml.SequenceNode {
			l.at(p, pp, diag.CodeType, fmt.Sprintf("a field pointer must be a list of keys, not %s", kindName(p)), "")
			ok = false
			continue
		}
		var segs []string
		for j, s := range p.Content {
			if s.Kind != yaml.ScalarNode {
				l.at(s, fmt.Sprintf("%s[%d]", pp, j), diag.CodeType, fmt.Sprintf("a key of a field pointer must be a string, not %s", kindName(s)), "")
				ok = false
				continue
			}
			segs = append(segs, s.Value)
		}
		out = append(out, segs)
	}
	return out, ok
}
