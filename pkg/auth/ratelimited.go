package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"connector/pkg/budget"
	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/record"
	"connector/pkg/request"
)

// rateLimitedKind is RateLimitedMultipleTokenAuthenticator: several interchangeable tokens,
// each with a call quota per pool that a quota status endpoint tells; every call is charged
// to the active token, which changes once its quota for the call's pool is spent.
var rateLimitedKind = kind{
	make: newRateLimited,
	secrets: func(a *manifest.Authenticator) credentials {
		return credentials{templates: a.RateLimited.Tokens}
	},
}

// The fixed numbers of the CDK's rotation.
const (
	// maxSpacing caps the pause put before each call once every token is within its reserve.
	maxSpacing = 10 * time.Second
	// minSpacing: a shorter pause is not made.
	minSpacing = 100 * time.Millisecond
	// minResetWait is the shortest wait for a reset, so that a reset time already past
	// cannot make the tokens' quotas be asked for again and again.
	minResetWait = 5 * time.Second
	// resetSkew is how far a response's reset may be behind the one held while its
	// remaining count still counts as the current window's.
	resetSkew = time.Minute
	// heartbeat: during a wait for a reset, a log line says what is left this often.
	heartbeat = time.Minute
)

// rateLimited is the authenticator of the rotating tokens. It is shared by every stream
// that has this authenticator (one set of counters for the run), so its state is guarded.
// Its Apply only reserves the header: the token is chosen for each attempt once the request
// is complete (Sign), because a pool is picked by the request's URL and the CDK applies the
// authenticator again before every retry.
type rateLimited struct {
	env          Env
	tokens       []string
	quotas       []*manifest.Quota
	method       string // written before the token and a space
	header       string
	statusURL    string
	statusMethod string
	statusHeader http.Header
	unavailable  map[int]bool
	maxWait      time.Duration
	fraction     float64
	minReserve   int64

	seedMu sync.Mutex // one seeding of the counters at a time
	mu     sync.Mutex // the fields below
	states map[string]map[string]*quotaState
	active int // index in tokens of the token calls are charged to
	// The log lines the CDK writes once: the first spacing out of calls, a request that
	// matched no pool, the tokens the API keeps no quota for.
	spacingLogged, unmatchedLogged, untrackedLogged bool
}

// quotaState is what is known of one pool of one token.
type quotaState struct {
	remaining, limit int64
	reset            time.Time
	// tracked is false when the quota status endpoint said the API keeps no quota for the
	// token: its remaining count is then 0 and never changes, and the token is used in turn.
	tracked bool
}

func newRateLimited(a *manifest.Authenticator, env Env, vars map[string]any) (Authenticator, error) {
	d := a.RateLimited
	render := renderer{typ: a.Type, vars: vars}.render
	r := &rateLimited{env: env, quotas: d.Quotas, method: d.AuthMethod, header: d.Header,
		fraction: d.ReserveFraction, minReserve: int64(d.MinReserve), unavailable: map[int]bool{}}
	for _, t := range d.Tokens {
		v, err := render(t, "tokens")
		if err != nil {
			return nil, err
		}
		parts := []string{v}
		if d.Split {
			parts = strings.Split(v, d.Delimiter)
		}
		for _, p := range parts {
			if p = strings.TrimSpace(p); p != "" {
				r.tokens = append(r.tokens, p)
			}
		}
	}
	env.secret(r.tokens...)
	if len(r.tokens) == 0 {
		return nil, &ConfigError{Msg: fmt.Sprintf("%s: no token: `tokens` renders empty; set the tokens in the testing values", a.Type)}
	}
	if len(r.quotas) == 0 || d.Status == nil {
		return nil, fmt.Errorf("%s needs a quota_status_source and at least one quota pool", a.Type)
	}
	var err error
	if r.statusURL, err = render(d.Status.URL, "quota_status_source.url"); err != nil {
		return nil, err
	}
	r.statusURL = strings.TrimSpace(r.statusURL)
	r.statusMethod = d.Status.Method
	r.statusHeader = http.Header{}
	for _, h := range d.Status.Headers {
		v, err := render(h.Value, "quota_status_source.request_headers."+h.Name)
		if err != nil {
			return nil, err
		}
		r.statusHeader.Set(h.Name, v)
	}
	for _, c := range d.Status.Unavailable {
		r.unavailable[c] = true
	}
	r.maxWait = 2 * time.Hour
	if d.MaxWaitTime != nil {
		v, err := render(d.MaxWaitTime, "max_wait_time")
		if err != nil {
			return nil, err
		}
		w, err := manifest.FixedDuration(v)
		if err != nil {
			return nil, &ConfigError{Msg: fmt.Sprintf("%s: max_wait_time %q %v", a.Type, v, err)}
		}
		r.maxWait = w.Exact
	}
	return r, nil
}

