# The CDK's RecordFilter on each case of cases.json, with config {"profiles": [10],
# "marketplace_ids": ["x"]}: prints one JSON line per case, [kept, error].
import json, sys
from airbyte_cdk.sources.declarative.extractors.record_filter import RecordFilter

config = {"profiles": [10], "marketplace_ids": ["x"]}
for case in json.load(open(sys.argv[1])):
    f = RecordFilter(config=config, condition=case["condition"], parameters={})
    try:
        kept = list(f.filter_records([case["record"]], stream_state={}, stream_slice=None, next_page_token=None))
        print(json.dumps([len(kept) == 1, None]))
    except Exception as e:
        print(json.dumps([False, type(e).__name__]))
