# Records the CDK's DpathExtractor (with its default JsonDecoder) takes out of response
# bodies, mostly top-level JSON arrays, for several field paths. One JSON line per case:
# the body, the field path, and the records or the error.
import json

import requests

from airbyte_cdk.sources.declarative.extractors.dpath_extractor import DpathExtractor

bodies = [
    '[{"customer": {"id": 1}}, {"customer": {"id": 2}}]',
    '[{"id": 1}, {"id": 2}]',
    '[{"data": [{"id": 1}, {"id": 2}]}, {"data": {"id": 3}}, {"other": 1}, {"data": []}, {"data": {}}]',
    '[{"a": {"customer": {"id": 1}}, "b": {"customer": {"id": 2}}}, {"c": {"id": 3}}]',
    '[[{"id": 1}, {"id": 2}], [{"id": 3}]]',
    '[{}, {"id": 1}, [], null]',
    '[{"0": {"id": 9}}, {"id": 1}]',
    '[]',
    '{"data": [{"id": 1}], "customer": {"id": 2}}',
    '{}',
    '{"data": {}}',
    '{"0": {"id": 9}, "007": {"id": 7}, "1.5": {"id": 1}, "True": {"id": 2}, "None": {"id": 3}, "-1": {"id": 4}, " 1": {"id": 5}, "1e3": {"id": 6}}',
    '[[{"id": 1}, {"id": 2}], {"007": [{"id": 7}]}]',
]
paths = [[], ["data"], ["customer"], ["*"], ["*", "customer"], ["{{ 'cust' + 'omer' }}"], ["0"], ["data", "*"],
         ["007"], ["1.5"], ["True"], ["None"], ["-1"], [" 1"], ["1e3"], ["1"]]

for body in bodies:
    for path in paths:
        response = requests.Response()
        response.status_code = 200
        response._content = body.encode()
        extractor = DpathExtractor(field_path=path, config={}, parameters={})
        try:
            out = {"records": list(extractor.extract_records(response))}
        except Exception as e:
            out = {"error": type(e).__name__ + ": " + str(e)}
        print(json.dumps({"body": body, "path": path, **out}))
