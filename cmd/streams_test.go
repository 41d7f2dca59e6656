package cmd

import (
	"path/filepath"
	"strings"
	"testing"
)

// The listing of every example definition (dynamic-streams.yaml, which requests its API, is
// TestDynamicStreamsList), compared with testdata/streams/definitions.golden; a request
// would fail it (noNetwork).
func TestStreamsDefinitions(t *testing.T) {
	defs, err := filepath.Glob(filepath.Join("..", "definitions", "*.yaml"))
	if err != nil || len(defs) == 0 {
		t.Fatalf("no definitions: %v", err)
	}
	env := testEnv(nil)
	env.Transport = noNetwork{}
	var got strings.Builder
	for _, def := range defs {
		if filepath.Base(def) == "dynamic-streams.yaml" {
			continue
		}
		res := runCLIEnv(t, env, "", "streams", def, "--testing-values", filepath.Join("..", "testing-values.example.yaml"))
		if res.Code != 0 || res.Stderr != "" {
			t.Fatalf("%s: exit %d, stderr:\n%s", def, res.Code, res.Stderr)
		}
		got.WriteString("$ connector streams " + filepath.ToSlash(def) + "\n" + res.Stdout + "\n")
	}
	golden(t, filepath.Join("streams", "definitions.golden"), got.String())
}

func TestStreamsJSON(t *testing.T) {
	res := runCLI(t, "", "streams", filepath.Join("..", "definitions", "incremental-substream.yaml"),
		"--testing-values", filepath.Join("..", "testing-values.example.yaml"), "--format", "json")
	want := `{"name":"authors","dynamic":false,"pagination":{"type":"NoPagination","text":"NoPagination"},"partitioning":null,"incremental":null,"primary_key":[["id"]]}
{"name":"author_reviews","dynamic":false,"pagination":{"type":"NoPagination","text":"NoPagination"},"partitioning":{"type":"SubstreamPartitionRouter","text":"SubstreamPartitionRouter: authors.id → author_id"},"incremental":{"type":"DatetimeBasedCursor","cursor_field":"updated_at","text":"DatetimeBasedCursor on updated_at, step P1M, a cursor per partition"},"primary_key":[["id"]]}
`
	if res.Code != 0 || res.Stderr != "" || res.Stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", res.Code, res.Stderr, res.Stdout, want)
	}
}

// Without --testing-values, when the spec requires values, the static streams are listed
// (page sizes from the spec's defaults) and stderr names the dynamic streams left out.
func TestStreamsWithoutTestingValues(t *testing.T) {
	env := testEnv(nil)
	env.Transport = noNetwork{}
	def := writeFile(t, "def.yaml", `version: 6.5.0
type: DeclarativeSource
check: {type: CheckStream, stream_names: [items]}
streams:
  - type: DeclarativeStream
    name: items
    primary_key: id
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: https://api.example.com
        path: /items
        authenticator: {type: BearerAuthenticator, api_token: "{{ config['token'] }}"}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: [data]}}
      paginator:
        type: DefaultPaginator
        page_token_option: {type: RequestOption, inject_into: request_parameter, field_name: offset}
        pagination_strategy: {type: OffsetIncrement, page_size: "{{ config['page_size'] }}"}
spec:
  type: Spec
  connection_specification:
    type: object
    required: [token]
    properties:
      token: {type: string, airbyte_secret: true}
      page_size: {type: integer, default: 25}
`)
	res := runCLIEnv(t, env, "", "streams", def)
	want := "STREAM  KIND    PAGINATION                     PARTITIONS  INCREMENTAL  PRIMARY KEY\nitems   static  OffsetIncrement, page size 25  -           -            id\n"
	if res.Code != 0 || res.Stderr != "" || res.Stdout != want {
		t.Errorf("exit %d, stderr %q, stdout:\n%s\nwant:\n%s", res.Code, res.Stderr, res.Stdout, want)
	}

	res = runCLIEnv(t, env, "", "streams", filepath.Join("..", "definitions", "dynamic-streams.yaml"))
	wantErr := "note: the streams of dynamic_streams api_tables, configured_tables are not listed: they are made from the testing values, and spec.connection_specification of ../definitions/dynamic-streams.yaml requires username, password; pass --testing-values FILE\n"
	if res.Code != 0 || res.Stderr != wantErr || res.Stdout != "STREAM  KIND  PAGINATION  PARTITIONS  INCREMENTAL  PRIMARY KEY\n" {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", res.Code, res.Stderr, res.Stdout)
	}
}

func TestStreamsFormatRefused(t *testing.T) {
	res := runCLI(t, "", "streams", filepath.Join("..", "definitions", "no-auth.yaml"), "--format", "envelope")
	if res.Code != 2 || res.Stderr != "error: --format must be text or json, not \"envelope\"\n" {
		t.Errorf("exit %d, stderr %q", res.Code, res.Stderr)
	}
}

// The text table fits --width (a terminal's width by default): the widest columns that may
// shrink lose characters first, down to 12, and a cut cell ends with "…"; the stream's name
// and kind are never cut; --width 0 prints everything.
func TestStreamsTableFitsTheWidth(t *testing.T) {
	rows := [][]string{
		{"STREAM", "KIND", "PAGINATION", "PARTITIONS"},
		{"events", "static", "CursorPagination, cursor from response.next, page size 100", "-"},
		{"a_very_long_stream_name", "dynamic", "OffsetIncrement limit 50", "ListPartitionRouter of 3 values into region"},
	}
	shrinks := []bool{false, false, true, true}
	got := strings.Join(fitTable(rows, 80, shrinks), "\n")
	want := "STREAM                   KIND     PAGINATION              PARTITIONS\n" +
		"events                   static   CursorPagination, cur…  -\n" +
		"a_very_long_stream_name  dynamic  OffsetIncrement limit…  ListPartitionRouter o…"
	if got != want {
		t.Errorf("width 80:\n%s\nwant:\n%s", got, want)
	}
	for _, line := range fitTable(rows, 80, shrinks) {
		if n := len([]rune(line)); n > 80 {
			t.Errorf("a line of %d characters: %q", n, line)
		}
	}
	// Too narrow for the columns that may not shrink: every shrinkable one at 12.
	narrow := fitTable(rows, 20, shrinks)
	if !strings.HasPrefix(narrow[1], "events                   static   CursorPagin…  -") {
		t.Errorf("width 20: %q", narrow[1])
	}
	if whole := fitTable(rows, 0, shrinks); !strings.Contains(whole[2], "ListPartitionRouter of 3 values into region") {
		t.Errorf("width 0 cut a cell: %q", whole[2])
	}
}
