package diag

import (
	"fmt"
	"time"
)

// Duration words a duration for a person, in the unit that fits it: "870 µs", "12 ms",
// "4 s", "5.0 s", "2 min 30 s", "1 h 5 min". Whole seconds keep no decimal; other times
// under a minute keep one (a tenth is what a person compares). Every message of the program
// that shows a duration goes through it, never through time.Duration's own "1m0s".
func Duration(d time.Duration) string {
	if d < 0 {
		return "-" + Duration(-d)
	}
	switch {
	case d == 0:
		return "0 s"
	case d < time.Millisecond-500*time.Nanosecond:
		return fmt.Sprintf("%d µs", (d+500*time.Nanosecond)/time.Microsecond)
	case d < time.Second:
		ms := (d + 500*time.Microsecond) / time.Millisecond
		if ms < 1000 {
			return fmt.Sprintf("%d ms", ms)
		}
		return "1.0 s"
	case d < time.Minute:
		if d%time.Second == 0 {
			return fmt.Sprintf("%d s", d/time.Second)
		}
		tenths := (d + 50*time.Millisecond) / (100 * time.Millisecond)
		if tenths < 600 {
			return fmt.Sprintf("%d.%d s", tenths/10, tenths%10)
		}
		return "1 min"
	case d < time.Hour:
		s := (d + 500*time.Millisecond) / time.Second
		if s >= 3600 {
			return "1 h"
		}
		return unitPair(int64(s/60), "min", int64(s%60), "s")
	}
	m := (d + 30*time.Second) / time.Minute
	return unitPair(int64(m/60), "h", int64(m%60), "min")
}

func unitPair(big int64, bigUnit string, small int64, smallUnit string) string {
	if small == 0 {
		return fmt.Sprintf("%d %s", big, bigUnit)
	}
	return fmt.Sprintf("%d %s %d %s", big, bigUnit, small, smallUnit)
}
