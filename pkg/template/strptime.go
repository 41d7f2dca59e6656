package template

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode"
)

// strptime is Python's datetime.strptime, as its _strptime module does it: the format
// becomes one regular expression (each directive a named group, whitespace one or more
// whitespace characters, letters in any case), the input must match it from its start
// to its end, and the groups are then read and checked as Python checks them, with its
// messages. C locale, TZ=UTC (so %Z takes UTC and GMT), as Airbyte runs connectors.

// strptimeDirectives are the regular expressions of _strptime for each directive, with
// \d as Python means it (any Unicode decimal digit).
var strptimeDirectives = map[rune]string{
	'd': `(?P<d>3[0-1]|[1-2]\d|0[1-9]|[1-9]| [1-9])`,
	'f': `(?P<f>[0-9]{1,6})`,
	'H': `(?P<H>2[0-3]|[0-1]\d|\d)`,
	'I': `(?P<I>1[0-2]|0[1-9]|[1-9])`,
	'G': `(?P<G>\d\d\d\d)`,
	'j': `(?P<j>36[0-6]|3[0-5]\d|[1-2]\d\d|0[1-9]\d|00[1-9]|[1-9]\d|0[1-9]|[1-9])`,
	'm': `(?P<m>1[0-2]|0[1-9]|[1-9])`,
	'M': `(?P<M>[0-5]\d|\d)`,
	'S': `(?P<S>6[0-1]|[0-5]\d|\d)`,
	'U': `(?P<U>5[0-3]|[0-4]\d|\d)`,
	'W': `(?P<W>5[0-3]|[0-4]\d|\d)`,
	'w': `(?P<w>[0-6])`,
	'u': `(?P<u>[1-7])`,
	'V': `(?P<V>5[0-3]|0[1-9]|[1-4]\d|\d)`,
	'y': `(?P<y>\d\d)`,
	'Y': `(?P<Y>\d\d\d\d)`,
	'z': `(?P<z>[+-]\d\d:?[0-5]\d(:?[0-5]\d(\.\d{1,6})?)?|(?-i:Z))`,
	'A': `(?P<A>wednesday|thursday|saturday|tuesday|monday|friday|sunday)`,
	'a': `(?P<a>mon|tue|wed|thu|fri|sat|sun)`,
	'B': `(?P<B>september|february|november|december|january|october|august|march|april|june|july|may)`,
	'b': `(?P<b>jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)`,
	'p': `(?P<p>am|pm)`,
	'Z': `(?P<Z>utc|gmt)`,
	'%': `%`,
}

// strptimeComposites are the directives that stand for a format of the C locale.
var strptimeComposites = map[rune]string{'c': "%a %b %d %H:%M:%S %Y", 'x': "%m/%d/%y", 'X': "%H:%M:%S"}

// pySpaces is Python's \s: the characters str.isspace() takes.
const pySpaces = `[\t-\r\x{1c}-\x{20}\x{85}\x{a0}\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}]`

func isPySpace(r rune) bool { return unicode.IsSpace(r) || r >= 0x1c && r <= 0x1f }

// strptimeCache keeps the compiled expression of the formats used lately: a definition
// parses every record with the same few formats.
var strptimeCache = struct {
	sync.Mutex
	m map[string]*regexp.Regexp
}{m: map[string]*regexp.Regexp{}}

const strptimeCacheSize = 64

// strptimeRegexp compiles format as _strptime does, with its errors for a bad format.
func strptimeRegexp(format string) (*regexp.Regexp, error) {
	strptimeCache.Lock()
	re, ok := strptimeCache.m[format]
	strptimeCache.Unlock()
	if ok {
		return re, nil
	}
	seen := map[string]bool{}
	body, err := strptimePattern(format, format, seen)
	if err != nil {
		return nil, err
	}
	re, err = regexp.Compile(`(?i)\A(?:` + body + `)`)
	if err != nil {
		return nil, fmt.Errorf("format %s: %w", pyRepr(format), err)
	}
	strptimeCache.Lock()
	if len(strptimeCache.m) >= strptimeCacheSize {
		clear(strptimeCache.m)
	}
	strptimeCache.m[format] = re
	strptimeCache.Unlock()
	return re, nil
}

