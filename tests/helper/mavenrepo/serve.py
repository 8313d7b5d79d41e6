"""tests/helper/mavenrepo/serve.py DIR - the Maven fixture upstream of
59-gateway-maven: serves the repository DIR (tests/helper/mavenrepo/build.sh)
on 127.0.0.1 at a free port, which it prints as its first line, and counts
the requests for each path: GET /_hits answers "PATH COUNT" lines."""
import collections
import functools
import http.server
import sys
import threading

hits = collections.Counter()
lock = threading.Lock()


class Handler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        if self.path == "/_hits":
            with lock:
                body = "".join("%s %d\n" % (p, n) for p, n in sorted(hits.items())).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return None
        with lock:
            hits[self.path] += 1
        return super().do_GET()


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                         functools.partial(Handler, directory=sys.argv[1]))
print(server.server_address[1], flush=True)
server.serve_forever()
