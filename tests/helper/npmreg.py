"""tests/helper/npmreg.py - a bad npm registry for the gateway's tests.

Listens on 127.0.0.1 at a free port, which it prints as its first line;
with an argument LOG, appends each request's path to that file, and to
LOG.bytes "PATH BYTES" once a tarball's body is sent (the body's bytes:
what the upstream moved).
Packuments name tarballs at http://host.sbxrun.internal:PORT/ (how a
sandbox's gateway reaches this host), or below $NPMREG_URL; with
$NPMREG_TLS=CERT:KEY it speaks HTTPS with that certificate; packages:
  good     a tarball that matches its integrity
  bad      a tarball whose bytes differ from its integrity
  trunc    a tarball cut short (Content-Length promises more)
  slow     a tarball sent half, the rest when the test says (LOG.release)
  stall    a packument that stops after its headers
  huge     a packument of 64 MiB
  big      a valid packument of NPMREG_BIG_MB MiB (default 8): 1.0.0 and
           many more versions, each with some 10 KiB of description; its
           revalidation (If-Modified-Since) answered 304 after
           NPMREG_304_DELAY seconds (default 0)
  other    a tarball on a host no profile allows
  redir    a tarball that redirects to a private address
  loop     a tarball that redirects to 127.0.0.1
  pad1..pad4  tarballs of some 40 KiB each (incompressible), for the cap
  set-a..set-d  tarballs of some 32 KiB each, sent after NPMREG_DELAY
           seconds (default 1: concurrent installs overlap), and app,
           which depends on them
  aged     1.0.0 and 1.1.0 published weeks ago, 2.0.0 (latest) two days ago
  withdep  depends on depoff (for the allow list's dependency case)
  depoff, evil-x, left-pad   plain packages
  @anyone/dists  a scoped plain package (its tarball's path has a
           "/dists/" segment, as an apt archive's paths do)
  many-1..many-80  packuments held until NPMREG_DELAY seconds after the
           first of them was asked for, then each sent at once (more at
           once than the gateway fetches at once: the first are still
           running while the rest come in, and the rest cost no more wait)
  big1..big4  packuments of some 40 KiB each (a long readme), for the cap
  tree-0..tree-N-1  with NPMREG_TREE=N[:F]: a tree of N small packages,
           tree-I depending on the F (default 12) from tree-F*I+1 (npm
           install tree-0 brings all N), tarballs of 1-24 KiB (incompressible)
A revalidation (If-Modified-Since the packuments' date, answered 304) is
held NPMREG_SLOW_304 seconds first (default 0): an upstream slow to
revalidate; with NPMREG_HOLD_304 set, until LOG.release304 exists (at
most 60 s).
Every packument has "time": 1.0.0 of the plain ones was published 100 days
before the registry started. With NPMREG_FLAVOUR=X every tarball's
index.js exports "X" instead of 42 (and so has another integrity): a
second registry with the same names and other bytes.
"""
import base64
import hashlib
import http.server
import io
import json
import os
import random
import re
import sys
import tarfile
import threading
import time


SET = ["set-a", "set-b", "set-c", "set-d"]
DEPS = {"app": {d: "1.0.0" for d in SET}, "withdep": {"depoff": "^1.0.0"}}
FLAVOUR = os.environ.get("NPMREG_FLAVOUR", "")
INDEX_JS = ("module.exports = %s;\n" % (json.dumps(FLAVOUR) if FLAVOUR else "42")).encode()
_n, _, _f = os.environ.get("NPMREG_TREE", "0").partition(":")
TREE, FANOUT = ["tree-%d" % i for i in range(int(_n))], int(_f or 12)
for _i in range(len(TREE)):
    _kids = [TREE[k] for k in range(FANOUT * _i + 1, min(FANOUT * (_i + 1) + 1, len(TREE)))]
    if _kids:
        DEPS[TREE[_i]] = {k: "^1.0.0" for k in _kids}


