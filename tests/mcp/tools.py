"""tests/mcp/tools.py - a bare stdio client of `sbxrun mcp` for the python
snippets of tests/integration/70-mcp.sh: tools/call without the SDK, so that
what the server answers is seen as it is.

    srv = Server([sbx, "mcp", ...]); r = srv.call("exec", {...}); srv.close()

call() returns the call's result, or the whole message when it is a JSON-RPC
error (bad arguments)."""
import json
import subprocess


class Server:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.n = 0

    def call(self, tool, args):
        self.n += 1
        msg = {"jsonrpc": "2.0", "id": self.n, "method": "tools/call", "params": {"name": tool, "arguments": args}}
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        while True:
            m = json.loads(self.p.stdout.readline())
            if m.get("id") == self.n:
                return m.get("result", m)

    def close(self, timeout=60):
        self.p.stdin.close()
        self.p.wait(timeout)


def text(r):
    return "".join(c["text"] for c in r["content"] if c["type"] == "text")
