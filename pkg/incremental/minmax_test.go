package incremental

import (
	"testing"
	"time"

	"connector/pkg/manifest"
	"connector/pkg/template"
)

// A MinMaxDatetime reads its rendered text as the CDK's InterpolatedString.eval gives it:
// a Python literal is read first, so a date rendered in quotes (amazon-ads.yaml writes
// `"{{ max(user_start_date, …) }}"`) is the date; text that is no literal stays as it is.
func TestMinMaxReadsTheTextAsTheCDK(t *testing.T) {
	compile := func(src string) *template.Template {
		t.Helper()
		tm, err := template.Compile(src, []string{"config"})
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	for _, tt := range []struct {
		datetime, format, min string
		want                  string
		err                   string
	}{
		{`"{{ config.start }}"`, "%Y-%m-%d", "", "2026-09-27T00:00:00Z", ""},
		{`'{{ config.start }}'`, "%Y-%m-%d", "", "2026-09-27T00:00:00Z", ""},
		{`{{ config.start }}`, "%Y-%m-%d", `"2026-10-01"`, "2026-10-01T00:00:00Z", ""},
		{`{{ config.start }}T00:00:00Z`, "%Y-%m-%dT%H:%M:%SZ", "", "2026-09-27T00:00:00Z", ""},
		{`1758931200`, "%s", "", "2025-09-27T00:00:00Z", ""},
		{`"{{ config.start }}"x`, "%Y-%m-%d", "", "", `start_datetime datetime "\"2026-09-27\"x" does not match the format "%Y-%m-%d"`},
	} {
		d := &manifest.DatetimeValue{Datetime: compile(tt.datetime), Format: tt.format}
		if tt.min != "" {
			d.Min = compile(tt.min)
		}
		got, err := minMax(d, "", map[string]any{"config": map[string]any{"start": "2026-09-27"}}, "start_datetime")
		if tt.err != "" {
			if err == nil || len(err.Error()) < len(tt.err) || err.Error()[:len(tt.err)] != tt.err {
				t.Errorf("%s: error %v, want one starting %q", tt.datetime, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tt.datetime, err)
			continue
		}
		if s := got.UTC().Format(time.RFC3339); s != tt.want {
			t.Errorf("%s: %s, want %s", tt.datetime, s, tt.want)
		}
	}
}
