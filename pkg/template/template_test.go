package template

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

var allVars = []string{
	"config", "parameters", "next_page_token", "response", "headers", "last_records", "last_record",
	"last_page_size", "record", "session_token", "stream_slice", "stream_partition", "stream_interval",
	"stream_state",
}

// fixedNow gives vars the clock of a run that stands at 2024-01-02T03:04:05.678901Z, as
// Globals.Vars does.
func fixedNow(vars map[string]any) map[string]any {
	vars[clockVar] = clock(func() time.Time { return time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC) })
	return vars
}

// headerMap is a case-insensitive Mapping, as an HTTP client would pass.
type headerMap map[string]any

func (h headerMap) Get(k string) (any, bool) {
	v, ok := h[strings.ToLower(k)]
	return v, ok
}

func (h headerMap) Keys() []string {
	var out []string
	for k := range h {
		out = append(out, k)
	}
	return out
}

func testVars() map[string]any {
	return map[string]any{
		"config": map[string]any{
			"api_key": "secret", "sandbox": false, "page_size": "100", "lon": "12.5", "empty": "",
			"ids": []any{"a", "b"}, "n": int64(3), "f": 2.5, "nested": map[string]any{"x": map[string]any{"y": "deep"}},
			"start_date": "2024-01-01", "region": "eu", "zero": 0, "tz": "Europe/Paris",
		},
		"parameters":      map[string]any{"name": "users", "cursor_field": "updated_at"},
		"next_page_token": nil,
		"response": map[string]any{
			"meta": map[string]any{"next": "abc"}, "data": map[string]any{"has_more": true},
			"id": json.Number("12345678901234567890"), "count": json.Number("42"), "ratio": json.Number("0.5"),
			"items": []any{map[string]any{"id": 1, "name": "x", "on": true}, map[string]any{"id": 2, "name": "y", "on": false}},
		},
		"headers":      headerMap{"link": map[string]any{"next": map[string]any{"url": "https://api/next?page=2"}}, "x-total": "7"},
		"last_records": []any{map[string]any{"id": 1}, map[string]any{"id": 2}},
		"last_record":  map[string]any{"id": 2, "cursor": "c2"},
		"record":       map[string]any{"name": "Alice Smith", "email": "a@b.c", "tags": []any{"x", "y", "x"}, "camelCaseKey": 1},
		"stream_slice": map[string]any{"start_time": "2024-01-01T00:00:00Z", "id": "s1"},
	}
}

type evalCase struct {
	src  string
	want any
}

func runCases(t *testing.T, cases []evalCase, vars map[string]any) {
	t.Helper()
	vars = fixedNow(vars)
	for _, c := range cases {
		tp, err := Compile(c.src, allVars)
		if err != nil {
			t.Errorf("Compile(%q): %v", c.src, err)
			continue
		}
		got, err := tp.Eval(vars)
		if err != nil {
			t.Errorf("Eval(%q): %v", c.src, err)
			continue
		}
		if !reflect.DeepEqual(got, c.want) {
			t.Errorf("Eval(%q) = %#v (%T), want %#v (%T)", c.src, got, got, c.want, c.want)
		}
	}
}

func TestRequiredExamples(t *testing.T) {
	vars := testVars()
	runCases(t, []evalCase{
		{"{{ response.has_more is false }}", false},
		{"{{ response.data.has_more is false }}", false},
		{"{{ last_records[-1]['id'] }}", int64(2)},
		{"{{ headers.link.next.url }}", "https://api/next?page=2"},
		{"{{ headers['Link']['next']['url'] }}", "https://api/next?page=2"},
		{"{{ config.get('region', 'us') }}", "eu"},
		{"{{ config.get('missing', 'us') }}", "us"},
		{"{{ (now_utc() - duration('P1D')).strftime('%Y-%m-%d') }}", "2024-01-01"},
		{"{% if config.sandbox %}https://sandbox{% else %}https://api{% endif %}.example.com", "https://api.example.com"},
		{"{{ next_page_token['next_page_token'] or '0' }},100", "0,100"},
		{"{{ response.id }}", json.Number("12345678901234567890")},
		{"/items/{{ response.id }}", "/items/12345678901234567890"},
	}, vars)
	vars["last_records"] = []any{}
	runCases(t, []evalCase{{"{{ last_records[-1]['id'] }}", Undefined}}, vars)
	vars["config"].(map[string]any)["sandbox"] = true
	runCases(t, []evalCase{{"{% if config.sandbox %}https://sandbox{% else %}https://api{% endif %}.example.com", "https://sandbox.example.com"}}, vars)
}

