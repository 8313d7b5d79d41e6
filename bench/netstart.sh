#!/bin/bash
# bench/netstart.sh [BASE] [OUT] - what `--net packages` adds to a start
# (issue 34, point 8; `make bench-net [BASE=REV]`): `run --net none` and
# `run --net packages` of /bin/true, on the image minimal, in one
# hyperfine run of short rounds whose order turns every round (as ab.sh),
# with BASE (any git revision, built in a temporary worktree) beside this
# build when given. The goal: --net packages within 1 ms of --net none.
# The image matters: the package gateway is made only where the image or
# the profile names a package upstream, and minimal's apt sources are one;
# the image tiny (bench/startup.sh's --net packages row) has none, so that
# row never made a gateway and missed the 12 ms that making one cost.
# Each round's difference (packages minus none, and this build against
# BASE) is pooled; the median over the rounds gets a 95 % interval by
# resampling them. The CPU time of each start (hyperfine's user and system
# time of the whole tree) is given beside: steadier on a loaded machine. Run as an unprivileged user with the image minimal in
# its store, or as root (then as SBX_BENCH_USER, as bench/run.sh does).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
base=${1:-}
out=${2:-}  # else stdout
ROUNDS=${BENCH_ROUNDS:-20} RUNS=${BENCH_RUNS:-10} IMAGE=${BENCH_IMAGE:-minimal}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap '[ -z "$base" ] || git -C "$top" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

mkdir -p "$tmp/new"
cp -r "$SBX" "$top/profiles" "$tmp/new/"
builds=("this build")
if [ -n "$base" ]; then
	rev=$(git -C "$top" rev-parse --short "$base^{commit}") || { echo "bench: '$base' is not a revision of $top" >&2; exit 125; }
	git -C "$top" worktree add --detach "$tmp/src" "$rev" >/dev/null 2>&1
	make -C "$tmp/src" -j"$(nproc)" sbxrun >"$tmp/build.log" 2>&1 ||
		{ tail -5 "$tmp/build.log" >&2; echo "bench: building $rev failed" >&2; exit 1; }
	mkdir -p "$tmp/base"
	cp -r "$tmp/src/sbxrun" "$tmp/src/profiles" "$tmp/base/"
	builds=("$rev" "this build")
fi
chmod -R a+rX "$tmp"

if [ "$(id -u)" = 0 ]; then
	chmod 0777 "$tmp" # hyperfine, as the bench user, writes its JSON here
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img" 2>/dev/null
	run_as=(runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8)
else
	run_as=(env)
fi
"${run_as[@]}" "$tmp/new/sbxrun" image inspect "$IMAGE" >/dev/null 2>&1 ||
	{ echo "bench: no image '$IMAGE' (bash tests/images.sh DIR; sbxrun image import DIR/minimal.tar.zst --name minimal)" >&2; exit 1; }

names=() cmds=()
for b in "${builds[@]}"; do
	bin=$tmp/new/sbxrun
	[ "$b" = "this build" ] || bin=$tmp/base/sbxrun
	for net in none packages; do
		names+=("$b --net $net")
		cmds+=("$bin run --image $IMAGE --net $net -- /bin/true")
	done
done
args=()
n=${#names[@]}
for k in $(seq 1 "$ROUNDS"); do
	for j in $(seq 0 $((n - 1))); do
		i=$(( k % 2 ? j : n - 1 - j ))
		args+=(-n "${names[$i]} #$k" "${cmds[$i]}")
	done
done
load=$(cut -d" " -f1 /proc/loadavg)
"${run_as[@]}" hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$tmp/net.json" "${args[@]}" >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err" >&2; exit 1; }
report() {
	echo "## --net packages against --net none (bench/netstart.sh)"
	echo
	echo "Image $IMAGE; $ROUNDS rounds of $RUNS runs, order turned every round; load before: $load, after: $(cut -d" " -f1 /proc/loadavg); $(date -u '+%Y-%m-%d %H:%M') UTC."
	echo
	python3 "$top/bench/ratios.py" "$tmp/net.json" "this build --net none" \
		"this build --net packages~this build --net none<=1.0"
	python3 - "$tmp/net.json" "${builds[@]}" <<'EOF'
import json, random, re, statistics, sys
per = {}
for r in json.load(open(sys.argv[1]))["results"]:
    m = re.fullmatch(r"(.+) #(\d+)", r["command"])
    per.setdefault(int(m.group(2)), {})[m.group(1)] = statistics.median(r["times"]) * 1000
rnd = random.Random(1)
def line(what, a, b, goal=None):
    d = [v[a] - v[b] for v in per.values()]
    boot = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(2000))
    lo, hi = boot[50], boot[1949]
    verdict = ""
    if goal is not None:
        verdict = ": **within %g ms**" % goal if hi <= goal else (
            ": **more than %g ms**" % goal if lo > goal else ": **not told apart from %g ms**" % goal)
    print("- %s, median over %d rounds: %+.2f ms, 95 %% interval [%+.2f, %+.2f] ms%s" % (
        what, len(d), statistics.median(d), lo, hi, verdict))
# CPU (user and system time of the whole tree, hyperfine's means): steadier
# than the wall clock on a loaded machine, and part of it runs in parallel
cpu = {}
for r in json.load(open(sys.argv[1]))["results"]:
    cpu.setdefault(re.sub(r" #\d+$", "", r["command"]), []).append((r["user"] + r["system"]) * 1000)
for b in sys.argv[2:]:
    line("%s: --net packages minus --net none" % b, b + " --net packages", b + " --net none", 1.0)
    c = {n: statistics.mean(cpu[b + " --net " + n]) for n in ("none", "packages")}
    print("- %s: CPU per start %.2f ms with --net none, %.2f ms with --net packages (%+.2f ms)" % (
        b, c["none"], c["packages"], c["packages"] - c["none"]))
if len(sys.argv) > 3:
    for net in ("none", "packages"):
        line("--net %s: this build minus %s" % (net, sys.argv[2]), "this build --net " + net,
             sys.argv[2] + " --net " + net)
EOF
}
if [ -n "$out" ]; then report >> "$out"; else report; fi
