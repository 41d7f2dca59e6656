package manifest

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// DynamicSchema is a DynamicSchemaLoader: the stream's schema is made from the first record
// its retriever yields, each entry at SchemaPointer in it one property (its name at
// KeyPointer, its type at TypePointer, mapped by TypesMapping to one of the Airbyte data
// types), the properties then filtered and transformed as if they were a record.
type DynamicSchema struct {
	Pos Pos
	// Retriever is read as a stream of its own (the CDK names it dynamic_properties), with
	// one empty slice: its partition router is not iterated.
	Retriever *Stream
	// SchemaPointer, KeyPointer and TypePointer are paths (templates with config and
	// parameters); an empty SchemaPointer is the whole record, a nil TypePointer makes
	// every property a string.
	SchemaPointer, KeyPointer, TypePointer []*template.Template
	// Parameters are the loader's $parameters (template variable `parameters` of the
	// pointers).
	Parameters   map[string]any
	TypesMapping []*TypesMap
	// Filter is schema_filter's condition (nil: none): it sees each property as a record
	// {name: schema}; FilterParameters are the filter's $parameters.
	Filter           *template.Template
	FilterParameters map[string]any
	// Transformations are schema_transformations, applied to the properties as to a record.
	Transformations []*Transformation
}

// TypesMap maps a field type read from the API (Current, a name or a list of names) to
// Target when its Condition (config, raw_schema: the property's entry) is true.
type TypesMap struct {
	Current any // string or []string
	Target  *FieldType
	// Condition is nil when absent (always true).
	Condition *template.Template
}

// FieldType is a TypesMap target_type: Names (one type name, or List: a list of names), or
// Complex.
type FieldType struct {
	Names   []string
	List    bool
	Complex *ComplexFieldType
}

// ComplexFieldType is a field type with the type of its items (array only).
type ComplexFieldType struct {
	FieldType string
	Items     *ComplexFieldType // nil: none
}

// AirbyteDataTypes are the type names a DynamicSchemaLoader turns into a property schema,
// in the CDK's order (its AIRBYTE_DATA_TYPES).
var AirbyteDataTypes = []string{"string", "boolean", "date", "timestamp_without_timezone",
	"timestamp_with_timezone", "time_without_timezone", "time_with_timezone", "integer", "number",
	"array", "object"}

var (
	pointerVars  = []string{"config", "parameters"}
	typesMapVars = []string{"config", "parameters", "raw_schema"}
)

// dynamicSchema reads a DynamicSchemaLoader; nil when it cannot be run.
func (l *loader) dynamicSchema(c *comp) *DynamicSchema {
	c.checkFields(DynamicSchemaLoader)
	d := &DynamicSchema{Pos: pos(c.n), Parameters: c.params.values()}
	good := true
	if rn := c.require("retriever"); rn != nil {
		s := &Stream{Name: "dynamic_properties", Pos: pos(rn)}
		auth := &streamAuth{name: s.Name, path: c.path}
		if l.retriever(rn, c.fieldPath("retriever"), c.params, s, auth, 1) {
			d.Retriever = s
		} else {
			good = false
		}
	} else {
		good = false
	}
	if n := c.require("schema_type_identifier"); n == nil || !l.schemaTypeIdentifier(n, c.fieldPath("schema_type_identifier"), c.params, d) {
		good = false
	}
	if tn := c.get("schema_transformations"); !isEmpty(tn) {
		var ok bool
		if d.Transformations, ok = l.transformations(tn, c.fieldPath("schema_transformations"), c.params); !ok {
			good = false
		}
	}
	if fn := c.get("schema_filter"); !isEmpty(fn) {
		fc, ok := l.component(fn, c.fieldPath("schema_filter"), c.params, "RecordFilter")
		switch {
		case !ok:
			good = false
		case fc.typ != "RecordFilter":
			l.unsupported(fn, fc.path, fc.typ, "schema_filter")
			good = false
		default:
			fc.checkFields("RecordFilter")
			d.FilterParameters = fc.params.values()
			if v := fc.get("condition"); v != nil && !(isString(v) && v.Value == "") {
				l.stringTemplate(fc, "condition", filterVars, &d.Filter)
			}
		}
	}
	if !good {
		return nil
	}
	return d
}

