#!/bin/sh
# Makes run1 of this example: CDK 7.28.2 (/work/cdkref) reads builds from server.py.
set -e
cd "$(dirname "$0")"
PORT=${PORT:-18933}
LOG=$(mktemp)
OUT=$(mktemp)
python3 server.py data.json "$PORT" "$LOG" & SERVER=$!
trap 'kill $SERVER; rm -f "$LOG" "$OUT"' EXIT
sleep 0.5
cat > run1/config.json <<JSON
{
 "base_url": "http://127.0.0.1:$PORT",
 "start_date": "2024-03-01T00:00:00Z",
 "end_date": "2024-03-05T00:00:00Z"
}
JSON
cat > /tmp/dup-cartesian-catalog.json <<'JSON'
{"streams": [{"stream": {"name": "builds", "json_schema": {}, "supported_sync_modes": ["full_refresh", "incremental"]},
  "sync_mode": "incremental", "destination_sync_mode": "append", "cursor_field": ["updated_at"]}]}
JSON
/work/cdkref/run source read --config run1/config.json --catalog /tmp/dup-cartesian-catalog.json \
  --manifest-path manifest.yaml > "$OUT"
grep -E '^\{"type":"(RECORD|STATE)"' "$OUT" | python3 -c 'import json,sys
for l in sys.stdin:
    m=json.loads(l)
    if m["type"]=="RECORD":
        m={"type":"RECORD","record":{"stream":m["record"]["stream"],"data":m["record"]["data"]}}
    print(json.dumps(m, separators=(",", ":")))' > run1/messages.jsonl
grep '^{"type":"STATE"' "$OUT" | tail -1 | python3 -c 'import json,sys
m=json.loads(sys.stdin.read())["state"]
m.pop("sourceStats", None)
print(json.dumps([m], indent=1), end="")' > run1/state-out.json
grep -o 'Partition duplication[^"]*' "$OUT" > run1/log.txt || true
cp "$LOG" run1/requests.txt
