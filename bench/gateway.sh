#!/bin/bash
# bench/gateway.sh - the package gateway's shared cache (issue 27): 20
# sandboxes at once each `npm install` one set (app and its four
# dependencies, ~133 KiB of tarballs) through the gateway, against the
# fixture registry (tests/helper/npmreg.py, on this host; each dependency's
# tarball is sent after NPMREG_DELAY seconds, default 0.1, a registry some
# way off). Prints the bytes the upstream moved against the set's size
# (goal: about 1x, not 20x), and one cold against one warm install (goal:
# warm at most 0.5x cold). Needs the image `node` (npm) in the caller's
# store (tests/images.sh with SBX_TIER=net makes it). Writes nothing
# outside a temporary directory; prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
N=${BENCH_SANDBOXES:-20}
"$SBX" image inspect node >/dev/null 2>&1 || { echo "bench/gateway: no image 'node' in the store" >&2; exit 1; }
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache" NPMREG_DELAY=${NPMREG_DELAY:-0.1}
prof="gwbench$$"
mkdir -p "$HOME/.config/sbxrun/profiles"
python3 -u "$top/tests/helper/npmreg.py" "$tmp/reg.log" > "$tmp/port" &
reg=$!
trap 'kill $reg 2>/dev/null; rm -rf "$tmp" "$HOME/.config/sbxrun/profiles/$prof.ini"' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\n' "$(head -1 "$tmp/port")" \
	> "$HOME/.config/sbxrun/profiles/$prof.ini"

install() { # label: one sandbox's npm install of app; prints its seconds
	local t0 t1
	t0=$(date +%s.%N)
	"$SBX" run -p "$prof" --image node -- sh -c \
		'cd /tmp && npm install --no-audit --no-fund --loglevel=error app >/dev/null && test -f node_modules/set-d/blob' \
		|| { echo "bench/gateway: $1 install failed" >&2; exit 1; }
	t1=$(date +%s.%N)
	printf '%.2f\n' "$(echo "$t1 - $t0" | bc)"
}
upstream_bytes() { awk '{ s += $2 } END { print s + 0 }' "$tmp/reg.log.bytes" 2>/dev/null || echo 0; }

# one cold install, then one warm (every tarball from the cache)
cold=$(install cold)
set_bytes=$(upstream_bytes)
warm=$(install warm)
[ "$(upstream_bytes)" = "$set_bytes" ] || echo "bench/gateway: the warm install moved bytes upstream" >&2
"$SBX" cache prune --all >/dev/null
rm -f "$tmp/reg.log.bytes"

# N at once, from an empty cache
t0=$(date +%s.%N)
pids=()
for i in $(seq "$N"); do
	"$SBX" run -p "$prof" --image node -- sh -c \
		'cd /tmp && npm install --no-audit --no-fund --loglevel=error app >/dev/null && test -f node_modules/set-d/blob' \
		> "$tmp/out$i" 2>&1 &
	pids+=($!)
done
failed=0
for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
t1=$(date +%s.%N)
moved=$(upstream_bytes)

cat <<EOF
## Package gateway: $N sandboxes at once, one npm set ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg))

| what | goal | measured |
|---|---|---|
| upstream bytes for $N concurrent \`npm install app\` (5 tarballs, $set_bytes bytes) | about 1x the set | $moved bytes: $(printf '%.2f' "$(echo "scale=3; $moved / $set_bytes" | bc)")x ($failed installs failed; all $N in $(printf '%.1f' "$(echo "$t1 - $t0" | bc)") s) |
| a warm \`npm install app\` against a cold one (upstream delay ${NPMREG_DELAY} s per dependency) | at most 0.5x | $warm s against $cold s: $(printf '%.2f' "$(echo "scale=3; $warm / $cold" | bc)")x |
EOF
