package template

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // today_with_timezone needs IANA zones on any host
)

type timeDuration = time.Duration

type dtKind uint8

const (
	dtAware dtKind = iota // a datetime with a UTC offset
	dtNaive               // a datetime without one
	dtDate                // a date
)

// dtime is a Python datetime or date.
type dtime struct {
	t    time.Time
	kind dtKind
}

func aware(t time.Time) dtime { return dtime{t: t, kind: dtAware} }

func (d dtime) typeName() string {
	if d.kind == dtDate {
		return "date"
	}
	return "datetime"
}

// String is Python str(): "2024-01-02 03:04:05+00:00", or "2024-01-02" for a date.
func (d dtime) String() string { return d.isoformat(" ") }

func (d dtime) repr() string { return "'" + d.String() + "'" }

func (d dtime) isoformat(sep string) string {
	s, _ := d.isoformatSpec(sep, "auto")
	return s
}

// isoformatSpec is Python's datetime.isoformat(sep, timespec): timespec "auto" shows the
// microseconds only when there are some; "hours", "minutes", "seconds", "milliseconds"
// (truncated, not rounded) and "microseconds" show the time to that unit. A date has no
// time to show.
func (d dtime) isoformatSpec(sep, timespec string) (string, error) {
	if d.kind == dtDate {
		return d.t.Format("2006-01-02"), nil
	}
	us := d.t.Nanosecond() / 1000
	var clock string
	switch timespec {
	case "auto":
		clock = d.t.Format("15:04:05")
		if us != 0 {
			clock += fmt.Sprintf(".%06d", us)
		}
	case "hours":
		clock = d.t.Format("15")
	case "minutes":
		clock = d.t.Format("15:04")
	case "seconds":
		clock = d.t.Format("15:04:05")
	case "milliseconds":
		clock = d.t.Format("15:04:05") + fmt.Sprintf(".%03d", us/1000)
	case "microseconds":
		clock = d.t.Format("15:04:05") + fmt.Sprintf(".%06d", us)
	default:
		//lint:ignore ST1005 Python's own message, word for word
		return "", errors.New("Unknown timespec value")
	}
	s := d.t.Format("2006-01-02") + sep + clock
	if d.kind == dtAware {
		s += offsetString(d.t, true)
	}
	return s, nil
}

// weekday is Python's weekday(): Monday is 0, Sunday 6.
func (d dtime) weekday() int64 { return int64(d.t.Weekday()+6) % 7 }

func offsetString(t time.Time, colon bool) string {
	_, off := t.Zone()
	sign := '+'
	if off < 0 {
		sign = '-'
		off = -off
	}
	h, m, s := off/3600, off/60%60, off%60
	sep := ""
	if colon {
		sep = ":"
	}
	out := fmt.Sprintf("%c%02d%s%02d", sign, h, sep, m)
	if s != 0 {
		out += fmt.Sprintf("%s%02d", sep, s)
	}
	return out
}

func (d dtime) attr(name string) any {
	switch name {
	case "year":
		return int64(d.t.Year())
	case "month":
		return int64(d.t.Month())
	case "day":
		return int64(d.t.Day())
	}
	if d.kind == dtDate {
		return Undefined
	}
	switch name {
	case "hour":
		return int64(d.t.Hour())
	case "minute":
		return int64(d.t.Minute())
	case "second":
		return int64(d.t.Second())
	case "microsecond":
		return int64(d.t.Nanosecond() / 1000)
	}
	return Undefined
}

// add adds sign*dur to d; a date only moves by whole days.
func (d dtime) add(dur duration, sign int) dtime {
	t := addMonths(d.t, sign*dur.months)
	if d.kind == dtDate {
		days := int(dur.d / (24 * time.Hour))
		if dur.d < 0 && dur.d%(24*time.Hour) != 0 {
			days--
		}
		return dtime{t: t.AddDate(0, 0, sign*days), kind: dtDate}
	}
	return dtime{t: t.Add(time.Duration(sign) * dur.d), kind: d.kind}
}

// duration is a Python timedelta, or an isodate Duration when months are involved.
type duration struct {
	months int
	d      time.Duration
}

func (d duration) approx() int64 { return int64(d.months)*30*24*int64(time.Hour) + int64(d.d) }