def tgz(name, version="1.0.0"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as t:
        meta = {"name": name, "version": version, "main": "index.js"}
        if name in DEPS:
            meta["dependencies"] = DEPS[name]
        data = json.dumps(meta).encode()
        files = [("package/package.json", data), ("package/index.js", INDEX_JS)]
        blob = {"slow": 64, "pad": 40, "set": 32}.get(re.sub(r"-?[a-d0-9]$", "", name), 0)
        if name.startswith("tree-"):
            blob = random.Random(name).randint(1, 24)
        if blob:  # incompressible (for slow: half of it is a real part)
            files.append(("package/blob", random.Random(name).randbytes(blob << 10)))
        for path, body in files:
            info = tarfile.TarInfo(path)
            info.size = len(body)
            info.mtime = 0
            t.addfile(info, io.BytesIO(body))
    return buf.getvalue()


PLAIN = ["good", "bad", "trunc", "slow", "other", "redir", "loop", "app", "withdep", "depoff", "evil-x",
         "left-pad", "@anyone/dists"] + SET + ["pad%d" % i for i in range(1, 5)] + \
        ["many-%d" % i for i in range(1, 81)] + ["big%d" % i for i in range(1, 5)] + TREE
DAY = 86400
NOW = time.time()
# name -> {version: days before NOW it was published}, and its latest
VERSIONS = {n: ({"1.0.0": 100}, "1.0.0") for n in PLAIN}
VERSIONS["aged"] = ({"1.0.0": 30, "1.1.0": 20, "2.0.0": 2}, "2.0.0")
TARS = {(n, v): tgz(n, v) for n, (vs, _) in VERSIONS.items() for v in vs}
PORT = 0
LASTMOD = "Thu, 01 Jan 2026 00:00:00 GMT"  # every packument's; If-Modified-Since it: 304 (LOG.304)
LOG = sys.argv[1] if len(sys.argv) > 1 else None  # where each request's path is appended


MANY = {"lock": threading.Lock(), "first": None}  # when the first many-* was asked for


def many_wait():
    with MANY["lock"]:
        if MANY["first"] is None:
            MANY["first"] = time.monotonic()
    left = float(os.environ.get("NPMREG_DELAY", "1")) - (time.monotonic() - MANY["first"])
    if left > 0:
        time.sleep(left)


def iso(days_ago):
    return time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(NOW - days_ago * DAY))


BIG = {}


def big_packument():
    # built once: every version names good's tarball (a real integrity)
    if "doc" not in BIG:
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(TARS["good", "1.0.0"]).digest()).decode()
        url = "http://host.sbxrun.internal:%d/good/-/good-1.0.0.tgz" % PORT
        pad = "lorem ipsum dolor sit amet " * 380
        want = int(os.environ.get("NPMREG_BIG_MB", "8")) << 20
        doc = {"name": "big", "dist-tags": {"latest": "1.0.0"}, "versions": {}, "time": {}}
        i = 0
        while i * (len(pad) + 300) < want:
            v = "1.0.%d" % i
            doc["versions"][v] = {"name": "big", "version": v, "description": pad,
                                  "dist": {"tarball": url.replace("good-1.0.0", "big-" + v), "integrity": integrity}}
            doc["time"][v] = iso(100)
            i += 1
        BIG["doc"] = json.dumps(doc).encode()
    return BIG["doc"]


