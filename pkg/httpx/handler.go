package httpx

import (
	"fmt"
	"maps"
	"math"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"connector/pkg/extract"
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// Defaults of a DefaultErrorHandler, as in the Airbyte declarative format.
const (
	defaultMaxRetries = 5
	defaultMaxTime    = 600 * time.Second
	defaultFactor     = 5
	// rateLimitedCeiling bounds the attempts of a RATE_LIMITED response, which max_retries
	// does not count, when the waits are too short for max_time to end them.
	rateLimitedCeiling = 100
)

// Handler is a definition's error_handler bound to the testing values: it decides, for
// each attempt, whether the request succeeded, failed, is tried again (and after how long)
// or is ignored. A nil *Handler is the default behaviour: 429, 5xx and network errors are
// retried, any other status ≥ 400 fails.
type Handler struct {
	composite  bool
	children   []*Handler
	filters    []*filter
	backoff    []*backoff
	maxRetries int
	// retriesSet says max_retries is written in the definition: the handler asks for its
	// retries of every retryable failure, a connection that cannot be made included.
	retriesSet bool
	maxTime    time.Duration
}

// setsRetries reports a handler whose max_retries is written in the definition.
func (h *Handler) setsRetries() bool { return h != nil && h.retriesSet }

type filter struct {
	def   *manifest.ResponseFilter
	codes map[int]bool
	vars  map[string]any // config, parameters and the run's clock (template.Globals.Vars)
}

type backoff struct {
	typ        string
	factor     float64 // exponential
	seconds    float64 // constant
	header     string
	regex      *regexp.Regexp
	maxWaiting float64 // < 0: none
	minWait    float64 // < 0: none
}

// NewHandler binds def to the run's testing values and clock g: the fields that are
// templates on config (factors, waits, header names, max_retries) are evaluated once here.
// A nil def gives a nil handler (the default behaviour).
func NewHandler(def *manifest.ErrorHandler, g template.Globals) (*Handler, error) {
	if def == nil {
		return nil, nil
	}
	if def.Type == manifest.CompositeErrorHandler {
		h := &Handler{composite: true}
		for _, c := range def.Handlers {
			child, err := NewHandler(c, g)
			if err != nil {
				return nil, err
			}
			h.children = append(h.children, child)
			h.backoff = append(h.backoff, child.backoff...)
			h.maxTime = max(h.maxTime, child.maxTime)
		}
		if len(h.children) > 0 {
			h.maxRetries, h.retriesSet = h.children[0].maxRetries, h.children[0].retriesSet
		}
		return h, nil
	}
	v := g.Vars(def.Parameters)
	h := &Handler{maxRetries: defaultMaxRetries, maxTime: defaultMaxTime}
	where := fmt.Sprintf("%s at line %d", def.Type, def.Pos.Line)
	if def.MaxRetries != nil {
		n, err := number(def.MaxRetries, v, where, "max_retries")
		if err != nil {
			return nil, err
		}
		if n < 0 || n != math.Trunc(n) {
			return nil, fmt.Errorf("error_handler: `max_retries` of the %s must be a whole number ≥ 0, not %v", where, n)
		}
		h.maxRetries, h.retriesSet = int(n), true
	}
	if def.MaxTime != nil {
		n, err := number(def.MaxTime, v, where, "max_time")
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return nil, fmt.Errorf("error_handler: `max_time` of the %s must be a number of seconds > 0, not %v", where, n)
		}
		h.maxTime = time.Duration(n * float64(time.Second))
	}
	for _, f := range def.Filters {
		bf := &filter{def: f, codes: map[int]bool{}, vars: g.Vars(f.Parameters)}
		for _, c := range f.HTTPCodes {
			bf.codes[c] = true
		}
		h.filters = append(h.filters, bf)
	}
	for _, s := range def.Backoff {
		b, err := bindBackoff(s, g)
		if err != nil {
			return nil, err
		}
		h.backoff = append(h.backoff, b)
	}
	return h, nil
}

