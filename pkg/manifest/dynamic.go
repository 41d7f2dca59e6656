package manifest

import (
	"fmt"
	"strconv"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Components resolver types, as written in definitions.
const (
	HTTPComponentsResolver         = "HttpComponentsResolver"
	ConfigComponentsResolver       = "ConfigComponentsResolver"
	ParametrizedComponentsResolver = "ParametrizedComponentsResolver"
)

// mappingVars are the variables of a ComponentMappingDefinition's templates. stream_slice is
// the slice of the HttpComponentsResolver's retriever the components came from.
var mappingVars = []string{"config", "parameters", "components_values", "stream_template_config", "stream_slice"}

// parametrizedVars are those of a ParametrizedComponentsResolver's mappings: the CDK gives
// them no stream_slice (a template reading it fails there with "undeclared variables").
var parametrizedVars = []string{"config", "parameters", "components_values", "stream_template_config"}

// DynamicStream is a DynamicDeclarativeStream: a stream template and a components resolver
// whose components (records of an API, or entries of the testing values) each make one
// stream of the template, with components_mapping setting values into it. The streams exist
// only once the testing values are known (pkg/dynamic makes them).
type DynamicStream struct {
	// Name is the definition's name, or dynamic_stream_N (the CDK's default).
	Name string
	Pos  Pos
	// Type is HTTPComponentsResolver, ConfigComponentsResolver or
	// ParametrizedComponentsResolver.
	Type string
	// Retriever is the HttpComponentsResolver's retriever, read as a stream of that name:
	// each of its records is the components_values of one stream.
	Retriever *Stream
	// Configs are the ConfigComponentsResolver's stream_config entries.
	Configs []*StreamConfig
	// Components are the entries of a ParametrizedComponentsResolver's
	// list_of_parameters_for_stream, in order, each the components_values of one stream,
	// without its `$parameters` (the CDK's manifest transformer takes it out of a mapping
	// that has no type); ComponentPos are where they are written.
	Components   []map[string]any
	ComponentPos []Pos
	Mappings     []*ComponentMapping
	// Parameters are the resolver's $parameters (template variable `parameters`).
	Parameters map[string]any
	// UseParentParameters is use_parent_parameters (default true): in the streams made, a
	// $parameters entry of an outer component wins over a nested component's own.
	UseParentParameters bool

	template *yaml.Node
	path     string
	file     string
	src      []byte
	jobs     *JobLimit
	// sample is the template built as it is written, for validate and the authenticator.
	sample *Stream
}

// StreamConfig is one stream_config of a ConfigComponentsResolver: where the components sit
// in the testing values, and values added after them.
type StreamConfig struct {
	// Pointer is configs_pointer (templates with config and parameters).
	Pointer       []*template.Template
	DefaultValues []any
}

// ComponentMapping is a ComponentMappingDefinition: the value set at FieldPath in each
// stream made from the template.
type ComponentMapping struct {
	Pos       Pos
	FieldPath []*template.Template
	Value     *template.Template
	// ValueType is value_type (string, number, integer, boolean), "" when absent.
	ValueType string
	// CreateOrUpdate creates the path when the template lacks it (ConfigComponentsResolver).
	CreateOrUpdate bool
	// Condition, nil when absent: the mapping applies only when it is true
	// (ConfigComponentsResolver only, as in the CDK).
	Condition *template.Template
	// literal is the field path when no segment is a template.
	literal []string
}

// CheckDynamic is a CheckDynamicStream: check the first StreamCount streams of the source
// (static ones first, then the dynamic ones), or none when UseCheckAvailability is false.
type CheckDynamic struct {
	StreamCount          int
	UseCheckAvailability bool
}

// dynamicStreams reads the dynamic_streams list.
func (l *loader) dynamicStreams(n *yaml.Node) []*DynamicStream {
	if isEmpty(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		l.at(n, "dynamic_streams", diag.CodeType, fmt.Sprintf("`dynamic_streams` must be a list, not %s", kindName(n)), "")
		return nil
	}
	var out []*DynamicStream
	for i, item := range n.Content {
		if d := l.dynamicStream(item, fmt.Sprintf("dynamic_streams[%d]", i), i); d != nil {
			out = append(out, d)
		}
	}
	return out
}

func (l *loader) dynamicStream(n *yaml.Node, path string, index int) *DynamicStream {
	c, ok := l.component(n, path, nil, "DynamicDeclarativeStream")
	if !ok {
		return nil
	}
	if c.typ != "DynamicDeclarativeStream" {
		l.unsupported(n, path, c.typ, "dynamic_streams")
		return nil
	}
	c.checkFields("DynamicDeclarativeStream")
	d := &DynamicStream{Pos: pos(n), UseParentParameters: true, path: path + ".stream_template", file: l.file, src: l.src, jobs: l.asyncJobs}
	d.Name = l.plainString(c, "name", fmt.Sprintf("dynamic_stream_%d", index))
	if v, set := l.boolField(c, "use_parent_parameters"); set {
		d.UseParentParameters = v
	}
	good := true
	rn := c.require("components_resolver")
	if rn == nil || !l.componentsResolver(rn, c.fieldPath("components_resolver"), d) {
		good = false
	}
	if tn := c.require("stream_template"); tn != nil {
		d.template = l.withSchemaLoaderResolved(tn, d.path)
		d.sample = l.streamTemplate(tn, d.path, d.Mappings)
		good = good && d.sample != nil
	} else {
		good = false
	}
	if !good {
		return nil
	}
	return d
}

// streamTemplate checks a stream template as far as it can be without its components: it is
// built as a stream, with a placeholder where the template leaves a value empty for a
// mapping to fill (a mapping whose field path is plain text), and a placeholder name.
func (l *loader) streamTemplate(n *yaml.Node, path string, mappings []*ComponentMapping) *Stream {
	if n.Kind == yaml.MappingNode {
		n = deepCopy(n)
		for _, m := range mappings {
			if m.literal != nil {
				fillEmpty(n, m.literal)
			}
		}
		if isEmpty(mapGet(n, "name")) && l.params0(n, "name") {
			setKey(n, "name", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: placeholder, Line: n.Line, Column: n.Column})
		}
	}
	// A template's own templates may read components_values: the mappings replace them.
	l.inTemplate = true
	s, _ := l.streamAt(n, path, nil, 0)
	l.inTemplate = false
	return s
}

