package manifest

import (
	"strings"
	"testing"
)

func TestAPIBudgetDiagnostics(t *testing.T) {
	base := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      requester: {type: HttpRequester, url_base: "https://api.example.com", path: /items}
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
api_budget:
  type: HTTPAPIBudget
  policies:
`
	for _, tt := range []struct{ policy, want string }{
		{"    - {type: FixedWindowCallRatePolicy, period: PT1M, call_limit: 5}",
			"def.yaml:13:7: error: FixedWindowCallRatePolicy is missing the required field `matchers` (write `matchers: []` for every request)"},
		{"    - {type: FixedWindowCallRatePolicy, period: P1M, call_limit: 5, matchers: []}",
			"def.yaml:13:49: error: `period` \"P1M\" counts months or years, which have no fixed length"},
		{"    - {type: FixedWindowCallRatePolicy, period: PT1M, call_limit: 0, matchers: []}",
			"def.yaml:13:67: error: `call_limit` must be at least 1, not 0: no request could ever go"},
		{"    - {type: MovingWindowCallRatePolicy, rates: [{limit: 5, interval: soon}], matchers: []}",
			"def.yaml:13:71: error: `interval` \"soon\" is not an ISO 8601 duration"},
		{"    - {type: UnlimitedCallRatePolicy, matchers: [{url_path_pattern: \"(?=x)\"}]}",
			"def.yaml:13:69: error: `url_path_pattern` is not a regular expression this tool can run"},
		{"    - {type: UnlimitedCallRatePolicy, matchers: [{url_base: \"https://{{ config['domain'] }}/api/v2/\"}]}",
			"def.yaml:13:61: warning: `url_base` of a matcher is not a template"},
		{"    - {type: UnlimitedCallRatePolicy, matchers: [{url_base: \"https://x.example/api/v2/\"}]}",
			"def.yaml:13:61: warning: `url_base` \"https://x.example/api/v2\" has a path"},
		{"    - {type: LeakyBucketPolicy, matchers: []}",
			"def.yaml:13:7: error: LeakyBucketPolicy is not supported yet (policies)"},
	} {
		_, diags := Parse("def.yaml", []byte(base+tt.policy+"\n"))
		got := diags.Error()
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n%s\nwant a line starting %s", tt.policy, got, tt.want)
		}
	}
}

func TestAPIBudgetModel(t *testing.T) {
	def := mustLoad(t, "../../definitions/api-budget.yaml", "")
	b := def.Budget
	if b == nil || len(b.Policies) != 3 || b.ResetHeader != "ratelimit-reset" || b.RemainingHeader != "ratelimit-remaining" || len(b.LimitStatuses) != 1 {
		t.Fatalf("budget %+v", b)
	}
	m := b.Policies[0].Matchers[0]
	if m.Method != "GET" || m.PathPattern.String() != "^/v1/public/authors$" || m.Params["offset"] != "0" {
		t.Fatalf("matcher %+v", m)
	}
	if r := b.Policies[1].Rates[0]; src(r.Limit) != "{{ config.get('books_per_second', 2) }}" || r.IntervalText != "PT1S" {
		t.Fatalf("rate %+v", r)
	}
	if p := b.Policies[2]; p.CallLimit != 1 || p.Period.Seconds() != 1 || len(p.Matchers) != 0 {
		t.Fatalf("fixed %+v", p)
	}
}
