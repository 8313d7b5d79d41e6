"""tests/helper/fwdproxy.py LOG TARGET - a company's forward proxy for the
gateway's tests: the only way out of a network, as sbxrun's https_proxy.

Listens on 127.0.0.1 at a free port, which it prints as its first line.
Each request's line is appended to LOG as "METHOD TARGET AUTH", AUTH being
the Basic credentials it carried ("user:password") or "-". A CONNECT is
answered 200 and its tunnel goes to TARGET (HOST:PORT), whatever address it
asked for, as the network behind such a proxy routes it; anything else is
refused with 403 (the fixture tunnels only).
"""
import base64
import socket
import socketserver
import sys
import threading

LOG, TARGET = sys.argv[1], sys.argv[2]
LOCK = threading.Lock()


def pipe(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
    except OSError:
        pass
    for s in (a, b):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


class Handler(socketserver.BaseRequestHandler):
    def handle(self):
        head = b""
        while b"\r\n\r\n" not in head and len(head) < 65536:
            data = self.request.recv(4096)
            if not data:
                return
            head += data
        head, rest = head.split(b"\r\n\r\n", 1)
        lines = head.decode("latin-1").split("\r\n")
        method, target = (lines[0].split(" ") + ["", ""])[:2]
        auth = "-"
        for line in lines[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "proxy-authorization" and value.strip().startswith("Basic "):
                auth = base64.b64decode(value.strip()[6:]).decode("latin-1")
        with LOCK, open(LOG, "a") as f:
            f.write("%s %s %s\n" % (method, target, auth))
        if method != "CONNECT":
            self.request.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
            return
        host, port = TARGET.rsplit(":", 1)
        up = socket.create_connection((host, int(port)))
        self.request.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        if rest:
            up.sendall(rest)
        t = threading.Thread(target=pipe, args=(up, self.request), daemon=True)
        t.start()
        pipe(self.request, up)
        t.join()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
