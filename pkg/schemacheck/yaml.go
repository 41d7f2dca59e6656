package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"

	"connector/pkg/record"
)

// LoaderYAML writes schema (decoded JSON; a *record.Object keeps its key order) as the
// schema_loader of a stream, ready to paste into a definition in place of the stream's
// schema_loader:
//
//	schema_loader:
//	  type: InlineSchemaLoader
//	  schema:
//	    $schema: http://json-schema.org/schema#
//	    type: object
//	    …
func LoaderYAML(schema any) (string, error) {
	inner, err := yamlNode(schema)
	if err != nil {
		return "", err
	}
	loader := mapping(scalar("!!str", "type"), scalar("!!str", "InlineSchemaLoader"), scalar("!!str", "schema"), inner)
	doc := mapping(scalar("!!str", "schema_loader"), loader)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return "", err
	}
	if err := enc.Close(); err != nil {
		return "", err
	}
	return b.String(), nil
}

func scalar(tag, value string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: value}
}

func mapping(kv ...*yaml.Node) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Content: kv}
}

// yamlNode is the YAML of a decoded JSON value, numbers as they were written.
func yamlNode(v any) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return scalar("!!null", "null"), nil
	case bool:
		return scalar("!!bool", strconv.FormatBool(x)), nil
	case string:
		return scalar("!!str", x), nil
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return scalar("!!int", x.String()), nil
		}
		return scalar("!!float", x.String()), nil
	case int:
		return scalar("!!int", strconv.Itoa(x)), nil
	case int64:
		return scalar("!!int", strconv.FormatInt(x, 10)), nil
	case float64:
		return scalar("!!float", strconv.FormatFloat(x, 'g', -1, 64)), nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
		for _, e := range x {
			c, err := yamlNode(e)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case *record.Object:
		return objectNode(x.Keys(), x.Get)
	case map[string]any:
		return objectNode(slices.Sorted(maps.Keys(x)), func(k string) (any, bool) { e, ok := x[k]; return e, ok })
	}
	return nil, fmt.Errorf("a schema cannot hold a value of type %T", v)
}

func objectNode(keys []string, get func(string) (any, bool)) (*yaml.Node, error) {
	n := mapping()
	for _, k := range keys {
		e, _ := get(k)
		c, err := yamlNode(e)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, scalar("!!str", k), c)
	}
	return n, nil
}
