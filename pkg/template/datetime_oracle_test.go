package template

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// testdata/strftime/python.json is what Python 3.11 on Linux (glibc), with TZ=UTC as Airbyte
// runs connectors, and the CDK's DatetimeParser give for strftime, strptime and the CDK's
// special formats; testdata/strftime/gen.py wrote it. TestPythonDatetimeOracle compares
// our implementation with every row.

type pyTable struct {
	Python    string `json:"python"`
	Datetimes []struct {
		Name                                                string
		Year, Month, Day, Hour, Minute, Second, Microsecond int
		Offset                                              *int
	} `json:"datetimes"`
	Strftime  []pyFormatRow `json:"strftime"`
	CDKFormat []pyFormatRow `json:"cdk_format"`
	Strptime  []pyParseRow  `json:"strptime"`
	CDKParse  []pyParseRow  `json:"cdk_parse"`
}

type pyFormatRow struct {
	DT     int    `json:"dt"`
	Format string `json:"format"`
	Out    string `json:"out"`
	Error  string `json:"error"`
}

type pyParseRow struct {
	Input  string `json:"input"`
	Format string `json:"format"`
	Out    string `json:"out"`
	TZName string `json:"tzname"`
	Error  string `json:"error"`
}

// pyParseSkips are the rows our implementation answers differently on purpose, with why.
var pyParseSkips = map[string]string{
	"+01:00:30.5 %z": "a UTC offset with a fraction of a second: Go's time zones hold whole seconds",
}

func loadPyTable(t *testing.T) pyTable {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "strftime", "python.json"))
	if err != nil {
		t.Fatal(err)
	}
	var table pyTable
	if err := json.Unmarshal(data, &table); err != nil {
		t.Fatal(err)
	}
	if len(table.Strftime) == 0 || len(table.Strptime) == 0 || len(table.CDKFormat) == 0 || len(table.CDKParse) == 0 {
		t.Fatal("python.json has an empty table")
	}
	return table
}

func (tb pyTable) dtime(i int) dtime {
	d := tb.Datetimes[i]
	loc, kind := time.UTC, dtNaive
	if d.Offset != nil {
		kind = dtAware
		if *d.Offset != 0 {
			loc = time.FixedZone("", *d.Offset)
		}
	}
	return dtime{t: time.Date(d.Year, time.Month(d.Month), d.Day, d.Hour, d.Minute, d.Second, d.Microsecond*1000, loc), kind: kind}
}

// pyMessage is the message of a Python exception as the table writes it ("ValueError: x").
func pyMessage(e string) string {
	_, msg, _ := strings.Cut(e, ": ")
	return msg
}

func TestPythonDatetimeOracle(t *testing.T) {
	tb := loadPyTable(t)
	counts := map[string]int{}
	for _, r := range tb.Strftime {
		d := tb.dtime(r.DT)
		if got := strftime(d, r.Format); got != r.Out || r.Error != "" {
			t.Errorf("strftime(%s, %q) = %q, Python %q%s", tb.Datetimes[r.DT].Name, r.Format, got, r.Out, r.Error)
			continue
		}
		counts["strftime"]++
	}
	for _, r := range tb.CDKFormat {
		d := tb.dtime(r.DT)
		d.kind = dtAware // format_datetime takes a naive datetime as UTC
		if got := ToString(formatDatetime(d, r.Format)); got != r.Out {
			t.Errorf("format_datetime(%s, %q) = %q, the CDK %q", tb.Datetimes[r.DT].Name, r.Format, got, r.Out)
			continue
		}
		counts["cdk_format"]++
	}
	for _, r := range tb.Strptime {
		if why, ok := pyParseSkips[r.Input+" "+r.Format]; ok {
			t.Logf("strptime(%q, %q) left out: %s", r.Input, r.Format, why)
			continue
		}
		d, err := strptime(r.Input, r.Format)
		if !sameParse(t, "strptime", r, d, err) {
			continue
		}
		counts["strptime"]++
	}
	for _, r := range tb.CDKParse {
		got, err := ParseTime(r.Input, r.Format)
		var d dtime
		if err == nil {
			d = aware(got)
		}
		if !sameParse(t, "ParseTime", r, d, err) {
			continue
		}
		counts["cdk_parse"]++
	}
	t.Logf("Python %s oracle: strftime %d/%d, format_datetime %d/%d, strptime %d/%d (%d left out), ParseTime %d/%d",
		tb.Python, counts["strftime"], len(tb.Strftime), counts["cdk_format"], len(tb.CDKFormat),
		counts["strptime"], len(tb.Strptime), len(pyParseSkips), counts["cdk_parse"], len(tb.CDKParse))
}