func TestLiteralsAndAccess(t *testing.T) {
	runCases(t, []evalCase{
		{"plain text", "plain text"},
		{"{{ 'a' }}", "a"},
		{`{{ "b\n\t\u00e9\\" }}`, "b\n\té\\"},
		{"{{ 'x' 'y' }}", "xy"},
		{"{{ 42 }}", int64(42)},
		{"{{ 1_000 }}", int64(1000)},
		{"{{ 2.5 }}", 2.5},
		{"{{ 1e3 }}", 1000.0},
		{"{{ True }}", true},
		{"{{ false }}", false},
		{"{{ None }}", nil},
		{"{{ none }}", nil},
		{"{{ [1, 'a', none] }}", []any{int64(1), "a", nil}},
		{"{{ (1, 2) }}", []any{int64(1), int64(2)}},
		{"{{ {'k': 'v', 'n': 1} }}", map[string]any{"k": "v", "n": int64(1)}},
		{"{{ {} }}", map[string]any{}},
		{"{{ config.nested.x.y }}", "deep"},
		{"{{ config['nested']['x']['y'] }}", "deep"},
		{"{{ config.ids[0] }}", "a"},
		{"{{ config.ids[-1] }}", "b"},
		{"{{ config.ids[5] }}", Undefined},
		{"{{ config.ids.1 }}", "b"},
		{"{{ config.ids[1:] }}", []any{"b"}},
		{"{{ config.ids[:-1] }}", []any{"a"}},
		{"{{ config.ids[::-1] }}", []any{"b", "a"}},
		{"{{ 'abcdef'[1:3] }}", "bc"},
		{"{{ 'abcdef'[-2:] }}", "ef"},
		{"{{ 'héllo'[1] }}", "é"},
		{"{{ response.meta.next_cursor }}", Undefined},
		{"{{ response.nothing.deeper.still }}", Undefined},
		{"{{ next_page_token.next_page_token }}", Undefined},
		{"{{ response.missing is defined }}", false},
		{"{{ response.meta is defined }}", true},
		{"{{ response.missing is not defined }}", true},
		{"{{ response.missing }}", Undefined},
		{"x{{ response.missing }}y", "xy"},
		{"{{ stream_state }}", Undefined},
		{"{{ headers['X-Total'] }}", "7"},
		{"{{ response.count }}", json.Number("42")},
	}, testVars())
}

func TestOperators(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ 1 + 2 }}", int64(3)},
		{"{{ 1 + 2.0 }}", 3.0},
		{"{{ 'a' + 'b' }}", "ab"},
		{"{{ [1] + [2] }}", []any{int64(1), int64(2)}},
		{"{{ 5 - 7 }}", int64(-2)},
		{"{{ 3 * 4 }}", int64(12)},
		{"{{ 'ab' * 2 }}", "abab"},
		{"{{ 7 / 2 }}", 3.5},
		{"{{ 6 / 2 }}", 3.0},
		{"{{ 7 // 2 }}", int64(3)},
		{"{{ -7 // 2 }}", int64(-4)},
		{"{{ 7 % 3 }}", int64(1)},
		{"{{ -7 % 3 }}", int64(2)},
		{"{{ 2 ** 10 }}", int64(1024)},
		{"{{ 2 ** -1 }}", 0.5},
		{"{{ -config.n }}", int64(-3)},
		{"{{ +config.n }}", int64(3)},
		{"{{ (1 + 2) * 3 }}", int64(9)},
		{"{{ 1 + 2 * 3 }}", int64(7)},
		{"{{ response.count + 1 }}", int64(43)},
		{"{{ response.ratio * 2 }}", 1.0},
		{"{{ 'n=' ~ 1 ~ none ~ true }}", "n=1NoneTrue"},
		{"{{ 1 == 1.0 }}", true},
		{"{{ 'a' != 'b' }}", true},
		{"{{ 2 < 3 }}", true},
		{"{{ 3 <= 3 }}", true},
		{"{{ 'b' > 'a' }}", true},
		{"{{ 2 >= 3 }}", false},
		{"{{ 1 < 2 < 3 }}", true},
		{"{{ 1 < 3 < 2 }}", false},
		{"{{ -180.00 <= config['lon']|float <= 180.00 }}", true},
		{"{{ 'a' in config.ids }}", true},
		{"{{ 'z' not in config.ids }}", true},
		{"{{ 'api_key' in config }}", true},
		{"{{ 'ell' in 'hello' }}", true},
		{"{{ 'x' in response.missing }}", false},
		{"{{ not config.sandbox }}", true},
		{"{{ not 'next' in 'nextpage' }}", false},
		{"{{ config.empty or 'dflt' }}", "dflt"},
		{"{{ config.api_key or 'dflt' }}", "secret"},
		{"{{ config.api_key and config.n }}", int64(3)},
		{"{{ config.empty and config.n }}", ""},
		{"{{ none or none }}", nil},
		{"{{ 'y' if config.n > 2 else 'n' }}", "y"},
		{"{{ 'y' if config.n > 5 else 'n' }}", "n"},
		{"{{ 'y' if config.sandbox }}", Undefined},
		{"{{(next_page_token['next_page_token'] or 0) + 1}}", int64(1)},
		{"{{ response.count == 42 }}", true},
		{"{{ response.id == response.id }}", true},
		{"{{ [1, 2] == [1, 2] }}", true},
		{"{{ {'a': 1} == {'a': 1} }}", true},
		{"{{ none == none }}", true},
		{"{{ response.missing == none }}", false},
	}, testVars())
}

