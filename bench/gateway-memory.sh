#!/bin/bash
# bench/gateway-memory.sh - the host-side memory of sbxrun while one sandbox
# holds 256 unread answers of the package gateway (issue 34): a packument
# of BENCH_DOC_MB MiB (default 3; tests/helper/npmreg.py's "big") is
# fetched once, then the sandbox sends 256 requests for it on connections
# of its own and reads only each answer's status line. Prints, for this
# build (SBX) and, when BASE_SBX names another build's binary, for that one
# in the same run: the supervising sbxrun's VmHWM and VmRSS while the
# answers wait, the kernel's memory for the TCP sockets of the sandbox's
# network namespace (both ends of its connections to the gateway are
# there; /proc/net/sockstat), the process's open fds, and how many
# answers were 200 and how many something else. Needs the image `minimal` in the caller's store; writes
# nothing outside a temporary directory; prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
N=${BENCH_ANSWERS:-256}
"$SBX" image inspect minimal >/dev/null 2>&1 || { echo "bench/gateway-memory: no image 'minimal' in the store" >&2; exit 1; }
tmp=$(mktemp -d)
export NPMREG_BIG_MB=${BENCH_DOC_MB:-3}
prof="gwmem$$"
mkdir -p "$HOME/.config/sbxrun/profiles"
python3 -u "$top/tests/helper/npmreg.py" > "$tmp/port" &
reg=$!
trap 'kill $reg 2>/dev/null; rm -rf "$tmp" "$HOME/.config/sbxrun/profiles/$prof.ini"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\n' "$(head -1 "$tmp/port")" \
	> "$HOME/.config/sbxrun/profiles/$prof.ini"

# One sandbox holding N answers: prints "HWM_KIB RSS_KIB FDS OK OTHER".
hold() { # sbxrun
	local pid kb fds
	XDG_CACHE_HOME="$tmp/cache-$RANDOM" "$1" run -p "$prof" --image minimal -- bash -c '
		p=${npm_config_proxy#http://}; p=${p%/}
		curl -sS -x "$npm_config_proxy" -o /dev/null http://packages.sbxrun.internal/npm/big
		fds=()
		for i in $(seq '"$N"'); do
			exec {fd}<>"/dev/tcp/${p%:*}/${p##*:}"
			printf "GET http://packages.sbxrun.internal/npm/big HTTP/1.1\r\nHost: x\r\nAccept: application/json\r\n\r\n" >&$fd
			fds+=($fd)
		done
		ok=0 other=0
		for fd in "${fds[@]}"; do
			read -r -t 120 line <&$fd || line=none
			case $line in "HTTP/1.1 200"*) ok=$((ok + 1)) ;; *) other=$((other + 1)) ;; esac
		done
		# the kernel memory of the sandbox network namespace'"'"'s TCP sockets (pages)
		echo "held $ok $other $(awk "/^TCP:/ { for (i = 1; i < NF; i++) if (\$i == \"mem\") print \$(i + 1) }" /proc/net/sockstat)"
		sleep 4' > "$tmp/out" 2>&1 &
	pid=$!
	for _ in $(seq 3000); do grep -q '^held' "$tmp/out" && break; sleep 0.1; done
	grep -q '^held' "$tmp/out" || { echo "bench/gateway-memory: the sandbox did not get that far: $(cat "$tmp/out")" >&2; exit 1; }
	sleep 1
	kb=$(awk '/^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } END { print h, r }' "/proc/$pid/status")
	fds=$(ls "/proc/$pid/fd" | wc -l)
	wait "$pid" || true
	echo "$kb $fds $(sed -n 's/^held //p' "$tmp/out")"
}

row() { # label sbxrun
	local hwm rss fds ok other tcp
	read -r hwm rss fds ok other tcp <<<"$(hold "$2")"
	echo "| $1 | $((hwm / 1024)) MiB | $((rss / 1024)) MiB | $((${tcp:-0} * 4 / 1024)) MiB | $fds | $ok | $other |"
}

cat <<EOF
## Package gateway: host memory while one sandbox holds $N unread answers of a ${NPMREG_BIG_MB} MiB packument ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg))

| build | VmHWM | VmRSS | TCP socket memory | open fds | answers 200 | other |
|---|---|---|---|---|---|---|
EOF
[ -z "${BASE_SBX:-}" ] || row "base ($BASE_SBX)" "$BASE_SBX"
row "this ($SBX)" "$SBX"
