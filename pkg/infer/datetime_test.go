package infer

import (
	"fmt"
	"strings"
	"testing"
)

// The cases of the CDK's test_datetime_format_inferrer.py, each a list of records and the
// formats expected, in the order of the first record's fields.
func TestDatetimeFormats(t *testing.T) {
	cases := []struct {
		name    string
		records []string
		want    string
	}{
		{"empty", nil, `{}`},
		{"simple_match", []string{`{"d": "2022-02-03"}`}, `{"d":"%Y-%m-%d"}`},
		{"timestamp_match_integer", []string{`{"d": 1686058051}`}, `{"d":"%s"}`},
		{"timestamp_match_string", []string{`{"d": "1686058051"}`}, `{"d":"%s"}`},
		{"timestamp_ms_match_integer", []string{`{"d": 1686058051000}`}, `{"d":"%ms"}`},
		{"timestamp_ms_match_string", []string{`{"d": "1686058051000"}`}, `{"d":"%ms"}`},
		{"timestamp_no_match_integer", []string{`{"d": 99}`}, `{}`},
		{"timestamp_no_match_string", []string{`{"d": "99999999999999999999"}`}, `{}`},
		{"timestamp_overflow", []string{fmt.Sprintf(`{"d": "1%s_100"}`, strings.Repeat("0", 100))}, `{}`},
		{"simple_no_match", []string{`{"d": "20220203"}`}, `{}`},
		{"multiple_match", []string{`{"d": "2022-02-03", "e": "2022-02-03"}`}, `{"d":"%Y-%m-%d","e":"%Y-%m-%d"}`},
		{"multiple_no_match", []string{`{"d": "20220203", "r": "ccc", "e": {"something-else": "2023-03-03"}, "s": ["2023-03-03"], "x": false, "y": 123}`}, `{}`},
		{"format_1", []string{`{"d": "2022-02-03"}`}, `{"d":"%Y-%m-%d"}`},
		{"format_2", []string{`{"d": "2022-02-03 12:34:56"}`}, `{"d":"%Y-%m-%d %H:%M:%S"}`},
		{"format_3", []string{`{"d": "2022-02-03T12:34:56Z"}`}, `{"d":"%Y-%m-%dT%H:%M:%SZ"}`},
		{"format_4 1", []string{`{"d": "2022-02-03T12:34:56.000Z"}`}, `{"d":"%Y-%m-%dT%H:%M:%S.%fZ"}`},
		{"format_4 2", []string{`{"d": "2022-02-03T12:34:56.000000Z"}`}, `{"d":"%Y-%m-%dT%H:%M:%S.%fZ"}`},
		{"format_5", []string{`{"d": "2022-02-03 12:34:56.123456+00:00"}`}, `{"d":"%Y-%m-%d %H:%M:%S.%f%z"}`},
		{"format_5 2", []string{`{"d": "2022-02-03 12:34:56.123456+02:00"}`}, `{"d":"%Y-%m-%d %H:%M:%S.%f%z"}`},
		{"format_6", []string{`{"d": "2022-02-03T12:34:56.123456+0000"}`}, `{"d":"%Y-%m-%dT%H:%M:%S.%f%z"}`},
		{"format_6 2", []string{`{"d": "2022-02-03T12:34:56.123456+00:00"}`}, `{"d":"%Y-%m-%dT%H:%M:%S.%f%z"}`},
		{"format_6 3", []string{`{"d": "2022-02-03T12:34:56.123456-03:00"}`}, `{"d":"%Y-%m-%dT%H:%M:%S.%f%z"}`},
		{"format_7", []string{`{"d": "03/02/2022 12:34"}`}, `{"d":"%d/%m/%Y %H:%M"}`},
		{"format_8", []string{`{"d": "2022-02"}`}, `{"d":"%Y-%m"}`},
		{"format_9", []string{`{"d": "03-02-2022"}`}, `{"d":"%d-%m-%Y"}`},
		{"limit_down", []string{`{"d": "2022-02-03", "x": "2022-02-03"}`, `{"d": "2022-02-03", "x": "another thing"}`}, `{"d":"%Y-%m-%d"}`},
		{"limit_down all", []string{`{"d": "2022-02-03", "x": "2022-02-03"}`, `{"d": "also another thing", "x": "another thing"}`}, `{}`},
		{"limit_down empty", []string{`{"d": "2022-02-03", "x": "2022-02-03"}`, `{}`}, `{}`},
		{"limit_down unsupported type", []string{`{"d": "2022-02-03"}`, `{"d": false}`}, `{}`},
		{"limit_down complex type", []string{`{"d": "2022-02-03"}`, `{"d": {"date": "2022-03-03"}}`}, `{}`},
		{"limit_down different format", []string{`{"d": "2022-02-03"}`, `{"d": 1686058051}`}, `{}`},
		{"limit_down different format 2", []string{`{"d": "2022-02-03"}`, `{"d": "2022-02-03T12:34:56.000000Z"}`}, `{}`},
		{"no scope expand", []string{`{}`, `{"d": "2022-02-03"}`}, `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d DatetimeFormats
			for _, r := range c.records {
				if err := d.Accumulate(decode(t, r)); err != nil {
					t.Fatal(err)
				}
			}
			if got := marshal(t, d.Formats()); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

// Beyond the CDK's own tests: how values are read, as Python reads them.
func TestDatetimeFormatsCorners(t *testing.T) {
	cases := []struct {
		name    string
		records []string
		want    string
	}{
		{"the first format that parses wins", []string{`{"a": "2022-02-03", "b": "2022-02"}`}, `{"a":"%Y-%m-%d","b":"%Y-%m"}`},
		{"an integer at the range ends", []string{`{"a": 999999999, "b": 1000000000, "c": 1999999999, "d": 2000000000, "e": 999999999999, "f": 1000000000000, "g": 1999999999999, "h": 2000000000000}`},
			`{"b":"%s","c":"%s","f":"%ms","g":"%ms"}`},
		{"a float never is", []string{`{"a": 1686058051.0, "b": 1.686058051e9, "c": 1686058051E0}`}, `{}`},
		{"int() takes spaces, a sign, underscores and other digits", []string{"{\"a\": \" 1686058051 \", \"b\": \"+1686058051\", \"c\": \"1_686_058_051\", \"d\": \"\u0661\u0666\u0668\u0666\u0660\u0665\u0668\u0660\u0665\u0661\", \"e\": \"\u00a01686058051\\u0085\", \"f\": \"1686058051\\u001f\"}"},
			`{"a":"%s","b":"%s","c":"%s","d":"%s","e":"%s"}`},
		{"int() refuses a doubled or trailing underscore, so strptime is tried", []string{`{"a": "1__686058051", "b": "1686058051_"}`}, `{}`},
		{"letters of the format in any case", []string{`{"a": "2022-02-03t12:34:56z", "b": "2022-02-03T12:34:56.5z"}`}, `{"a":"%Y-%m-%dT%H:%M:%SZ","b":"%Y-%m-%dT%H:%M:%S.%fZ"}`},
		{"a space of the format matches any white space", []string{"{\"a\": \"2022-02-03\\t\\n 12:34:56\"}"}, `{"a":"%Y-%m-%d %H:%M:%S"}`},
		{"one-digit fields", []string{`{"a": "2022-2-3", "b": "3/2/2022 1:4", "c": "3-2-2022"}`}, `{"a":"%Y-%m-%d","b":"%d/%m/%Y %H:%M","c":"%d-%m-%Y"}`},
		{"a date that does not exist", []string{`{"a": "2022-02-30", "b": "2023-02-29", "c": "2024-02-29", "d": "0000-01-01"}`}, `{"c":"%Y-%m-%d"}`},
		{"an offset with a fraction of a second", []string{`{"a": "2022-02-03 12:34:56.1+01:00:30.5", "b": "2022-02-03T12:34:56.1-0000:30.123456", "c": "2022-02-03 12:34:56.1+01:00:30.1234567", "d": "2022-02-03 12:34:56.1+23:59:59.999999", "e": "2022-02-30 12:34:56.1+01:00:30.5"}`},
			`{"a":"%Y-%m-%d %H:%M:%S.%f%z","d":"%Y-%m-%d %H:%M:%S.%f%z"}`},
		{"a leap second does not parse", []string{`{"a": "2022-02-03 12:34:60"}`}, `{}`},
		{"an offset of a day or more does not parse", []string{`{"a": "2022-02-03 12:34:56.1+24:00", "b": "2022-02-03 12:34:56.1+23:59"}`}, `{"b":"%Y-%m-%d %H:%M:%S.%f%z"}`},
		{"a later value of another format drops the field", []string{`{"a": 1686058051, "b": "2022-02-03"}`, `{"a": "1686058051000", "b": "2022-02-03"}`}, `{"b":"%Y-%m-%d"}`},
		{"a later value of the same format in another spelling keeps it", []string{`{"a": 1686058051}`, `{"a": "1686058052"}`, `{"a": " 1686058053"}`}, `{"a":"%s"}`},
		{"null drops a field", []string{`{"a": "2022-02-03"}`, `{"a": null}`}, `{}`},
		{"once none is left, none comes back", []string{`{"a": 1}`, `{"a": "2022-02-03"}`}, `{}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var d DatetimeFormats
			for _, r := range c.records {
				if err := d.Accumulate(decode(t, r)); err != nil {
					t.Fatal(err)
				}
			}
			if got := marshal(t, d.Formats()); got != c.want {
				t.Errorf("got %s, want %s", got, c.want)
			}
		})
	}
}

func TestDatetimeFormatsRefusesWhatIsNotARecord(t *testing.T) {
	var d DatetimeFormats
	if err := d.Accumulate("x"); err == nil || err.Error() != "a record is a string, not an object" {
		t.Errorf("string record: %v", err)
	}
	if err := d.Accumulate(map[string]any{"b": int64(1686058051), "a": "2022-02"}); err != nil {
		t.Fatal(err)
	}
	if got := marshal(t, d.Formats()); got != `{"a":"%Y-%m","b":"%s"}` {
		t.Errorf("got %s", got)
	}
}
