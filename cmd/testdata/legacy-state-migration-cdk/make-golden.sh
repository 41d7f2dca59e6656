#!/bin/sh
# Remakes the CDK's runs of definitions/legacy-state-migration.yaml (see README.md).
# Run from the repository's root: CDKREF=/work/cdkref cmd/testdata/legacy-state-migration-cdk/make-golden.sh
set -eu
CDKREF=${CDKREF:?set CDKREF to a runnable Airbyte CDK 7.28.2 (its run script)}
PORT=${PORT:-18777}
here=cmd/testdata/legacy-state-migration-cdk
def=definitions/legacy-state-migration.yaml
tmp=$(mktemp -d)
trap 'kill ${api:-0} 2>/dev/null || true; rm -rf "$tmp"' EXIT
go build -o "$tmp/connector" .
for stream in author_reviews listed_author_reviews; do
	run=$here/$stream
	mkdir -p "$run"
	# The testing values of the examples as the CDK's config (it applies no spec default:
	# review_authors is written), the API on PORT.
	"$CDKREF/run" py - "$PORT" > "$run/config.json" <<'PY'
import json, sys, yaml
values = yaml.safe_load(open("testing-values.example.yaml"))
config = {"base_url": "http://127.0.0.1:" + sys.argv[1], "start_date": values["start_date"],
          "end_date": values["end_date"], "review_authors": 3}
print(json.dumps(config))
PY
	printf '{"streams":[{"stream":{"name":"%s","json_schema":{},"supported_sync_modes":["full_refresh","incremental"]},"sync_mode":"incremental","destination_sync_mode":"append","cursor_field":["updated_at"]}]}\n' "$stream" > "$run/catalog.json"
	cp definitions/testdata/legacy-state-migration.state.json "$run/state-in.json"
	# A demo API started afresh for each run, logging one line per request.
	"$tmp/connector" demo-api --addr "127.0.0.1:$PORT" --log > "$tmp/api.log" 2>&1 &
	api=$!
	sleep 1
	"$CDKREF/run" source read --config "$run/config.json" --catalog "$run/catalog.json" \
		--state "$run/state-in.json" --manifest-path "$def" > "$tmp/stdout.jsonl"
	kill $api
	wait $api 2>/dev/null || true
	# requests.txt: "N METHOD URL" in the order the API answered them.
	grep -E '^(GET|POST) ' "$tmp/api.log" | awk '{print NR " " $1 " " $2}' > "$run/requests.txt"
	# messages.jsonl: the RECORD and STATE lines, emitted_at removed; state-out.json: the
	# stream_state of the last STATE.
	"$CDKREF/run" py - "$tmp/stdout.jsonl" "$run" <<'PY'
import json, re, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
kept = [re.sub(r',"emitted_at":\d+', "", l.rstrip("\n")) for l in lines
        if json.loads(l)["type"] in ("RECORD", "STATE")]
open(sys.argv[2] + "/messages.jsonl", "w").write("\n".join(kept) + "\n")
last = [json.loads(l) for l in kept if json.loads(l)["type"] == "STATE"][-1]
open(sys.argv[2] + "/state-out.json", "w").write(json.dumps(last["state"]["stream"]["stream_state"], indent=1) + "\n")
PY
done
