package manifest

import (
	"fmt"
	"slices"
	"strings"

	"connector/pkg/diag"
)

// checkConfigKeys warns about a template that reads a top-level config key the connection
// specification does not declare (`config['base_ur']` beside a property `base_url`): no form
// asks for it, so it is a typo or a property left out. It says
// nothing when the specification declares no properties, nor about the keys that
// config_normalization_rules add or that the declarative OAuth flow writes
// (advanced_auth's path_in_connector_config), nor about the templates of the spec itself
// (a migration reads the keys of an older specification).
func (l *loader) checkConfigKeys(def *Definition) {
	props, _ := def.ConnectionSpec["properties"].(map[string]any)
	if len(props) == 0 {
		return
	}
	declared := map[string]bool{}
	for k := range props {
		declared[k] = true
	}
	for _, key := range []string{"oneOf", "anyOf", "allOf"} {
		alts, _ := def.ConnectionSpec[key].([]any)
		for _, a := range alts {
			if m, ok := a.(map[string]any); ok {
				p, _ := m["properties"].(map[string]any)
				for k := range p {
					declared[k] = true
				}
			}
		}
	}
	for _, k := range l.normalizedKeys() {
		declared[k] = true
	}
	oauthKeys(def.AdvancedAuth, declared)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	slices.Sort(names)
	// Each key is reported once, where it is first written, with the number of other places
	// that read it (a template shared through $ref is one place).
	type place struct{ line, col int }
	type use struct {
		p      *pendingTemplate
		at     place
		places map[place]bool
	}
	uses := map[string]*use{}
	for _, p := range l.templates {
		if !p.ok || *p.dst == nil || !slices.Contains(p.vars, "config") || strings.HasPrefix(p.path, "spec") {
			continue
		}
		for _, k := range (*p.dst).KeysRead("config") {
			if declared[k.Key] {
				continue
			}
			line, col := l.offsetPos(p.node, k.Offset)
			at := place{line, col}
			u := uses[k.Key]
			if u == nil {
				u = &use{p: p, at: at, places: map[place]bool{}}
				uses[k.Key] = u
			} else if at.line < u.at.line || at.line == u.at.line && at.col < u.at.col {
				u.p, u.at = p, at
			}
			u.places[at] = true
		}
	}
	for key, u := range uses {
		hint := "declare it under spec.connection_specification.properties, or fix the key"
		if s := suggest(key, names); s != "" {
			hint = fmt.Sprintf("did you mean `%s`?", s)
		}
		more := ""
		switch n := len(u.places) - 1; {
		case n == 1:
			more = " (read at 1 other place too)"
		case n > 1:
			more = fmt.Sprintf(" (read at %d other places too)", n)
		}
		l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeTemplate, Line: u.at.line, Column: u.at.col, Path: u.p.path,
			Message: fmt.Sprintf("in `%s`: config['%s'] is not in spec.connection_specification%s", u.p.field, key, more),
			Hint:    hint})
	}
}

// normalizedKeys are the top-level keys that spec.config_normalization_rules add to the
// config (ConfigAddFields, in a migration or a transformation).
func (l *loader) normalizedKeys() []string {
	if l.norm == nil {
		return nil
	}
	var keys []string
	add := func(ts []*ConfigTransformation) {
		for _, t := range ts {
			for _, f := range t.Fields {
				if len(f.Path) > 0 {
					keys = append(keys, f.Path[0])
				}
			}
		}
	}
	for _, m := range l.norm.Migrations {
		add(m)
	}
	add(l.norm.Transformations)
	return keys
}

// oauthKeys adds to keys the top-level config keys that the declarative OAuth flow of
// advanced_auth writes: the first element of each path_in_connector_config, and the names of
// the output properties that have none.
func oauthKeys(v any, keys map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, c := range x {
			switch k {
			case "path_in_connector_config":
				if p, ok := c.([]any); ok && len(p) > 0 {
					if s, ok := p[0].(string); ok {
						keys[s] = true
					}
				}
			case "properties":
				if props, ok := c.(map[string]any); ok {
					for name, p := range props {
						if m, ok := p.(map[string]any); ok && m["path_in_connector_config"] == nil {
							keys[name] = true
						}
					}
				}
			}
			oauthKeys(c, keys)
		}
	case []any:
		for _, c := range x {
			oauthKeys(c, keys)
		}
	}
}
