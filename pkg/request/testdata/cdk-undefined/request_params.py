# The CDK's InterpolatedRequestOptionsProvider on request parameters and a JSON body whose
# templates use a missing config value as a number (UndefinedError) or add text and a
# number (TypeError); prints the parameters and the body it would send, as JSON.
import json
from airbyte_cdk.sources.declarative.requesters.request_options.interpolated_request_options_provider import InterpolatedRequestOptionsProvider

config = {"s": "t", "n": 2}
mapping = {
    "missing_plus_one": "{{ config['missing'] + 1 }}",
    "text_plus_one": "{{ config['s'] + 1 }}",
    "n_plus_one": "{{ config['n'] + 1 }}",
    "plain": "ok",
}
p = InterpolatedRequestOptionsProvider(config=config, request_parameters=dict(mapping), request_body_json=dict(mapping), parameters={})
print(json.dumps({"request_parameters": p.get_request_params(), "request_body_json": p.get_request_body_json()}))
