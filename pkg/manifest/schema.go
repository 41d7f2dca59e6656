package manifest

import (
	"encoding/json"
	"fmt"
	"path"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/record"
)

// Schema loaders and normalizations, as written in definitions.
const (
	InlineSchemaLoader   = "InlineSchemaLoader"
	JSONFileSchemaLoader = "JsonFileSchemaLoader"
	DynamicSchemaLoader  = "DynamicSchemaLoader"

	NormalizationNone    = "None"
	NormalizationDefault = "Default"
)

// schemaLoader reads a stream's schema_loader into the stream's JSON schema, as the CDK's
// loaders give it to the record selector:
//   - InlineSchemaLoader: its `schema`;
//   - JsonFileSchemaLoader: the entry of the top-level `schemas` named by the file's base
//     name (./schemas/users.json → schemas.users; no file_path: the stream's name). The CDK
//     7.28.2 reads a Python package file there and fails a manifest-only connector; the
//     `schemas` section is where such a connector keeps its schemas;
//   - a list of loaders: the CDK's CompositeSchemaLoader (their `properties` merged, the
//     first loader winning);
//   - DynamicSchemaLoader: read from the API at run time (dynamic.go's DynamicSchema, set
//     on the stream by the caller); no schema here, and dynamic is true.
//
// `$ref`s inside a schema are the definition's own references, resolved against the whole
// definition as the CDK does before any read. The result is nil when there is no schema.
func (l *loader) schemaLoader(n *yaml.Node, at string, streamName string, parent *params) (schema any, dynamic bool) {
	schema, _, dynamic = l.schemaLoaderDynamic(n, at, streamName, parent)
	return schema, dynamic
}

// schemaLoaderDynamic is schemaLoader that also gives the DynamicSchemaLoader when it is
// the stream's only loader (nil otherwise, or when it cannot be run).
func (l *loader) schemaLoaderDynamic(n *yaml.Node, at string, streamName string, parent *params) (schema any, dyn *DynamicSchema, dynamic bool) {
	n = l.refs.resolve(n, at, 1).out
	if isEmpty(n) {
		return nil, nil, false
	}
	if n.Kind == yaml.SequenceNode {
		props := &record.Object{}
		for i, item := range n.Content {
			s, dyn := l.schemaLoader(item, fmt.Sprintf("%s[%d]", at, i), streamName, parent)
			dynamic = dynamic || dyn
			o, _ := s.(*record.Object)
			if o == nil {
				continue
			}
			p, _ := o.Get("properties")
			po, _ := p.(*record.Object)
			if po == nil {
				continue
			}
			// {**new, **combined}: the new loader's keys first, the earlier values winning.
			merged := &record.Object{}
			for _, k := range po.Keys() {
				v, _ := po.Get(k)
				if old, ok := props.Get(k); ok {
					v = old
				}
				merged.Set(k, v)
			}
			for _, k := range props.Keys() {
				if _, ok := merged.Get(k); !ok {
					v, _ := props.Get(k)
					merged.Set(k, v)
				}
			}
			props = merged
		}
		combined := &record.Object{}
		combined.Set("$schema", "http://json-schema.org/draft-07/schema#")
		combined.Set("type", []any{"null", "object"})
		combined.Set("properties", props)
		return combined, nil, dynamic
	}
	c, ok := l.component(n, at, parent, JSONFileSchemaLoader)
	if !ok {
		return nil, nil, false
	}
	switch c.typ {
	case InlineSchemaLoader:
		c.checkFields(InlineSchemaLoader)
		s := c.vals["schema"]
		if isEmpty(s) {
			return nil, nil, false
		}
		return l.schemaValue(s, c.fieldPath("schema")), nil, false
	case JSONFileSchemaLoader:
		c.checkFields(JSONFileSchemaLoader)
		name := streamName
		if fp := c.get("file_path"); fp != nil && isString(fp) && fp.Value != "" && !strings.Contains(fp.Value, "{") {
			name = strings.TrimSuffix(path.Base(fp.Value), ".json")
		}
		if l.refs == nil {
			return nil, nil, false
		}
		if _, v := pairOf(l.refs.root, "schemas"); v != nil {
			if _, s := pairOf(v, name); s != nil {
				return l.schemaValue(s, "schemas."+name), nil, false
			}
		}
		return nil, nil, false
	case DynamicSchemaLoader:
		// One that cannot be run is reported already: not dynamic, so not refused again.
		d := l.dynamicSchema(c)
		return nil, d, d != nil
	}
	l.unsupported(n, at, c.typ, "schema_loader")
	return nil, nil, false
}

// pairOf returns the key and value of key in mapping n; nils when absent.
func pairOf(n *yaml.Node, key string) (*yaml.Node, *yaml.Node) {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil, nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i], n.Content[i+1]
		}
	}
	return nil, nil
}

// schemaValue turns a JSON schema written in the definition into the value record.Decode
// would give for it (ordered objects, json.Number), resolving its `$ref`s. It stops at the
// limits of the definition (size, depth).
func (l *loader) schemaValue(n *yaml.Node, at string) any {
	count := 0
	var conv func(n *yaml.Node, depth int) any
	conv = func(n *yaml.Node, depth int) any {
		if count++; count > maxNodes || depth > maxDepth {
			if !l.overLimit {
				l.tooBig(n, at)
			}
			return nil
		}
		if isRefString(n) || n.Kind == yaml.MappingNode && hasRef(n) {
			n = l.refs.resolve(n, at, depth).out
		}
		switch n.Kind {
		case yaml.AliasNode:
			return conv(n.Alias, depth+1)
		case yaml.MappingNode:
			o := &record.Object{}
			for i := 0; i+1 < len(n.Content); i += 2 {
				o.Set(n.Content[i].Value, conv(n.Content[i+1], depth+1))
			}
			return o
		case yaml.SequenceNode:
			s := make([]any, len(n.Content))
			for i, e := range n.Content {
				s[i] = conv(e, depth+1)
			}
			return s
		}
		v := toValue(n)
		switch v.(type) {
		case int, float64:
			if json.Valid([]byte(n.Value)) {
				return json.Number(n.Value)
			}
			b, err := record.Marshal(v)
			if err != nil {
				return nil
			}
			return json.Number(b)
		}
		return v
	}
	return conv(n, 0)
}

// normalization reads a RecordSelector's schema_normalization: None (the default) or
// Default; a CustomSchemaNormalization (Python code) is refused.
func (l *loader) normalization(c *comp) (string, bool) {
	sn := c.get("schema_normalization")
	switch {
	case isEmpty(sn):
		return NormalizationNone, true
	case sn.Kind != yaml.ScalarNode:
		l.unsupportedValue(sn, c.fieldPath("schema_normalization"), "schema_normalization")
		return "", false
	case sn.Value == NormalizationNone || sn.Value == NormalizationDefault:
		return sn.Value, true
	}
	msg := fmt.Sprintf("`schema_normalization` must be %s or %s, not %q", NormalizationNone, NormalizationDefault, sn.Value)
	l.at(sn, c.fieldPath("schema_normalization"), diag.CodeType, msg, "")
	return "", false
}
