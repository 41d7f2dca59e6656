package manifest

import (
	"strconv"
	"strings"
	"testing"
)

// state_migrations: a LegacyToPerPartitionStateMigration is read where the CDK can build it
// (a SubstreamPartitionRouter or UnionPartitionRouter, and an incremental_sync) and refused
// elsewhere at its position; a CustomStateMigration is Python; another type is not supported.
func TestStateMigrations(t *testing.T) {
	t.Parallel()
	const substream = "\n      partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: p, stream: {name: parent, retriever: {requester: {url_base: \"https://x.test\", path: /p}, record_selector: {extractor: {field_path: []}}}}}]}"
	const union = "\n      partition_router: {type: UnionPartitionRouter, partition_field: k, partition_routers: [{type: ListPartitionRouter, cursor_field: k, values: [a]}, {type: ListPartitionRouter, cursor_field: k, values: [b]}]}"
	const list = "\n      partition_router: {type: ListPartitionRouter, cursor_field: k, values: [a]}"
	const cursor = "\n    incremental_sync: {type: DatetimeBasedCursor, cursor_field: u, datetime_format: \"%Y-%m-%d\", start_datetime: \"2024-01-01\"}"
	stream := func(router, inc, migrations string) string {
		return `version: 6.5.0
streams:
  - name: s
    retriever:
      requester: {url_base: "https://x.test", path: /items}
      record_selector: {extractor: {field_path: []}}` + router + inc + `
    state_migrations: ` + migrations + "\n"
	}
	legacy := "[{type: LegacyToPerPartitionStateMigration}]"
	for _, tt := range []struct {
		name, src, want string
		n               int
	}{
		{"a substream", stream(substream, cursor, legacy), "", 1},
		{"a union", stream(union, cursor, legacy), "", 1},
		{"none", stream(substream, cursor, "[]"), "", 0},
		{"a ListPartitionRouter", stream(list, cursor, legacy),
			"9:24 error type: a LegacyToPerPartitionStateMigration needs a SubstreamPartitionRouter or a UnionPartitionRouter as the stream's partition_router, not ListPartitionRouter (as in the Airbyte CDK)", 0},
		{"no partition router", stream("", cursor, legacy),
			"8:24 error type: a LegacyToPerPartitionStateMigration needs a SubstreamPartitionRouter or a UnionPartitionRouter as the stream's partition_router, and the stream has none", 0},
		{"no incremental_sync", stream(substream, "", legacy),
			"8:24 error missing-field: a LegacyToPerPartitionStateMigration needs the stream's incremental_sync: it migrates the state of that cursor", 0},
		{"not a list", stream(substream, cursor, "{type: LegacyToPerPartitionStateMigration}"),
			"9:23 error type: `state_migrations` must be a list, not a mapping", 0},
		{"another type", stream(substream, cursor, "[{type: NewStateMigration}]"),
			"9:24 error unsupported-component: NewStateMigration is not supported yet (state_migrations)", 0},
		{"an unknown field", stream(substream, cursor, "[{type: LegacyToPerPartitionStateMigration, cursor: x}]"),
			"9:67 warning unknown-field: unknown field `cursor` in LegacyToPerPartitionStateMigration; it is ignored", 1},
	} {
		d, diags := Parse("d.yaml", []byte(tt.src))
		var got []string
		for _, g := range diags {
			got = append(got, strconv.Itoa(g.Line)+":"+strconv.Itoa(g.Column)+" "+string(g.Severity)+" "+g.Code+": "+g.Message)
		}
		if strings.Join(got, "\n") != tt.want {
			t.Errorf("%s:\ngot  %q\nwant %q", tt.name, got, tt.want)
		}
		if d != nil && len(d.Streams) > 0 && len(d.Streams[0].StateMigrations) != tt.n {
			t.Errorf("%s: %d migrations, want %d", tt.name, len(d.Streams[0].StateMigrations), tt.n)
		}
	}
}
