package manifest

import (
	"strings"
	"testing"
)

// groupsBase defines authors, books and author_books (a child of authors); each test adds
// its streams list and stream_groups.
const groupsBase = `version: 6.5.0
type: DeclarativeSource
definitions:
  req: {type: HttpRequester, url_base: "http://x", path: "/{{ parameters.p }}"}
  sel: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
  streams:
    authors:
      type: DeclarativeStream
      name: authors
      $parameters: {p: authors}
      retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/req"}, record_selector: {$ref: "#/definitions/sel"}}
    books:
      type: DeclarativeStream
      name: books
      $parameters: {p: books}
      retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/req"}, record_selector: {$ref: "#/definitions/sel"}}
    author_books:
      type: DeclarativeStream
      name: author_books
      $parameters: {p: author_books}
      retriever:
        type: SimpleRetriever
        requester: {$ref: "#/definitions/req"}
        record_selector: {$ref: "#/definitions/sel"}
        partition_router:
          type: SubstreamPartitionRouter
          parent_stream_configs:
            - {type: ParentStreamConfig, stream: {$ref: "#/definitions/streams/authors"}, parent_key: id, partition_field: a}
    unlisted:
      type: DeclarativeStream
      name: unlisted
      $parameters: {p: unlisted}
      retriever: {type: SimpleRetriever, requester: {$ref: "#/definitions/req"}, record_selector: {$ref: "#/definitions/sel"}}
streams:
  - $ref: "#/definitions/streams/authors"
  - $ref: "#/definitions/streams/books"
  - $ref: "#/definitions/streams/author_books"
`

// The members of a group, written as references in either form, get the group's name; so
// does the parent stream inside a child; the others get none.
func TestStreamGroupsLoad(t *testing.T) {
	def, diags := Parse("def.yaml", []byte(groupsBase+`stream_groups:
  catalog:
    streams:
      - "#/definitions/streams/authors"
      - $ref: "#/definitions/streams/books"
    action: {type: BlockSimultaneousSyncsAction}
  empty: {streams: [], action: {type: BlockSimultaneousSyncsAction}}
`))
	if len(diags) != 0 {
		t.Fatalf("diagnostics:\n%v", diags)
	}
	got := map[string]string{}
	for _, s := range def.Streams {
		got[s.Name] = s.Group
	}
	want := map[string]string{"authors": "catalog", "books": "catalog", "author_books": ""}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: group %q, want %q", k, got[k], v)
		}
	}
	parents := def.Stream("author_books").Ancestors()
	if len(parents) != 1 || parents[0].Name != "authors" || parents[0].Group != "catalog" {
		t.Errorf("the parent of author_books: %v", parents)
	}
	if len(def.Groups) != 2 || def.Groups["authors"] != "catalog" || def.Groups["books"] != "catalog" {
		t.Errorf("Groups: %v", def.Groups)
	}
}

