package infer

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"connector/pkg/record"
	"connector/pkg/template"
)

// datetimeFormats are the formats DatetimeFormats tries, in the CDK's order: a value takes
// the first that parses it (DatetimeParser.parse: "%s" and "%ms" are epoch seconds and
// milliseconds, the others strptime).
var datetimeFormats = []string{
	"%Y-%m-%d",
	"%Y-%m-%d %H:%M:%S",
	"%Y-%m-%dT%H:%M:%SZ",
	"%Y-%m-%dT%H:%M:%S.%fZ",
	"%Y-%m-%d %H:%M:%S.%f%z",
	"%Y-%m-%dT%H:%M:%S.%f%z",
	"%s",
	"%ms",
	"%d/%m/%Y %H:%M",
	"%Y-%m",
	"%d-%m-%Y",
}

// DatetimeFormats finds the top-level fields whose values look like datetimes of one format
// in every record, as the CDK's DatetimeFormatInferrer does: the first record names the
// candidates (each field whose value parses with one of the formats, with the first that
// does), and each later record drops the candidates it lacks, has null for, or whose value
// does not parse with the candidate's format. A field absent from the first record is never
// a candidate. The zero value is ready; it is not safe for concurrent use.
type DatetimeFormats struct {
	started    bool
	candidates []fieldFormat
}

type fieldFormat struct{ field, format string }

// Accumulate takes a record (an object) into the inference.
func (d *DatetimeFormats) Accumulate(data any) error {
	keys, get, ok := fields(data)
	if !ok {
		return fmt.Errorf("a record is %s, not an object", describe(data))
	}
	if !d.started {
		d.started = true
		for _, k := range keys {
			v, _ := get(k)
			if !canBeDatetime(v) {
				continue
			}
			for _, f := range datetimeFormats {
				if matchesFormat(v, f) {
					d.candidates = append(d.candidates, fieldFormat{k, f})
					break
				}
			}
		}
		return nil
	}
	d.candidates = slices.DeleteFunc(d.candidates, func(c fieldFormat) bool {
		v, ok := get(c.field)
		return !ok || v == nil || !canBeDatetime(v) || !matchesFormat(v, c.format)
	})
	return nil
}

// Formats returns the candidates left, field to format, in the order of the first record:
// the test read's inferred_datetime_formats. It is an empty object when there are none.
func (d *DatetimeFormats) Formats() *record.Object {
	o := &record.Object{}
	for _, c := range d.candidates {
		o.Set(c.field, c.format)
	}
	return o
}

// fields gives the keys of an object value, in order, and a lookup of its values.
func fields(data any) ([]string, func(string) (any, bool), bool) {
	switch x := data.(type) {
	case *record.Object:
		return x.Keys(), x.Get, true
	case map[string]any:
		return slices.Sorted(maps.Keys(x)), func(k string) (any, bool) { v, ok := x[k]; return v, ok }, true
	}
	return nil, nil, false
}

// The ranges of integers taken for epoch seconds and epoch milliseconds.
const (
	secondsFrom, secondsTo = 1_000_000_000, 2_000_000_000
	millisFrom, millisTo   = 1_000_000_000_000, 2_000_000_000_000
)

func inTimestampRange(n int64) bool {
	return n >= secondsFrom && n < secondsTo || n >= millisFrom && n < millisTo
}

// canBeDatetime is the CDK's cheap test before the formats are tried: a string that Python's
// int() does not read, or an integer (or a string int() reads as one) in the range of epoch
// seconds or milliseconds. Floats, booleans, null, arrays and objects never are.
func canBeDatetime(v any) bool {
	switch x := v.(type) {
	case string:
		n, isInt := pyInt(x)
		return !isInt || inTimestampRange(n)
	case json.Number:
		if !isIntegerText(string(x)) {
			return false
		}
		n, _ := pyInt(string(x))
		return inTimestampRange(n)
	case int:
		return inTimestampRange(int64(x))
	case int64:
		return inTimestampRange(x)
	}
	return false
}

// isIntegerText reports whether a JSON number is an integer as Python's json module reads
// it: no fraction and no exponent.
func isIntegerText(s string) bool { return !strings.ContainsAny(s, ".eE") }

// matchesFormat reports whether the CDK's DatetimeParser parses v with format. "%s" and
// "%ms" take what Python's int() reads (an integer as it is), the other formats strptime the
// text (an integer's as str() writes it).
func matchesFormat(v any, format string) bool {
	var text string
	switch x := v.(type) {
	case string:
		text = x
	case json.Number:
		text = string(x)
	case int:
		text = strconv.Itoa(x)
	case int64:
		text = strconv.FormatInt(x, 10)
	default:
		return false
	}
	if format == "%s" || format == "%ms" {
		// template.ParseTime reads the number too, but also past white space that int()
		// refuses (U+001C to U+001F), so it is given the number int() reads.
		n, isInt := pyInt(text)
		if !isInt {
			return false
		}
		text = strconv.FormatInt(n, 10)
	}
	if strings.HasSuffix(format, "%z") {
		if m := offsetFraction.FindStringSubmatchIndex(text); m != nil {
			text = text[:m[2]]
		}
	}
	_, err := template.ParseTime(text, format)
	return err == nil
}

// offsetFraction is a UTC offset with seconds and a fraction of a second at the end of a
// value. Python takes such an offset for %z; template.ParseTime refuses it, as a Go time
// zone holds whole seconds. Whether the value parses is all that counts here, and it parses
// exactly when it does without the fraction: the offset is the value's end, and the
// fraction changes neither its form nor whether it is within a day.
var offsetFraction = regexp.MustCompile(`[+-]\p{Nd}{2}:?[0-5]\p{Nd}:?[0-5]\p{Nd}(\.\p{Nd}{1,6})$`)

// pyInt reads s as Python's int(s) does: surrounding white space, a sign, decimal digits of
// any script with single underscores between them. isInt is false where int() raises; a
// value too large for an int64 is given as a value outside every timestamp range.
func pyInt(s string) (n int64, isInt bool) {
	t := strings.TrimFunc(s, isIntSpace)
	neg := false
	if t != "" && (t[0] == '+' || t[0] == '-') {
		neg = t[0] == '-'
		t = t[1:]
	}
	if t == "" || t[0] == '_' || t[len(t)-1] == '_' || strings.Contains(t, "__") {
		return 0, false
	}
	const huge = 1 << 62
	for _, r := range t {
		if r == '_' {
			continue
		}
		if !unicode.Is(unicode.Nd, r) {
			return 0, false
		}
		if n < huge/10 {
			n = n*10 + int64(digitValue(r))
		} else {
			n = huge
		}
	}
	if neg {
		n = -n
	}
	return n, true
}

// isIntSpace is the white space int() strips: the ASCII white space of C (not the
// separators U+001C to U+001F that str.isspace() also counts) and Unicode's.
func isIntSpace(r rune) bool {
	return r == ' ' || r >= '\t' && r <= '\r' || r >= 0x80 && unicode.IsSpace(r)
}

// digitValue is the value of a Unicode decimal digit: every script's digits are a run of
// ten from its zero.
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
