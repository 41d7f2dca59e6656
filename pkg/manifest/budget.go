package manifest

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"connector/pkg/diag"
	"connector/pkg/template"
)

// Call rate policy types, as written in definitions.
const (
	FixedWindowPolicy  = "FixedWindowCallRatePolicy"
	MovingWindowPolicy = "MovingWindowCallRatePolicy"
	UnlimitedPolicy    = "UnlimitedCallRatePolicy"
)

// APIBudget is api_budget (HTTPAPIBudget): the call rate policies every request of a run is
// paced by, and the response headers that tell how much of the API's own budget is left.
type APIBudget struct {
	Pos Pos
	// Policies in order: a request is paced by the first whose matchers it matches.
	Policies []*CallRatePolicy
	// ResetHeader holds the epoch second of the API's next reset (default ratelimit-reset),
	// RemainingHeader the calls left (default ratelimit-remaining).
	ResetHeader, RemainingHeader string
	// LimitStatuses are status_codes_for_ratelimit_hit (default 429): such a response
	// without a remaining header means no call is left.
	LimitStatuses []int
}

// CallRatePolicy is one policy of an APIBudget.
type CallRatePolicy struct {
	Type string
	Pos  Pos
	// Period and CallLimit are those of a FixedWindowCallRatePolicy; PeriodText is the
	// period as written (PT1M).
	Period     time.Duration
	PeriodText string
	CallLimit  int
	// Rates are those of a MovingWindowCallRatePolicy.
	Rates []*Rate
	// Matchers select the requests of the policy; none selects every request.
	Matchers []*RequestMatcher
}

// Rate is one rate of a MovingWindowCallRatePolicy: at most Limit calls in any Interval.
type Rate struct {
	// Limit is an integer or a template on config.
	Limit        *template.Template
	Interval     time.Duration
	IntervalText string
}

// RequestMatcher is an HttpRequestRegexMatcher. Every field set must hold for a request.
type RequestMatcher struct {
	// Method is upper case; "" matches any.
	Method string
	// URLBase is compared with scheme://host of the request, as written (no template),
	// without a trailing slash.
	URLBase string
	// PathPattern is searched for in the request's path (without a trailing slash).
	PathPattern *regexp.Regexp
	// Params must be among the query parameters, Headers among the headers (names in
	// lower case), with these values as Python's str() spells them.
	Params, Headers map[string]string
	// Weight is how many calls a matching request counts for (nil: 1); an integer or a
	// template on config.
	Weight *template.Template
}

// apiBudget reads api_budget.
func (l *loader) apiBudget(n *yaml.Node) *APIBudget {
	c, ok := l.component(n, "api_budget", nil, "HTTPAPIBudget")
	if !ok {
		return nil
	}
	if c.typ != "HTTPAPIBudget" {
		l.unsupported(n, "api_budget", c.typ, "api_budget")
		return nil
	}
	c.checkFields("HTTPAPIBudget")
	b := &APIBudget{Pos: pos(n),
		ResetHeader:     l.plainString(c, "ratelimit_reset_header", "ratelimit-reset"),
		RemainingHeader: l.plainString(c, "ratelimit_remaining_header", "ratelimit-remaining"),
		LimitStatuses:   []int{429},
	}
	if v := c.get("status_codes_for_ratelimit_hit"); v != nil {
		if codes, ok := l.intList(v, c.fieldPath("status_codes_for_ratelimit_hit")); ok && len(codes) > 0 {
			b.LimitStatuses = codes
		}
	}
	pn := c.require("policies")
	if pn == nil {
		return b
	}
	if pn.Kind != yaml.SequenceNode {
		l.at(pn, c.fieldPath("policies"), diag.CodeType, fmt.Sprintf("`policies` must be a list of call rate policies, not %s", kindName(pn)), "")
		return b
	}
	for i, item := range pn.Content {
		if p := l.callRatePolicy(item, fmt.Sprintf("api_budget.policies[%d]", i)); p != nil {
			b.Policies = append(b.Policies, p)
		}
	}
	return b
}