func (d duration) attr(name string) any {
	total := d.d
	days := int64(total / (24 * time.Hour))
	rem := total % (24 * time.Hour)
	if rem < 0 {
		days--
		rem += 24 * time.Hour
	}
	switch name {
	case "days":
		return days
	case "seconds":
		return int64(rem / time.Second)
	case "microseconds":
		return int64(rem % time.Second / time.Microsecond)
	}
	return Undefined
}

// String is Python str(timedelta): "1 day, 2:03:04".
func (d duration) String() string {
	days := d.attr("days").(int64)
	secs := d.attr("seconds").(int64)
	us := d.attr("microseconds").(int64)
	s := fmt.Sprintf("%d:%02d:%02d", secs/3600, secs/60%60, secs%60)
	if us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	if days != 0 {
		unit := "days"
		if days == 1 || days == -1 {
			unit = "day"
		}
		s = fmt.Sprintf("%d %s, %s", days, unit, s)
	}
	if d.months != 0 {
		s = fmt.Sprintf("%d months, %s", d.months, s)
	}
	return s
}

func (d duration) repr() string { return "'" + d.String() + "'" }

// parseISODuration reads an ISO 8601 duration such as P1D, PT1H30M, P1Y2M, -P1W.
func parseISODuration(s string) (duration, error) {
	bad := fmt.Errorf("unable to parse duration string %s", pyRepr(s))
	str := strings.TrimSpace(s)
	sign := 1.0
	if strings.HasPrefix(str, "-") {
		sign = -1
		str = str[1:]
	} else if strings.HasPrefix(str, "+") {
		str = str[1:]
	}
	if !strings.HasPrefix(str, "P") || len(str) < 2 {
		return duration{}, bad
	}
	str = str[1:]
	var out duration
	inTime := false
	any := false
	for len(str) > 0 {
		if str[0] == 'T' {
			if inTime {
				return duration{}, bad
			}
			inTime = true
			str = str[1:]
			continue
		}
		i := 0
		for i < len(str) && (str[i] >= '0' && str[i] <= '9' || str[i] == '.' || str[i] == ',') {
			i++
		}
		if i == 0 || i == len(str) {
			return duration{}, bad
		}
		n, err := strconv.ParseFloat(strings.ReplaceAll(str[:i], ",", "."), 64)
		if err != nil || n > 1e9 {
			return duration{}, bad
		}
		n *= sign
		unit := str[i]
		str = str[i+1:]
		any = true
		if !inTime {
			switch unit {
			case 'Y':
				out.months += int(n * 12)
			case 'M':
				out.months += int(n)
			case 'W':
				out.d += time.Duration(n * 7 * 24 * float64(time.Hour))
			case 'D':
				out.d += time.Duration(n * 24 * float64(time.Hour))
			default:
				return duration{}, bad
			}
		} else {
			switch unit {
			case 'H':
				out.d += time.Duration(n * float64(time.Hour))
			case 'M':
				out.d += time.Duration(n * float64(time.Minute))
			case 'S':
				out.d += time.Duration(math.Round(n * float64(time.Second)))
			default:
				return duration{}, bad
			}
		}
	}
	if !any {
		return duration{}, bad
	}
	return out, nil
}

var isoLayouts = []string{
	"2006-01-02",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999Z07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04",
	"2006-01-02T15Z07:00",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999Z0700",
	"2006-01-02 15:04:05.999999999 Z07:00",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02 15:04",
	"20060102T150405Z07:00",
	"20060102T150405",
	"20060102",
	"2006/01/02 15:04:05",
	"2006/01/02",
	"01/02/2006 15:04:05",
	"01/02/2006",
	time.RFC1123Z,
	time.RFC1123,
	time.RFC850,
	time.ANSIC,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Mon, 2 Jan 2006 15:04:05 MST",
	"2 Jan 2006 15:04:05",
	"2 Jan 2006",
	"Jan 2, 2006",
	"January 2, 2006",
	"2006-01",
	"2006",
}

