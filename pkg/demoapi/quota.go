package demoapi

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// The area "quota" takes any of three Bearer tokens, each with its own call quota per
// window, as an API with per-token rate limits does (GitHub's, for one): every request
// answered costs its token one call and tells what is left in X-RateLimit-* headers; a
// token with nothing left is refused with 429 until the window ends. GET
// /v1/quota/rate_limit tells a token's quota without costing a call. Windows start at the
// first request of the area (its second) and last Options.QuotaWindow.

// DemoQuotaTokens are the tokens of the area "quota", and DemoQuotaLimits their calls per
// window, in the same order.
var (
	DemoQuotaTokens = []string{"demo-quota-token-1", "demo-quota-token-2", "demo-quota-token-3"}
	DemoQuotaLimits = []int{2, 3, 5}
)

// DefaultQuotaWindow is how long a quota window of the area "quota" lasts.
const DefaultQuotaWindow = time.Minute

func init() {
	areas["quota"] = checkQuotaToken
}

// quotaLimit is the token's calls per window; false for a token that is not one of
// DemoQuotaTokens.
func quotaLimit(token string) (int, bool) {
	for i, t := range DemoQuotaTokens {
		if same(token, t) {
			return DemoQuotaLimits[i], true
		}
	}
	return 0, false
}

// checkQuotaToken accepts the tokens of the area; the call was charged already (quota).
func checkQuotaToken(_ *Server, r *http.Request, _ *request) *apiError {
	token, ok := bearer(r)
	if !ok {
		return unauthorized("missing Authorization: Bearer header")
	}
	if _, ok := quotaLimit(token); !ok {
		return unauthorized("invalid token: use one of demo-quota-token-1, -2 or -3")
	}
	return nil
}

// quotaWindow is the reset time of the current window and the calls token made in it.
// Called with s.mu held.
func (s *Server) quotaWindow(token string) (reset time.Time, used int) {
	now := s.opts.Now()
	if s.quotaStart.IsZero() {
		// Whole seconds, so that the reset sent as epoch seconds is the window's end exactly.
		s.quotaStart = now.Truncate(time.Second)
	}
	window := s.opts.QuotaWindow
	if window <= 0 {
		window = DefaultQuotaWindow
	}
	k := now.Sub(s.quotaStart) / window
	reset = s.quotaStart.Add((k + 1) * window)
	if s.quotaUsed == nil || !s.quotaReset.Equal(reset) {
		s.quotaUsed, s.quotaReset = map[string]int{}, reset
	}
	return reset, s.quotaUsed[token]
}

// quota serves /v1/quota/…: the quota status, or a data request charged to its token
// (refused with 429 once the token's quota is spent) and then answered as in any area.
func (s *Server) quota(w *recorder, r *http.Request) {
	token, ok := bearer(r)
	limit, known := quotaLimit(token)
	if !ok || !known {
		if err := checkQuotaToken(s, r, nil); err != nil {
			err.write(w)
		}
		return
	}
	s.mu.Lock()
	reset, used := s.quotaWindow(token)
	status := r.URL.Path == "/v1/quota/rate_limit"
	refused := !status && used >= limit
	if !status && !refused {
		used++
		s.quotaUsed[token] = used
	}
	now := s.opts.Now()
	s.mu.Unlock()
	if status {
		writeJSON(w, http.StatusOK, map[string]any{"resources": map[string]any{"core": map[string]any{
			"limit": limit, "remaining": limit - used, "reset": reset.Unix(), "used": used}}})
		return
	}
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(limit-used))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if refused {
		h.Set("Retry-After", strconv.Itoa(max(int(reset.Sub(now).Seconds()), 1)))
		writeError(w, http.StatusTooManyRequests, "rate_limited",
			fmt.Sprintf("the quota of this token (%d calls) is spent until %s", limit, reset.UTC().Format(time.RFC3339)))
		return
	}
	s.data(w, r)
}
