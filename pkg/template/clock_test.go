package template

import (
	"testing"
	"time"
)

// A run with its own clock (a replay) has its templates read it, through its testing
// values; another run's templates keep the machine's time.
func TestUseClock(t *testing.T) {
	tpl, err := Compile("{{ now_utc().strftime('%Y-%m-%dT%H:%M:%SZ') }} {{ today_utc() }} {{ day_delta(1, '%Y-%m-%d') }} {{ today_with_timezone('Asia/Tokyo') }}", []string{"config"})
	if err != nil {
		t.Fatal(err)
	}
	replay, other := map[string]any{"k": "replay"}, map[string]any{"k": "other"}
	release := UseClock(replay, func() time.Time { return time.Date(2024, 1, 31, 20, 0, 0, 0, time.UTC) })
	got, err := tpl.Render(map[string]any{"config": replay})
	if err != nil || got != "2024-01-31T20:00:00Z 2024-01-31 2024-02-01 2024-02-01" {
		t.Errorf("with the run's clock: %q %v", got, err)
	}
	if got, _ := tpl.Render(map[string]any{"config": other}); got[:4] == "2024" {
		t.Errorf("another run read the replay's clock: %q", got)
	}
	release()
	release()
	if got, _ := tpl.Render(map[string]any{"config": replay}); got[:4] == "2024" {
		t.Errorf("the clock is still used after release: %q", got)
	}
	if inUse.Load() != 0 {
		t.Errorf("%d clocks in use", inUse.Load())
	}
}