// schemaTypeIdentifier reads a SchemaTypeIdentifier into d.
func (l *loader) schemaTypeIdentifier(n *yaml.Node, path string, parent *params, d *DynamicSchema) bool {
	c, ok := l.component(n, path, parent, "SchemaTypeIdentifier")
	if !ok {
		return false
	}
	if c.typ != "SchemaTypeIdentifier" {
		l.unsupported(n, path, c.typ, "schema_type_identifier")
		return false
	}
	c.checkFields("SchemaTypeIdentifier")
	good := true
	pointer := func(f string, required bool) []*template.Template {
		v := c.get(f)
		if required {
			v = c.require(f)
		}
		if isEmpty(v) {
			return nil
		}
		if v.Kind != yaml.SequenceNode {
			l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a list, not %s", f, kindName(v)), "")
			good = false
			return nil
		}
		out := make([]*template.Template, len(v.Content))
		for i, seg := range v.Content {
			p := fmt.Sprintf("%s[%d]", c.fieldPath(f), i)
			if seg.Kind != yaml.ScalarNode {
				l.at(seg, p, diag.CodeType, fmt.Sprintf("a segment of `%s` must be a string, not %s", f, kindName(seg)), "")
				good = false
				continue
			}
			l.tmpl(seg, p, f, pointerVars, &out[i])
		}
		return out
	}
	d.SchemaPointer = pointer("schema_pointer", false)
	if d.KeyPointer = pointer("key_pointer", true); d.KeyPointer == nil {
		good = false
	}
	d.TypePointer = pointer("type_pointer", false)
	if tm := c.get("types_mapping"); !isEmpty(tm) {
		if tm.Kind != yaml.SequenceNode {
			l.at(tm, c.fieldPath("types_mapping"), diag.CodeType, fmt.Sprintf("`types_mapping` must be a list, not %s", kindName(tm)), "")
			return false
		}
		for i, item := range tm.Content {
			m := l.typesMap(item, fmt.Sprintf("%s[%d]", c.fieldPath("types_mapping"), i), c.params)
			if m == nil {
				good = false
				continue
			}
			d.TypesMapping = append(d.TypesMapping, m)
		}
	}
	return good
}

// typesMap reads a TypesMap; nil when it is not valid.
func (l *loader) typesMap(n *yaml.Node, path string, parent *params) *TypesMap {
	c, ok := l.component(n, path, parent, "TypesMap")
	if !ok {
		return nil
	}
	if c.typ != "TypesMap" {
		l.unsupported(n, path, c.typ, "types_mapping")
		return nil
	}
	c.checkFields("TypesMap")
	m := &TypesMap{}
	good := true
	if v := c.require("current_type"); v == nil {
		good = false
	} else if names, list, ok := l.typeNames(v, c.fieldPath("current_type")); ok {
		m.Current = names[0]
		if list {
			m.Current = names
		}
	} else {
		good = false
	}
	if v := c.require("target_type"); v == nil {
		good = false
	} else if m.Target = l.fieldType(v, c.fieldPath("target_type"), c.params); m.Target == nil {
		good = false
	}
	if v := c.get("condition"); v != nil && !(isString(v) && v.Value == "") {
		l.stringTemplate(c, "condition", typesMapVars, &m.Condition)
	}
	if !good {
		return nil
	}
	return m
}