func TestTests(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ next_page_token is none }}", true},
		{"{{ config is not none }}", true},
		{"{{ config.sandbox is false }}", true},
		{"{{ config.sandbox is true }}", false},
		{"{{ 0 is false }}", false},
		{"{{ config.api_key is string }}", true},
		{"{{ config.n is number }}", true},
		{"{{ response.count is number }}", true},
		{"{{ config.api_key is number }}", false},
		{"{{ config is mapping }}", true},
		{"{{ headers is mapping }}", true},
		{"{{ config.ids is iterable }}", true},
		{"{{ config.n is iterable }}", false},
		{"{{ config.n is integer }}", true},
		{"{{ config.f is float }}", true},
		{"{{ config.n is odd }}", true},
		{"{{ 4 is even }}", true},
		{"{{ none is sameas none }}", true},
		{"{{ config.n is divisibleby(3) }}", true},
		{"{{ 3 is equalto 3 }}", true},
		{"{{ 3 is eq(4) }}", false},
		{"{{ 'a' is in config.ids }}", true},
		{"{{ response.missing is undefined }}", true},
	}, testVars())
}

func TestFilters(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ config.n | string }}", "3"},
		{"{{ config.api_key | string }}", "secret"},
		{"{{ config.ids | string }}", `["a", "b"]`},
		{"{{ config.page_size | int }}", int64(100)},
		{"{{ 'abc' | int }}", int64(0)},
		{"{{ 'abc' | int(7) }}", int64(7)},
		{"{{ '3.9' | int }}", int64(3)},
		{"{{ config.lon | float }}", 12.5},
		{"{{ 'x' | float }}", 0.0},
		{"{{ config.ids | length }}", int64(2)},
		{"{{ 'héllo' | length }}", int64(5)},
		{"{{ config.ids | count }}", int64(2)},
		{"{{ response.missing | default('d') }}", "d"},
		{"{{ response.missing | d('d') }}", "d"},
		{"{{ none | default('d') }}", nil},
		{"{{ '' | default('d', true) }}", "d"},
		{"{{ 'ABC' | lower }}", "abc"},
		{"{{ 'abc' | upper }}", "ABC"},
		{"{{ config.ids | join(',') }}", "a,b"},
		{"{{ config.ids | join }}", "ab"},
		{"{{ response['items'] | join(', ', attribute='name') }}", "x, y"},
		{"{{ config.ids | first }}", "a"},
		{"{{ config.ids | last }}", "b"},
		{"{{ [] | first }}", Undefined},
		{"{{ 'ab' | list }}", []any{"a", "b"}},
		{"{{ response['items'] | map(attribute='name') | list }}", []any{"x", "y"}},
		{"{{ config.ids | map('upper') | list }}", []any{"A", "B"}},
		{"{{ response['items'] | selectattr('on') | map(attribute='id') | list }}", []any{1}},
		{"{{ response['items'] | selectattr('name', 'equalto', 'y') | map(attribute='id') | first }}", int64(2)},
		{"{{ response['items'] | rejectattr('on') | map(attribute='name') | list }}", []any{"y"}},
		{"{{ [1, 2, 3, 4] | select('odd') | list }}", []any{int64(1), int64(3)}},
		{"{{ [1, 2, 3, 4] | reject('odd') | list }}", []any{int64(2), int64(4)}},
		{"{{ record.tags | unique | list }}", []any{"x", "y"}},
		{"{{ {'b': 1, 'a': [1, 'x<'], 'c': none} | tojson }}", `{"a": [1, "x\u003c"], "b": 1, "c": null}`},
		{"{{ 'a b/c&d' | urlencode }}", "a%20b/c%26d"},
		{"{{ {'q': 'a b', 'n': 1} | urlencode }}", "n=1&q=a+b"},
		{"{{ 'user:pass' | b64encode }}", "dXNlcjpwYXNz"},
		{"{{ 'user:pass' | base64encode }}", "dXNlcjpwYXNz"},
		{"{{ 'dXNlcjpwYXNz' | base64decode }}", "user:pass"},
		{"{{ record.email | hash('md5') }}", "5d60d4e28066df254d5452f92c910092"},
		{"{{ 'abc' | hash('sha256') }}", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
		{"{{ 'abc' | hash('sha1', 'salt') }}", "99198dfc48e034c66356183f854eb322f607c1dd"},
		{"{{ 'https://x.com/d/abc123/edit' | regex_search('/d/([a-z0-9]+)') }}", "abc123"},
		{"{{ 'nothing' | regex_search('(z+)') }}", ""},
		{"{{ 'a1b22' | regex_replace('[0-9]+', '#') }}", "a#b#"},
		{"{{ 'john smith' | regex_replace('(\\\\w+) (\\\\w+)', '\\\\2 \\\\1') }}", "smith john"},
		{"{{ '  x  ' | trim }}", "x"},
		{"{{ 'aXbX' | replace('X', '-') }}", "a-b-"},
		{"{{ 2.567 | round(2) }}", 2.57},
		{"{{ 2.5 | round }}", 3.0},
		{"{{ -3 | abs }}", int64(3)},
		{"{{ [3, 1, 2] | sort }}", []any{int64(1), int64(2), int64(3)}},
		{"{{ [3, 1, 2] | sort(reverse=true) }}", []any{int64(3), int64(2), int64(1)}},
		{"{{ [1, 2] | reverse | list }}", []any{int64(2), int64(1)}},
		{"{{ 'hello world' | title }}", "Hello World"},
		{"{{ 'hello World' | capitalize }}", "Hello world"},
		{"{{ {'b': 2, 'a': 1} | items | list }}", []any{[]any{"a", int64(1)}, []any{"b", int64(2)}}},
		{"{{ {'b': 2, 'a': 1} | dictsort }}", []any{[]any{"a", int64(1)}, []any{"b", int64(2)}}},
		{"{{ config['include_closed_tasks']|lower }}", ""},
		{"{{ record['fields'] | length > 0 }}", false},
		{"{{ 'a b' | urlEncode }}", "a%20b"},
		{"{{ 'verifier' | codeChallengeS256 }}", "iMnq5o6zALKXGivsnlom_0F5_WYda32GHkxlV7mq7hQ"},
	}, testVars())
}

