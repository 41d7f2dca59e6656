import hashlib, os, sys, requests
from airbyte_cdk.sources.declarative.extractors.response_to_file_extractor import ResponseToFileExtractor
base = sys.argv[1] + "/v1/public/exports/authors.csv"
ex = ResponseToFileExtractor(parameters={})
out = {}
for name, url in [("plain", base), ("gzip", base + "?gzip=true")]:
    resp = requests.get(url, stream=True)
    print(name, "headers", dict(resp.headers))
    path, enc = ex._save_to_file(resp)
    data = open(path, "rb").read()
    os.remove(path)
    out[name] = data
    print(name, "encoding", enc, "bytes", len(data), "sha256", hashlib.sha256(data).hexdigest())
print("gzip saved == plain saved:", out["gzip"] == out["plain"])
# the Content-Type branch: what it does with a lower-case content-type key
try:
    print(ex._get_response_encoding({"content-type": "text/csv; charset=latin-1"}))
except Exception as e:
    print("lower-case content-type:", type(e).__name__, e)
print(ex._get_response_encoding({"Content-Type": "text/csv; charset=latin-1"}))
# NUL bytes are dropped from a body that is not compressed
class R:
    headers = {}
    def iter_content(self, chunk_size): yield b"a,b\n1\x00,2\n"
    def close(self): pass
p, _ = ex._save_to_file(R()); print("nul:", open(p,"rb").read()); os.remove(p)
if len(sys.argv) > 2:
    open(sys.argv[2], "wb").write(out["gzip"])
