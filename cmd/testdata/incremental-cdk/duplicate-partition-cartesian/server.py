"""The feed API of cmd/incremental_cdk_test.go (feedAPI), for the routes of this example only.

usage: python3 server.py DATA.json PORT LOGFILE
Each request is appended to LOGFILE as "N GET /path?query". A route keeps the records whose
fields equal the path's {captures}, then applies its filters (int or one strptime format, the
query parameter compared with the record's field), orders by order_by, and answers
{"data": [...]} (with page_size: {"next_page": N or null, "data": [...]}, page N of the
query parameter page_param, default page).
"""
import datetime
import json
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

DATA, PORT, LOG = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ROUTES = json.load(open(DATA))["routes"]
COUNT = [0]
OPS = {">=": lambda a, b: a >= b, ">": lambda a, b: a > b, "<=": lambda a, b: a <= b, "<": lambda a, b: a < b}


def parse(v, fmt):
    if fmt == "int":
        return int(v)
    return datetime.datetime.strptime(str(v), fmt).replace(tzinfo=datetime.timezone.utc)


def match(pattern, path):
    p, q = pattern.strip("/").split("/"), path.strip("/").split("/")
    if len(p) != len(q):
        return None
    caps = {}
    for a, b in zip(p, q):
        if a.startswith("{") and a.endswith("}"):
            caps[a[1:-1]] = b
        elif a != b:
            return None
    return caps


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        COUNT[0] += 1
        with open(LOG, "a") as f:
            f.write(f"{COUNT[0]} GET {self.path}\n")
        u = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(u.query))
        for route in ROUTES:
            caps = match(route["path"], u.path)
            if caps is None:
                continue
            recs = [r for r in route["records"] if all(str(r.get(k)) == v for k, v in caps.items())]
            for flt in route.get("filters", []):
                if flt["param"] not in query:
                    continue
                want = parse(query[flt["param"]], flt["format"])
                recs = [r for r in recs if flt["field"] not in r
                        or OPS[flt["op"]](parse(r[flt["field"]], flt["format"]), want)]
            if route.get("order"):
                fmt = route["filters"][0]["format"]
                recs.sort(key=lambda r: parse(r[route["order_by"]], fmt), reverse=route["order"] == "desc")
            out = {"data": recs}
            if route.get("page_size"):
                size, page = route["page_size"], int(query.get(route.get("page_param", "page"), "1"))
                more = len(recs) > page * size
                out = {"next_page": page + 1 if more else None, "data": recs[(page - 1) * size:page * size]}
            body = json.dumps(out).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