def packument(name):
    versions, latest = VERSIONS[name]
    doc = {"name": name, "dist-tags": {"latest": latest}, "versions": {},
           "time": {"created": iso(max(versions.values())), "modified": iso(min(versions.values()))}}
    for v, age in versions.items():
        base = os.environ.get("NPMREG_URL") or "http://host.sbxrun.internal:%d" % PORT
        url = "%s/%s/-/%s-%s.tgz" % (base, name, name.split("/")[-1], v)
        if name == "other":
            url = "http://not-allowed.example.test/other/-/other-1.0.0.tgz"
        integrity = "sha512-" + base64.b64encode(hashlib.sha512(TARS[name, v]).digest()).decode()
        doc["versions"][v] = {"name": name, "version": v, "dist": {"tarball": url, "integrity": integrity}}
        if name in DEPS:
            doc["versions"][v]["dependencies"] = DEPS[name]
        doc["time"][v] = iso(age)
    if name.startswith("big"):
        doc["readme"] = random.Random(name).randbytes(20 << 10).hex()
    return json.dumps(doc).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body, length=None, ctype="application/json", lastmod=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        if lastmod:
            self.send_header("Last-Modified", lastmod)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        path = self.path.strip("/")
        if LOG:
            with open(LOG, "a") as f:
                f.write(path + "\n")
        try:
            if "/-/" in path:
                name, _, file = path.partition("/-/")
                self.tarball(name, file[len(name.split("/")[-1]) + 1:-len(".tgz")])
            else:
                self.doc(path.replace("%2f", "/").replace("%2F", "/"))
        except OSError:
            pass

    def doc(self, name):
        if name == "stall":
            self.send_response(200)
            self.send_header("Content-Length", "100")
            self.end_headers()
            self.wfile.write(b"{")
            self.wfile.flush()
            time.sleep(30)
        elif name == "huge":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            chunk = b" " * (1 << 20)
            for _ in range(64):
                self.wfile.write(chunk)
        elif name == "big" and self.headers.get("If-Modified-Since") == LASTMOD:
            time.sleep(float(os.environ.get("NPMREG_304_DELAY", "0")))
            if LOG:
                with open(LOG + ".304", "a") as f:
                    f.write(name + "\n")
            self.send(304, b"", lastmod=LASTMOD)
        elif name == "big":
            self.send(200, big_packument(), lastmod=LASTMOD)
        elif name.startswith("many-") and name in VERSIONS:
            many_wait()
            self.send(200, packument(name))
        elif name in VERSIONS and self.headers.get("If-Modified-Since") == LASTMOD:
            time.sleep(float(os.environ.get("NPMREG_SLOW_304", "0")))
            for _ in range(600 if os.environ.get("NPMREG_HOLD_304") and LOG else 0):
                if os.path.exists(LOG + ".release304"):
                    break
                time.sleep(0.1)
            if LOG:
                with open(LOG + ".304", "a") as f:
                    f.write(name + "\n")
            self.send(304, b"", lastmod=LASTMOD)
        elif name in VERSIONS:
            self.send(200, packument(name), lastmod=LASTMOD)
        else:
            self.send(404, b"{}")

    def tarball(self, name, version):
        body = TARS.get((name, version))
        if body is None:
            self.send(404, b"")
        elif name == "bad":
            self.send(200, body[:-1] + bytes([body[-1] ^ 1]), ctype="application/octet-stream")
        elif name == "trunc":
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
        elif name == "slow":
            # half now, the rest once LOG.release exists (at most 30 s later)
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            for _ in range(300):
                if not LOG or os.path.exists(LOG + ".release"):
                    break
                time.sleep(0.1)
            self.wfile.write(body[len(body) // 2:])
        elif name in ("redir", "loop"):
            self.send_response(302)
            self.send_header("Location", "http://10.1.2.3/x.tgz" if name == "redir" else
                             "http://127.0.0.1:%d/good/-/good-1.0.0.tgz" % PORT)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            if name in SET:
                time.sleep(float(os.environ.get("NPMREG_DELAY", "1")))
            self.send(200, body, ctype="application/octet-stream")
            if LOG:
                with open(LOG + ".bytes", "a") as f:
                    f.write("%s %d\n" % (self.path.strip("/"), len(body)))


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
if os.environ.get("NPMREG_TLS"):
    import ssl
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(*os.environ["NPMREG_TLS"].split(":", 1))
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
PORT = server.server_address[1]
print(PORT, flush=True)
server.serve_forever()
