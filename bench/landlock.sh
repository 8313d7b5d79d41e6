#!/bin/bash
# bench/landlock.sh [OUT] - issue 41's start-up goal for the landlock tier:
# `run -- /bin/true` in the landlock tier within 1 ms of `run` in full, on
# the same machine. The landlock tier is what sbxrun takes where no user
# namespace can be made; here tests/helper/nouserns (a seccomp filter that refuses
# them as Docker's default profile does) makes it so, in front of the same
# binary. One hyperfine run, each command listed in ROUNDS rounds ("NAME
# #k") so that a load spike falls on all of them; bench/ratios.py pools the
# rounds and compares medians. The full side runs behind `nouserns --none`
# (a filter that allows everything), so that both sides pay the same exec
# and the same extra filter; `/bin/true` and `nouserns /bin/true` beside
# show what that costs. Run as an unprivileged user with the image
# tiny in its store, or as root (it then measures as the bench user, as
# bench/run.sh does). Appends a Markdown section to OUT (default stdout).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=${1:-/dev/stdout}
ROUNDS=${BENCH_ROUNDS:-6} RUNS=${BENCH_RUNS:-40}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/nouserns" "$top/tests/helper/nouserns.c"
chmod -R a+rX "$tmp"
mkdir -m 1777 "$tmp/out"
run_as=()
if [ "$(id -u)" = 0 ]; then
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img" 2>/dev/null
	run_as=(runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8)
fi
# the tier each side gets, checked before it is timed
"${run_as[@]}" "$tmp/nouserns" --none "$SBX" run --json "$tmp/out/full.json" --image tiny -- /bin/true
"${run_as[@]}" "$tmp/nouserns" "$SBX" run -q --json "$tmp/out/ll.json" --image tiny -- /bin/true
grep -q '"tier":"full"' "$tmp/out/full.json" || { echo "bench/landlock.sh: this machine does not give full" >&2; exit 1; }
grep -q '"tier":"landlock"' "$tmp/out/ll.json" || { echo "bench/landlock.sh: nouserns did not give landlock" >&2; exit 1; }
args=()
for k in $(seq 1 "$ROUNDS"); do
	args+=(-n "run, full #$k" "$tmp/nouserns --none $SBX run -q --image tiny -- /bin/true"
	       -n "run, landlock #$k" "$tmp/nouserns $SBX run -q --image tiny -- /bin/true"
	       -n "/bin/true #$k" "/bin/true"
	       -n "nouserns /bin/true #$k" "$tmp/nouserns /bin/true")
done
load=$(cut -d" " -f1 /proc/loadavg)
"${run_as[@]}" hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$tmp/out/ll-bench.json" "${args[@]}" \
	>/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
{
	echo "## Start-up in the landlock tier (issue 41)"
	echo
	echo "One hyperfine run, $ROUNDS rounds of $RUNS runs per command, alternating; medians pooled over the rounds."
	echo "The landlock side runs behind tests/helper/nouserns (Docker's refusal of user namespaces, as a seccomp filter);"
	echo "the full side behind \`nouserns --none\` (the same exec, a filter allowing everything). Load (1-minute average before the run): $load."
	echo
	python3 "$top/bench/ratios.py" "$tmp/out/ll-bench.json" "run, full" "run, landlock~run, full<=1.0"
} >> "$out"