// placeholder stands for a value a mapping sets, while the template is checked.
const placeholder = "(set by components_mapping)"

// fillEmpty puts the placeholder at path in n where the value there is empty.
func fillEmpty(n *yaml.Node, path []string) {
	for i, seg := range path {
		var next *yaml.Node
		idx := -1
		switch n.Kind {
		case yaml.MappingNode:
			for j := 0; j+1 < len(n.Content); j += 2 {
				if n.Content[j].Value == seg {
					idx = j + 1
				}
			}
		case yaml.SequenceNode:
			if k, err := strconv.Atoi(seg); err == nil && k >= 0 && k < len(n.Content) {
				idx = k
			}
		}
		if idx < 0 {
			return
		}
		next = n.Content[idx]
		if i == len(path)-1 {
			if isEmpty(next) && next.Kind == yaml.ScalarNode {
				n.Content[idx] = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: placeholder, Line: next.Line, Column: next.Column}
			}
			return
		}
		n = next
	}
}

// params0 reports that mapping n has no $parameters entry key (that would fill the field).
func (l *loader) params0(n *yaml.Node, key string) bool {
	return isEmpty(mapGet(mapGet(n, "$parameters"), key))
}

// componentsResolver reads an HttpComponentsResolver or a ConfigComponentsResolver into d.
func (l *loader) componentsResolver(n *yaml.Node, path string, d *DynamicStream) bool {
	c, ok := l.component(n, path, nil, "")
	if !ok {
		return false
	}
	switch c.typ {
	case HTTPComponentsResolver, ConfigComponentsResolver, ParametrizedComponentsResolver:
	default:
		l.unsupported(n, path, c.typ, "components_resolver")
		return false
	}
	c.checkFields(c.typ)
	d.Type, d.Parameters = c.typ, c.params.values()
	good := true
	if c.typ == ParametrizedComponentsResolver {
		good = l.streamParameters(c, d)
	} else if c.typ == HTTPComponentsResolver {
		if rn := c.require("retriever"); rn != nil {
			s := &Stream{Name: d.Name, Pos: pos(rn)}
			auth := &streamAuth{name: d.Name, path: path}
			if l.retriever(rn, c.fieldPath("retriever"), c.params, s, auth, 1) {
				d.Retriever = s
			} else {
				good = false
			}
		} else {
			good = false
		}
	} else {
		sc := c.require("stream_config")
		switch {
		case sc == nil:
			good = false
		case sc.Kind == yaml.SequenceNode:
			for i, item := range sc.Content {
				if cfg := l.streamConfig(item, fmt.Sprintf("%s[%d]", c.fieldPath("stream_config"), i), c.params); cfg != nil {
					d.Configs = append(d.Configs, cfg)
				} else {
					good = false
				}
			}
		default:
			if cfg := l.streamConfig(sc, c.fieldPath("stream_config"), c.params); cfg != nil {
				d.Configs = append(d.Configs, cfg)
			} else {
				good = false
			}
		}
	}
	mn := c.require("components_mapping")
	switch {
	case mn == nil:
		good = false
	case mn.Kind != yaml.SequenceNode:
		l.at(mn, c.fieldPath("components_mapping"), diag.CodeType, fmt.Sprintf("`components_mapping` must be a list, not %s", kindName(mn)), "")
		good = false
	default:
		for i, item := range mn.Content {
			m := l.componentMapping(item, fmt.Sprintf("%s[%d]", c.fieldPath("components_mapping"), i), c.params, c.typ)
			if m == nil {
				good = false
				continue
			}
			d.Mappings = append(d.Mappings, m)
		}
	}
	return good
}

