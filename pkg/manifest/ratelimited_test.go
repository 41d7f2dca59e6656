package manifest

import (
	"strings"
	"testing"
)

func TestRateLimitedDiagnostics(t *testing.T) {
	base := `version: 6.5.0
type: DeclarativeSource
streams:
  - type: DeclarativeStream
    name: items
    retriever:
      type: SimpleRetriever
      record_selector: {type: RecordSelector, extractor: {type: DpathExtractor, field_path: []}}
      requester:
        type: HttpRequester
        url_base: "https://api.example.com"
        authenticator:
          type: RateLimitedMultipleTokenAuthenticator
`
	status := "          quota_status_source: {type: QuotaStatusSource, url: \"https://api.example.com/rate_limit\"}\n"
	quota := "          quotas: [{type: TokenQuota, name: core, remaining_path: [r], reset_path: [t]}]\n"
	tokens := "          tokens: \"{{ config['tokens'] }}\"\n"
	for _, tt := range []struct{ fields, want string }{
		{tokens + status + quota, ""},
		{status + quota,
			"def.yaml:13:11: error: RateLimitedMultipleTokenAuthenticator is missing the required field `tokens`"},
		{"          tokens: [\"{{ config['a'] }}\", \"ghp_literal_token_1\"]\n" + status + quota,
			"def.yaml:14:41: error: a token of `tokens` is written in the definition; credentials must come from the testing values"},
		{"          tokens: []\n" + status + quota,
			"def.yaml:13:11: error: RateLimitedMultipleTokenAuthenticator is missing the required field `tokens`"},
		{tokens + quota,
			"def.yaml:13:11: error: RateLimitedMultipleTokenAuthenticator is missing the required field `quota_status_source`"},
		{tokens + status + "          quotas: []\n",
			"def.yaml:13:11: error: RateLimitedMultipleTokenAuthenticator is missing the required field `quotas`"},
		{tokens + status + "          quotas: [{type: TokenQuota, name: core, reset_path: [t]}]\n",
			"def.yaml:16:20: error: TokenQuota is missing the required field `remaining_path`"},
		{tokens + status + "          quotas: [{type: TokenQuota, name: a, remaining_path: [r], reset_path: [t]}, {type: TokenQuota, name: a, remaining_path: [r], reset_path: [t]}]\n",
			"def.yaml:16:87: error: two quota pools are named \"a\""},
		{tokens + "          quota_status_source: {type: QuotaStatusSource, url: \"https://x\", http_method: PUT}\n" + quota,
			"def.yaml:15:89: error: `http_method` must be GET or POST, not \"PUT\""},
		{tokens + status + quota + "          max_wait_time: P1M\n",
			"def.yaml:17:26: error: `max_wait_time` \"P1M\": counts months or years, which have no fixed length"},
		{tokens + status + quota + "          budget_min_reserve: -1\n",
			"def.yaml:17:31: error: `budget_min_reserve` must be an integer of at least 0"},
		{tokens + status + quota + "          budget_reserve_fraction: lots\n",
			"def.yaml:17:36: error: `budget_reserve_fraction` must be a number of at least 0"},
		{tokens + status + "          quotas: [{type: TokenQuota, name: core, remaining_path: [r], reset_path: [t], remaining_headr: X}]\n",
			"def.yaml:16:89: warning: unknown field `remaining_headr` in TokenQuota; it is ignored"},
	} {
		_, diags := Parse("def.yaml", []byte(base+tt.fields))
		got := diags.Error()
		if tt.want == "" {
			if diags.HasErrors() {
				t.Errorf("%s:\n%s\nwant no error", tt.fields, got)
			}
			continue
		}
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s:\n%s\nwant a line starting %s", tt.fields, got, tt.want)
		}
	}
}

func TestRateLimitedModel(t *testing.T) {
	def := mustLoad(t, "../../definitions/rate-limited-tokens.yaml", "")
	a := def.Streams[0].Requester.Authenticator
	r := a.RateLimited
	if a.Type != RateLimitedAuth || r == nil || !r.Split || r.Delimiter != "," || r.AuthMethod != "Bearer" || r.Header != "Authorization" ||
		r.MinReserve != 0 || r.ReserveFraction != 0 || src(r.MaxWaitTime) != "PT2M" {
		t.Fatalf("authenticator %+v", r)
	}
	if s := r.Status; s.Method != "GET" || src(s.URL) != "{{ config['base_url'] }}/v1/quota/rate_limit" {
		t.Fatalf("status %+v", s)
	}
	q := r.Quotas[0]
	if len(r.Quotas) != 1 || q.Name != "core" || strings.Join(q.RemainingPath, ".") != "resources.core.remaining" ||
		strings.Join(q.LimitPath, ".") != "resources.core.limit" || q.RemainingHeader != "X-RateLimit-Remaining" ||
		q.ResetHeader != "X-RateLimit-Reset" || q.LimitHeader != "X-RateLimit-Limit" || len(q.ExhaustionStatuses) != 1 {
		t.Fatalf("quota %+v", q)
	}
}