// parseDatetime is Airbyte's lenient parse: unix timestamps, dates, ISO 8601
// and a few common forms; the result is aware, in UTC when no offset is given.
func parseDatetime(v any) (dtime, error) {
	switch x := v.(type) {
	case dtime:
		if x.kind != dtAware {
			x.kind = dtAware
		}
		return x, nil
	case string:
		s := strings.TrimSpace(x)
		if s == "" {
			break
		}
		if strings.HasPrefix(s, "-") {
			return dtime{}, fmt.Errorf("timestamp cannot be negative: %s", s)
		}
		if isDigits(strings.Replace(s[1:], ".", "", 1)) && isDigits(s[:1]) {
			if strings.Contains(s, ".") {
				f, err := strconv.ParseFloat(s, 64)
				if err == nil {
					return fromTimestamp(f)
				}
			} else if n, err := strconv.ParseInt(s, 10, 64); err == nil {
				return fromTimestamp(float64(n))
			}
		}
		for _, layout := range isoLayouts {
			t, err := time.Parse(layout, s)
			if err == nil {
				if !strings.Contains(layout, "Z07") && !strings.Contains(layout, "MST") && !strings.Contains(layout, "-0700") {
					t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
				}
				if _, off := t.Zone(); off == 0 {
					t = t.UTC()
				}
				return aware(t), nil
			}
		}
	case bool, nil, undefined:
	default:
		n, k := toNumber(v)
		if k != numNone {
			return fromTimestamp(n.float(k))
		}
	}
	switch {
	case IsUndefined(v):
		// The CDK's date functions use an undefined value, and Jinja raises UndefinedError.
		return dtime{}, undefinedErrorf("could not parse datetime string: %s", ToString(v))
	case v == nil:
		// and Python's date parsing takes no None: TypeError.
		return dtime{}, typeErrorf("could not parse datetime string: None")
	}
	return dtime{}, fmt.Errorf("could not parse datetime string: %s", ToString(v))
}

func fromTimestamp(f float64) (dtime, error) {
	if f < 0 {
		return dtime{}, errors.New("timestamp cannot be negative")
	}
	if f >= 1e10 {
		return dtime{}, errors.New("timestamp value too large")
	}
	sec := math.Floor(f)
	return aware(time.Unix(int64(sec), int64(math.Round((f-sec)*1e6))*1000).UTC()), nil
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// ToTime converts a datetime value produced by a template (or a time.Time)
// to a time.Time; a naive datetime or a date is taken as UTC.
func ToTime(v any) (time.Time, bool) {
	switch x := v.(type) {
	case dtime:
		if x.kind == dtAware {
			return x.t, true
		}
		t := x.t
		return time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC), true
	case time.Time:
		return x, true
	}
	return time.Time{}, false
}

// fromGoTime wraps a time.Time passed by a caller.
func fromGoTime(t time.Time) dtime { return aware(t) }

// Duration is an ISO 8601 duration as the CDK reads one (isodate): calendar months, and an
// exact part.
type Duration struct {
	Months int
	Exact  time.Duration
}

// ParseDuration reads an ISO 8601 duration: P1D, PT1H30M, P1M, P1Y2M, -P1W.
func ParseDuration(s string) (Duration, error) {
	d, err := parseISODuration(s)
	if err != nil {
		return Duration{}, err
	}
	return Duration{Months: d.months, Exact: d.d}, nil
}

// IsZero reports a duration of nothing.
func (d Duration) IsZero() bool { return d.Months == 0 && d.Exact == 0 }

// AddTo returns t + d; months move the calendar and keep the day, clamped to the month's last
// day (isodate: 2024-01-31 + P1M is 2024-02-29).
func (d Duration) AddTo(t time.Time) time.Time {
	return addMonths(t, d.Months).Add(d.Exact)
}

// SubFrom returns t − d.
func (d Duration) SubFrom(t time.Time) time.Time {
	return addMonths(t, -d.Months).Add(-d.Exact)
}

func addMonths(t time.Time, months int) time.Time {
	if months == 0 {
		return t
	}
	y, m, day := t.Date()
	total := int(m) - 1 + months
	y += divFloor(total, 12)
	m = time.Month(modFloor(total, 12) + 1)
	last := time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if day > last {
		day = last
	}
	h, mi, sec := t.Clock()
	return time.Date(y, m, day, h, mi, sec, t.Nanosecond(), t.Location())
}

// FormatTime formats t as the CDK's DatetimeParser.format does: "%s", "%ms", "%s_as_float"
// and "%epoch_microseconds" as the whole format are epoch values, anything else strftime
// (t is aware).
func FormatTime(t time.Time, format string) any {
	return formatDatetime(dtime{t: t, kind: dtAware}, format)
}