// streamParameters reads the stream_parameters of a ParametrizedComponentsResolver, a
// StreamParametersDefinition, into d.Components.
func (l *loader) streamParameters(c *comp, d *DynamicStream) bool {
	n := c.require("stream_parameters")
	if n == nil {
		return false
	}
	// The CDK gives stream_parameters no default type, and its schema requires one.
	sp, ok := l.component(n, c.fieldPath("stream_parameters"), c.params, "")
	if !ok {
		return false
	}
	if sp.typ != "StreamParametersDefinition" {
		l.unsupported(n, sp.path, sp.typ, "stream_parameters")
		return false
	}
	sp.checkFields("StreamParametersDefinition")
	list := sp.require("list_of_parameters_for_stream")
	if list == nil {
		return false
	}
	lp := sp.fieldPath("list_of_parameters_for_stream")
	if list.Kind != yaml.SequenceNode {
		l.at(list, lp, diag.CodeType, fmt.Sprintf("`list_of_parameters_for_stream` must be a list of mappings, not %s", kindName(list)), "")
		return false
	}
	good := true
	for i, item := range list.Content {
		ip := fmt.Sprintf("%s[%d]", lp, i)
		if item.Kind != yaml.MappingNode {
			l.at(item, ip, diag.CodeType, fmt.Sprintf("an entry of `list_of_parameters_for_stream` must be a mapping (the components_values of one stream), not %s", kindName(item)), "")
			good = false
			continue
		}
		values, _ := toValue(item).(map[string]any)
		if k := mapKey(item, "$parameters"); k != nil {
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeUnknownField, Line: k.Line, Column: k.Column, Path: ip + ".$parameters",
				Message: "`$parameters` in an entry of `list_of_parameters_for_stream` is dropped: the Airbyte CDK takes it out before the resolver sees the entry, so components_values has no `$parameters`",
				Hint:    "write the values as keys of the entry, and set them into the stream's $parameters with a components_mapping"})
			delete(values, "$parameters")
		}
		d.Components = append(d.Components, values)
		d.ComponentPos = append(d.ComponentPos, pos(item))
	}
	return good
}

// mapKey returns the key node key of mapping n, or nil.
func mapKey(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i]
		}
	}
	return nil
}

