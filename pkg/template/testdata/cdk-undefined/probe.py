import json
from jinja2.exceptions import UndefinedError
from airbyte_cdk.sources.declarative.interpolation.jinja import JinjaInterpolation, _ENVIRONMENT
from airbyte_cdk.sources.declarative.interpolation.interpolated_string import InterpolatedString
from airbyte_cdk.sources.declarative.interpolation.interpolated_boolean import InterpolatedBoolean

rec = {"id": 1, "name": "a", "n": None, "s": "5"}
tpls = [
 "{{ record['prints'] > 0 }}", "{{ 0 < record['prints'] }}", "{{ record['prints'] + 1 }}",
 "{{ record['prints'] - 1 }}", "{{ record['prints'] * 2 }}", "{{ -record['prints'] }}",
 "{{ record['prints'] | int }}", "{{ record['prints'] | float }}", "{{ record['prints'] ** 2 }}",
 "{{ record['prints'] % 2 }}", "{{ record['prints'] / 2 }}", "{{ record['prints'] // 2 }}",
 "{{ record['prints'] ~ 'x' }}", "{{ record['prints'] == 0 }}", "{{ record['prints'].x }}",
 "{{ record['prints']['x'] }}", "{{ record['prints'].get('x') }}",
 "{{ record['n'] > 0 }}", "{{ record['s'] > 0 }}", "{{ record['s'] + 1 }}",
 "{{ format_datetime(record['createdAt'], '%Y-%m-%d') }}",
 "{{ format_datetime(record['createdAt'], '%Y-%m-%d', '%Y') }}",
 "{{ record['uri'] | regex_search('x(.*)') }}",
 "{{ record['n'] | regex_search('x(.*)') }}",
 "{{ timestamp(record['createdAt']) }}", "{{ str_to_datetime(record['createdAt']) }}",
 "a{{ record['prints'] > 0 }}b", "{% if record['prints'] > 0 %}y{% else %}n{% endif %}",
 "{{ record['prints'] | length }}", "{{ record['prints'] | string }}", "{{ record['prints'] | first }}",
 "{{ record['prints'] | join(',') }}", "{{ max(record['prints'], 1) }}", "{{ record['prints'] in [1] }}",
 "{{ 1 in record['prints'] }}", "{{ record['name'] > 0 }}", "{{ record['id'] / 0 }}",
 "{{ record['prints'] | lower }}", "{{ record['prints'] | b64encode }}", "{{ record['prints'] | base64encode }}",
 "{{ record['prints'] | hash('md5') }}", "{{ record['prints'] | tojson }}", "{{ record['prints'] is defined }}",
 "{{ int(record['prints']) }}", "{{ record.prints.x.y }}", "{{ record['name'].upper() }}", "{{ record['prints'].upper() }}",
 "{{ record['prints'] | default(7) > 0 }}",
 "{{ timestamp(record['n']) }}", "{{ str_to_datetime(record['n']) }}",
 "{{ format_datetime(record['n'], '%Y-%m-%d') }}", "{{ format_datetime(record['n'], '%Y-%m-%d', '%Y') }}",
 "{{ record['id'] | regex_search('(1)') }}", "{{ record['name'] | regex_search('(a)') }}",
 "{{ [1, record['prints']] < [1, 2] }}", "{{ record['n'] + 1 }}", "{{ -record['n'] }}",
]
ji = JinjaInterpolation()
def cls(f):
    try:
        return {"value": f()}
    except Exception as e:
        return {"raises": type(e).__name__ + ": " + str(e)[:100]}
for t in tpls:
    if 'int(' in t or 'b64encode' in t:
        continue
    row = {"template": t}
    try:
        ctx = {"config": {}, "record": rec}
        _ENVIRONMENT.from_string(t).render(ctx)
        row["render"] = "ok"
    except Exception as e:
        row["render"] = type(e).__name__
    row["eval_no_default"] = cls(lambda: ji.eval(t, {}, None, record=rec))
    row["interpolated_string"] = cls(lambda: InterpolatedString(t, parameters={}).eval({}, record=rec))
    row["interpolated_boolean"] = cls(lambda: InterpolatedBoolean(t, parameters={}).eval({}, record=rec))
    print(json.dumps(row, default=repr))
