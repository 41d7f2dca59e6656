"""Writes the config and catalog of a Connector Builder test read for the CDK's handler.

usage: cdk_config.py DEF VALUES BASE_URL STREAM RECORDS PAGES SLICES OUTDIR
The config is the testing values (base_url replaced) with the handler's own keys:
__command test_read, the definition as __injected_declarative_manifest, and the limits as
__test_read_config. The catalog holds the one stream, full refresh.
"""
import json
import sys

import yaml

definition, values, base_url, stream, records, pages, slices, out = sys.argv[1:9]
with open(definition) as f:
    manifest = yaml.safe_load(f)
with open(values) as f:
    config = yaml.safe_load(f)
config["base_url"] = base_url
config["__command"] = "test_read"
config["__injected_declarative_manifest"] = manifest
config["__test_read_config"] = {
    "max_records": int(records),
    "max_pages_per_slice": int(pages),
    "max_slices": int(slices),
}
with open(out + "/config.json", "w") as f:
    json.dump(config, f)
catalog = {
    "streams": [
        {
            "stream": {"name": stream, "json_schema": {}, "supported_sync_modes": ["full_refresh", "incremental"]},
            "sync_mode": "full_refresh",
            "destination_sync_mode": "overwrite",
        }
    ]
}
with open(out + "/catalog.json", "w") as f:
    json.dump(catalog, f)