// typeNames reads a type name or a list of them.
func (l *loader) typeNames(v *yaml.Node, path string) (names []string, list, ok bool) {
	switch {
	case v.Kind == yaml.ScalarNode && isString(v):
		return []string{v.Value}, false, true
	case v.Kind == yaml.SequenceNode:
		for i, e := range v.Content {
			if e.Kind != yaml.ScalarNode || !isString(e) {
				l.at(e, fmt.Sprintf("%s[%d]", path, i), diag.CodeType, fmt.Sprintf("a type name must be a string, not %s", kindName(e)), "")
				return nil, true, false
			}
			names = append(names, e.Value)
		}
		if names == nil {
			names = []string{}
		}
		return names, true, true
	}
	l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` must be a type name or a list of them, not %s", lastSeg(path), kindName(v)), "")
	return nil, false, false
}

// fieldType reads a target_type: a name, a list of names or a ComplexFieldType. A name
// that is not an Airbyte data type is a warning: the CDK fails the read when a property
// gets it.
func (l *loader) fieldType(v *yaml.Node, path string, parent *params) *FieldType {
	if v.Kind == yaml.MappingNode {
		ct := l.complexFieldType(v, path, parent)
		if ct == nil {
			return nil
		}
		return &FieldType{Complex: ct}
	}
	names, list, ok := l.typeNames(v, path)
	if !ok {
		return nil
	}
	switch {
	case !list:
		l.checkDataType(v, path, names[0])
	case len(names) == 2:
		for i, name := range names {
			l.checkDataType(v.Content[i], fmt.Sprintf("%s[%d]", path, i), name)
		}
	default:
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: v.Line, Column: v.Column, Path: path,
			Message: fmt.Sprintf("a `target_type` list must name two types, not %d: the CDK fails the read when a property gets it", len(names))})
	}
	return &FieldType{Names: names, List: list}
}

// complexFieldType reads a ComplexFieldType: `items` only for an array, as the CDK requires.
func (l *loader) complexFieldType(n *yaml.Node, path string, parent *params) *ComplexFieldType {
	c, ok := l.component(n, path, parent, "ComplexFieldType")
	if !ok {
		return nil
	}
	c.checkFields("ComplexFieldType")
	ft := c.require("field_type")
	if ft == nil {
		return nil
	}
	if ft.Kind != yaml.ScalarNode || !isString(ft) {
		l.at(ft, c.fieldPath("field_type"), diag.CodeType, fmt.Sprintf("`field_type` must be a string, not %s", kindName(ft)), "")
		return nil
	}
	l.checkDataType(ft, c.fieldPath("field_type"), ft.Value)
	ct := &ComplexFieldType{FieldType: ft.Value}
	items := c.get("items")
	if isEmpty(items) {
		return ct
	}
	if ft.Value != "array" {
		l.at(items, c.fieldPath("items"), diag.CodeType, "`items` can only be used when `field_type` is array", "")
		return nil
	}
	if items.Kind == yaml.MappingNode {
		if ct.Items = l.complexFieldType(items, c.fieldPath("items"), c.params); ct.Items == nil {
			return nil
		}
		return ct
	}
	if items.Kind != yaml.ScalarNode || !isString(items) {
		l.at(items, c.fieldPath("items"), diag.CodeType, fmt.Sprintf("`items` must be a type name or a ComplexFieldType, not %s", kindName(items)), "")
		return nil
	}
	l.checkDataType(items, c.fieldPath("items"), items.Value)
	ct.Items = &ComplexFieldType{FieldType: items.Value}
	return ct
}

// checkDataType warns about a type name that is not an Airbyte data type.
func (l *loader) checkDataType(n *yaml.Node, path, name string) {
	if slices.Contains(AirbyteDataTypes, name) {
		return
	}
	l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: n.Line, Column: n.Column, Path: path,
		Message: fmt.Sprintf("%q is not an Airbyte data type: the CDK fails the read when a property gets it", name),
		Hint:    "one of " + strings.Join(AirbyteDataTypes, ", ")})
}

// withSchemaLoaderResolved returns the stream template n with the references of its
// schema_loader resolved (left as written by the first pass, as JSON schemas are): a stream
// built from the template later (DynamicStream.Build) has no resolver.
func (l *loader) withSchemaLoaderResolved(n *yaml.Node, path string) *yaml.Node {
	if l.refs == nil || n.Kind != yaml.MappingNode {
		return n
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value != "schema_loader" {
			continue
		}
		r := l.refs.resolve(n.Content[i+1], join(path, "schema_loader"), 1).out
		if r == n.Content[i+1] {
			return n
		}
		c := *n
		c.Content = slices.Clone(n.Content)
		c.Content[i+1] = r
		return &c
	}
	return n
}
