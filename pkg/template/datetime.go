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
	if d.kind == dtDate {
		return d.t.Format("2006-01-02")
	}
	s := d.t.Format("2006-01-02") + sep + d.t.Format("15:04:05")
	if us := d.t.Nanosecond() / 1000; us != 0 {
		s += fmt.Sprintf(".%06d", us)
	}
	if d.kind == dtAware {
		s += offsetString(d.t, true)
	}
	return s
}

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
	t := d.t
	if dur.months != 0 {
		t = t.AddDate(0, sign*dur.months, 0)
	}
	if d.kind == dtDate {
		days := int(dur.d / (24 * time.Hour))
		if dur.d < 0 && dur.d%(24*time.Hour) != 0 {
			days--
		}
		return dtime{t: t.AddDate(0, 0, sign*days), kind: dtDate}
	}
	return dtime{t: t.Add(time.Duration(sign) * dur.d), kind: d.kind}
}

func (d dtime) timestamp() float64 {
	t := d.t
	if d.kind != dtAware {
		t = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), time.UTC)
	}
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
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

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime formats d with Python/glibc directives.
func strftime(d dtime, format string) string {
	var b strings.Builder
	t := d.t
	for i := 0; i < len(format) && b.Len() <= maxValue; i++ {
		c := format[i]
		if c != '%' || i+1 >= len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		c = format[i]
		noPad := false
		if c == '-' && i+1 < len(format) {
			noPad = true
			i++
			c = format[i]
		}
		num := func(v, width int) {
			s := strconv.Itoa(v)
			if !noPad {
				for len(s) < width {
					s = "0" + s
				}
			}
			b.WriteString(s)
		}
		switch c {
		case 'Y':
			num(t.Year(), 4)
		case 'y':
			num(t.Year()%100, 2)
		case 'm':
			num(int(t.Month()), 2)
		case 'd':
			num(t.Day(), 2)
		case 'e':
			fmt.Fprintf(&b, "%2d", t.Day())
		case 'H':
			num(t.Hour(), 2)
		case 'I':
			h := t.Hour() % 12
			if h == 0 {
				h = 12
			}
			num(h, 2)
		case 'M':
			num(t.Minute(), 2)
		case 'S':
			num(t.Second(), 2)
		case 'f':
			fmt.Fprintf(&b, "%06d", t.Nanosecond()/1000)
		case 'j':
			num(t.YearDay(), 3)
		case 'a':
			b.WriteString(weekdays[t.Weekday()][:3])
		case 'A':
			b.WriteString(weekdays[t.Weekday()])
		case 'w':
			num(int(t.Weekday()), 1)
		case 'u':
			w := int(t.Weekday())
			if w == 0 {
				w = 7
			}
			num(w, 1)
		case 'b', 'h':
			b.WriteString(months[t.Month()-1][:3])
		case 'B':
			b.WriteString(months[t.Month()-1])
		case 'p':
			if t.Hour() < 12 {
				b.WriteString("AM")
			} else {
				b.WriteString("PM")
			}
		case 'z':
			if d.kind == dtAware {
				b.WriteString(offsetString(t, false))
			}
		case 'Z':
			if d.kind == dtAware {
				name, off := t.Zone()
				switch {
				case t.Location() == time.UTC || (name == "UTC" && off == 0):
					b.WriteString("UTC")
				case name != "" && (name[0] < '0' || name[0] > '9') && name[0] != '+' && name[0] != '-':
					b.WriteString(name)
				default:
					b.WriteString("UTC" + offsetString(t, true))
				}
			}
		case 's':
			fmt.Fprintf(&b, "%d", int64(math.Floor(d.timestamp())))
		case 'F':
			b.WriteString(t.Format("2006-01-02"))
		case 'T':
			b.WriteString(t.Format("15:04:05"))
		case 'D':
			b.WriteString(t.Format("01/02/06"))
		case 'U':
			num((t.YearDay()+6-int(t.Weekday()))/7, 2)
		case 'W':
			num((t.YearDay()+6-(int(t.Weekday())+6)%7)/7, 2)
		case 'G':
			y, _ := t.ISOWeek()
			num(y, 4)
		case 'V':
			_, w := t.ISOWeek()
			num(w, 2)
		case 'c':
			b.WriteString(t.Format("Mon Jan  2 15:04:05 2006"))
		case 'x':
			b.WriteString(t.Format("01/02/06"))
		case 'X':
			b.WriteString(t.Format("15:04:05"))
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case '%':
			b.WriteByte('%')
		default:
			b.WriteByte('%')
			if noPad {
				b.WriteByte('-')
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// formatDatetime is Airbyte's format: "%s", "%ms" and "%s_as_float" as a whole
// format are epoch values; anything else is strftime.
func formatDatetime(d dtime, format string) any {
	switch format {
	case "%s":
		return strconv.FormatInt(int64(math.Floor(d.timestamp())), 10)
	case "%ms":
		return strconv.FormatInt(int64(math.Floor(d.timestamp()*1000)), 10)
	case "%s_as_float":
		return pyFloat(d.timestamp())
	}
	return strftime(d, format)
}

// strptime parses s with a Python format; a value without %z is naive.
func strptime(s, format string) (dtime, error) {
	bad := fmt.Errorf("time data %s does not match format %s", pyRepr(s), pyRepr(format))
	year, month, day, hour, minute, sec, nsec := 1900, 1, 1, 0, 0, 0, 0
	var loc *time.Location
	pm, hasPM, yday := false, false, 0
	pos := 0
	readNum := func(maxLen int) (int, bool) {
		start := pos
		neg := false
		if pos < len(s) && (s[pos] == '-' || s[pos] == '+') && maxLen > 4 {
			neg = s[pos] == '-'
			pos++
		}
		d0 := pos
		for pos < len(s) && pos-d0 < maxLen && s[pos] >= '0' && s[pos] <= '9' {
			pos++
		}
		if pos == d0 {
			pos = start
			return 0, false
		}
		n, _ := strconv.Atoi(s[d0:pos])
		if neg {
			n = -n
		}
		return n, true
	}
	readName := func(names []string) (int, bool) {
		for i, n := range names {
			for _, cand := range []string{n, n[:3]} {
				if len(s)-pos >= len(cand) && strings.EqualFold(s[pos:pos+len(cand)], cand) {
					pos += len(cand)
					return i, true
				}
			}
		}
		return 0, false
	}
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c == ' ' {
			for pos < len(s) && s[pos] == ' ' {
				pos++
			}
			continue
		}
		if c != '%' || i+1 >= len(format) {
			if pos >= len(s) || s[pos] != c {
				return dtime{}, bad
			}
			pos++
			continue
		}
		i++
		c = format[i]
		if c == '-' && i+1 < len(format) {
			i++
			c = format[i]
		}
		var ok bool
		switch c {
		case 'Y':
			year, ok = readNum(4)
		case 'y':
			year, ok = readNum(2)
			if year < 69 {
				year += 2000
			} else {
				year += 1900
			}
		case 'm':
			month, ok = readNum(2)
		case 'd', 'e':
			day, ok = readNum(2)
		case 'H':
			hour, ok = readNum(2)
		case 'I':
			hour, ok = readNum(2)
		case 'M':
			minute, ok = readNum(2)
		case 'S':
			sec, ok = readNum(2)
		case 'j':
			yday, ok = readNum(3)
		case 'f':
			start := pos
			var n int
			n, ok = readNum(6)
			for k := pos - start; k < 9; k++ {
				n *= 10
			}
			nsec = n
		case 'p':
			if len(s)-pos >= 2 {
				switch strings.ToUpper(s[pos : pos+2]) {
				case "AM":
					ok, hasPM = true, true
				case "PM":
					ok, hasPM, pm = true, true, true
				}
				pos += 2
			}
		case 'b', 'B', 'h':
			var m int
			m, ok = readName(months)
			month = m + 1
		case 'a', 'A':
			_, ok = readName(weekdays)
		case 'z':
			if pos < len(s) && (s[pos] == 'Z' || s[pos] == 'z') {
				pos++
				loc, ok = time.UTC, true
				break
			}
			if pos < len(s) && (s[pos] == '+' || s[pos] == '-') {
				sign := 1
				if s[pos] == '-' {
					sign = -1
				}
				pos++
				h, ok1 := readNum(2)
				if pos < len(s) && s[pos] == ':' {
					pos++
				}
				m, ok2 := readNum(2)
				if ok1 && ok2 {
					loc, ok = time.FixedZone("", sign*(h*3600+m*60)), true
					if h == 0 && m == 0 {
						loc = time.UTC
					}
				}
			}
		case 'Z':
			start := pos
			for pos < len(s) && (s[pos] >= 'A' && s[pos] <= 'Z') {
				pos++
			}
			ok = pos > start
			if s[start:pos] == "UTC" || s[start:pos] == "GMT" {
				loc = time.UTC
			}
		case 's':
			var n int
			n, ok = readNum(12)
			if ok && pos == len(s) && i == len(format)-1 {
				return aware(time.Unix(int64(n), 0).UTC()), nil
			}
		case '%':
			ok = pos < len(s) && s[pos] == '%'
			pos++
		default:
			return dtime{}, fmt.Errorf("bad directive %s in format %s", pyRepr("%"+string(c)), pyRepr(format))
		}
		if !ok {
			return dtime{}, bad
		}
	}
	if pos != len(s) {
		return dtime{}, fmt.Errorf("unconverted data remains: %s", s[pos:])
	}
	if hasPM {
		hour %= 12
		if pm {
			hour += 12
		}
	}
	if month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || sec > 61 {
		return dtime{}, bad
	}
	kind := dtAware
	if loc == nil {
		kind, loc = dtNaive, time.UTC
	}
	t := time.Date(year, time.Month(month), day, hour, minute, sec, nsec, loc)
	if yday > 0 {
		t = time.Date(year, 1, 1, hour, minute, sec, nsec, loc).AddDate(0, 0, yday-1)
	}
	if t.Day() != day && yday == 0 {
		return dtime{}, errors.New("day is out of range for month")
	}
	return dtime{t: t, kind: kind}, nil
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

var nowFunc = time.Now

// ParseTime parses s with a Python strptime-style format (`%Y-%m-%dT%H:%M:%SZ`, `%s` for epoch
// seconds, …), the way datetime values of templates are parsed; a value without a zone is UTC.
func ParseTime(s, format string) (time.Time, error) {
	if format == "%s" {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("time data %s is not a number of seconds", pyRepr(s))
		}
		return time.Unix(n, 0).UTC(), nil
	}
	d, err := strptime(s, format)
	if err != nil {
		return time.Time{}, err
	}
	t, _ := ToTime(d)
	return t, nil
}
