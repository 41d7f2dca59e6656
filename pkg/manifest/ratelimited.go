package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Types of the rotating token authenticator and its parts, as written in definitions.
const (
	// RateLimitedAuth rotates between several tokens of one API, each with a call quota read
	// from a quota status endpoint.
	RateLimitedAuth   = "RateLimitedMultipleTokenAuthenticator"
	QuotaStatusSource = "QuotaStatusSource"
	TokenQuota        = "TokenQuota"
)

// RateLimited is a RateLimitedMultipleTokenAuthenticator: interchangeable tokens, each with
// its quota in one or more pools; a request is charged to the active token, which changes
// when its quota for the request's pool is spent.
type RateLimited struct {
	// Tokens are the templates of the tokens. With Split, tokens was written as one string
	// holding them all, cut at Delimiter once rendered; otherwise it was a list, one token per
	// item. Empty tokens (after trimming) are dropped either way.
	Tokens    []*template.Template
	Split     bool
	Delimiter string
	// AuthMethod is written before the token and a space (default Bearer, also when written
	// empty, as the CDK reads it); Header is the header it goes in (default Authorization).
	AuthMethod, Header string
	Status             *QuotaStatus
	Quotas             []*Quota
	// MaxWaitTime is how long a read waits, in all, for a reset once every token is spent:
	// an ISO 8601 duration of fixed length (default PT2H), a template on config.
	MaxWaitTime *template.Template
	// ReserveFraction and MinReserve size the reserve of a pool (the larger of MinReserve
	// and ReserveFraction × limit): once every token's count is within it, requests are
	// spaced out until the reset (defaults 0.1 and 50).
	ReserveFraction float64
	MinReserve      int
}

// QuotaStatus is a QuotaStatusSource: the endpoint that tells a token's quotas, asked once
// per token before the first request and again after a wait for a reset.
type QuotaStatus struct {
	Pos    Pos
	URL    *template.Template
	Method string // GET or POST
	// Headers are request_headers, in written order; their values are templates on config.
	Headers []QuotaHeader
	// Unavailable are unavailable_status_codes: an answer with one of them means the API
	// keeps no quota for the token, which is then used in turn without counting.
	Unavailable []int
}

// QuotaHeader is one header of a quota status request.
type QuotaHeader struct {
	Name  string
	Value *template.Template
}

// Quota is a TokenQuota: one pool of calls per token.
type Quota struct {
	Pos  Pos
	Name string
	// RemainingPath, ResetPath and LimitPath lead to the pool's numbers in the quota status
	// answer (LimitPath nil: the limit is the remaining count first read).
	RemainingPath, ResetPath, LimitPath []string
	// Matchers pick the requests of the pool; a pool without matchers takes the requests no
	// other pool matches.
	Matchers []*RequestMatcher
	// RemainingHeader, ResetHeader and LimitHeader are response headers that correct the
	// pool after every response ("" : not read).
	RemainingHeader, ResetHeader, LimitHeader string
	// ExhaustionStatuses are statuses that mean the sending token's pool is spent.
	ExhaustionStatuses []int
}

