package diag

import (
	"testing"
	"time"
)

func TestDuration(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0 s"},
		{870149 * time.Nanosecond, "870 µs"},
		{999999 * time.Nanosecond, "1 ms"},
		{12 * time.Millisecond, "12 ms"},
		{999700 * time.Microsecond, "1.0 s"},
		{4 * time.Second, "4 s"},
		{5002190948 * time.Nanosecond, "5.0 s"},
		{1500 * time.Millisecond, "1.5 s"},
		{59970 * time.Millisecond, "1 min"},
		{time.Minute, "1 min"},
		{150 * time.Second, "2 min 30 s"},
		{391 * time.Second, "6 min 31 s"},
		{time.Hour + 5*time.Minute + 10*time.Second, "1 h 5 min"},
		{2 * time.Hour, "2 h"},
		{-2 * time.Second, "-2 s"},
	} {
		if got := Duration(c.d); got != c.want {
			t.Errorf("Duration(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}
