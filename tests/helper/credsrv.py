"""tests/helper/credsrv.py ROOT TOKENFILE CERT KEY - 57-credentials' upstream.

A TLS server on 127.0.0.1 at a free port (printed as its first line) that
wants the token read from TOKENFILE on every request (Authorization:
Bearer TOKEN, token TOKEN, or Basic of USER:TOKEN) and answers 401
otherwise; every Authorization it saw that was not the token is appended
to ROOT/bad-auth. Routes:
  /git/...      git http-backend (CGI) over ROOT's bare repositories, push
                enabled (REMOTE_USER set), request bodies chunked or not
  /-/whoami     npm's whoami: {"username": "tester"}
  /echo         200, the request's headers as the body
"""
import base64
import http.server
import os
import ssl
import subprocess
import sys

ROOT, TOKEN = sys.argv[1], open(sys.argv[2]).read().strip()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # its head and body as two writes: no 40 ms wait between

    def log_message(self, *args):
        pass

    def authorized(self):
        v = self.headers.get("Authorization", "")
        ok = v in ("Bearer " + TOKEN, "token " + TOKEN)
        if v.startswith("Basic "):
            try:
                ok = base64.b64decode(v[6:]).decode().split(":", 1)[1] == TOKEN
            except Exception:
                ok = False
        if not ok:
            with open(os.path.join(ROOT, "bad-auth"), "a") as f:
                f.write(repr(v) + "\n")
        return ok

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            out = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0], 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return out
                out += self.rfile.read(n)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length", "0")))

    def reply(self, code, data, ctype="text/plain", extra=()):
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def cgi(self, data):
        path, _, query = self.path[len("/git"):].partition("?")
        env = {"GIT_PROJECT_ROOT": ROOT, "GIT_HTTP_EXPORT_ALL": "1", "REMOTE_USER": "tester",
               "PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": self.command,
               "CONTENT_TYPE": self.headers.get("Content-Type", ""), "CONTENT_LENGTH": str(len(data)),
               "PATH": os.environ["PATH"], "GIT_PROTOCOL": self.headers.get("Git-Protocol", "")}
        out = subprocess.run(["git", "http-backend"], input=data, env=env, capture_output=True).stdout
        head, _, rest = out.partition(b"\r\n\r\n")
        code, extra, ctype = 200, [], "text/plain"
        for line in head.decode().split("\r\n"):
            k, _, v = line.partition(": ")
            if k.lower() == "status":
                code = int(v.split()[0])
            elif k.lower() == "content-type":
                ctype = v
            elif k:
                extra.append((k, v))
        self.reply(code, rest, ctype, extra)

    def handle_any(self):
        data = self.body()
        if not self.authorized():
            return self.reply(401, b"token wanted\n", extra=[("WWW-Authenticate", 'Basic realm="t"')])
        if self.path.startswith("/git/"):
            return self.cgi(data)
        if self.path.startswith("/-/whoami"):
            return self.reply(200, b'{"username":"tester"}', "application/json")
        return self.reply(200, str(self.headers).encode())

    do_GET = do_POST = do_PUT = handle_any


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[3], sys.argv[4])
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print(srv.server_address[1], flush=True)
srv.serve_forever()