func TestMethods(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ config.get('api_key') }}", "secret"},
		{"{{ config.get('missing') }}", nil},
		{"{{ config.get('missing', {}).get('x') }}", nil},
		{"{{ response.missing.get('x') }}", Undefined},
		{"{{ headers.get('LINK').next.url }}", "https://api/next?page=2"},
		{"{{ {'a': 1}.items() }}", []any{[]any{"a", int64(1)}}},
		{"{{ {'a': 1, 'b': 2}.keys() }}", []any{"a", "b"}},
		{"{{ {'a': 1, 'b': 2}.values() }}", []any{int64(1), int64(2)}},
		{"{{ 'a-b-c'.split('-') }}", []any{"a", "b", "c"}},
		{"{{ 'a-b-c'.split('-', 1) }}", []any{"a", "b-c"}},
		{"{{ ' a  b '.split() }}", []any{"a", "b"}},
		{"{{ ','.join(config.ids) }}", "a,b"},
		{"{{ 'AbC'.lower() }}", "abc"},
		{"{{ 'AbC'.upper() }}", "ABC"},
		{"{{ '  x '.strip() }}", "x"},
		{"{{ 'xxaxx'.strip('x') }}", "a"},
		{"{{ '  x '.lstrip() }}", "x "},
		{"{{ '  x '.rstrip() }}", "  x"},
		{"{{ 'a b'.replace(' ', '_') }}", "a_b"},
		{"{{ 'abc'.startswith('ab') }}", true},
		{"{{ 'abc'.endswith('bc') }}", true},
		{"{{ now_utc().strftime('%Y-%m-%dT%H:%M:%S.%fZ') }}", "2024-01-02T03:04:05.678901Z"},
		{"{{ now_utc().isoformat() }}", "2024-01-02T03:04:05.678901+00:00"},
		{"{{ str_to_datetime('2024-01-02T03:04:05Z').timestamp() }}", 1704164645.0},
		{"{{ now_utc().date() }}", dtime{t: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC), kind: dtDate}},
		{"{{ '{}-{}'.format('a', 1) }}", "a-1"},
		{"{{ '{1}{0}'.format('a', 'b') }}", "ba"},
		{"{{ '{name}!'.format(name='x') }}", "x!"},
		{"{{ '{:05.1f}'.format(3.14159) }}", "003.1"},
		{"{{ 'abcabc'.count('b') }}", int64(2)},
		{"{{ config.ids.count('a') }}", int64(1)},
		{"{{ config.ids.index('b') }}", int64(1)},
		{"{% set l = [] %}{% set _ = l.append(1) %}{% set _ = l.extend([2, 3]) %}{{ l }}", "[1, 2, 3]"},
		{"{% set d = {} %}{% set _ = d.update({'a': 1}) %}{{ d }}", "{'a': 1}"},
	}, testVars())
}

