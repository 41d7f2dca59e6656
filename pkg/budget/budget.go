// Package budget paces the requests of a run by the definition's api_budget
// (HTTPAPIBudget), as the Airbyte CDK does: a request goes under the first policy whose
// matchers it matches (a request no policy matches is not paced), waits until that
// policy's windows have room, and the rate-limit headers of its response adjust the
// policy. Requests are paced, never refused. One Budget serves every request of a run:
// every stream, slice, parent stream and session login (OAuth token requests go outside
// it, as in the CDK).
package budget

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"connector/pkg/httpx"
	"connector/pkg/manifest"
	"connector/pkg/template"
)

// Budget is an api_budget ready for one run. It is an httpx.Pacer.
type Budget struct {
	policies      []*policy
	reset, left   string
	limitStatuses []int
	now           func() time.Time
	sleep         func(ctx context.Context, d time.Duration) error
	mu            sync.Mutex
	waits         map[string]*Total
	// OnWait, when set, hears every wait before it starts: the request held back, how long
	// and for which policy. Set it before the first request.
	OnWait func(req *httpx.Request, d time.Duration, policy string)
}

// Total is what the budget held back the requests of one stream's read.
type Total struct {
	Wait     time.Duration
	Requests int      // the attempts that waited
	Policies []string // the policies that held them, in the order first met
}

// policy is one call rate policy with its counters.
type policy struct {
	name     string
	def      *manifest.CallRatePolicy
	weights  []int // the weight of each matcher
	mu       sync.Mutex
	fixed    *fixedWindow
	moving   *movingWindow
	smallest int // the smallest limit: a weight above it could never go
}

// New makes the budget of a run: the templates of its limits and weights are rendered
// with g, the run's testing values and their clock. now and sleep are the run's clock and
// way of waiting (nil: the real ones).
func New(def *manifest.APIBudget, g template.Globals, now func() time.Time, sleep func(ctx context.Context, d time.Duration) error) (*Budget, error) {
	b := &Budget{reset: def.ResetHeader, left: def.RemainingHeader, limitStatuses: def.LimitStatuses,
		now: now, sleep: sleep, waits: map[string]*Total{}}
	if b.now == nil {
		b.now = time.Now
	}
	if b.sleep == nil {
		b.sleep = sleepCtx
	}
	vars := g.Vars(nil)
	for i, pd := range def.Policies {
		where := fmt.Sprintf("api_budget.policies[%d]", i)
		p := &policy{def: pd}
		switch pd.Type {
		case manifest.FixedWindowPolicy:
			p.fixed = &fixedWindow{limit: pd.CallLimit, period: pd.Period}
			p.smallest = pd.CallLimit
			p.name = fmt.Sprintf("policy %d (%s: %s per %s)", i+1, pd.Type, calls(pd.CallLimit), pd.PeriodText)
		case manifest.MovingWindowPolicy:
			if len(pd.Rates) == 0 {
				return nil, fmt.Errorf("%s: a MovingWindowCallRatePolicy needs at least one rate", where)
			}
			var rates []rate
			var text []string
			for j, r := range pd.Rates {
				limit, err := positive(r.Limit, vars, fmt.Sprintf("%s.rates[%d].limit", where, j))
				if err != nil {
					return nil, err
				}
				rates = append(rates, rate{limit: limit, interval: r.Interval.Milliseconds()})
				text = append(text, fmt.Sprintf("%s per %s", calls(limit), r.IntervalText))
				if p.smallest == 0 || limit < p.smallest {
					p.smallest = limit
				}
			}
			p.moving = newMovingWindow(rates)
			p.name = fmt.Sprintf("policy %d (%s: %s)", i+1, pd.Type, strings.Join(text, ", "))
		default:
			p.name = fmt.Sprintf("policy %d (%s)", i+1, pd.Type)
		}
		for j, m := range pd.Matchers {
			w := 1
			if m.Weight != nil {
				var err error
				at := fmt.Sprintf("%s.matchers[%d].weight", where, j)
				if w, err = positive(m.Weight, vars, at); err != nil {
					return nil, err
				}
				if p.smallest > 0 && w > p.smallest {
					return nil, fmt.Errorf("%s: a weight of %d is more than the %d calls %s allows: such a request could never go", at, w, p.smallest, p.name)
				}
			}
			p.weights = append(p.weights, w)
		}
		b.policies = append(b.policies, p)
	}
	return b, nil
}

