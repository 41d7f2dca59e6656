package manifest

import (
	"reflect"
	"testing"
)

// The requesters a run caches are those the CDK's ConcurrentDeclarativeSource marks with
// use_cache: each parent named by a top-level stream's partition router (within a list of
// routers, a UnionPartitionRouter or a GroupingPartitionRouter too) and each top-level stream
// of such a name, unless use_cache: false; any that says use_cache: true. A parent's own
// parents are not marked.
func TestCached(t *testing.T) {
	t.Parallel()
	def := mustLoad(t, "def.yaml", `version: 6.5.0
definitions:
  r: {type: HttpRequester, url_base: "https://x.test"}
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  plain:
    type: DeclarativeStream
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/r", path: "/{{ parameters.name }}"}, record_selector: {$ref: "#/definitions/sel"}}
  grand: {$ref: "#/definitions/plain", name: grand, $parameters: {name: grand}}
  parent:
    $ref: "#/definitions/plain"
    name: parent
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/r", path: /parent}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: g, stream: {$ref: "#/definitions/grand"}}]
  optout:
    type: DeclarativeStream
    name: optout
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/r", path: /optout, use_cache: false}, record_selector: {$ref: "#/definitions/sel"}}
streams:
  - $ref: "#/definitions/grand"
  - $ref: "#/definitions/parent"
  - $ref: "#/definitions/optout"
  - type: DeclarativeStream
    name: child
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/r", path: /child}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: SubstreamPartitionRouter
        parent_stream_configs:
          - {type: ParentStreamConfig, parent_key: id, partition_field: p, stream: {$ref: "#/definitions/parent"}}
          - {type: ParentStreamConfig, parent_key: id, partition_field: o, stream: {$ref: "#/definitions/optout"}}
  - type: DeclarativeStream
    name: union
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/r", path: /union}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: UnionPartitionRouter
        partition_field: p
        partition_routers:
          - {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: p, stream: {$ref: "#/definitions/plain", name: u1, $parameters: {name: u1}}}]}
          - {type: ListPartitionRouter, cursor_field: p, values: [a]}
  - type: DeclarativeStream
    name: grouped
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/r", path: /grouped}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        type: GroupingPartitionRouter
        group_size: 2
        underlying_partition_router: {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: p, stream: {$ref: "#/definitions/plain", name: g1, $parameters: {name: g1}}}]}
  - type: DeclarativeStream
    name: listed
    retriever:
      type: SimpleRetriever
      requester: {$ref: "#/definitions/r", path: /listed}
      record_selector: {$ref: "#/definitions/sel"}
      partition_router:
        - {type: ListPartitionRouter, cursor_field: k, values: [a]}
        - {type: SubstreamPartitionRouter, parent_stream_configs: [{type: ParentStreamConfig, parent_key: id, partition_field: p, stream: {$ref: "#/definitions/plain", name: l1, $parameters: {name: l1}}}]}
  - {$ref: "#/definitions/plain", name: lone, $parameters: {name: lone}}
  - type: DeclarativeStream
    name: pinned
    retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/r", path: /pinned, use_cache: true}, record_selector: {$ref: "#/definitions/sel"}}
`)
	cached := Cached(def.Streams)
	got := map[string]bool{}
	var walk func(prefix string, s *Stream)
	walk = func(prefix string, s *Stream) {
		got[prefix+s.Name] = cached[s.Requester]
		if s.Router != nil {
			s.Router.each(func(p *ParentConfig) { walk(prefix+s.Name+">", p.Stream) })
		}
	}
	for _, s := range def.Streams {
		walk("", s)
	}
	want := map[string]bool{
		"grand": true, "parent": true, "parent>grand": true,
		"optout": false, "child": false, "child>parent": true, "child>parent>grand": false, "child>optout": false,
		"union": false, "union>u1": true, "grouped": false, "grouped>g1": true, "listed": false, "listed>l1": true,
		"lone": false, "pinned": true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("cached:\n%v\nwant\n%v", got, want)
	}
}
