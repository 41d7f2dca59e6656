package manifest

import (
	"strings"
	"testing"
)

func TestConcurrencyLevel(t *testing.T) {
	base := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
concurrency_level:
`
	for _, tt := range []struct{ level, want string }{
		{"  {type: ConcurrencyLevel, default_concurrency: \"{{ config.get('num_workers', 3) }}\"}",
			"def.yaml:11:49: error: `default_concurrency` reads config, so `max_concurrency` is required: it bounds the value a user may enter"},
		{"  {type: ConcurrencyLevel, default_concurrency: [2], max_concurrency: 4}",
			"def.yaml:11:49: error: `default_concurrency` must be an integer or a template, not a list"},
		{"  {type: ConcurrencyLevel, default_concurrency: 2, max_concurrency: lots}",
			"def.yaml:11:69: error: `max_concurrency` must be an integer, not `lots`"},
		{"  {type: ConcurrencyLevel, max_concurrency: 4}",
			"def.yaml:11:3: error: ConcurrencyLevel is missing the required field `default_concurrency`"},
	} {
		_, diags := Parse("def.yaml", []byte(base+tt.level+"\n"))
		if got := diags.Error(); !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n%s\nwant a line starting %s", tt.level, got, tt.want)
		}
	}
	for _, tt := range []struct {
		level      string
		fixed, max int
		template   string
	}{
		{"  {type: ConcurrencyLevel, default_concurrency: 5, max_concurrency: 2}", 5, 2, "<nil>"},
		{"  {type: ConcurrencyLevel, default_concurrency: \"{{ config['n'] or 2 }}\", max_concurrency: 50}", 0, 50, "{{ config['n'] or 2 }}"},
		{"  {type: ConcurrencyLevel, default_concurrency: \"3\"}", 0, 0, "3"},
	} {
		def, diags := Parse("def.yaml", []byte(base+tt.level+"\n"))
		if diags != nil {
			t.Fatalf("%s: %v", tt.level, diags)
		}
		cl := def.Concurrency
		if cl == nil || cl.Fixed != tt.fixed || cl.Max != tt.max || src(cl.Default) != tt.template {
			t.Errorf("%s: %+v", tt.level, cl)
		}
	}
}
