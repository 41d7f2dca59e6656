"""The API of the nested-parents example: categories -> forums -> topics -> posts.

usage: python3 server.py PORT LOGFILE
Every request is appended to LOGFILE as "METHOD /path?query". The same request always gets the
same answer (a real API's behaviour), so any difference in records comes from the requests sent.
  GET /categories            page 1: ids 1, 2 and {"next": 2}; ?page=2: id 3, no next
  GET /categories/C/forums   ids 1, 2 (the same forum ids under every category)
  GET /forums/F/topics       ids F*10+1, F*10+2
  GET /topics/T/posts        id T*100+1
"""
import json
import re
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, HTTPServer

PORT, LOG = int(sys.argv[1]), sys.argv[2]


def answer(path, query):
    if path == "/categories":
        if query.get("page") == ["2"]:
            return {"data": [{"id": 3}], "next": None}
        return {"data": [{"id": 1}, {"id": 2}], "next": 2}
    m = re.fullmatch(r"/categories/(\d+)/forums", path)
    if m:
        c = int(m.group(1))
        return {"data": [{"id": 1, "category": c}, {"id": 2, "category": c}]}
    m = re.fullmatch(r"/forums/(\d+)/topics", path)
    if m:
        f = int(m.group(1))
        return {"data": [{"id": f * 10 + 1, "forum": f}, {"id": f * 10 + 2, "forum": f}]}
    m = re.fullmatch(r"/topics/(\d+)/posts", path)
    if m:
        t = int(m.group(1))
        return {"data": [{"id": t * 100 + 1, "topic": t}]}
    return None


class Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        with open(LOG, "a") as f:
            f.write(f"GET {self.path}\n")
        u = urllib.parse.urlsplit(self.path)
        body = answer(u.path, urllib.parse.parse_qs(u.query))
        if body is None:
            self.send_response(404)
            self.end_headers()
            return
        text = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        self.wfile.write(text)

    def log_message(self, *args):
        pass


HTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
