package manifest

import (
	"connector/internal/racetest"
	"connector/internal/testcorpus"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/yamlguard"
)

// Every limit is at least ten times what the largest real definition needs.
func TestLimitsAreFarAboveTheCorpus(t *testing.T) {
	files := testcorpus.Definitions(t)
	var most struct{ size, entries, raw, resolved, depth, tags int }
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		most.size = max(most.size, len(src))
		n := 0
		for _, c := range ",[{:-?" {
			n += strings.Count(string(src), string(c))
		}
		most.entries = max(most.entries, n)
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		// The expansion of the aliases as written, then of the references.
		if err := yamlguard.Check(&doc, maxNodes/10, maxDepth/10, nil); err != nil {
			t.Errorf("%s: %v within a tenth of the limits", filepath.Base(f), err)
		}
		most.raw = max(most.raw, countNodes(&doc))
		l := &loader{file: f, src: src, seen: map[string]bool{}}
		r := newResolver(l, l.decode())
		l.refs = r
		out := r.resolveRoot()
		size, height := r.pairsExtent(out.Content)
		most.resolved, most.depth = max(most.resolved, size), max(most.depth, height)
		l.buildDefinition(out)
		distinct, tags := map[string]bool{}, 0
		for _, p := range l.templates {
			if !distinct[p.src] {
				distinct[p.src] = true
				tags += strings.Count(p.src, "{{") + strings.Count(p.src, "{%")
			}
		}
		most.tags = max(most.tags, tags)
	}
	t.Logf("corpus maxima: %d bytes, %d YAML entries, %d nodes as written, %d nodes through $ref, %d levels, %d template tags",
		most.size, most.entries, most.raw, most.resolved, most.depth, most.tags)
	for _, c := range []struct {
		what         string
		limit, worst int
	}{
		{"maxFileSize", maxFileSize, most.size},
		{"maxEntries", maxEntries, most.entries},
		{"maxNodes (aliases)", maxNodes, most.raw},
		{"maxNodes ($ref)", maxNodes, most.resolved},
		{"maxDepth", maxDepth, most.depth},
		{"maxTemplateTags", maxTemplateTags, most.tags},
	} {
		if c.limit < 10*c.worst {
			t.Errorf("%s = %d is less than ten times the corpus' %d", c.what, c.limit, c.worst)
		}
	}
}

func countNodes(n *yaml.Node) int {
	c := 1
	for _, ch := range n.Content {
		c += countNodes(ch)
	}
	return c
}

// A text within maxEntries parses to at most 2·maxEntries+3 nodes, so beyond maxNodes the
// expansion is always due to aliases, as the message says.
func TestEntriesCannotExceedTheNodesAlone(t *testing.T) {
	if 2*maxEntries+3 > maxNodes {
		t.Errorf("maxEntries %d allows more nodes than maxNodes %d", maxEntries, maxNodes)
	}
}

// stream is a definition with one stream whose request body is body, after the given
// top-level text.
func stream(top, body string) string {
	return top + `version: 6.0.0
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester:
        type: HttpRequester
        url_base: https://api.example.com
        request_body_json: ` + body + `
      record_selector:
        type: RecordSelector
        extractor: {type: DpathExtractor, field_path: []}
`
}

