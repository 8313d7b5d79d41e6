#!/bin/sh
# mcp.sh - round trip of `exec ["true"]` over MCP (`sbxrun mcp`, stdio,
# JSON-RPC) in a running session, against `sbxrun run --session -- true`
# started as a process each time (what an agent without MCP would do). Not a
# timed test: prints the medians. Needs python3 and the image tiny.
set -eu
SBX=${SBX:-$(cd "$(dirname "$0")/.." && pwd)/sbxrun}
N=${N:-300}
exec python3 - "$SBX" "$N" <<'PY'
import json, statistics, subprocess, sys, time
sbx, n = sys.argv[1], int(sys.argv[2])
p = subprocess.Popen([sbx, "-q", "mcp", "-p", "default", "--image", "tiny"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, msg):
    p.stdin.write((json.dumps(dict(msg, jsonrpc="2.0", id=i)) + "\n").encode()); p.stdin.flush()
    while True:
        r = json.loads(p.stdout.readline())
        if r.get("id") == i: return r
call(0, {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
         "clientInfo": {"name": "bench", "version": "1"}}})
true = {"method": "tools/call", "params": {"name": "exec", "arguments": {"cmd": ["true"]}}}
r = call(1, true)  # starts the session
assert r["result"]["structuredContent"]["exit_code"] == 0, r
session = "mcp-%d" % p.pid  # the server's session
for i in range(20): call(2 + i, true)
mcp = []
for i in range(n):
    t = time.perf_counter(); call(100 + i, true); mcp.append((time.perf_counter() - t) * 1000)
cli = []
for i in range(min(n, 100)):
    t = time.perf_counter(); subprocess.run([sbx, "run", "--session", session, "--", "true"], check=True)
    cli.append((time.perf_counter() - t) * 1000)
p.stdin.close(); p.wait()
q = lambda v, f: sorted(v)[int(len(v) * f)]
print("exec of true over MCP: median %.2f ms, p90 %.2f ms (%d calls; goal <= 10 ms)" % (statistics.median(mcp), q(mcp, 0.9), n))
print("run --session -- true: median %.2f ms, p90 %.2f ms (%d runs, a process each)" % (statistics.median(cli), q(cli, 0.9), len(cli)))
PY
