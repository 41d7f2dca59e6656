package template

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Python's datetime.strftime on Linux is two steps: Python replaces %z, %Z and %f itself,
// then hands the rest to the C library's strftime (glibc) with the wall-clock fields. The
// code below does the same two steps, in the C locale and with TZ=UTC, as Airbyte runs
// connectors. testdata/strftime/python.json holds Python's answers for every directive;
// TestPythonDatetimeOracle compares.

var (
	weekdays = []string{"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"}
	months   = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}
)

// strftime formats d as Python's d.strftime(format).
func strftime(d dtime, format string) string {
	return glibcStrftime(d, pythonSubstitutions(d, format))
}

// pythonSubstitutions replaces %z, %Z and %f the way Python does before calling the C
// library: only right after a %, and a %% pair is kept as it is. A naive datetime or a
// date has an empty %z and %Z.
func pythonSubstitutions(d dtime, format string) string {
	if !strings.Contains(format, "%z") && !strings.Contains(format, "%Z") && !strings.Contains(format, "%f") {
		return format
	}
	var b strings.Builder
	b.Grow(len(format) + 8)
	for i := 0; i < len(format); i++ {
		c := format[i]
		if c != '%' || i+1 == len(format) {
			b.WriteByte(c)
			continue
		}
		i++
		switch format[i] {
		case 'z':
			if d.kind == dtAware {
				b.WriteString(offsetString(d.t, false))
			}
		case 'Z':
			if d.kind == dtAware {
				b.WriteString(strings.ReplaceAll(zoneName(d.t), "%", "%%"))
			}
		case 'f':
			if d.kind == dtDate {
				b.WriteString("000000")
			} else {
				fmt.Fprintf(&b, "%06d", d.t.Nanosecond()/1000)
			}
		default:
			b.WriteByte('%')
			b.WriteByte(format[i])
		}
	}
	return b.String()
}

// zoneName is Python's tzname() of the zone of an aware datetime: UTC, the name the zone
// was given, or UTC±HH:MM[:SS] for an offset without a name.
func zoneName(t time.Time) string {
	name, off := t.Zone()
	switch {
	case t.Location() == time.UTC || (name == "UTC" && off == 0):
		return "UTC"
	case name != "" && (name[0] < '0' || name[0] > '9') && name[0] != '+' && name[0] != '-':
		return name
	}
	return "UTC" + offsetString(t, true)
}

// maxStrftime bounds the buffer of one strftime, where Python's grows with the format
// (256 bytes of output for each byte of format): a longer result is refused as too large.
const maxStrftime = maxValue

// strftimeFlags are glibc's flags between % and the conversion.
type strftimeFlags struct {
	pad   byte // 0, '_' (spaces), '-' (no padding) or '0' (zeros)
	upper bool // ^
	swap  bool // #
	width int  // -1 when none is written
}

// glibcStrftime is glibc's strftime in the C locale with TZ=UTC, given the fields Python
// passes (the wall clock, and no daylight-saving flag, so %z and %Z print nothing). Like
// Python, it gives "" when the result is longer than Python's buffer for the format.
func glibcStrftime(d dtime, format string) string {
	python := 1024
	for python < 256*len(format) {
		python *= 2
	}
	limit := min(python, maxStrftime+1)
	out := glibcFormat(d, format, limit)
	if len(out)+1 > limit && limit == python {
		return ""
	}
	// Past connector's own limit the result is returned as it is, longer than a template
	// value may be, and refused by the caller with the limit's message.
	return out
}