// strptimePattern writes the expression of format (whole, the one the user wrote, for
// messages); seen holds the names of the groups written so far.
func strptimePattern(format, whole string, seen map[string]bool) (string, error) {
	var b strings.Builder
	rs := []rune(format)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case isPySpace(r):
			for i+1 < len(rs) && isPySpace(rs[i+1]) {
				i++
			}
			b.WriteString(pySpaces + "+")
		case r == '%':
			if i+1 == len(rs) {
				return "", fmt.Errorf("stray %% in format '%s'", whole)
			}
			i++
			d := rs[i]
			if isPySpace(d) || strings.ContainsRune(`\.^$*+?(){}[]|`, d) {
				// Python escapes these before it looks for directives, so it sees a
				// backslash after the %, and names the % in its message.
				return "", fmt.Errorf("'%%' is a bad directive in format '%s'", whole)
			}
			if sub, ok := strptimeComposites[d]; ok {
				p, err := strptimePattern(sub, whole, seen)
				if err != nil {
					return "", err
				}
				b.WriteString(p)
				continue
			}
			p, ok := strptimeDirectives[d]
			if !ok {
				return "", fmt.Errorf("'%c' is a bad directive in format '%s'", d, whole)
			}
			if d != '%' {
				name := string(d)
				if seen[name] {
					return "", fmt.Errorf("redefinition of group name '%s' in format '%s'", name, whole)
				}
				seen[name] = true
			}
			b.WriteString(strings.ReplaceAll(p, `\d`, `\p{Nd}`))
		default:
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	return b.String(), nil
}

// strptime parses s as Python's datetime.strptime(s, format): a naive datetime, or an
// aware one when the format has %z.
func strptime(s, format string) (dtime, error) {
	re, err := strptimeRegexp(format)
	if err != nil {
		return dtime{}, err
	}
	m := re.FindStringSubmatchIndex(s)
	if m == nil {
		return dtime{}, fmt.Errorf("time data %s does not match format %s", pyRepr(s), pyRepr(format))
	}
	if m[1] != len(s) {
		return dtime{}, fmt.Errorf("unconverted data remains: %s", s[m[1]:])
	}
	var f strptimeFields
	f.month, f.day = 1, 1
	f.year, f.isoYear, f.isoWeek, f.weekOfYear, f.weekday, f.julian = -1, -1, -1, -1, -1, -1
	groups := map[string]string{}
	for i, name := range re.SubexpNames() {
		if name != "" && m[2*i] >= 0 {
			groups[name] = s[m[2*i]:m[2*i+1]]
		}
	}
	// Read the groups in the order they are written, as Python does: of two directives
	// for the same field, the later one counts.
	for i, name := range re.SubexpNames() {
		if name == "" || m[2*i] < 0 {
			continue
		}
		if err := f.read(name, groups[name], groups); err != nil {
			return dtime{}, err
		}
	}
	return f.datetime(groups["Z"])
}

// strptimeFields are what the groups say; -1 is "not given" where Python has None.
type strptimeFields struct {
	year, isoYear, month, day         int
	hour, minute, second, microsecond int
	weekday, julian                   int // weekday: Monday is 0
	weekOfYear                        int
	weekStartsMonday                  bool
	isoWeek                           int
	hasOffset                         bool
	offset                            int // seconds east of UTC
}

var (
	fullMonths = []string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}
	// pyWeekdays are the names from Monday, as Python's weekday() counts.
	pyWeekdays = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)

func (f *strptimeFields) read(name, v string, groups map[string]string) error {
	switch name {
	case "y":
		f.year = pyDigits(v)
		if f.year <= 68 {
			f.year += 2000
		} else {
			f.year += 1900
		}
	case "Y":
		f.year = pyDigits(v)
	case "G":
		f.isoYear = pyDigits(v)
	case "m":
		f.month = pyDigits(v)
	case "B", "b":
		for i, n := range fullMonths {
			if strings.EqualFold(v, n) || name == "b" && strings.EqualFold(v, n[:3]) {
				f.month = i + 1
			}
		}
	case "d":
		f.day = pyDigits(strings.TrimLeft(v, " "))
	case "H":
		f.hour = pyDigits(v)
	case "I":
		f.hour = pyDigits(v)
		switch strings.ToLower(groups["p"]) {
		case "", "am":
			if f.hour == 12 {
				f.hour = 0
			}
		case "pm":
			if f.hour != 12 {
				f.hour += 12
			}
		}
	case "M":
		f.minute = pyDigits(v)
	case "S":
		f.second = pyDigits(v)
	case "f":
		f.microsecond = pyDigits(v + strings.Repeat("0", 6-len(v)))
	case "A", "a":
		for i, n := range pyWeekdays {
			if strings.EqualFold(v, n) || name == "a" && strings.EqualFold(v, n[:3]) {
				f.weekday = i
			}
		}
	case "w":
		f.weekday = (pyDigits(v) + 6) % 7
	case "u":
		f.weekday = pyDigits(v) - 1
	case "j":
		f.julian = pyDigits(v)
	case "U", "W":
		f.weekOfYear = pyDigits(v)
		f.weekStartsMonday = name == "W"
	case "V":
		f.isoWeek = pyDigits(v)
	case "z":
		return f.readOffset(v)
	}
	return nil
}

