package incremental

import (
	"strings"
	"testing"

	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/template"
)

// migratingStream loads a stream "events" with the given partition router, a
// DatetimeBasedCursor on cursor_field and a LegacyToPerPartitionStateMigration; extra is
// added at the stream's level ($parameters).
func migratingStream(t *testing.T, router, cursorField, extra string) *manifest.Stream {
	t.Helper()
	def := `version: 6.5.0
type: DeclarativeSource
definitions:
  parent:
    type: DeclarativeStream
    name: projects
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /projects}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
streams:
  - type: DeclarativeStream
    name: events
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.test", path: /events}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      partition_router:
` + pad(router, "        ") + `    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: "` + cursorField + `"
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
    state_migrations:
      - type: LegacyToPerPartitionStateMigration
` + extra
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatalf("definition: %v", diags)
	}
	return d.Streams[0]
}

const oneParent = `type: SubstreamPartitionRouter
parent_stream_configs:
  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: id, partition_field: project_id}
`

func TestLegacyToPerPartitionMigration(t *testing.T) {
	t.Parallel()
	twoParents := oneParent + `  - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parent"}, parent_key: key, partition_field: project_key}
`
	union := `type: UnionPartitionRouter
partition_field: "{{ parameters.key }}"
partition_routers:
  - {type: ListPartitionRouter, cursor_field: "{{ parameters.key }}", values: ["a"]}
  - {type: ListPartitionRouter, cursor_field: "{{ parameters.key }}", values: ["b"]}
`
	params := "    $parameters: {key: project, cursor: updated}\n"
	tests := []struct {
		name, router, cursor, extra, state, want string
	}{
		{"a legacy state", oneParent, "updated_at", "",
			`{"13":{"updated_at":"2024-02-01"},"7":{"updated_at":"2024-03-01"}}`,
			`{"states":[{"partition":{"project_id":"13"},"cursor":{"updated_at":"2024-02-01"}},{"partition":{"project_id":"7"},"cursor":{"updated_at":"2024-03-01"}}]}`},
		{"a cursor value of any type is carried as it is", oneParent, "updated_at", "",
			`{"13":{"updated_at":1706745600}}`,
			`{"states":[{"partition":{"project_id":"13"},"cursor":{"updated_at":1706745600}}]}`},
		{"already per partition", oneParent, "updated_at", "",
			`{"states":[],"13":{"updated_at":"2024-02-01"}}`, ""},
		{"an empty state", oneParent, "updated_at", "", `{}`, ""},
		{"a value that is not an object", oneParent, "updated_at", "",
			`{"13":{"updated_at":"2024-02-01"},"updated_at":"2024-03-01"}`, ""},
		{"a value with two keys", oneParent, "updated_at", "",
			`{"13":{"updated_at":"2024-02-01","id":1}}`, ""},
		{"a value keyed by another field", oneParent, "updated_at", "",
			`{"13":{"created_at":"2024-02-01"}}`, ""},
		{"the state of one cursor", oneParent, "updated_at", "",
			`{"updated_at":"2024-02-01"}`, ""},
		{"two parent streams", twoParents, "updated_at", "",
			`{"13":{"updated_at":"2024-02-01"}}`, ""},
		{"a union names its partition field; fields rendered with the stream's $parameters", union, "{{ parameters.cursor }}_at", params,
			`{"a":{"updated_at":"2024-02-01"}}`,
			`{"states":[{"partition":{"project":"a"},"cursor":{"updated_at":"2024-02-01"}}]}`},
	}
	for _, tt := range tests {
		s := migratingStream(t, tt.router, tt.cursor, tt.extra)
		in := decodeState(t, tt.state)
		out, err := Migrate(s, in, template.Globals{})
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		want := tt.want
		if want == "" {
			want = tt.state // left as it is
		}
		if got := jsonOf(t, out); got != want {
			t.Errorf("%s: %s\nwant %s", tt.name, got, want)
		}
	}
}