func glibcFormat(d dtime, format string, limit int) string {
	var b strings.Builder
	b.Grow(len(format) + 16)
	t := d.t
	for i := 0; i < len(format) && b.Len() <= limit; i++ {
		if format[i] != '%' {
			b.WriteByte(format[i])
			continue
		}
		start := i
		i++
		var fl strftimeFlags
		fl.width = -1
		for ; i < len(format); i++ {
			switch c := format[i]; c {
			case '_', '-', '0':
				fl.pad = c
				continue
			case '^':
				fl.upper = true
				continue
			case '#':
				fl.swap = true
				continue
			}
			break
		}
		for ; i < len(format) && format[i] >= '0' && format[i] <= '9'; i++ {
			if fl.width < 0 {
				fl.width = 0
			}
			// A width past the buffer gives "" anyway; stop counting there.
			fl.width = min(fl.width*10+int(format[i]-'0'), limit+1)
		}
		var modifier byte
		if i < len(format) && (format[i] == 'E' || format[i] == 'O') {
			modifier = format[i]
			i++
		}
		if i >= len(format) {
			b.WriteString(format[start:])
			break
		}
		conv := format[i]
		if !modifierAllowed(modifier, conv) {
			padString(&b, format[start:i+1], fl)
			continue
		}
		num := func(v int64, natural int, spaces bool) { padNumber(&b, v, natural, spaces, fl) }
		str := func(s string) { padString(&b, s, fl) }
		sub := func(layout string) {
			s := glibcFormat(d, layout, limit)
			if fl.upper {
				s = strings.ToUpper(s)
			}
			str(s)
		}
		switch conv {
		case 'a':
			str(caseOf(weekdays[t.Weekday()][:3], fl, true))
		case 'A':
			str(caseOf(weekdays[t.Weekday()], fl, true))
		case 'b', 'h':
			str(caseOf(months[t.Month()-1][:3], fl, true))
		case 'B':
			str(caseOf(months[t.Month()-1], fl, true))
		case 'p':
			ampm := "AM"
			if t.Hour() >= 12 {
				ampm = "PM"
			}
			if fl.swap {
				ampm = strings.ToLower(ampm)
			}
			str(ampm)
		case 'P':
			if t.Hour() >= 12 {
				str("pm")
			} else {
				str("am")
			}
		case 'C':
			num(int64(divFloor(t.Year(), 100)), 0, false)
		case 'y':
			num(int64(modFloor(t.Year(), 100)), 2, false)
		case 'Y':
			num(int64(t.Year()), 0, false)
		case 'G':
			y, _ := t.ISOWeek()
			num(int64(y), 0, false)
		case 'g':
			y, _ := t.ISOWeek()
			num(int64(modFloor(y, 100)), 2, false)
		case 'V':
			_, w := t.ISOWeek()
			num(int64(w), 2, false)
		case 'm':
			num(int64(t.Month()), 2, false)
		case 'd':
			num(int64(t.Day()), 2, false)
		case 'e':
			num(int64(t.Day()), 2, true)
		case 'j':
			num(int64(t.YearDay()), 3, false)
		case 'H':
			num(int64(t.Hour()), 2, false)
		case 'k':
			num(int64(t.Hour()), 2, true)
		case 'I':
			num(int64(hour12(t.Hour())), 2, false)
		case 'l':
			num(int64(hour12(t.Hour())), 2, true)
		case 'M':
			num(int64(t.Minute()), 2, false)
		case 'S':
			num(int64(t.Second()), 2, false)
		case 'u':
			num(int64((int(t.Weekday())+6)%7+1), 1, false)
		case 'w':
			num(int64(t.Weekday()), 1, false)
		case 'U':
			num(int64((t.YearDay()+6-int(t.Weekday()))/7), 2, false)
		case 'W':
			num(int64((t.YearDay()+6-(int(t.Weekday())+6)%7)/7), 2, false)
		case 's':
			// mktime of the wall clock with TZ=UTC: an aware datetime's offset is not
			// taken off, as in Python (the CDK's format_datetime "%s" alone is exact).
			wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
			num(wall.Unix(), 0, false)
		case 'z':
			// Python passes no daylight-saving flag: glibc writes nothing, not even padding.
		case 'Z':
			str("")
		case 'n':
			str("\n")
		case 't':
			str("\t")
		case '%':
			str("%")
		case 'c':
			sub("%a %b %e %H:%M:%S %Y")
		case 'D', 'x':
			sub("%m/%d/%y")
		case 'F':
			sub("%Y-%m-%d")
		case 'r':
			sub("%I:%M:%S %p")
		case 'R':
			sub("%H:%M")
		case 'T', 'X':
			sub("%H:%M:%S")
		default:
			str(format[start : i+1])
		}
	}
	return b.String()
}

// modifierAllowed says whether glibc takes the E or O modifier before a conversion; a
// conversion it does not know is never allowed. (glibc's lists, as its output shows.)
func modifierAllowed(modifier, conv byte) bool {
	const known = "abcdefghjklmnprstuwxyzABCDFGHIMPRSTUVWXYZ%"
	if !strings.ContainsRune(known, rune(conv)) {
		return false
	}
	switch modifier {
	case 'E':
		return strings.ContainsRune("cnprstuxyzCPRTXYZ%", rune(conv))
	case 'O':
		return strings.ContainsRune("bdeghjklmnprstuwyzBCGHIMPRSTUVWZ%", rune(conv))
	}
	return true
}