// streamConfig reads a StreamConfig.
func (l *loader) streamConfig(n *yaml.Node, path string, parent *params) *StreamConfig {
	c, ok := l.component(n, path, parent, "StreamConfig")
	if !ok {
		return nil
	}
	if c.typ != "StreamConfig" {
		l.unsupported(n, path, c.typ, "stream_config")
		return nil
	}
	c.checkFields("StreamConfig")
	sc := &StreamConfig{}
	if p := c.require("configs_pointer"); p != nil {
		if p.Kind != yaml.SequenceNode {
			l.at(p, c.fieldPath("configs_pointer"), diag.CodeType, fmt.Sprintf("`configs_pointer` must be a list, not %s", kindName(p)), "")
			return nil
		}
		sc.Pointer = make([]*template.Template, len(p.Content))
		for i, seg := range p.Content {
			sp := fmt.Sprintf("%s[%d]", c.fieldPath("configs_pointer"), i)
			if seg.Kind != yaml.ScalarNode {
				l.at(seg, sp, diag.CodeType, fmt.Sprintf("a `configs_pointer` segment must be a string, not %s", kindName(seg)), "")
				return nil
			}
			l.tmpl(seg, sp, "configs_pointer", authVars, &sc.Pointer[i])
		}
	} else {
		return nil
	}
	if dv := c.get("default_values"); dv != nil {
		if dv.Kind != yaml.SequenceNode {
			l.at(dv, c.fieldPath("default_values"), diag.CodeType, fmt.Sprintf("`default_values` must be a list, not %s", kindName(dv)), "")
			return nil
		}
		sc.DefaultValues, _ = toValue(dv).([]any)
	}
	return sc
}

// componentMapping reads a ComponentMappingDefinition of a resolver of type resolver.
func (l *loader) componentMapping(n *yaml.Node, path string, parent *params, resolver string) *ComponentMapping {
	c, ok := l.component(n, path, parent, "ComponentMappingDefinition")
	if !ok {
		return nil
	}
	if c.typ != "ComponentMappingDefinition" {
		l.unsupported(n, path, c.typ, "components_mapping")
		return nil
	}
	c.checkFields("ComponentMappingDefinition")
	m := &ComponentMapping{Pos: pos(n)}
	vars := mappingVars
	if resolver == ParametrizedComponentsResolver {
		vars = parametrizedVars
	}
	good := true
	if fp := c.require("field_path"); fp != nil {
		if fp.Kind != yaml.SequenceNode || len(fp.Content) == 0 {
			l.at(fp, c.fieldPath("field_path"), diag.CodeType, fmt.Sprintf("`field_path` must be a list of keys, not %s", kindName(fp)), "")
			good = false
		} else {
			m.FieldPath = make([]*template.Template, len(fp.Content))
			m.literal = []string{}
			for i, seg := range fp.Content {
				if m.literal != nil && seg.Kind == yaml.ScalarNode && literal(seg.Value) {
					m.literal = append(m.literal, seg.Value)
				} else {
					m.literal = nil
				}
				sp := fmt.Sprintf("%s[%d]", c.fieldPath("field_path"), i)
				if seg.Kind != yaml.ScalarNode {
					l.at(seg, sp, diag.CodeType, fmt.Sprintf("a `field_path` segment must be a string, not %s", kindName(seg)), "")
					good = false
					continue
				}
				l.tmpl(seg, sp, "field_path", vars, &m.FieldPath[i])
			}
		}
	} else {
		good = false
	}
	if v := c.require("value"); v != nil {
		if v.Kind != yaml.ScalarNode {
			l.at(v, c.fieldPath("value"), diag.CodeType, fmt.Sprintf("`value` must be a string, not %s", kindName(v)), "")
			good = false
		} else {
			m.Pos = pos(v)
			l.tmpl(v, c.fieldPath("value"), "value", vars, &m.Value)
		}
	} else {
		good = false
	}
	if vt := c.get("value_type"); vt != nil {
		switch t := l.plainString(c, "value_type", ""); t {
		case "string", "number", "integer", "boolean":
			m.ValueType = t
		default:
			l.at(vt, c.fieldPath("value_type"), diag.CodeType, fmt.Sprintf("`value_type` must be one of string, number, integer, boolean, not %s", describe(vt)), "")
			good = false
		}
	}
	// create_or_update is read for every resolver; only the HttpComponentsResolver
	// ignores it (pkg/dynamic), as the CDK's does.
	m.CreateOrUpdate, _ = l.boolField(c, "create_or_update")
	if cn := c.get("condition"); !isEmpty(cn) {
		if resolver != ConfigComponentsResolver {
			l.at(cn, c.fieldPath("condition"), diag.CodeType, "`condition` is only supported for ConfigComponentsResolver", "the CDK's "+resolver+" refuses it")
			good = false
		} else {
			l.stringTemplate(c, "condition", mappingVars, &m.Condition)
		}
	}
	if !good {
		return nil
	}
	return m
}

