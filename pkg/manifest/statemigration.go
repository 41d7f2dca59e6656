package manifest

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
)

// LegacyToPerPartitionStateMigration is the state migration of DeclarativeStream's
// state_migrations that turns a substream's legacy state ({"<partition id>": {"<cursor
// field>": value}}) into the per-partition form ({"states": [{"partition": …, "cursor":
// …}]}) before the stream reads it. It runs in pkg/incremental (Migrate).
const LegacyToPerPartitionStateMigration = "LegacyToPerPartitionStateMigration"

// StateMigration is one entry of a stream's state_migrations: a change of the input state,
// applied in order before the stream's cursor reads it, when the state is of the form it
// migrates.
type StateMigration struct {
	Type string
	Pos  Pos
	// Parameters are the stream's $parameters: the CDK renders the fields the migration
	// reads (the partition field, the cursor field) with the stream's own.
	Parameters map[string]any
	node       *yaml.Node
}

// stateMigrations reads DeclarativeStream.state_migrations: their types (a Python one is
// refused); whether they fit the stream is checked by migrationsFit once the retriever is
// read.
func (l *loader) stateMigrations(n *yaml.Node, path string, parent *params) ([]*StateMigration, bool) {
	if isEmpty(n) {
		return nil, true
	}
	if n.Kind != yaml.SequenceNode {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`state_migrations` must be a list, not %s", kindName(n)), "")
		return nil, false
	}
	ok := true
	var out []*StateMigration
	for i, item := range n.Content {
		p := fmt.Sprintf("%s[%d]", path, i)
		c, good := l.component(item, p, parent, "")
		if !good {
			ok = false
			continue
		}
		switch c.typ {
		case LegacyToPerPartitionStateMigration:
			c.checkFields(LegacyToPerPartitionStateMigration)
			out = append(out, &StateMigration{Type: c.typ, Pos: pos(item), Parameters: parent.values(), node: item})
		default:
			l.unsupported(item, p, c.typ, "state_migrations")
			ok = false
		}
	}
	return out, ok
}

// migrationsFit checks that each state migration of s can run on it, as the CDK checks when
// it builds the migration: a LegacyToPerPartitionStateMigration migrates the state of the
// stream's incremental_sync, keyed by the partitions of one SubstreamPartitionRouter or
// UnionPartitionRouter.
func (l *loader) migrationsFit(s *Stream, ms []*StateMigration, path string) bool {
	ok := true
	for i, m := range ms {
		p := fmt.Sprintf("%s[%d]", path, i)
		switch r := s.Router; {
		case r == nil:
			l.at(m.node, p, diag.CodeType, "a LegacyToPerPartitionStateMigration needs a SubstreamPartitionRouter or a UnionPartitionRouter as the stream's partition_router, and the stream has none",
				"remove the migration, or give the stream the partition router whose partitions its old state is keyed by")
			ok = false
		case r.Type != SubstreamRouter && r.Type != UnionRouter:
			l.at(m.node, p, diag.CodeType, fmt.Sprintf("a LegacyToPerPartitionStateMigration needs a SubstreamPartitionRouter or a UnionPartitionRouter as the stream's partition_router, not %s (as in the Airbyte CDK)", r.Type), "")
			ok = false
		case s.Incremental == nil:
			l.at(m.node, p, diag.CodeMissingField, "a LegacyToPerPartitionStateMigration needs the stream's incremental_sync: it migrates the state of that cursor",
				"add the stream's incremental_sync, or remove the migration")
			ok = false
		}
	}
	return ok
}
