package incremental

import (
	"fmt"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// migration is a state migration of the definition format (state_migrations): migrate gives
// the state it makes of st, or nil when st is not of the form it migrates (the state is then
// left as it is). Each is registered in migrations by one line; its fields and their checks
// are the definition format's, in pkg/manifest (StateMigration).
type migration func(s *manifest.Stream, m *manifest.StateMigration, st *record.Object, g template.Globals) (*record.Object, error)

// migrations are the state migrations, by their type in definitions.
var migrations = map[string]migration{
	manifest.LegacyToPerPartitionStateMigration: legacyToPerPartition,
}

// Migrate is the input state of stream s after its state_migrations, applied in order as
// the CDK applies them when it builds the stream: each that recognises the state replaces
// it. A stream without migrations, or a nil state, keeps its state. g are the run's
// testing values, for the fields a migration renders.
func Migrate(s *manifest.Stream, st *record.Object, g template.Globals) (*record.Object, error) {
	for i, m := range s.StateMigrations {
		if st == nil {
			return nil, nil
		}
		migrate, ok := migrations[m.Type]
		if !ok {
			return nil, fmt.Errorf("state_migrations[%d]: %s is not supported", i, m.Type)
		}
		out, err := migrate(s, m, st, g)
		if err != nil {
			return nil, fmt.Errorf("state_migrations[%d] %s: %w", i, m.Type, err)
		}
		if out != nil {
			st = out
		}
	}
	return st, nil
}

// legacyToPerPartition is LegacyToPerPartitionStateMigration: a state written as
// {"<partition value>": {"<cursor field>": <value>}, …}, the form of per-partition states
// before the per-partition cursor, becomes
// {"states": [{"partition": {"<partition field>": "<partition value>"}, "cursor": {…}}, …]},
// in the state's order. The partition field is the union's partition_field, or the
// partition_field of the substream's first parent; it and the cursor field are rendered
// with the config and the stream's $parameters. The partition values stay the state's keys,
// strings: a partition the router makes matches a migrated one only when it is the same JSON
// (a SubstreamPartitionRouter's partitions also carry parent_slice, so none of them does),
// as in the CDK.
//
// The state is left alone (nil) unless each of its values is an object whose one key is the
// cursor field, it is not empty, it has no "states" key, and a substream has exactly one
// parent.
func legacyToPerPartition(s *manifest.Stream, m *manifest.StateMigration, st *record.Object, g template.Globals) (*record.Object, error) {
	if _, done := st.Get("states"); done || st.Len() == 0 {
		return nil, nil
	}
	r := s.Router
	vars := g.Vars(m.Parameters)
	var partitionField *template.Template
	switch {
	case r == nil || s.Incremental == nil:
		return nil, nil // the loader refuses these
	case r.Type == manifest.UnionRouter:
		partitionField = r.PartitionField
	case len(r.Parents) == 0:
		return nil, nil
	default:
		partitionField = r.Parents[0].PartitionField
		if len(r.Parents) != 1 {
			return nil, nil
		}
	}
	field, err := renderField(partitionField, vars)
	if err != nil {
		return nil, fmt.Errorf("partition_field: %w", err)
	}
	cursorField, err := renderField(s.Incremental.CursorField, vars)
	if err != nil {
		return nil, fmt.Errorf("cursor_field: %w", err)
	}
	for _, k := range st.Keys() {
		v, _ := st.Get(k)
		o, isObj := v.(*record.Object)
		if !isObj || o.Len() != 1 || o.Keys()[0] != cursorField {
			return nil, nil
		}
	}
	states := make([]any, 0, st.Len())
	for _, k := range st.Keys() {
		v, _ := st.Get(k)
		part := &record.Object{}
		part.Set(field, k)
		entry := &record.Object{}
		entry.Set("partition", part)
		entry.Set("cursor", v)
		states = append(states, entry)
	}
	out := &record.Object{}
	out.Set("states", states)
	return out, nil
}

// renderField is a field name of the definition, rendered ("" for none).
func renderField(t *template.Template, vars map[string]any) (string, error) {
	if t == nil {
		return "", nil
	}
	return t.Render(vars)
}