// readOffset reads %z: Z, or ±HH[:]MM[[:]SS[.ffffff]], the colons used all or none.
func (f *strptimeFields) readOffset(v string) error {
	f.hasOffset = true
	if v == "Z" {
		f.offset = 0
		return nil
	}
	z := []rune(v)
	if z[3] == ':' {
		z = append(z[:3:3], z[4:]...)
		if len(z) > 5 {
			if z[5] != ':' {
				//lint:ignore ST1005 Python's own message, word for word
				return fmt.Errorf("Inconsistent use of : in %s", v)
			}
			z = append(z[:5:5], z[6:]...)
		}
	}
	hours, minutes := pyDigits(string(z[1:3])), pyDigits(string(z[3:5]))
	seconds := 0
	if len(z) > 5 {
		end := min(7, len(z))
		if !isDigitsOf(z[5:end]) {
			return fmt.Errorf("invalid literal for int() with base 10: %s", pyRepr(string(z[5:end])))
		}
		seconds = pyDigits(string(z[5:end]))
	}
	if len(z) > 8 && strings.Trim(string(z[8:]), "0") != "" {
		return errors.New("a UTC offset with a fraction of a second is not supported")
	}
	f.offset = hours*3600 + minutes*60 + seconds
	if z[0] == '-' {
		f.offset = -f.offset
	}
	return nil
}

func isDigitsOf(rs []rune) bool {
	for _, r := range rs {
		if !unicode.Is(unicode.Nd, r) {
			return false
		}
	}
	return len(rs) > 0
}

// datetime checks the fields as _strptime and the datetime constructor do and builds
// the result; zone is the text %Z matched, which names the zone of %z.
func (f *strptimeFields) datetime(zone string) (dtime, error) {
	switch {
	case f.year < 0 && f.isoYear >= 0:
		if f.isoWeek < 0 || f.weekday < 0 {
			//lint:ignore ST1005 Python's own message, word for word
			return dtime{}, errors.New("ISO year directive '%G' must be used with the ISO week directive '%V' and a weekday directive ('%A', '%a', '%w', or '%u').")
		}
		if f.julian >= 0 {
			//lint:ignore ST1005 Python's own message, word for word
			return dtime{}, errors.New("Day of the year directive '%j' is not compatible with ISO year directive '%G'. Use '%Y' instead.")
		}
	case f.weekOfYear < 0 && f.isoWeek >= 0:
		if f.weekday < 0 {
			//lint:ignore ST1005 Python's own message, word for word
			return dtime{}, errors.New("ISO week directive '%V' must be used with the ISO year directive '%G' and a weekday directive ('%A', '%a', '%w', or '%u').")
		}
		//lint:ignore ST1005 Python's own message, word for word
		return dtime{}, errors.New("ISO week directive '%V' is incompatible with the year directive '%Y'. Use the ISO year '%G' instead.")
	}
	year := f.year
	leapYearFix := false
	if year < 0 {
		year = 1900
		if f.month == 2 && f.day == 29 {
			year, leapYearFix = 1904, true // a leap year, for the computations
		}
	}
	month, day := f.month, f.day
	julian, hasJulian := f.julian, f.julian >= 0
	if !hasJulian && f.weekday >= 0 {
		switch {
		case f.weekOfYear >= 0:
			j, err := julianFromWeek(year, f.weekOfYear, f.weekday, f.weekStartsMonday)
			if err != nil {
				return dtime{}, err
			}
			julian, hasJulian = j, true
		case f.isoYear >= 0 && f.isoWeek >= 0:
			y, j, err := julianFromISOWeek(f.isoYear, f.isoWeek, f.weekday+1)
			if err != nil {
				return dtime{}, err
			}
			year, julian, hasJulian = y, j, true
		}
		if hasJulian && julian <= 0 {
			year--
			julian += 365
			if isLeap(year) {
				julian++
			}
		}
	}
	if hasJulian {
		if err := pyCheckDate(year, 1, 1); err != nil {
			return dtime{}, err
		}
		y, m, d, err := pyFromOrdinal(julian - 1 + pyOrdinal(year, 1, 1))
		if err != nil {
			return dtime{}, err
		}
		year, month, day = y, m, d
	} else if err := pyCheckDate(year, month, day); err != nil {
		return dtime{}, err
	}
	if leapYearFix {
		year = 1900
	}
	if err := pyCheckDate(year, month, day); err != nil {
		return dtime{}, err
	}
	if f.second > 59 {
		return dtime{}, errors.New("second must be in 0..59")
	}
	loc, kind := time.UTC, dtNaive
	if f.hasOffset {
		kind = dtAware
		if f.offset <= -86400 || f.offset >= 86400 {
			//lint:ignore ST1005 Python's own message, word for word
			return dtime{}, fmt.Errorf("offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not %s.", timedeltaRepr(f.offset))
		}
		if zone != "" || f.offset != 0 {
			loc = time.FixedZone(zone, f.offset)
		}
	}
	return dtime{t: time.Date(year, time.Month(month), day, f.hour, f.minute, f.second, f.microsecond*1000, loc), kind: kind}, nil
}

