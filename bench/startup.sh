#!/bin/bash
# bench/startup.sh OUT - issue 16's start-up goals, side by side in ONE
# hyperfine run on the image `tiny` (its rootfs also serves bwrap):
#   run -- /bin/true (overlay, tmpfs, seccomp, empty netns) <= 1.0x bwrap,
#   run --session S -- /bin/true <= 0.6x bwrap,
#   run --net packages within 1 ms of --net none.
# Each command is listed ROUNDS times ("NAME #k"); hyperfine runs them in
# that order, so the rounds alternate the commands and a load spike from
# other work on the machine falls on all of them. bench/ratios.py pools the
# rounds and compares medians. Appends a Markdown section to OUT.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=$1
ROUNDS=${BENCH_ROUNDS:-6} RUNS=${BENCH_RUNS:-40}
R=$2 # the rootfs of the image tiny
tmp=$(mktemp -d)
S=bench-start-$$
trap '"$SBX" session stop "$S" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
"$SBX" session start --image tiny "$S" >/dev/null
chroot=$(command -v chroot || echo /usr/sbin/chroot)

args=()
for k in $(seq 1 "$ROUNDS"); do
	args+=(-n "sbxrun run #$k" "$SBX run --image tiny -- /bin/true"
	       -n "bwrap #$k" "bwrap --unshare-all --die-with-parent --ro-bind $R / --proc /proc --dev /dev --tmpfs /tmp /bin/true"
	       -n "sbxrun run --session #$k" "$SBX run --session $S -- /bin/true"
	       -n "sbxrun run --net packages #$k" "$SBX run --image tiny --net packages -- /bin/true"
	       -n "unshare -Urmpf chroot (floor) #$k" "unshare -Urmpf --mount-proc $chroot $R /bin/true")
done
load=$(cut -d" " -f1 /proc/loadavg)
hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$tmp/start.json" "${args[@]}" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
{
	echo "## Start-up: /bin/true, side by side (issue 16)"
	echo
	echo "One hyperfine run, $ROUNDS rounds of $RUNS runs per command, alternating; medians pooled over the rounds."
	echo "bwrap: \`bwrap --unshare-all --die-with-parent --ro-bind ROOTFS / --proc /proc --dev /dev --tmpfs /tmp\`"
	echo "(user, mount, pid, net, ipc, uts, cgroup namespaces, as sbxrun) on the rootfs of the image sbxrun runs."
	echo "Load during the run (1-minute load average before it): $load; priority: nice ${BENCH_NICE:-0}, both sides alike."
	echo
	python3 "$top/bench/ratios.py" "$tmp/start.json" bwrap "sbxrun run<=1.0" "sbxrun run --session<=0.6" \
		"sbxrun run --net packages~sbxrun run<=1.0"
} >> "$out"
