"""tests/helper/cargoreg.py - the Cargo fixture upstream of the gateway's
tests (58-gateway-cargo): a sparse registry (RFC 2789) of crates made by
the real tool, `cargo package --workspace --no-verify --offline`
(Debian's cargo-web; its interdependent members are packaged against
cargo's own temporary overlay, no network), with index lines written
from their real sha256.

Usage: cargoreg.py CRATES-DIR  (made once, kept: the crates are the same
for every run; writes "PORT DLPORT" on stdout once listening on 127.0.0.1:
the index below /index/ on PORT, the .crate files below /crates/ on DLPORT,
a download host of its own as some registries have)

Crates (each 1.0.0 published 100 days ago unless said):
  a, ab -> a, abc -> ab        the 1/, 2/ and 3/x/ index layouts
  Caps_Crate                   capitals and '_' (index path ca/ps/caps_crate)
  dep05 .. dep10               dep06 -> dep05, dep08 -> dep07
  yank 1.0.0, 1.1.0 yanked     cargo resolves "1" to 1.0.0
  young 1.0.0, 1.1.0 published an hour ago
  nodate 1.0.0                 its line has no pubtime
  evil 1.0.0                   served with another crate's bytes (its cksum
                               is its own): a tampered crate
config.json's dl (on DLPORT) uses the {crate} and {version} markers. Every request is
counted; GET /_hits prints "PATH COUNT" lines.
"""
import hashlib
import http.server
import json
import os
import subprocess
import sys
import threading
import time

DAY = 86400
CRATES = {  # name: (deps, versions)
    "a": ([], ["1.0.0"]),
    "ab": (["a"], ["1.0.0"]),
    "abc": (["ab"], ["1.0.0"]),
    "Caps_Crate": ([], ["1.0.0"]),
    "dep05": ([], ["1.0.0"]),
    "dep06": (["dep05"], ["1.0.0"]),
    "dep07": ([], ["1.0.0"]),
    "dep08": (["dep07"], ["1.0.0"]),
    "dep09": ([], ["1.0.0"]),
    "dep10": ([], ["1.0.0"]),
    "yank": ([], ["1.0.0", "1.1.0"]),
    "young": ([], ["1.0.0", "1.1.0"]),
    "nodate": ([], ["1.0.0"]),
    "evil": ([], ["1.0.0"]),
}


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def package(out, version):
    """One workspace of every crate that has this version, packaged."""
    ws = os.path.join(out, "ws-" + version)
    names = [n for n, (_, vs) in CRATES.items() if version in vs]
    write(os.path.join(ws, "Cargo.toml"),
          '[workspace]\nresolver = "2"\nmembers = [%s]\n' % ", ".join('"%s"' % n.lower() for n in names))
    for n in names:
        deps = "".join('%s = { path = "../%s", version = "1" }\n' % (d, d) for d in CRATES[n][0])
        write(os.path.join(ws, n.lower(), "Cargo.toml"),
              '[package]\nname = "%s"\nversion = "%s"\nedition = "2021"\ndescription = "fixture"\n'
              'license = "MIT"\n\n[dependencies]\n%s' % (n, version, deps))
        write(os.path.join(ws, n.lower(), "src", "lib.rs"), "pub fn f() -> u32 { %d }\n" % len(n))
    env = dict(os.environ, CARGO_HOME=os.path.join(out, "cargo-home"), CARGO_TARGET_DIR=os.path.join(ws, "target"))
    subprocess.run([os.environ.get("CARGOREG_CARGO", "/usr/bin/cargo"), "package", "--workspace", "--no-verify", "--offline", "--allow-dirty", "-q"],
                   cwd=ws, env=env, check=True)
    for n in names:
        os.replace(os.path.join(ws, "target", "package", "%s-%s.crate" % (n, version)),
                   os.path.join(out, "%s-%s.crate" % (n.lower(), version)))


def build(out):
    if os.path.exists(os.path.join(out, "done")):
        return
    os.makedirs(out, exist_ok=True)
    for v in ("1.0.0", "1.1.0"):
        package(out, v)
    write(os.path.join(out, "done"), "")


def index_path(name):
    n = name.lower()
    if len(n) <= 2:
        return "%d/%s" % (len(n), n)
    if len(n) == 3:
        return "3/%s/%s" % (n[0], n)
    return "%s/%s/%s" % (n[:2], n[2:4], n)


def iso(t):
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def registry(out, now):
    """index path -> body; crate path -> bytes."""
    index, files = {}, {}
    for name, (deps, versions) in CRATES.items():
        lines = []
        for v in versions:
            data = open(os.path.join(out, "%s-%s.crate" % (name.lower(), v)), "rb").read()
            line = {"name": name, "vers": v,
                    "deps": [{"name": d, "req": "^1", "features": [], "optional": False,
                              "default_features": True, "target": None, "kind": "normal"} for d in deps],
                    "cksum": hashlib.sha256(data).hexdigest(), "features": {}, "yanked": name == "yank" and v == "1.1.0"}
            if name != "nodate":
                line["pubtime"] = iso(now - 3600 if (name == "young" and v == "1.1.0") else now - 100 * DAY)
            lines.append(json.dumps(line, separators=(",", ":")))
            if name == "evil":
                data = open(os.path.join(out, "dep05-1.0.0.crate"), "rb").read()
            files["/crates/%s/%s-%s.crate" % (name, name, v)] = data
        index["/index/" + index_path(name)] = ("\n".join(lines) + "\n").encode()
    return index, files


def main():
    out = sys.argv[1]
    build(out)
    index, files = registry(out, int(time.time()))
    hits, lock = {}, threading.Lock()

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def answer(self, code, body, ctype="application/octet-stream"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self):
            path = self.path.split("?")[0]
            if path == "/_hits":
                with lock:
                    text = "".join("%s %d\n" % kv for kv in sorted(hits.items()))
                return self.answer(200, text.encode(), "text/plain")
            with lock:
                hits[path] = hits.get(path, 0) + 1
            is_dl = self.server is dl_srv
            if not is_dl and path == "/index/config.json":
                dl = "http://host.sbxrun.internal:%d/crates/{crate}/{crate}-{version}.crate" % dl_srv.server_address[1]
                return self.answer(200, json.dumps({"dl": dl}).encode(), "application/json")
            if not is_dl and path in index:
                return self.answer(200, index[path], "text/plain")
            if is_dl and path in files:
                return self.answer(200, files[path])
            self.answer(404, b"not found\n", "text/plain")

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    dl_srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=dl_srv.serve_forever, daemon=True).start()
    print(srv.server_address[1], dl_srv.server_address[1], flush=True)
    srv.serve_forever()


if __name__ == "__main__":
    main()
