"""tests/helper/pypireg.py - a PyPI simple index for the gateway's tests.

Listens on 127.0.0.1 at a free port, which it prints as its first line;
with an argument, appends each request's path to that file. Pages are at
/simple/NAME/ (PEP 691 JSON with PEP 700's upload-time when the Accept
header asks for it, PEP 503 HTML otherwise), files at /files/FILE; file
links name http://host.sbxrun.internal:PORT/ (how a sandbox's gateway
reaches this host). The wheels are built here, with zipfile. Projects:
  demo      a wheel that needs demodep (JSON, with PEP 714 core-metadata)
  demodep   a wheel; its page is HTML only, with relative links and
            PEP 658 data-dist-info-metadata
  young     two versions, 2.0 uploaded an hour ago, 1.0 in 2020
  bad       a wheel whose bytes differ from the page's sha256
  trunc     a wheel cut short (Content-Length promises more)
  other     a wheel on a host no profile allows
  nohash    a wheel linked without a sha256
"""
import base64
import hashlib
import http.server
import io
import json
import sys
import time
import zipfile

PORT = 0
LOG = sys.argv[1] if len(sys.argv) > 1 else None


def wheel(name, version, requires=(), code=None):
    """A minimal pure-Python wheel: the package, METADATA, WHEEL, RECORD."""
    dist = "%s-%s.dist-info" % (name, version)
    files = [
        ("%s/__init__.py" % name, (code or "VERSION = %r\n" % version).encode()),
        ("%s/METADATA" % dist, ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, version) +
                                "".join("Requires-Dist: %s\n" % r for r in requires)).encode()),
        ("%s/WHEEL" % dist, b"Wheel-Version: 1.0\nGenerator: sbxrun-test\nRoot-Is-Purelib: true\n"
                            b"Tag: py3-none-any\n"),
    ]
    record = ""
    for path, data in files:
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record += "%s,sha256=%s,%d\n" % (path, digest, len(data))
    record += "%s/RECORD,,\n" % dist
    files.append(("%s/RECORD" % dist, record.encode()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for path, data in files:
            z.writestr(zipfile.ZipInfo(path, (2020, 1, 1, 0, 0, 0)), data)
    return buf.getvalue(), files[1][1]


OLD = "2020-01-01T00:00:00.000000Z"
NOW = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3600))
# project -> [(version, upload-time, requires, code)]
PROJECTS = {
    "demo": [("1.0", OLD, ["demodep"], "from demodep import VALUE\n")],
    "demodep": [("1.0", OLD, [], "VALUE = 42\n")],
    "young": [("1.0", OLD, [], None), ("2.0", NOW, [], None)],
    "bad": [("1.0", OLD, [], None)],
    "trunc": [("1.0", OLD, [], None)],
    "other": [("1.0", OLD, [], None)],
    "nohash": [("1.0", OLD, [], None)],
}
FILES = {}  # filename -> (project, bytes, metadata, upload-time)
for project, versions in PROJECTS.items():
    for version, uploaded, requires, code in versions:
        data, meta = wheel(project, version, requires, code)
        FILES["%s-%s-py3-none-any.whl" % (project, version)] = (project, data, meta, uploaded)


def file_url(project, filename):
    if project == "other":
        return "http://not-allowed.example.test/files/" + filename
    return "http://host.sbxrun.internal:%d/files/%s" % (PORT, filename)


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def page_json(project):
    files = []
    for filename, (p, data, meta, uploaded) in sorted(FILES.items()):
        if p != project:
            continue
        f = {"filename": filename, "url": file_url(project, filename), "hashes": {"sha256": sha256(data)},
             "requires-python": ">=3.7", "size": len(data), "upload-time": uploaded, "yanked": False,
             "core-metadata": {"sha256": sha256(meta)}, "dist-info-metadata": {"sha256": sha256(meta)}}
        if project == "nohash":
            f["hashes"] = {}
        files.append(f)
    versions = [v[0] for v in PROJECTS[project]]
    return json.dumps({"meta": {"api-version": "1.1"}, "name": project, "versions": versions,
                       "files": files}).encode()


def page_html(project):
    out = ["<!DOCTYPE html><html><body><h1>Links for %s</h1>" % project]
    for filename, (p, data, meta, uploaded) in sorted(FILES.items()):
        if p != project:
            continue
        href = file_url(project, filename)
        if project == "demodep":
            href = "../../files/" + filename  # relative to /simple/demodep/
        frag = "" if project == "nohash" else "#sha256=" + sha256(data)
        out.append('<a href="%s%s" data-requires-python="&gt;=3.7" data-dist-info-metadata="sha256=%s">'
                   '%s</a><br>' % (href, frag, sha256(meta), filename))
    out.append("</body></html>")
    return "\n".join(out).encode()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, code, body, ctype="application/octet-stream", length=None):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?")[0].strip("/")
        if LOG:
            with open(LOG, "a") as f:
                f.write("%s %s\n" % (path, self.headers.get("Accept", "")))
        try:
            parts = path.split("/")
            if len(parts) == 2 and parts[0] == "simple" and parts[1] in PROJECTS:
                self.page(parts[1])
            elif len(parts) == 2 and parts[0] == "files" and parts[1] in FILES:
                self.file(parts[1])
            else:
                self.send(404, b"not found", "text/plain")
        except OSError:
            pass

    def page(self, project):
        accept = self.headers.get("Accept", "")
        if "application/vnd.pypi.simple.v1+json" in accept and project != "demodep":
            self.send(200, page_json(project), "application/vnd.pypi.simple.v1+json")
        else:
            self.send(200, page_html(project), "text/html")

    def file(self, filename):
        project, data = FILES[filename][0], FILES[filename][1]
        if project == "bad":
            self.send(200, data[:-1] + bytes([data[-1] ^ 1]))
        elif project == "trunc":
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            self.close_connection = True
        else:
            self.send(200, data)


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
PORT = server.server_address[1]
print(PORT, flush=True)
server.serve_forever()
