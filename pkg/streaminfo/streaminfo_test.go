package streaminfo

import (
	"encoding/json"
	"strings"
	"testing"

	"connector/pkg/manifest"
)

// def has a stream of each kind the listing tells apart.
const def = `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [parents]}
definitions:
  req: {type: HttpRequester, url_base: "https://api.example.com", http_method: GET}
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
  parents:
    type: DeclarativeStream
    name: parents
    primary_key: id
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /parents}
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: "{{ config['page_size'] }}"}
    incremental_sync: {type: IncrementingCountCursor, cursor_field: seq, start_value: 0}
streams:
  - $ref: "#/definitions/parents"
  - type: DeclarativeStream
    name: kids
    primary_key: [id, date]
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: "/parents/{{ stream_partition.pid }}/kids"}
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestPath}
        pagination_strategy: {type: CursorPagination, cursor_value: "{{ response.next }}", stop_condition: "{{ not response.more }}"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, stream: {$ref: "#/definitions/parents"}, parent_key: id, partition_field: pid}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: "{{ parameters.cursor }}"
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
      step: P1M
      cursor_granularity: P1D
      $parameters: {cursor: updated}
  - type: DeclarativeStream
    name: grouped
    primary_key: [[meta, id]]
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /grouped}
      record_selector: {$ref: "#/definitions/sel"}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: page}
        pagination_strategy: {type: PageIncrement, page_size: 50, start_from_page: 1}
      partition_router:
        type: GroupingPartitionRouter
        group_size: 10
        underlying_partition_router: {type: ListPartitionRouter, values: ["a", "b", "c"], cursor_field: region}
    incremental_sync:
      type: DatetimeBasedCursor
      cursor_field: updated
      datetime_format: "%Y-%m-%d"
      start_datetime: "2024-01-01"
  - type: DeclarativeStream
    name: crossed
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/req", path: /crossed}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        - {type: ListPartitionRouter, values: "{{ config['regions'] }}", cursor_field: region}
        - type: UnionPartitionRouter
          partition_field: k
          partition_routers:
            - {type: ListPartitionRouter, values: ["x"], cursor_field: k}
            - {type: ListPartitionRouter, values: ["y", "z"], cursor_field: k}
`

// The columns of each stream, without and with testing values.
func TestLine(t *testing.T) {
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, tc := range []struct {
		name   string
		config map[string]any
		want   []string
	}{
		{"without testing values", nil, []string{
			"parents | OffsetIncrement, page size {{ config['page_size'] }} | - | IncrementingCountCursor on seq | id",
			"kids | CursorPagination, cursor from response.next, stop when not response.more | SubstreamPartitionRouter: parents.id → pid | DatetimeBasedCursor on updated, step P1M, a cursor per partition | id, date",
			"grouped | PageIncrement, page size 50, first page 1 | GroupingPartitionRouter: 10 at a time of ListPartitionRouter: region, 3 values | DatetimeBasedCursor on updated, one cursor for every partition | meta.id",
			"crossed | NoPagination | CartesianProductStreamSlicer: ListPartitionRouter: region from {{ config['regions'] }} × UnionPartitionRouter: ListPartitionRouter: k, 1 value ∪ ListPartitionRouter: k, 2 values | - | -",
		}},
		{"with testing values", map[string]any{"page_size": int64(200), "regions": []any{"eu", "us"}}, []string{
			"parents | OffsetIncrement, page size 200 | - | IncrementingCountCursor on seq | id",
			"kids | CursorPagination, cursor from response.next, stop when not response.more | SubstreamPartitionRouter: parents.id → pid | DatetimeBasedCursor on updated, step P1M, a cursor per partition | id, date",
			"grouped | PageIncrement, page size 50, first page 1 | GroupingPartitionRouter: 10 at a time of ListPartitionRouter: region, 3 values | DatetimeBasedCursor on updated, one cursor for every partition | meta.id",
			"crossed | NoPagination | CartesianProductStreamSlicer: ListPartitionRouter: region, 2 values × UnionPartitionRouter: ListPartitionRouter: k, 1 value ∪ ListPartitionRouter: k, 2 values | - | -",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i, s := range d.Streams {
				got := strings.Join(append([]string{s.Name}, Of(s, tc.config, false).Line()...), " | ")
				if got != tc.want[i] {
					t.Errorf("got  %s\nwant %s", got, tc.want[i])
				}
			}
		})
	}
}

// The JSON form: every part with its type, null where the stream has none.
func TestJSON(t *testing.T) {
	d, diags := manifest.Parse("def.yaml", []byte(def))
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for i, want := range map[int]string{
		0: `{"name":"parents","dynamic":true,"pagination":{"type":"OffsetIncrement","text":"OffsetIncrement, page size 10"},"partitioning":null,"incremental":{"type":"IncrementingCountCursor","cursor_field":"seq","text":"IncrementingCountCursor on seq"},"primary_key":[["id"]]}`,
		1: `{"name":"kids","dynamic":true,"pagination":{"type":"CursorPagination","text":"CursorPagination, cursor from response.next, stop when not response.more"},"partitioning":{"type":"SubstreamPartitionRouter","text":"SubstreamPartitionRouter: parents.id → pid"},"incremental":{"type":"DatetimeBasedCursor","cursor_field":"updated","text":"DatetimeBasedCursor on updated, step P1M, a cursor per partition"},"primary_key":[["id"],["date"]]}`,
		3: `{"name":"crossed","dynamic":true,"pagination":{"type":"NoPagination","text":"NoPagination"},"partitioning":{"type":"CartesianProductStreamSlicer","text":"CartesianProductStreamSlicer: ListPartitionRouter: region, 0 values × UnionPartitionRouter: ListPartitionRouter: k, 1 value ∪ ListPartitionRouter: k, 2 values"},"incremental":null,"primary_key":[]}`,
	} {
		b, err := json.Marshal(Of(d.Streams[i], map[string]any{"page_size": int64(10), "regions": []any{}}, true))
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != want {
			t.Errorf("got  %s\nwant %s", b, want)
		}
	}
}