// julianFromWeek is the day of the year of a weekday (Monday 0) in week of the year
// (%U counts weeks from Sunday, %W from Monday); it may be 0 or less, in the year before.
func julianFromWeek(year, week, weekday int, startsMonday bool) (int, error) {
	if err := pyCheckDate(year, 1, 1); err != nil {
		return 0, err
	}
	first := pyWeekday(year, 1, 1)
	if !startsMonday {
		first = (first + 1) % 7
		weekday = (weekday + 1) % 7
	}
	if week == 0 {
		return 1 + weekday - first, nil
	}
	week0 := (7 - first) % 7
	return 1 + week0 + 7*(week-1) + weekday, nil
}

// julianFromISOWeek is the year and day of the year of an ISO year, week and weekday
// (Monday 1).
func julianFromISOWeek(isoYear, isoWeek, isoWeekday int) (int, int, error) {
	if err := pyCheckDate(isoYear, 1, 4); err != nil {
		return 0, 0, err
	}
	correction := pyWeekday(isoYear, 1, 4) + 1 + 3
	ordinal := isoWeek*7 + isoWeekday - correction
	if ordinal < 1 {
		ordinal += pyOrdinal(isoYear, 1, 1)
		isoYear--
		if err := pyCheckDate(isoYear, 1, 1); err != nil {
			return 0, 0, err
		}
		ordinal -= pyOrdinal(isoYear, 1, 1)
	}
	return isoYear, ordinal, nil
}

func isLeap(y int) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// pyCheckDate checks a date as Python's date() does, with its messages.
func pyCheckDate(y, m, d int) error {
	if y < 1 || y > 9999 {
		return fmt.Errorf("year %d is out of range", y)
	}
	if m < 1 || m > 12 {
		return errors.New("month must be in 1..12")
	}
	days := time.Date(y, time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
	if d < 1 || d > days {
		return errors.New("day is out of range for month")
	}
	return nil
}

// pyOrdinal is Python's date.toordinal(): 0001-01-01 is day 1.
func pyOrdinal(y, m, d int) int {
	epoch := time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	return int((time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Unix()-epoch)/86400) + 1
}

// pyFromOrdinal is Python's date.fromordinal().
func pyFromOrdinal(n int) (int, int, int, error) {
	if n < 1 {
		return 0, 0, 0, errors.New("ordinal must be >= 1")
	}
	t := time.Date(1, 1, n, 0, 0, 0, 0, time.UTC)
	if t.Year() > 9999 {
		return 0, 0, 0, fmt.Errorf("year %d is out of range", t.Year())
	}
	return t.Year(), int(t.Month()), t.Day(), nil
}

// pyWeekday is Python's date.weekday(): Monday is 0.
func pyWeekday(y, m, d int) int {
	return (int(time.Date(y, time.Month(m), d, 0, 0, 0, 0, time.UTC).Weekday()) + 6) % 7
}

// pyDigits reads a run of decimal digits of any script, as Python's int() does.
func pyDigits(s string) int {
	n := 0
	for _, r := range s {
		n = n*10 + digitValue(r)
	}
	return n
}

// digitValue is the value of a Unicode decimal digit: the digits of every script come in
// runs of ten from their zero, so it is the distance from the start of the run, mod 10.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return int(r-start) % 10
}