func TestFunctions(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ now_utc() }}", aware(time.Date(2024, 1, 2, 3, 4, 5, 678901000, time.UTC))},
		{"{{ now_utc() | string }}", "2024-01-02 03:04:05.678901+00:00"},
		{"x{{ now_utc() }}", "x2024-01-02 03:04:05.678901+00:00"},
		{"x{{ today_utc() }}", "x2024-01-02"},
		{"{{ today_with_timezone('Pacific/Kiritimati').strftime('%Y-%m-%d') }}", "2024-01-02"},
		{"{{ timestamp(1658505815.223235) }}", int64(1658505815)},
		{"{{ timestamp('2022-01-01T00:00:00Z') }}", 1640995200.0},
		{"{{ timestamp(config['start_date']) * 1000 }}", 1704067200000.0},
		{"x{{ str_to_datetime('2022-01-14') }}", "x2022-01-14 00:00:00+00:00"},
		{"x{{ str_to_datetime('2022-01-01T13:45:30+02:00') }}", "x2022-01-01 11:45:30+00:00"},
		{"{{ max(2, 3) }}", int64(3)},
		{"{{ min([4, 1, 2]) }}", int64(1)},
		{"{{ max('2024-01-01', '2023-12-31') }}", "2024-01-01"},
		{"{{ day_delta(-1, format='%Y-%m-%d') }}", "2024-01-01"},
		{"{{ day_delta(1) }}", "2024-01-03T03:04:05.678901+0000"},
		{"x{{ duration('P1DT2H') }}", "x1 day, 2:00:00"},
		{"{{ (now_utc() - duration('PT1H')).strftime('%H') }}", "02"},
		{"{{ (now_utc() + duration('P1M')).strftime('%Y-%m-%d') }}", "2024-02-02"},
		{"x{{ now_utc() - str_to_datetime('2024-01-01') }}", "x1 day, 3:04:05.678901"},
		{"{{ format_datetime('2024-01-02T03:04:05Z', '%Y/%m/%d') }}", "2024/01/02"},
		{"{{ format_datetime('2024-01-02T03:04:05.123Z', '%s') }}", "1704164645"},
		{"{{ format_datetime('2024-01-02T03:04:05.123Z', '%ms') }}", "1704164645123"},
		{"{{ format_datetime('2024-01-02T03:04:05.5Z', '%s_as_float') }}", "1704164645.5"},
		{"{{ format_datetime('02/01/2024', '%Y-%m-%d', '%d/%m/%Y') }}", "2024-01-02"},
		{"{{ format_datetime(now_utc(), '%Y') }}", "2024"},
		{"{{ format_datetime('2017-01-25T00:00:00Z', '%Y-%m-%dT%H:%M:%S%z') }}", "2017-01-25T00:00:00+0000"},
		{"{{ sanitize_url('https://example.com/a b') }}", "https%3A%2F%2Fexample.com%2Fa%20b"},
		{"{{ camel_case_to_snake_case('customFieldName') }}", "custom_field_name"},
		{"{{ camel_case_to_snake_case('HTTPResponseCode') }}", "http_response_code"},
		{"{{ generate_uuid() | length }}", int64(36)},
		{"{{ json_loads('{\"a\": [1, 2.5]}') }}", map[string]any{"a": []any{json.Number("1"), json.Number("2.5")}}},
		{"{{ str(1) }}", "1"},
		{"{{ int('42') }}", int64(42)},
		{"{{ float('1.5') }}", 1.5},
		{"{{ len(config.ids) }}", int64(2)},
		{"{{ bool('') }}", false},
		{"{{ list('ab') }}", []any{"a", "b"}},
		{"{{ dict(a=1) }}", map[string]any{"a": int64(1)}},
		{"{{ abs(-2.5) }}", 2.5},
		{"{{ round(2.5) }}", int64(2)},
		{"{{ round(2.675, 2) }}", 2.67},
		{"{{ range(3) | list }}", []any{int64(0), int64(1), int64(2)}},
	}, testVars())
}

func TestStatements(t *testing.T) {
	runCases(t, []evalCase{
		{"{% if config.n > 5 %}big{% elif config.n > 2 %}mid{% else %}small{% endif %}", "mid"},
		{"{% set x = 2 %}{{ x * 3 }}", "6"},
		{"{% set a, b = [1, 2] %}{{ b }}{{ a }}", "21"},
		{"{% for x in config.ids %}{{ loop.index }}:{{ x }}{% if not loop.last %},{% endif %}{% endfor %}", "1:a,2:b"},
		{"{% for x in [] %}{{ x }}{% else %}empty{% endfor %}", "empty"},
		{"{% for k, v in {'b': 2, 'a': 1}.items() %}{{ k }}={{ v }};{% endfor %}", "a=1;b=2;"},
		{"{% for x in [1, 2, 3] if x > 1 %}{{ x }}{% endfor %}", "23"},
		{"{% set y = 0 %}{% for x in [1, 2] %}{% set y = x %}{% endfor %}{{ y }}", "0"},
		{"{% set ns = namespace(total=0) %}{% for x in [1, 2, 3] %}{% set ns.total = ns.total + x %}{% endfor %}{{ ns.total }}", "6"},
		{"{% raw %}{{ not evaluated }}{% endraw %}", "{{ not evaluated }}"},
		{"a{# comment #}b", "ab"},
		{"a  {%- if true -%}  b  {%- endif -%}  c", "abc"},
		{"a  {{- 'b' -}}  c", "abc"},
		{"  {{ config.n }}  ", int64(3)},
		{"{% set x %}in{{ 1 }}{% endset %}{{ x }}!", "in1!"},
		{"{%- set URL_MAPPING = {\n  \"NA\": \"https://na/\",\n  \"EU\": \"https://eu/\"\n} -%} {{ URL_MAPPING[config.get(\"region\", \"NA\")|upper] }}", "https://eu/"},
		{"{{ {{config.region}} | upper }}", "EU"},
		{"{% if config.n %}\n  a\n{% endif %}\n", "\n  a\n"},
		{"{{ config.api_key }}\n", "secret"},
	}, testVars())
}

