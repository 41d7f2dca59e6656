#!/usr/bin/env bash
# Remakes the CDK goldens of this folder: for each case of cases.txt, a fresh demo API, then
# the Airbyte CDK 7.28.2's Connector Builder handler (python -m
# airbyte_cdk.connector_builder.main read --config … --catalog …) on the case's definition,
# the repository's testing values and the case's limits; its StreamRead goes to NAME.json.
#   CDKREF=/work/cdkref pkg/builder/testdata/cdk/make-goldens.sh [NAME...]
# CDKREF is a CDK runtime whose `run builder` starts the handler (see its README).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../../../.." && pwd)"
cdk="${CDKREF:?set CDKREF to the CDK runtime}/run"
# A port nobody listens on (PORT chooses one); the test takes any 127.0.0.1 port for the API.
port="${PORT:-$("$cdk" py -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}"
base="http://127.0.0.1:$port"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$root" && go build -o "$work/connector" .)
grep -v '^#' "$here/cases.txt" | while read -r name def stream records pages slices; do
  [ -n "$name" ] || continue
  if [ $# -gt 0 ] && [[ " $* " != *" $name "* ]]; then continue; fi
  "$work/connector" demo-api --addr "127.0.0.1:$port" --log=false &
  api=$!
  sleep 1
  mkdir -p "$work/$name"
  "$cdk" py "$here/cdk_config.py" "$root/$def" "$root/testing-values.example.yaml" "$base" "$stream" "$records" "$pages" "$slices" "$work/$name"
  "$cdk" builder read --config "$work/$name/config.json" --catalog "$work/$name/catalog.json" 2>/dev/null |
    "$cdk" py "$here/stream_read.py" > "$here/$name.json"
  kill "$api"
  wait "$api" 2>/dev/null || true
  echo "$name.json"
done
