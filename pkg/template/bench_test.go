package template

import (
	"testing"
	"time"
)

func benchEval(b *testing.B, src string) { benchEvalOn(b, src, nil) }

// benchEvalOn evaluates src with the variables of a page of a run whose clock is now (nil:
// the machine's).
func benchEvalOn(b *testing.B, src string, now func() time.Time) {
	tp, err := Compile(src, allVars)
	if err != nil {
		b.Fatal(err)
	}
	vars := Globals{Config: map[string]any{"api_key": "secret"}, Now: now}.Vars(nil)
	vars["response"] = map[string]any{"meta": map[string]any{"next": "abc"}, "has_more": false}
	vars["next_page_token"] = map[string]any{"next_page_token": nil}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := tp.Eval(vars); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkConfigAccess(b *testing.B)   { benchEval(b, "{{ config['api_key'] }}") }
func BenchmarkResponseAccess(b *testing.B) { benchEval(b, "{{ response.meta.next }}") }
func BenchmarkStopCondition(b *testing.B)  { benchEval(b, "{{ response.has_more is false }}") }
func BenchmarkParamDefault(b *testing.B) {
	benchEval(b, "{{ next_page_token['next_page_token'] or '0' }}")
}
func BenchmarkStrftime(b *testing.B) {
	benchEval(b, "{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%dT%H:%M:%SZ') }}")
}
func BenchmarkStrftimeRunClock(b *testing.B) {
	at := time.Date(2024, 1, 31, 20, 0, 0, 0, time.UTC)
	benchEvalOn(b, "{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%dT%H:%M:%SZ') }}", func() time.Time { return at })
}
func BenchmarkURLRender(b *testing.B) {
	benchEval(b, "https://api.example.com/v1/{{ config['api_key'] }}/items?cursor={{ response.meta.next }}")
}

func BenchmarkCompile(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := compile("{{ config.get('start_date') or day_delta(-3650, '%Y-%m-%dT%H:%M:%SZ') }}", allVars); err != nil {
			b.Fatal(err)
		}
	}
}