// Jinja takes one `:` before the %} of a tag that opens a body, "for Python compatibility"
// (jinja2 3.1 Parser.parse_statements); outputs are jinja2 3.1.6's.
func TestColonBeforeABody(t *testing.T) {
	vars := testVars()
	vars["record"] = map[string]any{"projects": []any{map[string]any{"id": int64(1), "path_with_namespace": "a/b", "x": int64(2)}}}
	runCases(t, []evalCase{
		// gitlab.yaml's record transformation.
		{"{% set projects = [] %}\n{% for project in (record.get('projects') or []): %}\n{% set _ = projects.append({'id': project['id'], 'path_with_namespace': project['path_with_namespace']}) %}\n{% endfor %}\n{{ projects }}\n",
			"\n\n\n\n[{'id': 1, 'path_with_namespace': 'a/b'}]"},
		{"{% if config.zero: %}a{% elif config.n: %}b{% else: %}c{% endif %}", "b"},
		{"{% for x in config.ids: %}{{ x }}{% else: %}e{% endfor %}", "ab"},
		{"{% for x in config.ids if x != 'a': %}{{ x }}{% endfor %}", "b"},
		{"{% set x: %}v{% endset %}{{ x }}", "v"},
		{"{% if config.n :%}a{% endif %}", "a"},
	}, vars)
	for _, c := range []struct{ src, msg string }{
		// Jinja: expected token 'end of statement block', got ':'.
		{"{% if config.n:: %}{% endif %}", "unexpected `:`, expected `%}`"},
		{"{% set x = 1: %}", "unexpected `:`, expected `%}`"},
		{"{% for x in config.ids %}{% endfor: %}", "unexpected `:`, expected `%}`"},
		// Jinja: expected token 'end of print statement', got ':'.
		{"{{ config.n: }}", "unexpected `:`, expected `}}`"},
	} {
		var e *Error
		if _, err := Compile(c.src, allVars); !errors.As(err, &e) || e.Msg != c.msg {
			t.Errorf("Compile(%q) = %v, want %q", c.src, err, c.msg)
		}
	}
}

// self is Jinja's TemplateReference: its attributes and items are blocks, and a template has
// none, so they are undefined; outputs are jinja2 3.1.6's. The CDK's
// find_undeclared_variables does not list self, so no definition is refused for reading it,
// and a template that renders empty gives the field's default (None when it has none).
func TestSelf(t *testing.T) {
	runCases(t, []evalCase{
		{"{{ self.name }}", Undefined},
		{"{{ self['name'] }}", Undefined},
		{"x{{ self.name }}y", "xy"},
		{"{{ self.name is defined }}", false},
		{"{{ self.name | default('d') }}", "d"},
		{"{{ self }}", "<TemplateReference None>"},
		{"{{ self.name is undefined }}|{{ self | string }}|{{ self is defined }}|{{ not self }}", "True|<TemplateReference None>|True|False"},
		{"{% set self = 2 %}{{ self }}", "2"},
		{"{% for self in [3] %}{{ self }}{% endfor %}", "3"},
	}, testVars())
	// The template reference wins over a variable named self, as in Jinja.
	tp, err := Compile("{{ self }}", []string{"self"})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := tp.Render(map[string]any{"self": int64(1)}); err != nil || got != "<TemplateReference None>" {
		t.Errorf("with a variable self: %q, %v", got, err)
	}
	if tp, err := Compile("{{ self.name }}", nil); err != nil || tp.Reads("self") {
		t.Errorf("self compiles as a variable read: %v", err)
	}
}

func TestHeadersDuplicatesTemplate(t *testing.T) {
	src := `{%- set headers_found = response["values"] | map(attribute="v") | list -%} {%- set headers_count = {} -%} {%- set duplicate_fields = [] -%} {%- for headerFound in headers_found -%}
    {%- if headerFound is not none -%}
        {%- set headers_count = headers_count.update({headerFound: headers_count.get(headerFound, 0) + 1}) or headers_count -%}
        {%- if headers_count.get(headerFound) > 1 and headerFound not in duplicate_fields -%}
            {%- set duplicate_fields = duplicate_fields.append(headerFound) -%}
        {%- endif -%}
    {%- endif -%}
{%- endfor -%} dups: {{ duplicate_fields }}`
	tp, err := Compile(src, allVars)
	if err != nil {
		t.Fatal(err)
	}
	vals := []any{}
	for _, v := range []any{"a", "b", "a", nil, "c", "a"} {
		vals = append(vals, map[string]any{"v": v})
	}
	got, err := tp.Render(map[string]any{"response": map[string]any{"values": vals}})
	if err != nil {
		t.Fatal(err)
	}
	if got != "dups: ['a']" {
		t.Errorf("got %q", got)
	}
}