func (l *loader) callRatePolicy(n *yaml.Node, path string) *CallRatePolicy {
	c, ok := l.component(n, path, nil, "")
	if !ok {
		return nil
	}
	p := &CallRatePolicy{Type: c.typ, Pos: pos(n)}
	switch c.typ {
	case FixedWindowPolicy:
		if v := c.require("period"); v != nil {
			p.Period, p.PeriodText = l.budgetDuration(v, c.fieldPath("period"))
		}
		if v := c.require("call_limit"); v != nil {
			p.CallLimit = l.positiveInt(v, c.fieldPath("call_limit"))
		}
	case MovingWindowPolicy:
		rn := c.require("rates")
		switch {
		case rn == nil:
		case rn.Kind != yaml.SequenceNode:
			l.at(rn, c.fieldPath("rates"), diag.CodeType, fmt.Sprintf("`rates` must be a list of rates, not %s", kindName(rn)), "")
		default:
			for i, item := range rn.Content {
				if r := l.rate(item, fmt.Sprintf("%s[%d]", c.fieldPath("rates"), i)); r != nil {
					p.Rates = append(p.Rates, r)
				}
			}
		}
	case UnlimitedPolicy:
	default:
		l.unsupported(n, path, c.typ, "policies")
		return nil
	}
	c.checkFields(c.typ)
	mn := c.vals["matchers"]
	switch {
	case mn == nil:
		l.at(n, path, diag.CodeMissingField, fmt.Sprintf("%s is missing the required field `matchers` (write `matchers: []` for every request)", c.typ), "")
	case isNull(mn):
	case mn.Kind != yaml.SequenceNode:
		l.at(mn, c.fieldPath("matchers"), diag.CodeType, fmt.Sprintf("`matchers` must be a list of HttpRequestRegexMatcher, not %s", kindName(mn)), "")
	default:
		for i, item := range mn.Content {
			if m := l.requestMatcher(item, fmt.Sprintf("%s[%d]", c.fieldPath("matchers"), i)); m != nil {
				p.Matchers = append(p.Matchers, m)
			}
		}
	}
	return p
}

func (l *loader) rate(n *yaml.Node, path string) *Rate {
	c, ok := l.component(n, path, nil, "Rate")
	if !ok {
		return nil
	}
	c.checkFields("Rate")
	r := &Rate{}
	if c.require("limit") != nil {
		l.number(c, "limit", true, &r.Limit)
	}
	if v := c.require("interval"); v != nil {
		r.Interval, r.IntervalText = l.budgetDuration(v, c.fieldPath("interval"))
	}
	return r
}

func (l *loader) requestMatcher(n *yaml.Node, path string) *RequestMatcher {
	c, ok := l.component(n, path, nil, "HttpRequestRegexMatcher")
	if !ok {
		return nil
	}
	if c.typ != "HttpRequestRegexMatcher" {
		l.unsupported(n, path, c.typ, "matchers")
		return nil
	}
	c.checkFields("HttpRequestRegexMatcher")
	m := &RequestMatcher{Method: strings.ToUpper(l.plainString(c, "method", ""))}
	if v := c.get("url_base"); v != nil {
		m.URLBase = strings.TrimRight(l.plainString(c, "url_base", ""), "/")
		switch {
		case strings.Contains(m.URLBase, "{{") || strings.Contains(m.URLBase, "{%"):
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeTemplate, Line: v.Line, Column: v.Column, Path: c.fieldPath("url_base"),
				Message: "`url_base` of a matcher is not a template: it is compared, as written, with scheme://host of each request, so this matcher never matches (as in the Airbyte CDK)",
				Hint:    "write the scheme and host literally, or leave url_base out"})
		case hasPath(m.URLBase):
			l.add(diag.Diagnostic{Severity: diag.Warning, Code: diag.CodeType, Line: v.Line, Column: v.Column, Path: c.fieldPath("url_base"),
				Message: fmt.Sprintf("`url_base` %q has a path: it is compared with scheme://host of each request only, so this matcher never matches (as in the Airbyte CDK)", m.URLBase),
				Hint:    "put the path in url_path_pattern"})
		}
	}
	if v := c.get("url_path_pattern"); v != nil {
		if src := l.plainString(c, "url_path_pattern", ""); src != "" {
			re, err := regexp.Compile(src)
			if err != nil {
				l.at(v, c.fieldPath("url_path_pattern"), diag.CodeType, fmt.Sprintf("`url_path_pattern` is not a regular expression this tool can run: %v", err),
					"Go's regular expressions have no look-around or backreferences")
			}
			m.PathPattern = re
		}
	}
	m.Params = l.strMap(c, "params", false)
	m.Headers = l.strMap(c, "headers", true)
	if c.get("weight") != nil {
		l.number(c, "weight", true, &m.Weight)
	}
	return m
}