func calls(n int) string {
	if n == 1 {
		return "1 call"
	}
	return fmt.Sprintf("%d calls", n)
}

// positive renders an integer template that must be 1 or more.
func positive(t *template.Template, vars map[string]any, where string) (int, error) {
	s, err := t.Render(vars)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", where, err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%s: %q is not an integer", where, s)
	}
	if n < 1 {
		return 0, fmt.Errorf("%s: must be at least 1, not %d", where, n)
	}
	return n, nil
}

// match is the first policy that matches req, with the weight of the request under it.
func (b *Budget) match(req *httpx.Request) (*policy, int) {
	t, ok := newTarget(req.Method, req.URL, req.Header)
	if !ok {
		return nil, 0
	}
	for _, p := range b.policies {
		if len(p.def.Matchers) == 0 {
			return p, 1
		}
		for i, m := range p.def.Matchers {
			if matches(m, t) {
				return p, p.weights[i]
			}
		}
	}
	return nil, 0
}

// Acquire waits until req may go under its policy.
func (b *Budget) Acquire(ctx context.Context, req *httpx.Request) (httpx.Pace, error) {
	p, weight := b.match(req)
	if p == nil || (p.fixed == nil && p.moving == nil) {
		return httpx.Pace{}, nil
	}
	var waited time.Duration
	for {
		p.mu.Lock()
		var wait time.Duration
		if p.fixed != nil {
			wait = p.fixed.take(b.now(), weight)
		} else {
			wait = p.moving.take(b.now(), weight)
		}
		p.mu.Unlock()
		if wait <= 0 {
			break
		}
		if b.OnWait != nil {
			b.OnWait(req, wait, p.name)
		}
		if err := b.sleep(ctx, wait); err != nil {
			return httpx.Pace{Wait: waited, Policy: p.name}, err
		}
		waited += wait
	}
	if waited == 0 {
		return httpx.Pace{}, nil
	}
	b.mu.Lock()
	t := b.waits[req.Read]
	if t == nil {
		t = &Total{}
		b.waits[req.Read] = t
	}
	t.Wait += waited
	t.Requests++
	known := false
	for _, n := range t.Policies {
		known = known || n == p.name
	}
	if !known {
		t.Policies = append(t.Policies, p.name)
	}
	b.mu.Unlock()
	return httpx.Pace{Wait: waited, Policy: p.name}, nil
}

// Update reads the calls left and the reset time from a response (HttpAPIBudget's
// headers): a number of calls, an epoch second. A status of status_codes_for_ratelimit_hit
// without the calls-left header means none is left. A value that is not an integer is
// ignored (the CDK fails the read on it).
func (b *Budget) Update(req *httpx.Request, status int, header http.Header) {
	p, _ := b.match(req)
	if p == nil || (p.fixed == nil && p.moving == nil) {
		return
	}
	var remaining *int
	if v := strings.TrimSpace(header.Get(b.left)); v != "" {
		if n, err := strconv.Atoi(v); err == nil {
			remaining = &n
		}
	} else {
		for _, s := range b.limitStatuses {
			if s == status {
				zero := 0
				remaining = &zero
			}
		}
	}
	var reset *time.Time
	if v := strings.TrimSpace(header.Get(b.reset)); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil {
			t := time.Unix(n, 0)
			reset = &t
		}
	}
	if remaining == nil && reset == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fixed != nil {
		p.fixed.update(b.now(), remaining, reset)
	} else {
		p.moving.update(b.now(), remaining, reset)
	}
}

// Waited is how long the requests of the read of stream waited, if they did.
func (b *Budget) Waited(stream string) (Total, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t := b.waits[stream]
	if t == nil {
		return Total{}, false
	}
	return Total{Wait: t.Wait, Requests: t.Requests, Policies: append([]string(nil), t.Policies...)}, true
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
