#!/bin/sh
# Remakes the CDK's read of definitions/stream-groups.yaml (see README.md):
#   CDKREF=/work/cdkref CONNECTOR=./connector cmd/testdata/stream-groups-cdk/make-golden.sh
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
port=${PORT:-18932}
tmp=$(mktemp -d)
"$CONNECTOR" demo-api --addr "127.0.0.1:$port" 2>"$tmp/api.log" &
api=$!
trap 'kill $api; rm -rf "$tmp"' EXIT
sleep 1
printf '{"base_url": "http://127.0.0.1:%s"}\n' "$port" >"$tmp/config.json"
def="$root/definitions/stream-groups.yaml"
"$CDKREF/run" source discover --config "$tmp/config.json" --manifest-path "$def" >"$tmp/discover.out"
python3 "$CDKREF/tools/catalog.py" <"$tmp/discover.out" >"$tmp/catalog.json"
"$CDKREF/run" source read --config "$tmp/config.json" --catalog "$tmp/catalog.json" --manifest-path "$def" >"$tmp/read.out"
# The requests the demo API received, in the order it answered them.
cp "$tmp/api.log" "$here/requests.txt"
# The RECORD messages (stream and data), in the CDK's order; the LOG lines about the groups.
python3 - "$tmp/read.out" "$here" <<'PY'
import json, sys
src, out = sys.argv[1], sys.argv[2]
records, logs = [], []
for line in open(src):
    m = json.loads(line)
    if m["type"] == "RECORD":
        records.append(json.dumps({"stream": m["record"]["stream"], "data": m["record"]["data"]}, separators=(",", ":")))
    elif m["type"] == "LOG" and ("group" in m["log"]["message"] or "Syncing stream" in m["log"]["message"] or "Finished syncing" in m["log"]["message"]):
        logs.append(m["log"]["message"])
open(out + "/records.jsonl", "w").write("\n".join(records) + "\n")
open(out + "/log.txt", "w").write("\n".join(logs) + "\n")
PY
