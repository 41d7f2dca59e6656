package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// The property_limit_type values of a PropertyChunking.
const (
	LimitCharacters    = "characters"
	LimitPropertyCount = "property_count"
)

// QueryProperties is a data requester's QueryProperties: the property names sent in each
// request, in chunks of one request each, whose records are merged by key per page.
type QueryProperties struct {
	Pos Pos
	// Key is the request parameter the chunk's names go into, joined by commas; "" when
	// the QueryProperties is the requester's `query_properties` (templates then read the
	// chunk as stream_partition.extra_fields.query_properties).
	Key string
	// List is property_list written as a list; Endpoint is a PropertiesFromEndpoint.
	List     []string
	Endpoint *PropertiesFromEndpoint
	// Always is always_include_properties.
	Always []string
	// Chunking is property_chunking (nil: one request a page, records not merged).
	Chunking *PropertyChunking
}

// PropertyChunking cuts the property list into chunks, and merges the records of a page.
type PropertyChunking struct {
	LimitType string // LimitCharacters or LimitPropertyCount
	// Limit is property_limit (0: none, one chunk).
	Limit int
	// MergeKey is the GroupByKeyMergeStrategy's key (the CDK's default: id).
	MergeKey []string
}

// PropertiesFromEndpoint reads the property names from an API: each record of Retriever
// gives one, the value at FieldPath as Python's str() writes it.
type PropertiesFromEndpoint struct {
	// FieldPath is property_field_path (templates with config and parameters).
	FieldPath []*template.Template
	// Parameters are the component's $parameters (template variable `parameters`).
	Parameters map[string]any
	// Retriever is read as a stream named dynamic_properties (the CDK's name), with one
	// empty slice: the CDK ignores its partition_router.
	Retriever *Stream
}

// queryPropertiesParam takes the QueryProperties out of a requester's request_parameters,
// as the CDK's factory does: at most one entry may hold one; it is read here and left out
// of the rendered parameters. It returns the mapping without it.
func (l *loader) queryPropertiesParam(c *comp, r *Requester) *yaml.Node {
	v := c.get("request_parameters")
	if v == nil || v.Kind != yaml.MappingNode {
		return v
	}
	var keep []*yaml.Node
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, e := v.Content[i], v.Content[i+1]
		if e.Kind == yaml.AliasNode && e.Alias != nil {
			e = e.Alias
		}
		if tn := mapGet(e, "type"); e.Kind != yaml.MappingNode || tn == nil || tn.Value != "QueryProperties" {
			keep = append(keep, v.Content[i], v.Content[i+1])
			continue
		}
		path := join(c.fieldPath("request_parameters"), k.Value)
		if r.QueryProperties != nil {
			l.at(k, path, diag.CodeType, "request_parameters may hold only one QueryProperties, as in the CDK",
				fmt.Sprintf("keep one of `%s` and `%s`", r.QueryProperties.Key, k.Value))
			continue
		}
		if qp := l.queryProperties(e, path, c.params); qp != nil {
			qp.Key = k.Value
			r.QueryProperties = qp
		}
	}
	out := *v
	out.Content = keep
	return &out
}

// queryProperties reads a QueryProperties; nil when it is broken.
func (l *loader) queryProperties(n *yaml.Node, path string, parent *params) *QueryProperties {
	c, ok := l.component(n, path, parent, "QueryProperties")
	if !ok {
		return nil
	}
	if c.typ != "QueryProperties" {
		l.unsupported(n, path, c.typ, "query_properties")
		return nil
	}
	c.checkFields("QueryProperties")
	qp := &QueryProperties{Pos: pos(n)}
	good := true
	if pl := c.require("property_list"); pl == nil {
		good = false
	} else if pl.Kind == yaml.SequenceNode {
		qp.List, _ = l.stringList(c, "property_list")
	} else {
		qp.Endpoint = l.propertiesFromEndpoint(pl, c.fieldPath("property_list"), c.params)
		good = qp.Endpoint != nil
	}
	if c.get("always_include_properties") != nil {
		qp.Always, _ = l.stringList(c, "always_include_properties")
	}
	if v := c.get("property_chunking"); !isEmpty(v) {
		qp.Chunking = l.propertyChunking(v, c.fieldPath("property_chunking"), c.params)
		good = good && qp.Chunking != nil
	}
	// property_selector (JsonSchemaPropertySelector) selects from the configured catalog;
	// a read here has none, and the CDK then selects every property.
	if !good {
		return nil
	}
	return qp
}