func (r *rateLimited) Name() string { return manifest.RateLimitedAuth }

// Apply reserves the header of the token (a requester setting it too is a conflict) and
// leaves the choice of the token to Sign, attempt by attempt.
func (r *rateLimited) Apply(_ context.Context, b *request.Builder) error {
	if err := b.SetHeader(r.header, "", "the authenticator"); err != nil {
		return err
	}
	b.Signer = r
	return nil
}

// value is the header's value for token t.
func (r *rateLimited) value(t string) string {
	return strings.TrimSpace(r.method + " " + t)
}

// Sign charges the attempt to a token and sets its header: the counters are read from the
// quota status endpoint first, for every token, when they are not yet known.
func (r *rateLimited) Sign(ctx context.Context, req *httpx.Request) error {
	if err := r.seedOnce(ctx); err != nil {
		return err
	}
	t, err := r.acquire(ctx, r.pool(req))
	if err != nil {
		return err
	}
	req.Header.Set(r.header, r.value(t))
	return nil
}

// pool is the quota pool of a request: the first pool with a matcher that selects it, else
// the first pool without matchers, else the first pool.
func (r *rateLimited) pool(req *httpx.Request) *manifest.Quota {
	var fallback *manifest.Quota
	for _, q := range r.quotas {
		if len(q.Matchers) == 0 {
			if fallback == nil {
				fallback = q
			}
			continue
		}
		for _, m := range q.Matchers {
			if budget.Matches(m, req.Method, req.URL, req.Header) {
				return q
			}
		}
	}
	if fallback == nil {
		fallback = r.quotas[0]
		r.mu.Lock()
		first := !r.unmatchedLogged
		r.unmatchedLogged = true
		r.mu.Unlock()
		if first {
			r.env.log("WARN", "Request %s did not match any quota pool; falling back to '%s'. Consider defining a matcher-less default pool.",
				r.env.redact(req.URL), fallback.Name)
		}
	}
	return fallback
}

// acquire charges one call of pool q to a token and returns it. It rotates past the spent
// tokens; when all are spent it waits for the earliest reset (max_wait_time in all, at least
// minResetWait each time) and reads the quotas again; when every token is within its
// reserve it spaces the calls out until the reset.
func (r *rateLimited) acquire(ctx context.Context, q *manifest.Quota) (string, error) {
	var deadline time.Time
	for {
		var spacing, wait time.Duration
		r.mu.Lock()
		t := r.tokens[r.active]
		st := r.states[t][q.Name]
		switch {
		case !st.tracked:
			// Nothing to count: the tokens take turns.
			r.active = (r.active + 1) % len(r.tokens)
			r.mu.Unlock()
			return t, nil
		case st.remaining > 0:
			st.remaining--
			spacing = r.spacing(q)
		case r.allSpent(q):
			now := r.env.Now()
			if deadline.IsZero() {
				deadline = now.Add(r.maxWait)
			}
			left := deadline.Sub(now)
			soonest := time.Duration(math.MaxInt64)
			for _, tok := range r.tokens {
				soonest = min(soonest, r.states[tok][q.Name].reset.Sub(now))
			}
			if left <= 0 || soonest >= left {
				r.mu.Unlock()
				return "", fmt.Errorf("%s: the quota %q of every token is spent and the next reset is beyond max_wait_time (%s)",
					manifest.RateLimitedAuth, q.Name, r.maxWait)
			}
			wait = min(max(soonest, minResetWait), left)
		default:
			r.active = (r.active + 1) % len(r.tokens)
			r.mu.Unlock()
			continue
		}
		r.mu.Unlock()
		if wait > 0 {
			if r.env.Note != nil {
				r.env.Note(fmt.Sprintf("every token's quota %q is spent: waiting %s for the reset", q.Name, wait.Round(time.Second)))
			}
			r.env.log("INFO", "All tokens exhausted (quota: %s). Waiting %.0fs until rate limit resets.", q.Name, wait.Seconds())
			if err := r.waitReset(ctx, q, wait); err != nil {
				return "", err
			}
			if err := r.reseed(ctx, q); err != nil {
				return "", err
			}
			continue
		}
		if spacing >= minSpacing {
			r.mu.Lock()
			first := !r.spacingLogged
			r.spacingLogged = true
			r.mu.Unlock()
			if first {
				r.env.log("INFO", "API budget: throttling requests (%.1fs delay) for quota '%s'.", spacing.Seconds(), q.Name)
			}
			if err := r.env.sleep(ctx, spacing); err != nil {
				return "", err
			}
		}
		return t, nil
	}
}