func TestToString(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "None"}, {Undefined, ""}, {true, "True"}, {false, "False"}, {int64(-3), "-3"}, {3, "3"},
		{1.0, "1.0"}, {0.1, "0.1"}, {1e16, "1e+16"}, {1.5e-5, "1.5e-05"}, {123456789.0, "123456789.0"},
		{json.Number("12345678901234567890"), "12345678901234567890"},
		{[]any{"a", int64(1), nil, true, "it's"}, `['a', 1, None, True, "it's"]`},
		{map[string]any{"k": "v", "a": []any{}}, "{'a': [], 'k': 'v'}"},
		{aware(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)), "2024-01-02 03:04:05+00:00"},
		{[]string{"x"}, "['x']"},
	} {
		if got := ToString(c.v); got != c.want {
			t.Errorf("ToString(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestConversions(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int64
		ok   bool
	}{
		{"100", 100, true}, {" 7 ", 7, true}, {int64(5), 5, true}, {5, 5, true}, {2.0, 2, true},
		{json.Number("9"), 9, true}, {"abc", 0, false}, {2.5, 0, false}, {true, 0, false}, {nil, 0, false},
	} {
		got, err := ToInt(c.v)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("ToInt(%#v) = %d, %v", c.v, got, err)
		}
	}
	for _, c := range []struct {
		v    any
		want bool
	}{
		{"true", true}, {"False", false}, {"TRUE", true}, {true, true}, {"", false}, {"x", true}, {0, false}, {nil, false}, {Undefined, false},
	} {
		if got, _ := ToBool(c.v); got != c.want {
			t.Errorf("ToBool(%#v) = %v", c.v, got)
		}
	}
	for _, v := range []any{nil, Undefined, false, 0, int64(0), 0.0, "", []any{}, map[string]any{}, json.Number("0")} {
		if Truthy(v) {
			t.Errorf("Truthy(%#v) = true", v)
		}
	}
	for _, v := range []any{true, 1, "x", []any{1}, map[string]any{"a": 1}, json.Number("0.5")} {
		if !Truthy(v) {
			t.Errorf("Truthy(%#v) = false", v)
		}
	}
	if !IsEmpty(nil) || !IsEmpty(Undefined) || !IsEmpty("") || IsEmpty(0) || IsEmpty("x") {
		t.Error("IsEmpty")
	}
}

func TestAPI(t *testing.T) {
	tp, err := Compile("{{ config.a }}{{ response.b }}", allVars)
	if err != nil {
		t.Fatal(err)
	}
	if !tp.Reads("config") || !tp.Reads("response") || tp.Reads("headers") {
		t.Error("Reads")
	}
	if tp.IsLiteral() || tp.Source() != "{{ config.a }}{{ response.b }}" {
		t.Error("IsLiteral/Source")
	}
	lit, _ := Compile("https://api.example.com", allVars)
	if !lit.IsLiteral() {
		t.Error("literal")
	}
	if v, _ := lit.Eval(nil); v != "https://api.example.com" {
		t.Error("literal eval")
	}
	again, _ := Compile("{{ config.a }}{{ response.b }}", allVars)
	if again != tp {
		t.Errorf("compiled templates are not cached (%d cached)", cacheSize.Load())
	}
	s, err := tp.Render(map[string]any{"config": map[string]any{"a": 1.0}, "response": map[string]any{"b": true}})
	if err != nil || s != "1.0True" {
		t.Errorf("Render = %q, %v", s, err)
	}
}

func TestCompileErrors(t *testing.T) {
	for _, c := range []struct {
		src  string
		msg  string
		off  int
		hint string
	}{
		{"{{ config['x'] | lenght }}", "unknown filter `lenght`", 17, "did you mean `length`?"},
		{"{{ confg.api_key }}", "unknown variable `confg`", 3, "did you mean `config`?"},
		{"{{ now_ut() }}", "unknown function `now_ut`", 3, "did you mean `now_utc`?"},
		{"{{ config.gte('a') }}", "unknown method `gte`", 10, "did you mean `get`?"},
		{"{{ x is none }}", "unknown variable `x`", 3, ""},
		{"{{ config is nnone }}", "unknown test `nnone`", 13, "did you mean `none`?"},
		{"{{ config.a ) }}", "unexpected `)`, expected `}}`", 12, ""},
		{"{{ config.a", "unclosed tag `{{`: missing `}}`", 0, ""},
		{"{% if config %}x", "unexpected end of template, expected `{% endif %}`", 16, ""},
		{"{% iff x %}", "unknown statement `iff`", 3, "did you mean `if`?"},
		{"{{ 'abc }}", "unterminated string literal", 3, ""},
		{"{{ config | selectattr('a', 'equalt', 1) }}", "unknown test `equalt`", 28, "did you mean `equalto`?"},
		{"{{ config | map('uper') }}", "unknown filter `uper`", 16, "did you mean `upper`?"},
		{"{{ day_delta(1, fmt='%Y') }}", "function `day_delta` has no argument `fmt`", 16, "did you mean `format`?"},
		{"{{ now_utc }}", "function `now_utc` must be called: `now_utc()`", 3, ""},
		{"{{ config.a $ }}", "unexpected character '$'", 12, ""},
	} {
		_, err := Compile(c.src, allVars)
		var e *Error
		if !errors.As(err, &e) {
			t.Errorf("Compile(%q) = %v, want *Error", c.src, err)
			continue
		}
		if e.Msg != c.msg || e.Offset != c.off || e.Hint != c.hint {
			t.Errorf("Compile(%q) = {%d %q %q}, want {%d %q %q}", c.src, e.Offset, e.Msg, e.Hint, c.off, c.msg, c.hint)
		}
	}
}