func bindBackoff(s *manifest.BackoffStrategy, g template.Globals) (*backoff, error) {
	v := g.Vars(s.Parameters)
	where := fmt.Sprintf("%s at line %d", s.Type, s.Pos.Line)
	b := &backoff{typ: s.Type, factor: defaultFactor, maxWaiting: -1, minWait: -1}
	var err error
	opt := func(t *template.Template, field string, dst *float64) {
		if t == nil || err != nil {
			return
		}
		var n float64
		if n, err = number(t, v, where, field); err == nil {
			if n < 0 {
				err = fmt.Errorf("error_handler: `%s` of the %s must not be negative, got %v", field, where, n)
			}
			*dst = n
		}
	}
	opt(s.Factor, "factor", &b.factor)
	opt(s.Seconds, "backoff_time_in_seconds", &b.seconds)
	opt(s.MaxWaiting, "max_waiting_time_in_seconds", &b.maxWaiting)
	opt(s.MinWait, "min_wait", &b.minWait)
	if err != nil {
		return nil, err
	}
	if s.Header != nil {
		if b.header, err = s.Header.Render(v); err != nil {
			return nil, fmt.Errorf("error_handler: `header` of the %s: %w", where, err)
		}
	}
	if s.Regex != nil {
		src, err := s.Regex.Render(v)
		if err != nil {
			return nil, fmt.Errorf("error_handler: `regex` of the %s: %w", where, err)
		}
		if b.regex, err = regexp.Compile(src); err != nil {
			return nil, fmt.Errorf("error_handler: `regex` of the %s is not a valid regular expression: %v", where, err)
		}
	}
	return b, nil
}

// number evaluates a number field.
func number(t *template.Template, vars map[string]any, where, field string) (float64, error) {
	s, err := t.Render(vars)
	if err != nil {
		return 0, fmt.Errorf("error_handler: `%s` of the %s: %w", field, where, err)
	}
	n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, fmt.Errorf("error_handler: `%s` of the %s must be a number, but %q gives %q", field, where, t.Source(), s)
	}
	return n, nil
}

// outcome is what one attempt produced: a response or a network error.
type outcome struct {
	resp    *Response
	err     *NetError
	decoded bool
	body    any // the decoded JSON body, or an empty object when it is not JSON
	isJSON  bool
}

// json decodes the body, with the page parser's limits (a body nested deeper than
// extract.MaxDepth is not JSON here).
func (o *outcome) json() any {
	if !o.decoded {
		o.decoded = true
		o.body = map[string]any{}
		if p, err := extract.Parse(o.resp.Body, nil, extract.Want{Body: true}); err == nil {
			o.body, o.isJSON = p.Body, true
		}
	}
	return o.body
}

// decision is what to do with an outcome.
type decision struct {
	action string // one of the manifest.Action* constants
	// message is the filter's error_message, rendered (empty when none).
	message     string
	failureType string
	// explicit is set when a response filter matched (not the default mapping).
	explicit bool
}

// decide applies the handler to an outcome: response filters in order first (so they can
// act on a 200), then the default mapping.
func (h *Handler) decide(o *outcome) decision {
	if h == nil {
		return defaultDecision(o)
	}
	if h.composite {
		var last, firstExplicit *decision
		for _, c := range h.children {
			d := c.decide(o)
			switch d.action {
			case manifest.ActionSuccess, manifest.ActionRetry, manifest.ActionIgnore, manifest.ActionResetPagination:
				return d
			}
			if d.explicit && firstExplicit == nil {
				firstExplicit = &d
			}
			last = &d
		}
		if firstExplicit != nil {
			return *firstExplicit
		}
		if last != nil {
			return *last
		}
		return defaultDecision(o)
	}
	if o.resp != nil {
		for _, f := range h.filters {
			if d, ok := f.match(o); ok {
				return d
			}
		}
	}
	return defaultDecision(o)
}

// defaultDecision is what an answer no filter matched gets: 429, 5xx and network errors
// are retried (a permanent network error, such as a refused redirect, fails), other
// statuses ≥ 400 fail.
func defaultDecision(o *outcome) decision {
	switch {
	case o.err != nil && o.err.Permanent:
		return decision{action: manifest.ActionFail}
	case o.err != nil, o.resp.Status == http.StatusTooManyRequests, o.resp.Status >= 500:
		return decision{action: manifest.ActionRetry}
	case o.resp.Status >= 400:
		return decision{action: manifest.ActionFail}
	}
	return decision{action: manifest.ActionSuccess}
}

func (f *filter) match(o *outcome) (decision, bool) {
	if f.def.Action == "" {
		return decision{}, false
	}
	d := decision{action: f.def.Action, failureType: f.def.FailureType, explicit: true}
	matched := f.codes[o.resp.Status]
	if !matched && f.def.Predicate != nil {
		// The predicate is a condition with the default false, as in the CDK (see
		// template.InterpolateOr).
		v, err := f.def.Predicate.InterpolateOr(f.responseVars(o), false)
		if err != nil {
			return decision{action: manifest.ActionFail, explicit: true,
				message: fmt.Sprintf("the error_handler predicate %q failed: %v", f.def.Predicate.Source(), err)}, true
		}
		matched = template.Truthy(v)
	}
	if !matched && f.def.ErrorMessageContains != "" {
		matched = strings.Contains(errorMessage(o), f.def.ErrorMessageContains)
	}
	if !matched {
		return decision{}, false
	}
	if f.def.ErrorMessage != nil {
		if s, err := f.def.ErrorMessage.Render(f.responseVars(o)); err == nil {
			d.message = strings.TrimSpace(s)
		}
	}
	return d, true
}

