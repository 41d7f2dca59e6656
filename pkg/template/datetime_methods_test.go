package template

import (
	"errors"
	"testing"
)

// The methods of datetime, date and timedelta values give Python's results (python3.11,
// with now_utc() at 2024-01-02T03:04:05.678901+00:00, a Tuesday).
func TestDatetimeMethodsArePythons(t *testing.T) {
	runCases(t, []evalCase{
		// quickbooks: now_utc().isoformat('T', 'seconds').
		{"{{ now_utc().isoformat('T', 'seconds') }}", "2024-01-02T03:04:05+00:00"},
		{"{{ now_utc().isoformat() }}", "2024-01-02T03:04:05.678901+00:00"},
		{"{{ now_utc().isoformat(' ') }}", "2024-01-02 03:04:05.678901+00:00"},
		{"{{ now_utc().isoformat(sep='x', timespec='seconds') }}", "2024-01-02x03:04:05+00:00"},
		{"{{ now_utc().isoformat(timespec='auto') }}", "2024-01-02T03:04:05.678901+00:00"},
		{"{{ now_utc().isoformat(timespec='hours') }}", "2024-01-02T03+00:00"},
		{"{{ now_utc().isoformat(timespec='minutes') }}", "2024-01-02T03:04+00:00"},
		{"{{ now_utc().isoformat(timespec='milliseconds') }}", "2024-01-02T03:04:05.678+00:00"},
		{"{{ now_utc().isoformat(timespec='microseconds') }}", "2024-01-02T03:04:05.678901+00:00"},
		// Milliseconds are truncated, not rounded; "auto" leaves out zero microseconds,
		// "microseconds" does not.
		{"{{ str_to_datetime('2024-01-02T03:04:05.000999Z').isoformat(timespec='milliseconds') }}", "2024-01-02T03:04:05.000+00:00"},
		{"{{ str_to_datetime('2024-01-02T03:04:05Z').isoformat() }}", "2024-01-02T03:04:05+00:00"},
		{"{{ str_to_datetime('2024-01-02T03:04:05Z').isoformat(' ', 'microseconds') }}", "2024-01-02 03:04:05.000000+00:00"},
		{"{{ today_utc().isoformat() }}", "2024-01-02"},
		{"{{ now_utc().weekday() }}", int64(1)},
		{"{{ now_utc().isoweekday() }}", int64(2)},
		{"{{ today_utc().weekday() }}", int64(1)},
		{"{{ str_to_datetime('2024-01-07').weekday() }}", int64(6)},
		{"{{ str_to_datetime('2024-01-07').isoweekday() }}", int64(7)},
		{"{{ now_utc().date().isoweekday() }}", int64(2)},
		{"{{ now_utc().timestamp() }}", 1704164645.678901},
		{"{{ now_utc().strftime('%Y-%m-%dT%H:%M:%SZ') }}", "2024-01-02T03:04:05Z"},
		{"{{ (now_utc() - str_to_datetime('2024-01-01')).total_seconds() }}", 97445.678901},
		{"{{ duration('-P1DT2S').total_seconds() }}", -86402.0},
		{"{{ duration('PT1H30M0.25S').total_seconds() }}", 5400.25},
		{"{{ config.missing.weekday() }}", Undefined},
	}, testVars())
}

func TestDatetimeMethodErrorsArePythons(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{"{{ now_utc().isoformat('T', 'bogus') }}", "Unknown timespec value"},
		{"{{ now_utc().isoformat('TT') }}", "isoformat() argument 1 must be a unicode character, not str"},
		{"{{ now_utc().isoformat(1) }}", "isoformat() argument 1 must be a unicode character, not int"},
		{"{{ now_utc().isoformat('T', 1) }}", "isoformat() argument 2 must be str, not int"},
		{"{{ today_utc().isoformat('T') }}", "date.isoformat() takes no arguments (1 given)"},
		// Python: AttributeError ('datetime.date' object has no attribute ...).
		{"{{ today_utc().date() }}", "'date' object has no attribute 'date'"},
		{"{{ today_utc().timestamp() }}", "'date' object has no attribute 'timestamp'"},
		{"{{ 'Monday'.weekday() }}", "'str' object has no attribute 'weekday'"},
		// duration('P1M') is an isodate Duration, which has no total_seconds().
		{"{{ duration('P1M').total_seconds() }}", "'Duration' object has no attribute 'total_seconds'"},
	} {
		tp, err := Compile(c.src, allVars)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		_, err = tp.Eval(fixedNow(testVars()))
		var e *Error
		if want := "evaluating `" + c.src + "`: " + c.msg; !errors.As(err, &e) || e.Msg != want {
			t.Errorf("Eval(%q) error = %v, want %q", c.src, err, want)
		}
	}
	if _, err := Compile("{{ now_utc().isoformat('T', 'seconds', 'x') }}", allVars); err == nil ||
		err.(*Error).Msg != "method `isoformat` takes at most 2 argument(s), got 3" {
		t.Errorf("three arguments: %v", err)
	}
}