// rateLimited reads a RateLimitedMultipleTokenAuthenticator.
func (l *loader) rateLimited(c *comp) *RateLimited {
	r := &RateLimited{Delimiter: ",", ReserveFraction: 0.1, MinReserve: 50}
	if v := c.require("tokens"); v != nil {
		switch v.Kind {
		case yaml.ScalarNode:
			r.Split = true
			r.Tokens = make([]*template.Template, 1)
			l.credential(l.tmpl(v, c.fieldPath("tokens"), "tokens", authVars, &r.Tokens[0]), "the tokens (`tokens`)", "tokens", false)
		case yaml.SequenceNode:
			r.Tokens = make([]*template.Template, len(v.Content))
			for i, item := range v.Content {
				path := fmt.Sprintf("%s[%d]", c.fieldPath("tokens"), i)
				if item.Kind != yaml.ScalarNode {
					l.at(item, path, diag.CodeType, fmt.Sprintf("a token must be a string, not %s", kindName(item)), "")
					continue
				}
				l.credential(l.tmpl(item, path, "tokens", authVars, &r.Tokens[i]), "a token of `tokens`", "tokens", false)
			}
		default:
			l.at(v, c.fieldPath("tokens"), diag.CodeType, fmt.Sprintf("`tokens` must be a string or a list of strings, not %s", kindName(v)), "")
		}
	}
	r.Delimiter = l.plainString(c, "token_delimiter", ",")
	r.AuthMethod = l.plainString(c, "auth_method", "Bearer")
	r.Header = l.plainString(c, "header", "Authorization")
	if v := c.require("quota_status_source"); v != nil {
		r.Status = l.quotaStatus(v, c.fieldPath("quota_status_source"), c.params)
	}
	if v := c.require("quotas"); v != nil {
		if v.Kind != yaml.SequenceNode {
			l.at(v, c.fieldPath("quotas"), diag.CodeType, fmt.Sprintf("`quotas` must be a list of TokenQuota, not %s", describe(v)), "")
		} else {
			names := map[string]bool{}
			for i, item := range v.Content {
				q := l.quota(item, fmt.Sprintf("%s[%d]", c.fieldPath("quotas"), i), c.params)
				if q == nil {
					continue
				}
				if names[q.Name] {
					l.at(item, fmt.Sprintf("%s[%d]", c.fieldPath("quotas"), i), diag.CodeType,
						fmt.Sprintf("two quota pools are named %q: the counters of a pool are kept by its name", q.Name), "give each pool its own name")
				}
				names[q.Name] = true
				r.Quotas = append(r.Quotas, q)
			}
		}
	}
	if v := c.get("max_wait_time"); v != nil {
		if p := l.stringTemplate(c, "max_wait_time", authVars, &r.MaxWaitTime); p != nil && !strings.Contains(v.Value, "{") {
			if _, err := FixedDuration(v.Value); err != nil {
				l.at(v, c.fieldPath("max_wait_time"), diag.CodeType, fmt.Sprintf("`max_wait_time` %q: %v", v.Value, err), "for example PT30M or PT2H")
			}
		}
	}
	if v := c.get("budget_reserve_fraction"); v != nil {
		f, err := strconv.ParseFloat(v.Value, 64)
		if v.Kind != yaml.ScalarNode || (v.Tag != "!!float" && v.Tag != "!!int") || err != nil || f < 0 {
			l.at(v, c.fieldPath("budget_reserve_fraction"), diag.CodeType, fmt.Sprintf("`budget_reserve_fraction` must be a number of at least 0, not %s", describe(v)), "")
		} else {
			r.ReserveFraction = f
		}
	}
	if v := c.get("budget_min_reserve"); v != nil {
		n, err := strconv.Atoi(v.Value)
		if v.Kind != yaml.ScalarNode || v.Tag != "!!int" || err != nil || n < 0 {
			l.at(v, c.fieldPath("budget_min_reserve"), diag.CodeType, fmt.Sprintf("`budget_min_reserve` must be an integer of at least 0, not %s", describe(v)), "")
		} else {
			r.MinReserve = n
		}
	}
	return r
}

// FixedDuration reads max_wait_time once rendered: an ISO 8601 duration without months or
// years, which have no fixed length (the CDK refuses them too).
func FixedDuration(s string) (d template.Duration, err error) {
	d, err = template.ParseDuration(strings.TrimSpace(s))
	switch {
	case err != nil:
		return d, fmt.Errorf("not an ISO 8601 duration: %w", err)
	case d.Months != 0:
		return d, fmt.Errorf("counts months or years, which have no fixed length")
	}
	return d, nil
}

