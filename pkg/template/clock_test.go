package template

import (
	"maps"
	"sync"
	"testing"
	"time"
)

const clockTemplate = "{{ now_utc().strftime('%Y-%m-%dT%H:%M:%SZ') }} {{ today_utc() }} {{ day_delta(1, '%Y-%m-%d') }} {{ today_with_timezone('Asia/Tokyo') }}"

// The templates of a run read the clock of its Globals: now_utc(), today_utc(),
// day_delta() and today_with_timezone(). Two runs that share one config map — the case a
// clock looked up by the config map got wrong — each read their own, at the same time;
// a run without a clock reads the machine's.
func TestGlobalsClock(t *testing.T) {
	tpl, err := Compile(clockTemplate, []string{"config", "parameters"})
	if err != nil {
		t.Fatal(err)
	}
	config := map[string]any{"k": "shared"}
	jan := Globals{Config: config, Now: func() time.Time { return time.Date(2024, 1, 31, 20, 0, 0, 0, time.UTC) }}
	jul := Globals{Config: config, Now: func() time.Time { return time.Date(2021, 7, 9, 10, 0, 0, 0, time.UTC) }}
	machine := Globals{Config: config}
	want := map[*Globals]string{
		&jan: "2024-01-31T20:00:00Z 2024-01-31 2024-02-01 2024-02-01",
		&jul: "2021-07-09T10:00:00Z 2021-07-09 2021-07-10 2021-07-09",
	}
	var wg sync.WaitGroup
	for g, w := range want {
		wg.Go(func() {
			for range 200 {
				if got, err := tpl.Render(g.Vars(nil)); err != nil || got != w {
					t.Errorf("Render = %q, %v; want %q", got, err, w)
					return
				}
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			before := time.Now().UTC()
			got, err := tpl.Render(machine.Vars(nil))
			after := time.Now().UTC()
			if err != nil || got[:19] < before.Format("2006-01-02T15:04:05") || got[:19] > after.Format("2006-01-02T15:04:05") {
				t.Errorf("the machine's clock between %v and %v: %q, %v", before, after, got, err)
				return
			}
		}
	})
	wg.Wait()
}

// Variables made by copying a run's variables keep its clock; Set puts a run's config and
// clock into variables being built, and takes away a clock they had.
func TestGlobalsVars(t *testing.T) {
	tpl, err := Compile("{{ parameters.p }} {{ config.k }} {{ now_utc().year }}", []string{"config", "parameters"})
	if err != nil {
		t.Fatal(err)
	}
	g := Globals{Config: map[string]any{"k": "v"}, Now: func() time.Time { return time.Date(1999, 1, 1, 0, 0, 0, 0, time.UTC) }}
	v := g.Vars(map[string]any{"p": "x"})
	if got, err := tpl.Render(maps.Clone(v)); err != nil || got != "x v 1999" {
		t.Errorf("copied variables: %q, %v", got, err)
	}
	if got, err := tpl.Render(g.Vars(nil)); err != nil || got != " v 1999" {
		t.Errorf("no parameters: %q, %v", got, err)
	}
	built := map[string]any{"parameters": map[string]any{"p": "y"}}
	g.Set(built)
	if got, err := tpl.Render(built); err != nil || got != "y v 1999" {
		t.Errorf("Set: %q, %v", got, err)
	}
	Globals{Config: map[string]any{"k": "w"}}.Set(built)
	if got, err := tpl.Render(built); err != nil || got == "y w 1999" || got[:4] != "y w " {
		t.Errorf("Set without a clock: %q, %v", got, err)
	}
}
