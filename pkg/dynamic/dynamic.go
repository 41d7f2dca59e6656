// Package dynamic makes the streams of a definition that depend on the testing values, as
// the Airbyte CDK does. Choose keeps the streams of each ConditionalStreams whose condition
// holds. Resolve makes the streams of dynamic_streams: a components resolver yields
// components (the records of an HttpComponentsResolver's retriever, the entries of the
// testing values a ConfigComponentsResolver points at, or the entries a
// ParametrizedComponentsResolver lists), and each component makes one stream of the stream
// template, with every components_mapping value set into it.
package dynamic

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/manifest"
	"connector/pkg/template"
	"connector/pkg/transform"
)

// ReadComponents reads an HttpComponentsResolver's retriever: each record, decoded, goes to
// yield with the stream_slice it came from.
type ReadComponents func(ctx context.Context, retriever *manifest.Stream, yield func(rec, streamSlice any)) error

// Error is a problem of the definition or the testing values found while making the streams
// of a dynamic stream definition (not a failed request).
type Error struct {
	Dynamic string
	Err     error
}

func (e *Error) Error() string { return fmt.Sprintf("dynamic stream %s: %v", e.Dynamic, e.Err) }

func (e *Error) Unwrap() error { return e.Err }

// Resolve returns the streams of every dynamic stream definition of def, in order: those of
// the first definition, then the second's. A stream name already used (by a static stream or
// another dynamic one) is an error, as in the CDK. g are the run's testing values and clock.
func Resolve(ctx context.Context, def *manifest.Definition, g template.Globals, read ReadComponents) ([]*manifest.Stream, error) {
	seen := map[string]bool{}
	for _, s := range def.Streams {
		seen[s.Name] = true
	}
	var out []*manifest.Stream
	for _, d := range def.Dynamic {
		streams, err := resolveOne(ctx, d, g, read)
		if err != nil {
			return nil, err
		}
		for _, s := range streams {
			if seen[s.Name] {
				what := "please check your configuration"
				switch d.Type {
				case manifest.HTTPComponentsResolver:
					what = "the API returned two components of that name"
				case manifest.ParametrizedComponentsResolver:
					what = "two entries of list_of_parameters_for_stream make it, or a stream of the definition has it"
				}
				return nil, &Error{Dynamic: d.Name, Err: fmt.Errorf("the stream name %q is used twice; %s", s.Name, what)}
			}
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	return out, nil
}

// component is the input of one stream: components_values and, for an HTTP resolver, the
// slice of its retriever.
type component struct {
	values, slice any
}

func resolveOne(ctx context.Context, d *manifest.DynamicStream, g template.Globals, read ReadComponents) ([]*manifest.Stream, error) {
	made, err := editsOf(ctx, d, g, read)
	if err != nil {
		return nil, err
	}
	var out []*manifest.Stream
	for i, edits := range made {
		s, diags := d.Build(edits)
		if diags.HasErrors() {
			var msgs []string
			for _, dg := range diags {
				if dg.Severity == "error" {
					msg := dg.String()
					if dg.Hint != "" {
						msg += "\n  hint: " + dg.Hint
					}
					msgs = append(msgs, msg)
				}
			}
			return nil, &Error{Dynamic: d.Name, Err: fmt.Errorf("%s makes an invalid stream:\n%s", componentName(d, i), strings.Join(msgs, "\n"))}
		}
		out = append(out, s)
	}
	return out, nil
}

// Edits returns, for each dynamic stream definition of def in order, the edits that make
// each of its streams from its template (one list per component), without building the
// streams: what a resolved manifest shows of them (pkg/resolve).
func Edits(ctx context.Context, def *manifest.Definition, g template.Globals, read ReadComponents) ([][][]manifest.Edit, error) {
	out := make([][][]manifest.Edit, len(def.Dynamic))
	for i, d := range def.Dynamic {
		made, err := editsOf(ctx, d, g, read)
		if err != nil {
			return nil, err
		}
		out[i] = made
	}
	return out, nil
}

// editsOf reads the components of d and evaluates its mappings for each.
func editsOf(ctx context.Context, d *manifest.DynamicStream, g template.Globals, read ReadComponents) ([][]manifest.Edit, error) {
	var comps []component
	switch d.Type {
	case manifest.HTTPComponentsResolver:
		err := read(ctx, d.Retriever, func(rec, sl any) { comps = append(comps, component{values: rec, slice: sl}) })
		if err != nil {
			return nil, err
		}
	case manifest.ParametrizedComponentsResolver:
		for _, v := range d.Components {
			comps = append(comps, component{values: v})
		}
	default:
		values, err := configComponents(d, g)
		if err != nil {
			return nil, &Error{Dynamic: d.Name, Err: err}
		}
		for _, v := range values {
			comps = append(comps, component{values: v})
		}
	}
	out := make([][]manifest.Edit, 0, len(comps))
	for i, c := range comps {
		e, err := edits(d, c, g)
		if err != nil {
			return nil, &Error{Dynamic: d.Name, Err: fmt.Errorf("%s: %w", componentName(d, i), err)}
		}
		out = append(out, e)
	}
	return out, nil
}

// componentName names component i of d in messages: for a ParametrizedComponentsResolver,
// the entry of the definition it is.
func componentName(d *manifest.DynamicStream, i int) string {
	if d.Type == manifest.ParametrizedComponentsResolver && i < len(d.ComponentPos) {
		p := d.ComponentPos[i]
		return fmt.Sprintf("component %d (list_of_parameters_for_stream[%d], line %d:%d)", i+1, i, p.Line, p.Column)
	}
	return fmt.Sprintf("component %d", i+1)
}

// edits evaluates every mapping of d for one component.
func edits(d *manifest.DynamicStream, c component, g template.Globals) ([]manifest.Edit, error) {
	vars := g.Vars(d.Parameters)
	vars["components_values"] = c.values
	vars["stream_template_config"] = d.TemplateConfig()
	vars["stream_slice"] = c.slice
	if c.slice == nil {
		vars["stream_slice"] = map[string]any{}
	}
	var out []manifest.Edit
	for _, m := range d.Mappings {
		if m.Condition != nil {
			// The CDK's InterpolatedBoolean, but None is false: "{{
			// components_values.get('cursor_field', None) }}", the schema's own example, holds
			// only when the key is there (the CDK calls None true and applies it always).
			ok, err := transform.Truth(m.Condition, vars)
			if err != nil {
				return nil, fmt.Errorf("condition: %w", err)
			}
			if !ok {
				continue
			}
		}
		v, err := transform.Interpolate(m.Value, vars, m.ValueType)
		if err != nil {
			return nil, fmt.Errorf("value at line %d: %w", m.Pos.Line, err)
		}
		switch d.Type {
		case manifest.ConfigComponentsResolver:
			if s, ok := v.(string); ok && m.ValueType != "string" {
				v = parseYAML(s)
			}
		case manifest.ParametrizedComponentsResolver:
			// The CDK's ParametrizedComponentsResolver reads every text value as YAML,
			// value_type: string or not ("42" becomes 42).
			if s, ok := v.(string); ok {
				v = parseYAML(s)
			}
		}
		path := make([]string, len(m.FieldPath))
		for i, seg := range m.FieldPath {
			if path[i], err = seg.Render(vars); err != nil {
				return nil, fmt.Errorf("field_path at line %d: %w", m.Pos.Line, err)
			}
		}
		// The HttpComponentsResolver of the CDK only sets the paths the template has.
		create := m.CreateOrUpdate && d.Type != manifest.HTTPComponentsResolver
		out = append(out, manifest.Edit{Path: path, Value: v, Create: create, Pos: m.Pos})
	}
	return out, nil
}

// parseYAML reads a mapping's text value as YAML, as the CDK's ConfigComponentsResolver does
// (yaml.safe_load): "[a, b]" becomes a list; text that is not YAML stays text. A mapping keeps
// the order of its keys, as PyYAML's dicts do (the order of query parameters, and of the
// resolved manifest's keys, follows it).
func parseYAML(s string) any {
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(s), &doc); err != nil {
		return s
	}
	if len(doc.Content) == 0 {
		return nil
	}
	v, err := yamlValue(doc.Content[0])
	if err != nil {
		var plain any
		if yaml.Unmarshal([]byte(s), &plain) != nil {
			return s
		}
		return plain
	}
	return v
}

// errMerge is a merge key (<<), which yamlValue leaves to yaml.v3's own decoding.
var errMerge = errors.New("merge key")

func yamlValue(n *yaml.Node) (any, error) {
	switch n.Kind {
	case yaml.AliasNode:
		return yamlValue(n.Alias)
	case yaml.MappingNode:
		m := &yamlMap{vals: map[string]any{}}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Value == "<<" && k.Tag == "!!merge" {
				return nil, errMerge
			}
			v, err := yamlValue(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			if _, seen := m.vals[k.Value]; !seen {
				m.keys = append(m.keys, k.Value)
			}
			m.vals[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		out := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := yamlValue(c)
			if err != nil {
				return nil, err
			}
			out[i] = v
		}
		return out, nil
	}
	var v any
	if err := n.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// yamlMap is a YAML mapping with its keys in their order (a template Mapping).
type yamlMap struct {
	keys []string
	vals map[string]any
}

func (m *yamlMap) Keys() []string { return m.keys }

func (m *yamlMap) Get(key string) (any, bool) {
	v, ok := m.vals[key]
	return v, ok
}

// configComponents are the components of a ConfigComponentsResolver: for each stream_config,
// the list at configs_pointer in the testing values (a single value is a list of one),
// followed by default_values; then every combination of one item of each list, merged (a
// mapping's keys are laid over the others'; any other item is kept as
// source_config_N: [index, item]).
func configComponents(d *manifest.DynamicStream, g template.Globals) ([]any, error) {
	config := g.Config
	vars := g.Vars(d.Parameters)
	var lists [][]any
	for _, sc := range d.Configs {
		path := make([]string, len(sc.Pointer))
		for i, seg := range sc.Pointer {
			var err error
			if path[i], err = seg.Render(vars); err != nil {
				return nil, fmt.Errorf("configs_pointer: %w", err)
			}
		}
		var items []any
		switch v, ok := lookup(config, path); {
		case !ok:
		case isList(v):
			items = append(items, v.([]any)...)
		default:
			items = append(items, v)
		}
		items = append(items, sc.DefaultValues...)
		lists = append(lists, items)
	}
	var out []any
	var walk func(i int, combo []any)
	walk = func(i int, combo []any) {
		if i == len(lists) {
			out = append(out, merge(combo, lists))
			return
		}
		for j := range lists[i] {
			walk(i+1, append(combo, j))
		}
	}
	if len(lists) > 0 {
		walk(0, nil)
	}
	return out, nil
}

func isList(v any) bool {
	_, ok := v.([]any)
	return ok
}

// merge is the CDK's _merge_combination for the items at the indexes combo.
func merge(combo []any, lists [][]any) map[string]any {
	out := map[string]any{}
	for i, j := range combo {
		idx := j.(int)
		switch item := lists[i][idx].(type) {
		case map[string]any:
			for k, v := range item {
				out[k] = v
			}
		default:
			key := fmt.Sprintf("source_config_%d", i)
			if _, ok := out[key]; !ok {
				out[key] = []any{int64(idx), item}
			}
		}
	}
	return out
}

// lookup is dpath.get on the testing values (no value: ok false).
func lookup(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			next, ok := x[seg]
			if !ok {
				return nil, false
			}
			v = next
		case []any:
			var i int
			if _, err := fmt.Sscanf(seg, "%d", &i); err != nil || i < 0 || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}
