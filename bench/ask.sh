#!/bin/bash
# bench/ask.sh [ROUNDS] - issue 42's held-to-decided latency (goal: under
# 50 ms): a session with [network] ask holds a plain request to a host no
# rule names; `sbxrun net allow --for once` answers it from another
# process, and the time from just before `net allow` starts to the moment
# the client inside has its answer (`date +%s%N` in the sandbox right after
# curl, the same clock) is one round. That is what a person waits for: the
# command's own start, the control socket, the proxy releasing the held
# connection, its dial (through tests/helper/fwdproxy.py, the upstream
# proxy of sbxrun's environment, which tunnels every CONNECT to a local
# HTTP server: no name of the test resolves) and the answer. Beside it, the
# proxy's own part from the session's --events: the rule's record to the
# held connection's "allowed" record (milliseconds, as the events stamp
# them), and `net allow`'s own run, start to exit (a process of sbxrun's:
# most of the first). Prints the median, the 90th percentile and the
# worst of each.
# Run as an unprivileged user with the image minimal in its store (root:
# as SBX_BENCH_USER, as bench/run.sh does).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
ROUNDS=${1:-${BENCH_ROUNDS:-20}}
if [ "$(id -u)" = 0 ]; then
	tmp=$(mktemp -d)
	chmod 0755 "$tmp"
	trap 'rm -rf "$tmp"' EXIT
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img" 2>/dev/null
	cp -r "$SBX" "$top/bench" "$top/tests" "$top/profiles" "$tmp/"
	chmod -R a+rX "$tmp"
	exec runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
		SBX="$tmp/sbxrun" bash "$tmp/bench/ask.sh" "$ROUNDS"
fi
"$SBX" image inspect minimal >/dev/null 2>&1 || { echo "bench: the image minimal is not in the store" >&2; exit 1; }

d=$(mktemp -d)
name=ask$$
pids=()
cleanup() {
	"$SBX" session stop "$name" >/dev/null 2>&1 || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$d"
}
trap cleanup EXIT
echo hello > "$d/hello.txt"
python3 -u "$top/tests/helper/httpd.py" "$d" > "$d/.httpd-port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$d/.httpd-port" ] && break; sleep 0.1; done
python3 -u "$top/tests/helper/fwdproxy.py" "$d/fwd.log" "127.0.0.1:$(head -1 "$d/.httpd-port")" > "$d/.px-port" &
pids+=($!)
for _ in $(seq 100); do [ -s "$d/.px-port" ] && break; sleep 0.1; done
printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 20s\n' > "$d/ask.ini"
https_proxy="http://127.0.0.1:$(head -1 "$d/.px-port")" "$SBX" session start --image minimal \
	-p "$d/ask.ini" --events "$d/ev.jsonl" "$name" >/dev/null

for i in $(seq "$ROUNDS"); do
	host=r$i.invalid
	"$SBX" run --session "$name" -- sh -c \
		"curl -s -o /dev/null -w '%{http_code} ' -x http://127.0.0.1:3128 http://$host/hello.txt; date +%s%N" \
		> "$d/out.$i" &
	client=$!
	until "$SBX" net pending "$name" 2>/dev/null | grep -q "$host"; do sleep 0.02; done
	t0=$(date +%s%N)
	"$SBX" net allow --for once "$name" "$host" >/dev/null
	echo "$(( ($(date +%s%N) - t0) / 1000 ))" >> "$d/cmd"
	wait "$client"
	read -r code t1 < "$d/out.$i"
	[ "$code" = 200 ] || { echo "bench: round $i answered $code" >&2; exit 1; }
	echo "$(( (t1 - t0) / 1000 ))" >> "$d/e2e"
done

python3 - "$d/e2e" "$d/ev.jsonl" "$d/cmd" <<'PY'
import json, statistics, sys
e2e = sorted(int(x) / 1000 for x in open(sys.argv[1]))
cmd = sorted(int(x) / 1000 for x in open(sys.argv[3]))
rule, own = {}, []
for line in open(sys.argv[2]):
    e = json.loads(line)
    if e.get("event") == "rule":
        rule[e["host"]] = float(e["time"])
    elif e.get("event") == "egress" and e.get("decision") == "allowed" and e.get("host") in rule:
        own.append((float(e["time"]) - rule.pop(e["host"])) * 1000)
own.sort()
def row(what, v):
    p90 = v[min(len(v) - 1, int(len(v) * 0.9))]
    print("%-40s median %7.1f ms   p90 %7.1f ms   worst %7.1f ms   (%d rounds)" % (what, statistics.median(v), p90, v[-1], len(v)))
row("net allow -> the client's answer", e2e)
row("net allow's own run (start to exit)", cmd)
if own:
    row("the proxy's part (rule -> allowed event)", own)
PY
