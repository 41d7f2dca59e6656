"""Prints the StreamRead of the handler's output (the data of its one RECORD message),
indented by two spaces, keys in the CDK's order."""
import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message.get("type") == "RECORD":
        print(json.dumps(message["record"]["data"], indent=2, ensure_ascii=False))
        break
else:
    sys.exit("no RECORD message in the handler's output")