// waitReset waits d for the reset of pool q, a minute at a time when somebody hears the
// log, with a line after each minute that says what is left, as the CDK's heartbeat does.
func (r *rateLimited) waitReset(ctx context.Context, q *manifest.Quota, d time.Duration) error {
	if r.env.Log == nil {
		return r.env.sleep(ctx, d)
	}
	for d > 0 {
		chunk := min(d, heartbeat)
		if err := r.env.sleep(ctx, chunk); err != nil {
			return err
		}
		if d -= chunk; d > 0 {
			r.env.log("INFO", "Rate limit exhausted (quota: %s). Waiting for reset — %.0fs remaining.", q.Name, d.Seconds())
		}
	}
	return nil
}

// allSpent reports that no token has a call left in pool q, and that every token's quota
// is tracked. Called with mu held.
func (r *rateLimited) allSpent(q *manifest.Quota) bool {
	for _, t := range r.tokens {
		if st := r.states[t][q.Name]; st.remaining > 0 || !st.tracked {
			return false
		}
	}
	return true
}

// spacing is the pause before a call of pool q once every token is within its reserve: the
// time to the active token's reset shared among the calls left, at most maxSpacing. Called
// with mu held.
func (r *rateLimited) spacing(q *manifest.Quota) time.Duration {
	var left int64
	for _, t := range r.tokens {
		st := r.states[t][q.Name]
		if !st.tracked || float64(st.remaining) > max(float64(r.minReserve), float64(st.limit)*r.fraction) {
			return 0
		}
		left += max(st.remaining, 0)
	}
	toReset := max(r.states[r.tokens[r.active]][q.Name].reset.Sub(r.env.Now()), 0)
	if left <= 0 || toReset <= 0 {
		return 0
	}
	return min(toReset/time.Duration(left), maxSpacing)
}

// seedOnce reads every token's quotas before the first call.
func (r *rateLimited) seedOnce(ctx context.Context) error {
	r.mu.Lock()
	done := r.states != nil
	r.mu.Unlock()
	if done {
		return nil
	}
	r.seedMu.Lock()
	defer r.seedMu.Unlock()
	r.mu.Lock()
	done = r.states != nil
	r.mu.Unlock()
	if done {
		return nil
	}
	return r.seed(ctx)
}

// reseed reads the quotas again after a wait, unless another call did meanwhile.
func (r *rateLimited) reseed(ctx context.Context, q *manifest.Quota) error {
	r.seedMu.Lock()
	defer r.seedMu.Unlock()
	r.mu.Lock()
	spent := r.allSpent(q)
	r.mu.Unlock()
	if !spent {
		return nil
	}
	return r.seed(ctx)
}

// seed asks the quota status endpoint for each token's quotas, in the order of the tokens,
// and replaces every counter with the answers. Called with seedMu held.
func (r *rateLimited) seed(ctx context.Context) error {
	states := make(map[string]map[string]*quotaState, len(r.tokens))
	for _, t := range r.tokens {
		if _, done := states[t]; done {
			continue
		}
		s, err := r.fetch(ctx, t)
		if err != nil {
			return err
		}
		states[t] = s
	}
	r.mu.Lock()
	r.states = states
	untracked := 0
	for _, pools := range states {
		for _, st := range pools {
			if !st.tracked {
				untracked++
				break
			}
		}
	}
	first := untracked > 0 && !r.untrackedLogged
	r.untrackedLogged = r.untrackedLogged || untracked > 0
	r.mu.Unlock()
	if first {
		r.logUntracked(untracked, len(states))
	}
	return nil
}