// responseVars are the filter's variables (config, parameters, the run's clock) and the
// response's, in a map of their own.
func (f *filter) responseVars(o *outcome) map[string]any {
	v := maps.Clone(f.vars)
	v["response"], v["headers"] = o.json(), headerMap(o.resp.Header)
	return v
}

// errorMessage is the error text of a response: the first of the usual error keys of a
// JSON body (message, error, errors, detail, …), else the body itself.
func errorMessage(o *outcome) string {
	if body := o.json(); o.isJSON {
		if s := messageOf(body, 0); s != "" {
			return s
		}
	}
	return string(o.resp.Body)
}

var errorKeys = []string{"message", "messages", "error", "errors", "failures", "failure", "detail", "details",
	"err", "error_message", "msg", "reason", "status_message"}

func messageOf(v any, depth int) string {
	if depth > 10 {
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var parts []string
		for _, item := range x {
			if s := messageOf(item, depth+1); s != "" {
				parts = append(parts, s)
			}
		}
		return strings.Join(parts, ", ")
	case map[string]any:
		for _, k := range errorKeys {
			if item, ok := x[k]; ok {
				if s := messageOf(item, depth+1); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// headerMap is the `headers` template variable: response headers by case-insensitive
// name, first value.
type headerMap http.Header

func (h headerMap) Get(key string) (any, bool) {
	vs := http.Header(h).Values(key)
	if len(vs) == 0 {
		for k, v := range h {
			if strings.EqualFold(k, key) && len(v) > 0 {
				return v[0], true
			}
		}
		return nil, false
	}
	return vs[0], true
}

func (h headerMap) Keys() []string {
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, strings.ToLower(k))
	}
	return keys
}

// wait is the pause before attempt number attempts+1 according to the backoff strategies:
// the first one that yields a positive wait. ok is false when none does (the default
// exponential backoff applies). An error stops the retries (max_waiting_time_in_seconds).
func (h *Handler) wait(o *outcome, attempts int, now time.Time) (time.Duration, bool, error) {
	if h == nil {
		return 0, false, nil
	}
	for _, b := range h.backoff {
		s, ok, err := b.waitSeconds(o, attempts, now)
		if err != nil {
			return 0, false, err
		}
		if ok && s > 0 {
			return time.Duration(s * float64(time.Second)), true, nil
		}
	}
	return 0, false, nil
}

func (b *backoff) waitSeconds(o *outcome, attempts int, now time.Time) (float64, bool, error) {
	switch b.typ {
	case manifest.ExponentialBackoff:
		return b.factor * math.Pow(2, float64(attempts)), true, nil
	case manifest.ConstantBackoff:
		return b.seconds, true, nil
	case manifest.WaitTimeFromHeader:
		v, ok := b.headerNumber(o)
		if !ok {
			return 0, false, nil
		}
		if b.maxWaiting > 0 && v >= b.maxWaiting {
			return 0, false, fmt.Errorf("the %s header asks for a wait of %gs, at least max_waiting_time_in_seconds (%gs) of WaitTimeFromHeader; stopping", b.header, v, b.maxWaiting)
		}
		return v, true, nil
	case manifest.WaitUntilTimeFromHeader:
		until, ok := b.headerNumber(o)
		if !ok || until == 0 {
			if b.minWait > 0 {
				return b.capped(b.minWait)
			}
			return 0, false, nil
		}
		w := until - float64(now.UnixNano())/1e9
		if b.minWait > 0 {
			return b.capped(max(w, b.minWait))
		}
		if w < 0 {
			return 0, false, nil
		}
		return b.capped(w)
	}
	return 0, false, nil
}

func (b *backoff) capped(w float64) (float64, bool, error) {
	if b.maxWaiting >= 0 && w > b.maxWaiting {
		return 0, false, fmt.Errorf("the %s header asks for a wait of %.0fs, more than max_waiting_time_in_seconds (%gs) of WaitUntilTimeFromHeader; stopping", b.header, w, b.maxWaiting)
	}
	return w, true, nil
}

// headerNumber reads the strategy's header as a number, after its regex when there is one
// (matched at the start of the value, like Python's re.match).
func (b *backoff) headerNumber(o *outcome) (float64, bool) {
	if o.resp == nil {
		return 0, false
	}
	v := strings.TrimSpace(o.resp.Header.Get(b.header))
	if v == "" {
		return 0, false
	}
	if b.regex != nil {
		if loc := b.regex.FindStringIndex(v); loc != nil && loc[0] == 0 {
			v = v[:loc[1]]
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(n) || math.IsInf(n, 0) {
		return 0, false
	}
	return n, true
}
