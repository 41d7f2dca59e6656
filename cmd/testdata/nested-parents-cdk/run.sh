#!/bin/sh
# Makes the CDK golden of this folder: CDK 7.28.2 (/work/cdkref) reads topics and posts from
# server.py; the requests it sent go to requests.txt, its RECORD lines to records.jsonl.
set -e
cd "$(dirname "$0")"
PORT=${PORT:-18931}
LOG=$(mktemp)
python3 server.py "$PORT" "$LOG" & SERVER=$!
trap 'kill $SERVER' EXIT
sleep 0.5
printf '{"base_url": "http://127.0.0.1:%s"}\n' "$PORT" > /tmp/nested-parents-config.json
/work/cdkref/run source read --config /tmp/nested-parents-config.json --catalog catalog.json \
  --manifest-path manifest.yaml > /tmp/nested-parents-cdk.out
grep '"type":"RECORD"' /tmp/nested-parents-cdk.out \
  | python3 -c 'import json,sys
for l in sys.stdin:
    r=json.loads(l)["record"]; print(json.dumps({"stream": r["stream"], "data": r["data"]}))' > records.jsonl
cp "$LOG" requests.txt
rm -f "$LOG"
