package template

import "time"

// Globals are what every template of one run reads besides its component's own variables:
// the testing values, as config, and the run's clock, which now_utc(), today_utc(),
// today_with_timezone() and day_delta() read. Each run has its own and hands them to its
// components, so that two runs in one process — a replay on its recording's clock beside a
// read on the machine's — each see their own time, even when they share one config map.
type Globals struct {
	Config map[string]any
	// Now is the run's clock; nil is the machine's.
	Now func() time.Time
}

// clockVar is the template variable that holds the run's clock. No template can name it (a
// name never starts with a NUL byte), so it is no template's variable; a map made by
// copying a run's variables carries it along.
const clockVar = "\x00clock"

// clock is the type of clockVar's value: nothing else stored under that name is taken for
// a clock.
type clock func() time.Time

// Vars returns new variables for a component's templates: config, the component's
// parameters (an empty map for nil) and the run's clock. The caller may add its own.
func (g Globals) Vars(params map[string]any) map[string]any {
	if params == nil {
		params = map[string]any{}
	}
	v := map[string]any{"config": g.Config, "parameters": params}
	if g.Now != nil {
		v[clockVar] = clock(g.Now)
	}
	return v
}

// Set puts config and the run's clock into vars, variables being built.
func (g Globals) Set(vars map[string]any) {
	vars["config"] = g.Config
	if g.Now != nil {
		vars[clockVar] = clock(g.Now)
	} else {
		delete(vars, clockVar)
	}
}

// now is the time for the template being evaluated: its run's clock, else the machine's.
func (fr *frame) now() time.Time {
	if now, ok := fr.vars[clockVar].(clock); ok {
		return now()
	}
	return time.Now()
}
