"""tests/helper/httpd.py [DIR] - the integration tests' HTTP server.

Serves DIR (default: the current directory) on 127.0.0.1 at a free port,
which it prints as its first line, with a few routes of its own:
  /slow     1 MiB at 10 KiB/s (to cancel a download midway)
  /drip     1000 bytes at 2 bytes a second (a server that stalls)
  /endless/...  a Packages text that never ends (stanzas until the
            client hangs up), under any path below /endless/
  /to-*     redirects: to a file: URL, to a host no profile allows, to a
            private and a metadata address, and to /small.txt
"""
import functools
import http.server
import sys
import time

REDIRECTS = {"/to-file": "file:///etc/passwd", "/to-other": "http://not-allowed.example.test/x",
             "/to-private": "http://10.1.2.3/x", "/to-meta": "http://169.254.169.254/latest",
             "/to-ok": "/small.txt"}


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def endless(self):
        stanza = b"".join(b"Package: p%d\nVersion: 1.0\nFilename: pool/p%d_1.0_all.deb\nSHA256: %s\n\n"
                          % (i, i, b"0" * 64) for i in range(4096))
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.end_headers()
        try:
            while True:
                self.wfile.write(stanza)
        except OSError:
            pass
        self.close_connection = True

    def do_GET(self):
        if self.path in REDIRECTS:
            self.send_response(302)
            self.send_header("Location", REDIRECTS[self.path])
            self.end_headers()
            return None
        if self.path.startswith("/endless/"):
            return self.endless()
        if self.path not in ("/slow", "/drip"):
            return super().do_GET()
        size, chunk, pause = (1 << 20, b"x" * 1024, 0.1) if self.path == "/slow" else (1000, b"x", 0.5)
        self.send_response(200)
        self.send_header("Content-Length", str(size))
        self.end_headers()
        try:
            for _ in range(size // len(chunk)):
                self.wfile.write(chunk)
                self.wfile.flush()
                time.sleep(pause)
        except OSError:
            pass  # the download was cancelled
        return None


handler = functools.partial(Handler, directory=sys.argv[1] if len(sys.argv) > 1 else ".")
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
print(server.server_address[1], flush=True)
server.serve_forever()