// hasPath reports a URL base with something after scheme://host.
func hasPath(base string) bool {
	_, rest, ok := strings.Cut(base, "://")
	return ok && strings.Contains(rest, "/")
}

// strMap reads a mapping of scalars as the CDK's matcher keeps it: every value as Python's
// str() spells it, names in lower case when lower is set.
func (l *loader) strMap(c *comp, f string, lower bool) map[string]string {
	v := c.get(f)
	if v == nil {
		return nil
	}
	if v.Kind != yaml.MappingNode {
		l.at(v, c.fieldPath(f), diag.CodeType, fmt.Sprintf("`%s` must be a mapping, not %s", f, kindName(v)), "")
		return nil
	}
	out := map[string]string{}
	for i := 0; i+1 < len(v.Content); i += 2 {
		k, val := v.Content[i].Value, v.Content[i+1]
		if lower {
			k = strings.ToLower(k)
		}
		if val.Kind == yaml.AliasNode {
			val = val.Alias
		}
		if val.Kind != yaml.ScalarNode {
			l.at(val, c.fieldPath(f)+"."+v.Content[i].Value, diag.CodeType, fmt.Sprintf("a value of `%s` must be a string, number or boolean, not %s", f, kindName(val)), "")
			continue
		}
		out[k] = pyStr(val)
	}
	return out
}

// pyStr is a YAML scalar as Python's str() spells the value PyYAML reads.
func pyStr(n *yaml.Node) string {
	switch n.Tag {
	case "!!bool":
		if b, err := strconv.ParseBool(strings.ToLower(n.Value)); err == nil && b {
			return "True"
		}
		return "False"
	case "!!null":
		return "None"
	case "!!int":
		if i, err := strconv.ParseInt(n.Value, 0, 64); err == nil {
			return strconv.FormatInt(i, 10)
		}
	case "!!float":
		if f, err := strconv.ParseFloat(n.Value, 64); err == nil {
			s := strconv.FormatFloat(f, 'g', -1, 64)
			if !strings.ContainsAny(s, ".eEn") {
				s += ".0"
			}
			return s
		}
	}
	return n.Value
}

// budgetDuration reads an ISO 8601 duration of a budget (PT1M, P1D): weeks, days and
// hours at most, no months or years, more than zero.
func (l *loader) budgetDuration(v *yaml.Node, path string) (time.Duration, string) {
	if !isString(v) {
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` must be an ISO 8601 duration such as PT1M, not %s", lastSeg(path), describe(v)), "")
		return 0, ""
	}
	d, err := template.ParseDuration(v.Value)
	switch {
	case err != nil:
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` %q is not an ISO 8601 duration: %v", lastSeg(path), v.Value, err), "for example PT1S, PT1M, PT1H or P1D")
	case d.Months != 0:
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` %q counts months or years, which have no fixed length", lastSeg(path), v.Value), "write it in days, e.g. P30D")
	case d.Exact <= 0:
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` %q must be longer than zero", lastSeg(path), v.Value), "")
	default:
		return d.Exact, v.Value
	}
	return 0, v.Value
}

// positiveInt reads an integer of at least 1 (a number written as a string too).
func (l *loader) positiveInt(v *yaml.Node, path string) int {
	n, err := strconv.Atoi(strings.TrimSpace(v.Value))
	if v.Kind != yaml.ScalarNode || (v.Tag != "!!int" && !isString(v)) || err != nil {
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` must be an integer, not %s", lastSeg(path), describe(v)), "")
		return 0
	}
	if n < 1 {
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` must be at least 1, not %d: no request could ever go", lastSeg(path), n), "")
	}
	return n
}

// intList reads a list of integers.
func (l *loader) intList(v *yaml.Node, path string) ([]int, bool) {
	if v.Kind != yaml.SequenceNode {
		l.at(v, path, diag.CodeType, fmt.Sprintf("`%s` must be a list of status codes, not %s", lastSeg(path), kindName(v)), "")
		return nil, false
	}
	var out []int
	for i, item := range v.Content {
		n, err := strconv.Atoi(item.Value)
		if item.Kind != yaml.ScalarNode || item.Tag != "!!int" || err != nil {
			l.at(item, fmt.Sprintf("%s[%d]", path, i), diag.CodeType, fmt.Sprintf("a status code must be an integer, not %s", describe(item)), "")
			continue
		}
		out = append(out, n)
	}
	return out, true
}
