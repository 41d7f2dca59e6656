package incremental

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"connector/pkg/template"
)

// timeFormat reads and writes the cursor's datetimes: written with datetime_format, read
// with the first of cursor_datetime_formats, then datetime_format, that parses the value
// (the CDK's CustomFormatConcurrentStreamStateConverter).
type timeFormat struct {
	out string
	in  []string
}

func newTimeFormat(out string, in []string) timeFormat {
	return timeFormat{out: out, in: append(append([]string{}, in...), out)}
}

// parse reads a cursor, state or slice value. A value with no zone is UTC; one with an
// offset keeps it.
func (f timeFormat) parse(v any) (time.Time, error) {
	text, num := valueText(v)
	for _, format := range f.in {
		if num != "" && isEpoch(format) {
			// int() of a JSON number: a float is cut to its integer part.
			if t, err := template.ParseTime(num, format); err == nil {
				return t, nil
			}
		}
		if t, err := template.ParseTime(text, format); err == nil {
			return t, nil
		}
	}
	quoted := make([]string, len(f.in))
	for i, s := range f.in {
		quoted[i] = "'" + s + "'"
	}
	return time.Time{}, fmt.Errorf("no format in [%s] matching %s", strings.Join(quoted, ", "), text)
}

// valueText is the text a value is parsed from (Python's str()); for a JSON number read by
// an epoch format, num is its integer part as int() gives it.
func valueText(v any) (text, num string) {
	switch x := v.(type) {
	case string:
		return x, ""
	case json.Number:
		s := string(x)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return strconv.FormatInt(i, 10), ""
		}
		if fl, err := strconv.ParseFloat(s, 64); err == nil {
			return template.ToString(fl), strconv.FormatFloat(float64(int64(fl)), 'f', 0, 64)
		}
		return s, ""
	}
	return template.ToString(v), ""
}

func isEpoch(format string) bool {
	return format == "%s" || format == "%ms" || format == "%epoch_microseconds"
}

// format writes a datetime with datetime_format, in the offset it carries. Epoch formats
// are exact integers (the CDK goes through a float, which can be a microsecond off).
func (f timeFormat) format(t time.Time) string {
	switch f.out {
	case "%s":
		return strconv.FormatInt(t.Unix(), 10)
	case "%ms":
		return strconv.FormatInt(t.UnixMicro()/1000, 10)
	case "%epoch_microseconds":
		return strconv.FormatInt(t.UnixMicro(), 10)
	}
	return template.ToString(template.FormatTime(t, f.out))
}