// checkDynamic reads a CheckDynamicStream.
func (l *loader) checkDynamic(c *comp) *CheckDynamic {
	c.checkFields("CheckDynamicStream")
	cd := &CheckDynamic{UseCheckAvailability: true}
	if v := c.require("stream_count"); v != nil {
		i, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || err != nil || i < 0 {
			l.at(v, c.fieldPath("stream_count"), diag.CodeType, fmt.Sprintf("`stream_count` must be a whole number, not %s", describe(v)), "")
		}
		cd.StreamCount = i
	}
	if v, set := l.boolField(c, "use_check_availability"); set {
		cd.UseCheckAvailability = v
	}
	return cd
}

// Edit is one value set into a copy of a stream template: at Path (keys; an integer indexes a
// list; "*" is every key or item), Value, a plain value (string, number, bool, nil, list,
// map or an ordered object with Keys and Get). Without Create, a path the template lacks is
// left alone (the CDK's dpath.set); with it, the missing mappings are made (dpath.new).
type Edit struct {
	Path   []string
	Value  any
	Create bool
	Pos    Pos
}

// Build makes one stream of the template with the edits applied, loaded and checked as any
// stream of the definition is (with the testing values known, the Authenticator is the
// definition's). Problems are reported at the template's positions, or at the mapping's for
// the values it set.
func (d *DynamicStream) Build(edits []Edit) (*Stream, diag.List) {
	n := deepCopy(d.template)
	for _, e := range edits {
		v := valueNode(e.Value, e.Pos)
		if setPath(n, e.Path, v) == 0 && e.Create && !falsy(e.Value) {
			newPath(n, e.Path, v)
		}
	}
	l := &loader{file: d.file, src: d.src, seen: map[string]bool{}, parentWins: d.UseParentParameters, asyncJobs: d.jobs}
	if name := mapGet(n, "name"); name != nil && name.Kind == yaml.ScalarNode && name.Tag != "!!str" && name.Tag != "!!null" {
		hint := "set value_type: string on the mapping of `name`"
		if d.Type == ParametrizedComponentsResolver {
			// Its values are read as YAML whatever their value_type.
			hint = "the CDK reads the values of a ParametrizedComponentsResolver as YAML even with value_type: string; make the name text YAML keeps as text, such as `report_{{ components_values['id'] }}`"
		}
		l.at(name, d.path+".name", diag.CodeType, fmt.Sprintf("the stream name must be a string, not %s (`%s`)", kindName(name), name.Value), hint)
		return nil, l.finish()
	}
	s, _ := l.streamAt(n, d.path, nil, 0)
	l.compileTemplates()
	diags := l.finish()
	if diags.HasErrors() || s == nil {
		return nil, diags
	}
	return s, diags
}

func falsy(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		return x == ""
	case bool:
		return !x
	case []any:
		return len(x) == 0
	case map[string]any:
		return len(x) == 0
	}
	return !template.Truthy(v)
}

// templates are the streams built statically that are not in Streams: those of the
// ConditionalStreams, and the templates of the definition's dynamic streams.
func (d *Definition) templates() []*Stream {
	var out []*Stream
	for _, cs := range d.Conditional {
		out = append(out, cs.Streams...)
	}
	for _, ds := range d.Dynamic {
		if ds.sample != nil {
			out = append(out, ds.sample)
		}
		if ds.Retriever != nil {
			out = append(out, ds.Retriever)
		}
	}
	return out
}

// TemplateConfig is the stream template as a plain value (template variable
// stream_template_config).
func (d *DynamicStream) TemplateConfig() any { return toValue(d.template) }