// logUntracked writes, once, the CDK's line for tokens whose quota the API does not track.
func (r *rateLimited) logUntracked(untracked, tokens int) {
	if untracked == tokens {
		r.env.log("INFO", "Quota status endpoint reports that rate limiting is unavailable. Token quotas are untracked: "+
			"the connector will not wait for quota resets, throttle proactively, or rotate tokens on exhaustion. "+
			"Responses that report a rate limit are still handled by the stream's error handler.")
		return
	}
	r.env.log("INFO", "Quota status endpoint reports that rate limiting is unavailable for %d of %d tokens. "+
		"Those tokens are used without quota tracking. The other %d keep proactive throttling until their counters "+
		"are locally spent, after which traffic moves onto the untracked tokens: the connector no longer waits for a "+
		"quota reset, so it never refreshes them.", untracked, tokens, tokens-untracked)
}

// fetch reads one token's quotas from the quota status endpoint.
func (r *rateLimited) fetch(ctx context.Context, t string) (map[string]*quotaState, error) {
	h := r.statusHeader.Clone()
	h.Set(r.header, r.value(t))
	req := &httpx.Request{Kind: "quota", Method: r.statusMethod, URL: r.statusURL, Header: h, Unpaced: true,
		Secret: map[string]bool{http.CanonicalHeaderKey(r.header): true}}
	resp, err := r.env.Client.Do(ctx, req)
	if resp != nil && r.unavailable[resp.Status] {
		out := map[string]*quotaState{}
		now := r.env.Now()
		for _, q := range r.quotas {
			out[q.Name] = &quotaState{reset: now}
		}
		return out, nil
	}
	if err != nil {
		return nil, r.env.redacted(statusMessage(manifest.RateLimitedAuth+" quota status request", err))
	}
	body, err := record.Decode(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: the quota status answer of %s is not JSON: %w", manifest.RateLimitedAuth, r.env.redact(r.statusURL), err)
	}
	out := map[string]*quotaState{}
	for _, q := range r.quotas {
		remaining, err := quotaNumber(body, q, q.RemainingPath, "remaining")
		if err != nil {
			return nil, err
		}
		resetV, err := quotaValue(body, q, q.ResetPath, "reset")
		if err != nil {
			return nil, err
		}
		reset, err := resetTime(resetV)
		if err != nil {
			return nil, fmt.Errorf("%s: the reset of the quota pool %q: %w", manifest.RateLimitedAuth, q.Name, err)
		}
		limit := remaining
		if q.LimitPath != nil {
			if limit, err = quotaNumber(body, q, q.LimitPath, "limit"); err != nil {
				return nil, err
			}
		}
		out[q.Name] = &quotaState{remaining: remaining, limit: limit, reset: reset, tracked: true}
	}
	return out, nil
}

// quotaValue is the value at path in a quota status answer.
func quotaValue(body any, q *manifest.Quota, path []string, what string) (any, error) {
	v := body
	for _, k := range path {
		o, ok := v.(*record.Object)
		if !ok {
			return nil, missingPath(q, path, what)
		}
		if v, ok = o.Get(k); !ok {
			return nil, missingPath(q, path, what)
		}
	}
	return v, nil
}

func missingPath(q *manifest.Quota, path []string, what string) error {
	return fmt.Errorf("%s: the quota status answer has nothing at the %s path [%s] of the quota pool %q",
		manifest.RateLimitedAuth, what, strings.Join(path, ", "), q.Name)
}

// quotaNumber is the integer at path (a number or a string of digits, as Python's int()).
func quotaNumber(body any, q *manifest.Quota, path []string, what string) (int64, error) {
	v, err := quotaValue(body, q, path, what)
	if err != nil {
		return 0, err
	}
	s, ok := scalarText(v)
	if !ok {
		s = fmt.Sprint(v)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, nil
	}
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		return int64(f), nil // int() of a float drops the fraction
	}
	return 0, fmt.Errorf("%s: the %s of the quota pool %q is %q, not a number", manifest.RateLimitedAuth, what, q.Name, s)
}