// timedeltaRepr is Python's repr of a timedelta of whole seconds.
func timedeltaRepr(secs int) string {
	days := divFloor(secs, 86400)
	rest := secs - days*86400
	var parts []string
	if days != 0 {
		parts = append(parts, fmt.Sprintf("days=%d", days))
	}
	if rest != 0 {
		parts = append(parts, fmt.Sprintf("seconds=%d", rest))
	}
	if len(parts) == 0 {
		return "datetime.timedelta(0)"
	}
	return "datetime.timedelta(" + strings.Join(parts, ", ") + ")"
}

// ParseTime parses s as the CDK's DatetimeParser.parse: "%s", "%s_as_float", "%ms" and
// "%epoch_microseconds" as the whole format are epoch values; "%_ms" in a format reads
// like %f; anything else is strptime. A value without a zone is UTC.
func ParseTime(s, format string) (time.Time, error) {
	switch format {
	case "%s", "%ms", "%epoch_microseconds":
		n, err := intLiteral(s)
		if err != nil {
			return time.Time{}, err
		}
		unit := map[string]int64{"%s": 1_000_000, "%ms": 1000, "%epoch_microseconds": 1}[format]
		if n > math.MaxInt64/unit || n < math.MinInt64/unit {
			return time.Time{}, errors.New("date value out of range")
		}
		us := n * unit
		sec := us / 1_000_000
		if us%1_000_000 < 0 {
			sec--
		}
		return inPythonRange(time.Unix(sec, (us-sec*1_000_000)*1000).UTC())
	case "%s_as_float":
		f, err := pyFloatOf(s)
		if err != nil {
			return time.Time{}, err
		}
		x, _ := f.(float64)
		return fromFloatTimestamp(x)
	}
	if strings.Contains(format, "%_ms") {
		format = strings.ReplaceAll(format, "%_ms", "%f")
	}
	d, err := strptime(s, format)
	if err != nil {
		return time.Time{}, err
	}
	t, _ := ToTime(d)
	return t, nil
}

// inPythonRange refuses a time outside the years 1 to 9999, as Python's datetime does.
func inPythonRange(t time.Time) (time.Time, error) {
	if t.Year() < 1 || t.Year() > 9999 {
		return time.Time{}, fmt.Errorf("year %d is out of range", t.Year())
	}
	return t, nil
}

// fromFloatTimestamp is Python's datetime.fromtimestamp(f, timezone.utc): the fraction is
// rounded to microseconds, half to even.
func fromFloatTimestamp(f float64) (time.Time, error) {
	if math.IsNaN(f) {
		//lint:ignore ST1005 Python's own message, word for word
		return time.Time{}, errors.New("Invalid value NaN (not a number)")
	}
	if math.IsInf(f, 0) || math.Abs(f) > 1e15 {
		return time.Time{}, errors.New("timestamp out of range for platform time_t")
	}
	sec, frac := math.Modf(f)
	us := math.RoundToEven(frac * 1e6)
	if us >= 1e6 {
		us -= 1e6
		sec++
	} else if us < 0 {
		us += 1e6
		sec--
	}
	return inPythonRange(time.Unix(int64(sec), int64(us)*1000).UTC())
}

// intLiteral is Python's int() of a string: spaces around, a sign, digits of any script with
// single underscores between them. int() strips Unicode white space but not the separators
// U+001C–U+001F that str.isspace() counts: Go's unicode.IsSpace is that set.
func intLiteral(s string) (int64, error) {
	t := strings.TrimFunc(s, unicode.IsSpace)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	bad := func() error { return fmt.Errorf("invalid literal for int() with base 10: %s", pyRepr(s)) }
	if t == "" || strings.HasPrefix(t, "_") || strings.HasSuffix(t, "_") || strings.Contains(t, "__") {
		return 0, bad()
	}
	var n int64
	for _, r := range t {
		if r == '_' {
			continue
		}
		if !unicode.Is(unicode.Nd, r) {
			return 0, bad()
		}
		d := int64(digitValue(r))
		if n > (math.MaxInt64-d)/10 {
			return 0, errors.New("date value out of range")
		}
		n = n*10 + d
	}
	if neg {
		n = -n
	}
	return n, nil
}