func TestRuntimeErrors(t *testing.T) {
	for _, c := range []struct{ src, msg string }{
		{"{{ int('abc') }}", "evaluating `{{ int('abc') }}`: invalid literal for int() with base 10: 'abc'"},
		{"a {{ 1 / 0 }}", "evaluating `{{ 1 / 0 }}`: division by zero"},
		{"{{ response.missing + 1 }}", "evaluating `{{ response.missing + 1 }}`: unsupported operand for +: a value is undefined"},
		{"{{ duration('1D') }}", "evaluating `{{ duration('1D') }}`: unable to parse duration string '1D'"},
		{"{{ 'a' < 1 }}", "evaluating `{{ 'a' < 1 }}`: '<' not supported between instances of 'str' and 'int'"},
	} {
		tp, err := Compile(c.src, allVars)
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		_, err = tp.Eval(testVars())
		var e *Error
		if !errors.As(err, &e) || e.Msg != c.msg {
			t.Errorf("Eval(%q) error = %v, want %q", c.src, err, c.msg)
		}
	}
}

func TestConcurrentEval(t *testing.T) {
	tp, err := Compile("{% for x in config.ids %}{{ x ~ config.n }}{% endfor %}{{ response.meta.next | upper }}", allVars)
	if err != nil {
		t.Fatal(err)
	}
	vars := testVars()
	done := make(chan string)
	for range 8 {
		go func() {
			s := ""
			for range 200 {
				s, _ = tp.Render(vars)
			}
			done <- s
		}()
	}
	for range 8 {
		if s := <-done; s != "a3b3ABC" {
			t.Errorf("got %q", s)
		}
	}
}

// TestDeterministic: a template that reads a clock, makes a random UUID or changes a value
// it is given may give another result with the same variables.
func TestDeterministic(t *testing.T) {
	for src, want := range map[string]bool{
		"plain text": true,
		"{{ stream_slice.get('region', 'all') }}":      true,
		"{{ record.name }} <{{ record.email }}>":       true,
		"{% for x in config.ids %}{{ x }}{% endfor %}": true,
		"{{ now_utc() }}":                              false,
		"{{ today_utc() }}":                            false,
		"{{ day_delta(-1) }}":                          false,
		"{{ today_with_timezone('UTC') }}":             false,
		"{{ generate_uuid() }}":                        false,
		"{{ config.ids.append('c') }}":                 false,
		"{% set _ = stream_slice.update({'a': 1}) %}":  false,
		"{{ record.pop('name') }}":                     false,
		"{{ config.ids.extend(['c']) }}":               false,
	} {
		tm, err := Compile(src, allVars)
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		if got := tm.Deterministic(); got != want {
			t.Errorf("%s: Deterministic() = %v, want %v", src, got, want)
		}
	}
}

// textRecord is a record whose values are JSON text, as record.Object is: StrBytes gives
// the text of a plain string or a number.
type textRecord map[string]string

func (r textRecord) Get(k string) (any, bool) {
	text, ok := r[k]
	if !ok {
		return nil, false
	}
	var v any
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		panic(err)
	}
	return v, true
}

func (r textRecord) Keys() []string { return nil }

func (r textRecord) StrBytes(k string) ([]byte, bool) {
	text, ok := r[k]
	if !ok || text[0] != '"' && text[0] != '-' && (text[0] < '0' || text[0] > '9') || strings.Contains(text, `\`) {
		return nil, false
	}
	return []byte(strings.Trim(text, `"`)), true
}

// TestStrByter: {{ record.key }} in text writes what a StrByter gives, and falls back to
// Get for a value it does not give; both render as Get's value would.
func TestStrByter(t *testing.T) {
	rec := textRecord{"name": `"Ann"`, "n": `1.50`, "esc": `"a\"b"`, "ok": `true`, "none": `null`, "list": `[1]`}
	vars := map[string]any{"record": rec}
	for src, want := range map[string]string{
		"{{ record.name }} <{{ record['n'] }}>":                "Ann <1.50>",
		"[{{ record.esc }}|{{ record.ok }}|{{ record.none }}]": `[a"b|True|None]`,
		"{{ record.list }}{{ record.missing }}.":               "[1].",
	} {
		tm, err := Compile(src, allVars)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := tm.Render(vars); err != nil || got != want {
			t.Errorf("%s: %q, %v; want %q", src, got, err, want)
		}
	}
}
