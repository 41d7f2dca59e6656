package template

import (
	"connector/internal/racetest"
	"strconv"
	"strings"
	"testing"
)

// Each template builds, writes or walks something beyond a limit; each must end with the
// error naming that limit.
func TestEvaluationLimits(t *testing.T) {
	racetest.Sequential(t)
	const (
		double = "{% set s = 'x' %}{% for i in range(40) %}{% set s = s ~ s %}{% endfor %}{{ s }}"
		// A value that doubles 60 times through a namespace, sharing its halves: 2^60
		// leaves in a few bytes of memory.
		shared = "{% set ns = namespace(l=[1], m=[1]) %}{% for i in range(60) %}{% set ns.l = [ns.l, ns.l] %}{% set ns.m = [ns.m, ns.m] %}{% endfor %}"
		deep   = "{% set ns = namespace(l=[], m=[]) %}{% for i in range(1000) %}{% set ns.l = [ns.l] %}{% set ns.m = [ns.m] %}{% endfor %}"
	)
	for _, tt := range []struct{ name, src, want string }{
		{"a string doubled with ~", double,
			"evaluating `{% set s = s ~ s %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with +", strings.ReplaceAll(double, "s ~ s", "s + s"),
			"evaluating `{% set s = s + s %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with *", strings.ReplaceAll(double, "s ~ s", "s * 2"),
			"evaluating `{% set s = s * 2 %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with join", strings.ReplaceAll(double, "s ~ s", "[s, s]|join"),
			"evaluating `{% set s = [s, s]|join %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with the join method", strings.ReplaceAll(double, "s ~ s", "''.join([s, s])"),
			"evaluating `{% set s = ''.join([s, s]) %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with replace", strings.ReplaceAll(double, "s ~ s", "(s ~ 'x').replace('x', 'xx')"),
			"evaluating `{% set s = (s ~ 'x').replace('x', 'xx') %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with the replace filter", strings.ReplaceAll(double, "s ~ s", "(s ~ 'x')|replace('x', 'xx')"),
			"evaluating `{% set s = (s ~ 'x')|replace('x', 'xx') %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with format", strings.ReplaceAll(double, "s ~ s", "'{}{}'.format(s, s)"),
			"evaluating `{% set s = '{}{}'.format(s, s) %}`: template result larger than 16 MiB (a limit of connector)"},
		{"with regex_replace", "{{ ('x' * 1000000)|regex_replace('(x)', '\\\\1' * 20) }}",
			"evaluating `{{ ('x' * 1000000)|regex_replace('(x)', '\\\\1' * 20) }}`: template result larger than 16 MiB (a limit of connector)"},
		{"with sum", strings.ReplaceAll(double, "s ~ s", "[s, s]|sum(start='')"),
			"evaluating `{% set s = [s, s]|sum(start='') %}`: template result larger than 16 MiB (a limit of connector)"},
		{"a huge repetition", "{{ 'x' * 10000000000 }}",
			"evaluating `{{ 'x' * 10000000000 }}`: template result larger than 16 MiB (a limit of connector)"},
		{"a repetition whose size overflows", "{{ 'xxxx' * 4611686018427387904 }}",
			"evaluating `{{ 'xxxx' * 4611686018427387904 }}`: template result larger than 16 MiB (a limit of connector)"},
		{"a list doubled", "{% set l = [1] %}{% for i in range(40) %}{% set l = l + l %}{% endfor %}",
			"evaluating `{% set l = l + l %}`: template list or mapping longer than 1048576 items (a limit of connector)"},
		{"a list repeated", "{{ [1, 2] * 4611686018427387904 }}",
			"evaluating `{{ [1, 2] * 4611686018427387904 }}`: template list or mapping longer than 1048576 items (a limit of connector)"},
		{"a string as a list of characters", "{{ ('x' * 16000000)|list|length }}",
			"evaluating `{{ ('x' * 16000000)|list|length }}`: template list or mapping longer than 1048576 items (a limit of connector)"},
		{"a split into too many pieces", "{{ (',' * 8000000).split(',')|length }}",
			"evaluating `{{ (',' * 8000000).split(',')|length }}`: template list or mapping longer than 1048576 items (a limit of connector)"},
		{"JSON of too many values", "{{ json_loads('[' ~ ('1,' * 2000000) ~ '1]')|length }}",
			"evaluating `{{ json_loads('[' ~ ('1,' * 2000000) ~ '1]')|length }}`: template list or mapping longer than 1048576 items (a limit of connector)"},
		{"a shared value written out", shared + "{{ ns.l }}",
			"evaluating `{{ ns.l }}`: template output larger than 16 MiB (a limit of connector)"},
		{"a shared value as the result", "{{ " + strings.Repeat("[", 60) + "1" + strings.Repeat("] * 2", 60) + " }}",
			"evaluating `" + ("{{ " + strings.Repeat("[", 60) + "1" + strings.Repeat("] * 2", 60))[:117] + "...`: template result holds more than 1048576 values (a limit of connector)"},
		{"a shared value as JSON", shared + "{{ ns.l|tojson }}",
			"evaluating `{{ ns.l|tojson }}`: template result larger than 16 MiB (a limit of connector)"},
		{"two shared values compared", shared + "{{ ns.l == ns.m }}",
			"evaluating `{{ ns.l == ns.m }}`: template evaluation takes more than 10000000 steps (a limit of connector)"},
		{"a million comparisons of them", shared + "{{ ([ns.l] * 1000000)|select('eq', ns.m)|list|length }}",
			"evaluating `{{ ([ns.l] * 1000000)|select('eq', ns.m)|list|length }}`: template evaluation takes more than 10000000 steps (a limit of connector)"},
		{"deep values compared", deep + "{{ ns.l == ns.m }}",
			"evaluating `{{ ns.l == ns.m }}`: template value nested more than 100 levels deep (a limit of connector)"},
		{"deep values ordered", deep + "{{ [ns.l, ns.m]|sort }}",
			"evaluating `{{ [ns.l, ns.m]|sort }}`: template value nested more than 100 levels deep (a limit of connector)"},
		{"nested loops", "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}",
			"evaluating `{% for j in range(100000) %}`: template evaluation takes more than 10000000 steps (a limit of connector)"},
		{"a long string read in a loop", "{% set s = 'x' * 10000000 %}{% for i in range(100) %}{% if 'y' in s %}{% endif %}{% endfor %}",
			"evaluating `{% if 'y' in s %}`: template evaluation handles more than 256 MiB in all (a limit of connector)"},
		{"a loop condition", "{% for i in range(100000) %}{% for j in range(100000) if j > 1 %}{% endfor %}{% endfor %}",
			"evaluating `{% for j in range(100000) if j > 1 %}`: template evaluation takes more than 10000000 steps (a limit of connector)"},
		{"a string grown in a loop", "{% set ns = namespace(s='') %}{% for i in range(1000) %}{% for j in range(1000) %}{% set ns.s = ns.s ~ 'xxxxxxxxxxxxxxxx' %}{% endfor %}{% endfor %}",
			"evaluating `{% set ns.s = ns.s ~ 'xxxxxxxxxxxxxxxx' %}`: template evaluation handles more than 256 MiB in all (a limit of connector)"},
		{"output written in a loop", "{% for i in range(100000) %}{{ 'x' * 1000 }}{% endfor %}",
			"evaluating `{{ 'x' * 1000 }}`: template output larger than 16 MiB (a limit of connector)"},
		{"a long strftime", "{{ now_utc().strftime('%c' * 4000000) }}",
			"evaluating `{{ now_utc().strftime('%c' * 4000000) }}`: template result larger than 16 MiB (a limit of connector)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tp, err := Compile(tt.src, allVars)
			if err != nil {
				t.Fatal(err)
			}
			_, err = tp.Eval(map[string]any{})
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// Real loops stay far within the limits: a page of a hundred thousand records, each
// name read three times, and a mapping updated in place, never copied.
func TestLoopsWithinTheLimits(t *testing.T) {
	racetest.Sequential(t)
	records := make([]any, 100000)
	for i := range records {
		records[i] = map[string]any{"name": "a record name of 32 characters."}
	}
	tp, err := Compile("{% set ns = namespace(n=0) %}{% for r in last_records %}{% if r.name|default('')|upper|length > 3 %}{% set ns.n = ns.n + 1 %}{% endif %}{% endfor %}{{ ns.n }}", allVars)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Render(map[string]any{"last_records": records}); err != nil || got != "100000" {
		t.Errorf("%q, %v", got, err)
	}
	tp, err = Compile("{% set ns = namespace(d={}) %}{% for i in range(100000) %}{% set _ = ns.d.update({i|string: i}) %}{% endfor %}{{ ns.d|length }}", allVars)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Render(nil); err != nil || got != "100000" {
		t.Errorf("%q, %v", got, err)
	}
}

func TestCompileLimits(t *testing.T) {
	for _, tt := range []struct{ name, src, want string }{
		{"a long template", "{{ x }}" + strings.Repeat(" ", maxSource),
			"a template with tags longer than 64 KiB (a limit of connector)"},
		{"too many tags", strings.Repeat("{{ 1 }}", 1001),
			"more than 1000 tags in one template (a limit of connector)"},
		{"a long expression", "{{ " + strings.Repeat("1 + ", 600) + "1 }}",
			"a tag of more than 1000 tokens (a limit of connector)"},
		{"deep parentheses", "{{ " + strings.Repeat("(", 200) + "1" + strings.Repeat(")", 200) + " }}",
			"expression nested more than 100 levels deep (a limit of connector)"},
		{"deep blocks", strings.Repeat("{% if 1 %}", 101) + strings.Repeat("{% endif %}", 101),
			"blocks nested more than 100 levels deep (a limit of connector)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.src, allVars)
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
	// A template just within the limits compiles.
	if _, err := Compile(strings.Repeat("{% if 1 %}", 100)+strings.Repeat("{% endif %}", 100), allVars); err != nil {
		t.Errorf("100 nested blocks: %v", err)
	}
	if _, err := Compile("{{ "+strings.Repeat("(", 99)+"1"+strings.Repeat(")", 99)+" }}", allVars); err != nil {
		t.Errorf("99 nested parentheses: %v", err)
	}
}

// Patterns that come from the data, one per record, are all matched, and the process keeps
// at most maxRegexCached of them compiled.
func TestRegexCacheIsBounded(t *testing.T) {
	tp, err := Compile("{{ record.text | regex_search(record.pattern) }}", allVars)
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxRegexCached + 100 {
		n := strconv.Itoa(i)
		got, err := tp.Eval(map[string]any{"record": map[string]any{"text": "id-" + n + "-end", "pattern": "id-(" + n + ")-"}})
		if err != nil || got != n {
			t.Fatalf("pattern %d: %v, %v", i, got, err)
		}
	}
	if n := regexCached.Load(); n > maxRegexCached {
		t.Errorf("%d patterns cached, more than %d", n, maxRegexCached)
	}
}