func TestLimitDiagnostics(t *testing.T) {
	racetest.Sequential(t)
	var fanout, chain, inherit, tags strings.Builder
	fanout.WriteString("definitions:\n  a0: {x: 1, y: 2}\n")
	for i := 1; i < 30; i++ {
		fmt.Fprintf(&fanout, "  a%d: {x: \"#/definitions/a%d\", y: \"#/definitions/a%d\"}\n", i, i-1, i-1)
	}
	chain.WriteString("definitions:\n")
	for i := 0; i < 2000; i++ {
		fmt.Fprintf(&chain, "  a%d: \"#/definitions/a%d\"\n", i, i+1)
	}
	chain.WriteString("  a2000: {}\n")
	// $parameters of 1,000 entries inherited by 1,300 response filters that have their own.
	inherit.WriteString("definitions:\n  p:\n")
	for i := 0; i < 1000; i++ {
		fmt.Fprintf(&inherit, "    p%d: %d\n", i, i)
	}
	inherit.WriteString("  f: {type: HttpResponseFilter, action: IGNORE, http_codes: [404], $parameters: {own: 1}}\n")
	for i := 0; i < 10001; i++ {
		fmt.Fprintf(&tags, "k%d: \"{{ %d }}\", ", i, i)
	}
	filters := strings.Repeat(`"#/definitions/f", `, 1300)
	for _, tt := range []struct {
		name, src string
		want      string
	}{
		{"a YAML alias bomb",
			stream("l0: &a0 [x, x, x, x, x, x, x, x, x, x]\nl1: &a1 [*a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0, *a0]\nl2: &a2 [*a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1, *a1]\nl3: &a3 [*a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2, *a2]\nl4: &a4 [*a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3, *a3]\nl5: &a5 [*a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4, *a4]\n", "*a5"),
			"d.yaml:16:28: error: the definition expands to more than 1250000 nodes through YAML aliases (a limit of connector)"},
		{"a recursive alias", stream("", "&x {a: [*x]}"),
			"d.yaml:10:36: error: the alias *x is inside the value its anchor names, so it never ends"},
		{"a $ref fan-out", stream(fanout.String(), `"#/definitions/a29"`),
			"d.yaml:20:36: error: the definition expands to more than 1250000 nodes through $ref and $parameters (a limit of connector)"},
		{"a long $ref chain", stream(chain.String(), `"#/definitions/a0"`),
			"d.yaml:509:9: error: the definition nests more than 512 levels deep, counting each $ref it goes through (a limit of connector)"},
		{"$parameters inherited by many components", strings.Replace(stream(inherit.String(), "{}"), "        url_base:", `        $parameters: "#/definitions/p"
        error_handler: {type: DefaultErrorHandler, response_filters: [`+filters+`]}
        url_base:`, 1),
			"d.yaml:1003:81: error: the definition expands to more than 1250000 nodes through $ref and $parameters (a limit of connector)"},
		{"too many template tags", stream("", "{"+tags.String()+"}"),
			"d.yaml:10:207817: error: the definition has more than 10000 template tags (a limit of connector)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			def, diags := Parse("d.yaml", []byte(tt.src))
			if def != nil {
				t.Fatal("the definition loaded")
			}
			if len(diags) != 1 || diags[0].String() != tt.want {
				t.Errorf("diagnostics:\n%s\nwant the one line:\n%s", diags.Error(), tt.want)
			}
		})
	}
}

func TestDiagnosticsAreCapped(t *testing.T) {
	var b strings.Builder
	b.WriteString("version: 6.0.0\nstreams: []\n")
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&b, "unknown%d: 1\n", i)
	}
	_, diags := Parse("d.yaml", []byte(b.String()))
	if len(diags) != maxDiagnostics+1 {
		t.Fatalf("%d diagnostics, want %d and a last word", len(diags), maxDiagnostics+1)
	}
	if got, want := diags[0].String(), "d.yaml: error: more than 1000 problems: only the first 1000 are reported (a limit of connector)"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if got, want := diags[1].String(), "d.yaml:3:1: error: unknown field `unknown0` in DeclarativeSource"; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestLoadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("a: \""+strings.Repeat("x", maxFileSize)+"\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, diags := Load(path)
	if len(diags) != 1 || diags[0].String() != path+": error: the definition is larger than 16 MiB (a limit of connector)" || diags[0].Code != diag.CodeYAML {
		t.Errorf("diagnostics: %v", diags)
	}
}

// manyStreams is a valid definition of n streams that $ref one, with a name each: a long load.
func manyStreams(n int) string {
	var b strings.Builder
	b.WriteString(`definitions:
  s:
    type: DeclarativeStream
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
version: 6.0.0
streams:
`)
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "  - {$ref: \"#/definitions/s\", name: s%d}\n", i)
	}
	return b.String()
}

func TestLoadStopsWhenCanceled(t *testing.T) {
	src := []byte(manyStreams(5000))
	if def, diags := Parse("d.yaml", src); def == nil || len(def.Streams) != 5000 {
		t.Fatalf("the definition does not load: %v", diags)
	}
	calls := 0
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	testHookCheckpoint = func() {
		calls++
		cancel() // Ctrl-C at the first look at the context
	}
	t.Cleanup(func() { testHookCheckpoint = nil })
	def, diags, err := ParseContext(ctx, "d.yaml", src)
	if !errors.Is(err, context.Canceled) || def != nil || diags != nil {
		t.Fatalf("def %v, diags %v, err %v; want only context.Canceled", def != nil, diags, err)
	}
	// The load stopped at the first checkpoint after the cancellation: none ran after it.
	if calls != 1 {
		t.Errorf("%d checkpoints ran, want 1", calls)
	}

	calls = 0
	if _, _, err := ParseContext(ctx, "d.yaml", src); !errors.Is(err, context.Canceled) || calls != 0 {
		t.Errorf("a load canceled before it starts: err %v after %d checkpoints", err, calls)
	}
}