// A stream without migrations, or without a state, keeps what it has.
func TestMigrateNothing(t *testing.T) {
	t.Parallel()
	s := migratingStream(t, oneParent, "updated_at", "")
	if out, err := Migrate(s, nil, template.Globals{}); out != nil || err != nil {
		t.Errorf("no state: %v, %v", out, err)
	}
	plain := *s
	plain.StateMigrations = nil
	in := decodeState(t, `{"13":{"updated_at":"2024-02-01"}}`)
	if out, err := Migrate(&plain, in, template.Globals{}); out != in || err != nil {
		t.Errorf("no migration: %v, %v", out, err)
	}
}

// A migrated state is what the per-partition cursor reads: the partition it names starts
// from its value, another from start_datetime.
func TestMigratedStateIsRead(t *testing.T) {
	t.Parallel()
	router := `type: ListPartitionRouter
cursor_field: project_id
values: ["13", "7"]
`
	s := streamOf(t, `type: DatetimeBasedCursor
cursor_field: updated_at
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
end_datetime: "2024-03-01"
`, router)
	// A ListPartitionRouter cannot carry the migration (the loader refuses it): give the
	// stream one by hand, over a union of the same values.
	u := migratingStream(t, `type: UnionPartitionRouter
partition_field: project_id
partition_routers:
  - {type: ListPartitionRouter, cursor_field: project_id, values: ["13"]}
  - {type: ListPartitionRouter, cursor_field: project_id, values: ["7"]}
`, "updated_at", "")
	s.StateMigrations = u.StateMigrations
	s.Router = u.Router
	in, err := Migrate(s, decodeState(t, `{"13":{"updated_at":"2024-02-15"}}`), template.Globals{})
	if err != nil {
		t.Fatal(err)
	}
	c := cursorOf(t, s, jsonOf(t, in), Env{})
	var got []string
	for sl, err := range c.Slices(t.Context()) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, sl.Label())
	}
	want := `{project_id: "13"} 2024-02-15 → 2024-03-01` + "\n" + `{project_id: "7"} 2024-01-01 → 2024-03-01`
	if strings.Join(got, "\n") != want {
		t.Errorf("slices:\n%s\nwant:\n%s", strings.Join(got, "\n"), want)
	}
}

func decodeState(t *testing.T, text string) *record.Object {
	t.Helper()
	v, err := record.Decode([]byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return v.(*record.Object)
}

// Summary says a cursor for connector streams: its type, field and step, and for a
// DatetimeBasedCursor with partitions how the state keeps them.
func TestSummary(t *testing.T) {
	t.Parallel()
	dt := `type: DatetimeBasedCursor
cursor_field: "{{ config['field'] }}"
datetime_format: "%Y-%m-%d"
start_datetime: "2024-01-01"
step: P1D
cursor_granularity: P1D
`
	list := "type: ListPartitionRouter\ncursor_field: k\nvalues: [a]\n"
	g := template.Globals{Config: map[string]any{"field": "updated"}}
	tests := []struct {
		name, inc, router string
		g                 template.Globals
		field, text       string
	}{
		{"no partitions", dt, "", g, "updated", "DatetimeBasedCursor on updated, step P1D"},
		{"the field's source without the value", dt, "", template.Globals{}, "{{ config['field'] }}", "DatetimeBasedCursor on {{ config['field'] }}, step P1D"},
		{"per partition", dt, list, g, "updated", "DatetimeBasedCursor on updated, step P1D, a cursor per partition"},
		{"global", dt + "global_substream_cursor: true\n", list, g, "updated", "DatetimeBasedCursor on updated, step P1D, one cursor for every partition"},
		{"a count", "type: IncrementingCountCursor\ncursor_field: seq\n", "", g, "seq", "IncrementingCountCursor on seq"},
	}
	for _, tt := range tests {
		s := streamOf(t, tt.inc, tt.router)
		field, text := Summary(s.Incremental, s.Router, tt.g)
		if field != tt.field || text != tt.text {
			t.Errorf("%s: %q, %q\nwant %q, %q", tt.name, field, text, tt.field, tt.text)
		}
	}
}
