# A logging reverse proxy: forwards every request to the upstream URL given as argv[2] and
# appends one JSON line per request (method, path and query, Authorization header, status)
# to argv[3]. Listens on 127.0.0.1:argv[1].
import http.server, json, sys, urllib.request, urllib.error

PORT, UPSTREAM, LOG = int(sys.argv[1]), sys.argv[2], sys.argv[3]

class Proxy(http.server.BaseHTTPRequestHandler):
    def _forward(self):
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else None
        req = urllib.request.Request(UPSTREAM + self.path, data=body, method=self.command)
        for k, v in self.headers.items():
            if k.lower() not in ("host", "content-length", "accept-encoding", "connection"):
                req.add_header(k, v)
        try:
            resp = urllib.request.urlopen(req)
            status, headers, data = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            status, headers, data = e.code, e.headers, e.read()
        with open(LOG, "a") as f:
            f.write(json.dumps({"method": self.command, "url": self.path,
                                "authorization": self.headers.get("Authorization"), "status": status}) + "\n")
        self.send_response(status)
        for k, v in headers.items():
            if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    do_GET = do_POST = _forward
    def log_message(self, *a): pass

http.server.ThreadingHTTPServer(("127.0.0.1", PORT), Proxy).serve_forever()
