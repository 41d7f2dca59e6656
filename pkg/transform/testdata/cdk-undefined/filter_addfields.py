# Runs the CDK's own RecordFilter and AddFields on records with missing, null and
# mistyped values, and prints the records each keeps or writes, one JSON line each.
import json
from airbyte_cdk.sources.declarative.extractors.record_filter import RecordFilter
from airbyte_cdk.sources.declarative.transformations.add_fields import AddFields, AddedFieldDefinition

records = [
    {"id": 1, "prints": 3, "createdAt": "Tue, 05 Mar 2024 10:20:30 +0000", "uri": "https://api.example/users/AB-1"},
    {"id": 2},
    {"id": 3, "prints": 0, "createdAt": None, "uri": None},
    {"id": 4, "prints": None},
    {"id": 5, "prints": "7"},
]

condition = "{{ record['prints'] > 0 }}"
kept = RecordFilter(parameters={}, config={}, condition=condition).filter_records(
    [dict(r) for r in records], stream_state={})
print(json.dumps({"record_filter": condition, "kept": list(kept)}))

fields = [
    ("created_at_utc", "{{ format_datetime(record['createdAt'], '%Y-%m-%dT%H:%M:%S', '%a, %d %b %Y %H:%M:%S %z') }}"),
    ("user_id", "{{ record['uri'] | regex_search(\"\\/([a-zA-Z0-9-]*)$\") }}"),
    ("double", "{{ record['id'] * 2 }}"),
]
add = AddFields(fields=[AddedFieldDefinition(path=[p], value=v, value_type=None, parameters={}) for p, v in fields], parameters={})
out = []
for r in records:
    r = dict(r)
    add.transform(r, config={})
    out.append(r)
print(json.dumps({"add_fields": dict(fields), "records": out}))

for cond in ["{{ record['prints'] > 0 }}", "{{ value > 0 }}"]:
    # The condition of AddFields: an InterpolatedBoolean as in RecordFilter.
    add = AddFields(fields=[AddedFieldDefinition(path=["flag"], value="{{ record['prints'] }}", value_type=None, parameters={})],
                    condition=cond, parameters={})
    out = []
    for r in records:
        r = dict(r)
        add.transform(r, config={})
        out.append(r)
    print(json.dumps({"add_fields_condition": cond, "records": out}))

# An undefined value used as a number in an AddFields value: the CDK's default is the
# template itself, which fails again.
add = AddFields(fields=[AddedFieldDefinition(path=["next"], value="{{ record['prints'] + 1 }}", value_type=None, parameters={})], parameters={})
try:
    add.transform({"id": 2}, config={})
    print(json.dumps({"add_fields_undefined": "no error"}))
except Exception as e:
    print(json.dumps({"add_fields_undefined": type(e).__name__ + ": " + str(e)}))