// quotaStatus reads a QuotaStatusSource.
func (l *loader) quotaStatus(n *yaml.Node, path string, parent *params) *QuotaStatus {
	c, ok := l.component(n, path, parent, QuotaStatusSource)
	if !ok {
		return nil
	}
	if c.typ != QuotaStatusSource {
		l.at(n, path, diag.CodeType, fmt.Sprintf("`quota_status_source` must be a QuotaStatusSource, not %s", c.typ), "")
		return nil
	}
	c.checkFields(QuotaStatusSource)
	s := &QuotaStatus{Pos: pos(n), Method: "GET"}
	if c.require("url") != nil {
		l.stringTemplate(c, "url", authVars, &s.URL)
	}
	if m := strings.ToUpper(l.plainString(c, "http_method", "GET")); m == "GET" || m == "POST" {
		s.Method = m
	} else {
		l.at(c.get("http_method"), c.fieldPath("http_method"), diag.CodeType, fmt.Sprintf("`http_method` must be GET or POST, not %q", m), "")
	}
	if h := c.get("request_headers"); h != nil {
		if h.Kind != yaml.MappingNode {
			l.at(h, c.fieldPath("request_headers"), diag.CodeType, fmt.Sprintf("`request_headers` must be a mapping, not %s", kindName(h)), "")
		} else {
			for i := 0; i+1 < len(h.Content); i += 2 {
				k, v := h.Content[i], h.Content[i+1]
				if v.Kind != yaml.ScalarNode {
					l.at(v, join(c.fieldPath("request_headers"), k.Value), diag.CodeType, fmt.Sprintf("a header value must be a string, not %s", kindName(v)), "")
					continue
				}
				s.Headers = append(s.Headers, QuotaHeader{Name: k.Value})
				l.tmpl(v, join(c.fieldPath("request_headers"), k.Value), k.Value, authVars, &s.Headers[len(s.Headers)-1].Value)
			}
		}
	}
	if v := c.get("unavailable_status_codes"); v != nil {
		s.Unavailable, _ = l.intList(v, c.fieldPath("unavailable_status_codes"))
	}
	return s
}

// quota reads a TokenQuota.
func (l *loader) quota(n *yaml.Node, path string, parent *params) *Quota {
	c, ok := l.component(n, path, parent, TokenQuota)
	if !ok {
		return nil
	}
	if c.typ != TokenQuota {
		l.at(n, path, diag.CodeType, fmt.Sprintf("an item of `quotas` must be a TokenQuota, not %s", c.typ), "")
		return nil
	}
	c.checkFields(TokenQuota)
	q := &Quota{Pos: pos(n)}
	if c.require("name") != nil {
		q.Name = l.plainString(c, "name", "")
	}
	if c.require("remaining_path") != nil {
		q.RemainingPath, _ = l.stringList(c, "remaining_path")
	}
	if c.require("reset_path") != nil {
		q.ResetPath, _ = l.stringList(c, "reset_path")
	}
	q.LimitPath, _ = l.stringList(c, "limit_path")
	if len(q.LimitPath) == 0 {
		q.LimitPath = nil
	}
	if mn := c.get("matchers"); mn != nil {
		if mn.Kind != yaml.SequenceNode {
			l.at(mn, c.fieldPath("matchers"), diag.CodeType, fmt.Sprintf("`matchers` must be a list of HttpRequestRegexMatcher, not %s", kindName(mn)), "")
		} else {
			for i, item := range mn.Content {
				if m := l.requestMatcher(item, fmt.Sprintf("%s[%d]", c.fieldPath("matchers"), i)); m != nil {
					q.Matchers = append(q.Matchers, m)
				}
			}
		}
	}
	q.RemainingHeader = l.plainString(c, "remaining_header", "")
	q.ResetHeader = l.plainString(c, "reset_header", "")
	q.LimitHeader = l.plainString(c, "limit_header", "")
	if v := c.get("exhaustion_status_codes"); v != nil {
		q.ExhaustionStatuses, _ = l.intList(v, c.fieldPath("exhaustion_status_codes"))
	}
	return q
}