func (l *loader) propertyChunking(n *yaml.Node, path string, parent *params) *PropertyChunking {
	c, ok := l.component(n, path, parent, "PropertyChunking")
	if !ok {
		return nil
	}
	if c.typ != "PropertyChunking" {
		l.unsupported(n, path, c.typ, "property_chunking")
		return nil
	}
	c.checkFields("PropertyChunking")
	pc := &PropertyChunking{MergeKey: []string{"id"}}
	good := true
	if t := c.require("property_limit_type"); t == nil {
		good = false
	} else if t.Kind != yaml.ScalarNode || (t.Value != LimitCharacters && t.Value != LimitPropertyCount) {
		l.at(t, c.fieldPath("property_limit_type"), diag.CodeType,
			fmt.Sprintf("`property_limit_type` must be %s or %s, not %s", LimitCharacters, LimitPropertyCount, describe(t)), "")
		good = false
	} else {
		pc.LimitType = t.Value
	}
	if v := c.get("property_limit"); !isEmpty(v) {
		// 0 is no limit, as the CDK's `if not property_limit`.
		n, err := strconv.Atoi(strings.TrimSpace(v.Value))
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || n < 0 {
			l.at(v, c.fieldPath("property_limit"), diag.CodeType,
				fmt.Sprintf("`property_limit` must be an integer of 0 or more, not %s", describe(v)), "")
			good = false
		}
		pc.Limit = n
	}
	if v := c.get("record_merge_strategy"); !isEmpty(v) {
		mc, ok := l.component(v, c.fieldPath("record_merge_strategy"), c.params, "GroupByKeyMergeStrategy")
		switch {
		case !ok:
			good = false
		case mc.typ != "GroupByKeyMergeStrategy":
			l.unsupported(v, mc.path, mc.typ, "record_merge_strategy")
			good = false
		default:
			mc.checkFields("GroupByKeyMergeStrategy")
			k := mc.require("key")
			switch {
			case k == nil:
				good = false
			case k.Kind == yaml.ScalarNode:
				pc.MergeKey = []string{k.Value}
			default:
				keys, ok := l.stringList(mc, "key")
				if !ok || len(keys) == 0 {
					if ok {
						l.at(k, mc.fieldPath("key"), diag.CodeType, "`key` must name at least one field", "")
					}
					good = false
				}
				pc.MergeKey = keys
			}
		}
	}
	if !good {
		return nil
	}
	return pc
}

// propertiesFromEndpoint reads a PropertiesFromEndpoint; nil when it is broken.
func (l *loader) propertiesFromEndpoint(n *yaml.Node, path string, parent *params) *PropertiesFromEndpoint {
	c, ok := l.component(n, path, parent, "PropertiesFromEndpoint")
	if !ok {
		return nil
	}
	if c.typ != "PropertiesFromEndpoint" {
		l.unsupported(n, path, c.typ, lastSeg(path))
		return nil
	}
	c.checkFields("PropertiesFromEndpoint")
	pe := &PropertiesFromEndpoint{Parameters: c.params.values()}
	good := true
	switch fp := c.require("property_field_path"); {
	case fp == nil:
		good = false
	case fp.Kind != yaml.SequenceNode:
		l.at(fp, c.fieldPath("property_field_path"), diag.CodeType, fmt.Sprintf("`property_field_path` must be a list, not %s", kindName(fp)), "")
		good = false
	default:
		pe.FieldPath = l.templateList(fp, c.fieldPath("property_field_path"), "property_field_path")
	}
	if rn := c.require("retriever"); rn != nil {
		s := &Stream{Name: "dynamic_properties", Pos: pos(rn)}
		auth := &streamAuth{name: s.Name, path: path}
		if l.retriever(rn, c.fieldPath("retriever"), c.params, s, auth, 1) {
			s.Router = nil
			pe.Retriever = s
		} else {
			good = false
		}
	} else {
		good = false
	}
	if !good {
		return nil
	}
	return pe
}

// requesterQueryProperties reads the requester's fetch_properties_from_endpoint, then its
// query_properties, as the CDK's factory does: request_parameters first, and a
// PropertiesFromEndpoint in both request_parameters and fetch_properties_from_endpoint is
// an error; fetch_properties_from_endpoint alone is a QueryProperties of that list, without
// chunking, read by templates as stream_partition.extra_fields.query_properties.
func (l *loader) requesterQueryProperties(c *comp, r *Requester) {
	if v := c.get("fetch_properties_from_endpoint"); !isEmpty(v) {
		if r.QueryProperties != nil {
			l.at(c.keys["fetch_properties_from_endpoint"], c.fieldPath("fetch_properties_from_endpoint"), diag.CodeType,
				"PropertiesFromEndpoint should only be specified once per stream, but found in HttpRequester.fetch_properties_from_endpoint and HttpRequester.request_parameters (the CDK refuses it)",
				"keep the QueryProperties of `request_parameters` and remove `fetch_properties_from_endpoint`")
			return
		}
		if pe := l.propertiesFromEndpoint(v, c.fieldPath("fetch_properties_from_endpoint"), c.params); pe != nil {
			r.QueryProperties = &QueryProperties{Pos: pos(v), Endpoint: pe}
		}
		return
	}
	v := c.get("query_properties")
	if isEmpty(v) || r.QueryProperties != nil {
		return
	}
	r.QueryProperties = l.queryProperties(v, c.fieldPath("query_properties"), c.params)
}