// Each problem of a group is reported where it is written, with the exact message.
func TestStreamGroupsProblems(t *testing.T) {
	for _, tc := range []struct {
		name, groups string
		want         []string
	}{
		{"an unknown stream, at the reference",
			"stream_groups:\n  catalog:\n    streams:\n      - \"#/definitions/streams/unlisted\"\n    action: {type: BlockSimultaneousSyncsAction}\n",
			[]string{"def.yaml:41:9: error: the group `catalog` names the stream `unlisted`, which is not in `streams`\n  hint: the group's streams must be streams of `streams`: author_books, authors, books"}},
		{"a near miss gets a did-you-mean",
			"stream_groups:\n  catalog:\n    streams:\n      - {$ref: \"#/definitions/streams/books\", name: bookz}\n    action: {type: BlockSimultaneousSyncsAction}\n",
			[]string{"def.yaml:41:9: error: the group `catalog` names the stream `bookz`, which is not in `streams`\n  hint: did you mean `books`?"}},
		{"a name instead of a reference",
			"stream_groups:\n  catalog:\n    streams: [books]\n    action: {type: BlockSimultaneousSyncsAction}\n",
			[]string{"def.yaml:40:15: error: a stream of the group `catalog` must be a reference to a stream definition, not a string \"books\"\n  hint: write the reference `#/definitions/streams/books`, where the stream `books` is defined"}},
		{"a child and its parent in one group",
			"stream_groups:\n  g:\n    streams: [\"#/definitions/streams/authors\", \"#/definitions/streams/author_books\"]\n    action: {type: BlockSimultaneousSyncsAction}\n",
			[]string{"def.yaml:40:48: error: the stream `author_books` and its parent stream `authors` are both in the group `g`: a stream must not share a group with a stream it reads its partitions from (it would wait for its own parent; the CDK refuses it too)\n  hint: put the parent stream in another group, or leave it out of the group"}},
		{"a stream in two groups is in the later one",
			"stream_groups:\n  a: {streams: [\"#/definitions/streams/books\"], action: {type: BlockSimultaneousSyncsAction}}\n  b: {streams: [\"#/definitions/streams/books\"], action: {type: BlockSimultaneousSyncsAction}}\n",
			[]string{"def.yaml:40:17: warning: the stream `books` is also in the group `a` (line 39:17); a stream belongs to one group, so it is in `b`, the later one, as in the CDK\n  hint: name the stream in one group only"}},
		{"another action",
			"stream_groups:\n  g: {streams: [], action: {type: BlockAll}}\n",
			[]string{"def.yaml:39:35: error: the action of a stream group must be a BlockSimultaneousSyncsAction, not BlockAll\n  hint: BlockSimultaneousSyncsAction is the one action of the CDK's schema"}},
		{"an action without its type",
			"stream_groups:\n  g: {streams: [], action: {}}\n",
			[]string{"def.yaml:39:28: error: `action` is missing the required field `type`"}},
		{"no streams",
			"stream_groups:\n  g: {action: {type: BlockSimultaneousSyncsAction}}\n",
			[]string{"def.yaml:39:6: error: StreamGroup is missing the required field `streams`"}},
		{"a list of groups",
			"stream_groups: [a]\n",
			[]string{"def.yaml:38:16: error: `stream_groups` must be a mapping of group names to StreamGroups, not a list\n  hint: write `stream_groups: {my_group: {streams: [\"#/definitions/streams/a\"], action: {type: BlockSimultaneousSyncsAction}}}`"}},
		{"an unknown field of a group",
			"stream_groups:\n  g: {streams: [], action: {type: BlockSimultaneousSyncsAction}, actions: x}\n",
			[]string{"def.yaml:39:66: warning: unknown field `actions` in StreamGroup; it is ignored\n  hint: did you mean `action`?"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, diags := Parse("def.yaml", []byte(groupsBase+tc.groups))
			var got []string
			for _, d := range diags {
				s := d.String()
				if d.Hint != "" {
					s += "\n  hint: " + d.Hint
				}
				got = append(got, s)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

// With dynamic_streams, a name not in `streams` may be a stream made at run time: a warning.
func TestStreamGroupsDynamicName(t *testing.T) {
	src := strings.Replace(groupsBase, "streams:\n  - $ref: \"#/definitions/streams/authors\"\n", `dynamic_streams:
  - type: DynamicDeclarativeStream
    stream_template: {$ref: "#/definitions/streams/books"}
    components_resolver:
      type: ConfigComponentsResolver
      stream_config: {type: StreamConfig, configs_pointer: [items]}
      components_mapping:
        - {type: ComponentMappingDefinition, field_path: [name], value: "{{ components_values.name }}"}
streams:
  - $ref: "#/definitions/streams/authors"
`, 1)
	_, diags := Parse("def.yaml", []byte(src+"stream_groups:\n  g: {streams: [\"#/definitions/streams/unlisted\"], action: {type: BlockSimultaneousSyncsAction}}\n"))
	if diags.HasErrors() || len(diags) != 1 || !strings.HasPrefix(diags[0].Message, "the group `g` names the stream `unlisted`, which is not in `streams`; it applies only if dynamic_streams make a stream of that name") {
		t.Errorf("diagnostics:\n%v", diags)
	}
}