// scalarText is the text of a string (trimmed) or a number of a quota status answer; ok is
// false for anything else.
func scalarText(v any) (text string, ok bool) {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x), true
	case json.Number:
		return string(x), true
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), true
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

// resetTime reads a reset as the CDK's ab_datetime_parse does for the forms APIs send: epoch
// seconds (a number or a string of at most ten digits), an ISO 8601 date-time (T or space,
// Z or an offset, none meaning UTC), or a date.
func resetTime(v any) (time.Time, error) {
	s, ok := scalarText(v)
	if !ok {
		return time.Time{}, fmt.Errorf("%v is not a time", v)
	}
	if s != "" && strings.Trim(s, "0123456789") == "" {
		if len(s) > 10 {
			return time.Time{}, fmt.Errorf("the timestamp %s is too large", s)
		}
		n, _ := strconv.ParseInt(s, 10, 64)
		return time.Unix(n, 0).UTC(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time (epoch seconds or ISO 8601)", s)
}

// sender is the token req was signed with, if it is one of ours. Called with mu held.
func (r *rateLimited) sender(req *httpx.Request) (string, bool) {
	v := req.Header.Get(r.header)
	if v == "" {
		return "", false
	}
	if r.method != "" {
		rest, ok := strings.CutPrefix(v, r.method+" ")
		if !ok {
			return "", false
		}
		v = rest
	}
	v = strings.TrimSpace(v)
	_, ok := r.states[v]
	return v, ok
}

// Update corrects the sending token's counter of req's pool with the response's quota
// headers, when the pool names them: a newer reset starts the window again, a count of the
// same window only ever lowers the counter, and an exhaustion status without a count means
// nothing is left.
func (r *rateLimited) Update(req *httpx.Request, status int, header http.Header) {
	q := r.pool(req)
	if q.RemainingHeader == "" && q.ResetHeader == "" && q.LimitHeader == "" && len(q.ExhaustionStatuses) == 0 {
		return
	}
	exhausted := false
	for _, c := range q.ExhaustionStatuses {
		exhausted = exhausted || c == status
	}
	remaining, hasRemaining := headerInt(header, q.RemainingHeader)
	if !hasRemaining && exhausted {
		remaining, hasRemaining = 0, true
	}
	limit, hasLimit := headerInt(header, q.LimitHeader)
	var reset time.Time
	hasReset := false
	if q.ResetHeader != "" {
		if v := header.Get(q.ResetHeader); v != "" {
			if t, err := resetTime(v); err == nil {
				reset, hasReset = t, true
			}
		}
	}
	if !hasRemaining && !hasLimit && !hasReset {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.sender(req)
	if !ok {
		return
	}
	st := r.states[t][q.Name]
	if st == nil || !st.tracked {
		// Not counted: the quota status endpoint said the API keeps no quota for it.
		return
	}
	if hasLimit && limit > 0 && (!hasReset || !reset.Before(st.reset)) {
		st.limit = limit
	}
	switch {
	case hasReset && reset.After(st.reset):
		st.reset = reset
		if hasRemaining {
			st.remaining = remaining
		} else {
			st.remaining = st.limit
		}
	case hasRemaining && (remaining <= 0 && exhausted || !hasReset || !reset.Before(st.reset.Add(-resetSkew))):
		st.remaining = min(st.remaining, remaining)
	}
}

// headerInt is an integer response header; false when absent or not an integer.
func headerInt(h http.Header, name string) (int64, bool) {
	if name == "" {
		return 0, false
	}
	v := h.Get(name)
	if v == "" {
		return 0, false
	}
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	return n, err == nil
}

// Rotates reports that req was rate limited on a token whose pool is spent while another
// token still has calls in it: the retry goes at once with that token.
func (r *rateLimited) Rotates(req *httpx.Request) bool {
	q := r.pool(req)
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.sender(req)
	if !ok {
		return false
	}
	if st := r.states[t][q.Name]; !st.tracked || st.remaining > 0 {
		return false
	}
	for _, other := range r.tokens {
		if other != t && r.states[other][q.Name].remaining > 0 {
			return true
		}
	}
	return false
}

// sleep waits d, or until ctx ends (the client's Sleep in tests).
func (e Env) sleep(ctx context.Context, d time.Duration) error { return e.Client.Wait(ctx, d) }

var _ httpx.Signer = (*rateLimited)(nil)