// sameParse compares one parse with the table's row: the same datetime (isoformat and
// zone name), or an error; a ValueError of strptime has the same message.
func sameParse(t *testing.T, fn string, r pyParseRow, d dtime, err error) bool {
	t.Helper()
	if r.Error != "" {
		switch {
		case err == nil:
			t.Errorf("%s(%q, %q) = %s, Python raises %s", fn, r.Input, r.Format, d.isoformat("T"), r.Error)
			return false
		case strings.HasPrefix(r.Error, "ValueError: ") && !pyNumberError(r.Error) && err.Error() != pyMessage(r.Error):
			t.Errorf("%s(%q, %q) fails with\n  %s\nPython\n  %s", fn, r.Input, r.Format, err, pyMessage(r.Error))
			return false
		}
		return true
	}
	if err != nil {
		t.Errorf("%s(%q, %q) fails: %v; Python gives %s", fn, r.Input, r.Format, err, r.Out)
		return false
	}
	if got := d.isoformat("T"); got != r.Out {
		t.Errorf("%s(%q, %q) = %s, Python %s", fn, r.Input, r.Format, got, r.Out)
		return false
	}
	if r.TZName != "" {
		if got := strftime(d, "%Z"); got != r.TZName {
			t.Errorf("%s(%q, %q) has the zone name %q, Python %q", fn, r.Input, r.Format, got, r.TZName)
			return false
		}
	}
	return true
}

// pyNumberError reports an error Python's int() or float() raised on the whole input (the
// CDK's epoch formats): ours says the same in our words.
func pyNumberError(e string) bool {
	return strings.Contains(e, "invalid literal for int()") || strings.Contains(e, "could not convert string to float") ||
		strings.Contains(e, "cannot convert float")
}

// FuzzDatetimeFormats gives strftime, format_datetime, strptime and ParseTime arbitrary
// formats and inputs: none may panic, text without % formats as itself, and what
// strptime accepts is a datetime Python could hold.
func FuzzDatetimeFormats(f *testing.F) {
	for _, seed := range [][2]string{
		{"%Y-%m-%dT%H:%M:%S.%f%z", "2024-02-29T13:45:30.123456+0530"},
		{"%G-W%V-%u", "2020-W53-5"}, {"%Y %U %w", "2024 0 0"}, {"%c", "Thu Feb 29 13:45:30 2024"},
		{"%-d/%_m/%^a %#p %5Y %Ey %Oq", " 5"}, {"%_ms", "123"}, {"%z", "+01:00:30.5"}, {"%", ""},
		{"%j%Z%%", "366UTC%"}, {"%999999d", "x"}, {"%s_as_float", "1e3"}, {"%epoch_microseconds", "-1"},
	} {
		f.Add(seed[0], seed[1])
	}
	d := dtime{t: time.Date(2024, 2, 29, 13, 45, 30, 123456000, time.FixedZone("", 19800)), kind: dtAware}
	f.Fuzz(func(t *testing.T, format, input string) {
		out := strftime(d, format)
		if !strings.Contains(format, "%") && out != format {
			t.Fatalf("strftime(%q) = %q, want the format itself", format, out)
		}
		_ = formatDatetime(d, format)
		if p, err := strptime(input, format); err == nil {
			if y := p.t.Year(); y < 1 || y > 9999 {
				t.Fatalf("strptime(%q, %q) gave the year %d", input, format, y)
			}
		} else if err.Error() == "" {
			t.Fatal("an empty error")
		}
		_, _ = ParseTime(input, format)
	})
}

// BenchmarkParseTime parses the most common cursor format of the corpus.
func BenchmarkParseTime(b *testing.B) {
	for b.Loop() {
		if _, err := ParseTime("2024-01-02T03:04:05.678Z", "%Y-%m-%dT%H:%M:%S.%fZ"); err != nil {
			b.Fatal(err)
		}
	}
}