// caseOf applies the ^ and # flags to a name: both make it upper case.
func caseOf(s string, fl strftimeFlags, swapUpper bool) string {
	if fl.upper || fl.swap && swapUpper {
		return strings.ToUpper(s)
	}
	return s
}

// padString writes s right-aligned in the width, padded with spaces (zeros with the 0
// flag); ^ makes it upper case.
func padString(b *strings.Builder, s string, fl strftimeFlags) {
	if fl.upper {
		s = strings.ToUpper(s)
	}
	pad := byte(' ')
	if fl.pad == '0' {
		pad = '0'
	}
	for n := len(s); n < fl.width; n++ {
		b.WriteByte(pad)
	}
	b.WriteString(s)
}

// padNumber writes v padded to its natural width (0 for years: none) with zeros, or
// with spaces for %e, %k and %l; the flags _ (spaces), - (none) and 0 (zeros) and a
// written width change that.
func padNumber(b *strings.Builder, v int64, natural int, spaces bool, fl strftimeFlags) {
	pad := byte('0')
	if spaces {
		pad = ' '
	}
	switch fl.pad {
	case '_', '-':
		pad = ' '
	case '0':
		pad = '0'
	}
	width := natural
	if fl.pad == '-' {
		width = 0
	}
	if fl.width >= 0 {
		width = max(width, fl.width)
	}
	var buf [24]byte
	digits := strconv.AppendInt(buf[:0], v, 10)
	sign := ""
	if v < 0 {
		sign, digits = "-", digits[1:]
	}
	n := len(sign) + len(digits)
	if pad == '0' {
		b.WriteString(sign)
	}
	for ; n < width; n++ {
		b.WriteByte(pad)
	}
	if pad != '0' {
		b.WriteString(sign)
	}
	b.Write(digits)
}

func hour12(h int) int {
	if h%12 == 0 {
		return 12
	}
	return h % 12
}

func divFloor(a, b int) int {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

func modFloor(a, b int) int { return a - divFloor(a, b)*b }

// formatDatetime is the CDK's DatetimeParser.format: "%s", "%ms", "%s_as_float" and
// "%epoch_microseconds" as the whole format are epoch values; a format with "%_ms" has
// milliseconds there; anything else is strftime.
func formatDatetime(d dtime, format string) any {
	switch format {
	case "%s":
		return strconv.FormatInt(truncate(d.timestamp()), 10)
	case "%ms":
		return strconv.FormatInt(truncate(d.timestamp()*1000), 10)
	case "%epoch_microseconds":
		return strconv.FormatInt(truncate(d.timestamp()*1_000_000), 10)
	case "%s_as_float":
		return pyFloat(d.timestamp())
	}
	if strings.Contains(format, "%_ms") {
		// As the CDK does: format with %f, then put the milliseconds wherever the six
		// digits of the microseconds appear.
		us := d.t.Nanosecond() / 1000
		out := strftime(d, strings.ReplaceAll(format, "%_ms", "%f"))
		return strings.ReplaceAll(out, fmt.Sprintf("%06d", us), fmt.Sprintf("%03d", us/1000))
	}
	return strftime(d, format)
}

// truncate is Python's int() of a float: toward zero, saturated where int64 ends.
func truncate(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// timestamp is Python's d.timestamp(): for an aware datetime the exact number of
// microseconds since the epoch divided by a million, correctly rounded; a naive one (or
// a date) is taken as UTC, as with TZ=UTC, seconds and microseconds added as floats.
func (d dtime) timestamp() float64 {
	t := d.t
	if d.kind != dtAware {
		wall := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, time.UTC)
		return float64(wall.Unix()) + float64(t.Nanosecond()/1000)/1e6
	}
	us := t.Unix()*1_000_000 + int64(t.Nanosecond()/1000)
	if us > -1<<53 && us < 1<<53 {
		return float64(us) / 1e6
	}
	f, _ := new(big.Rat).SetFrac(big.NewInt(us), big.NewInt(1_000_000)).Float64()
	return f
}
