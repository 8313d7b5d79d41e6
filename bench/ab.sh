#!/bin/bash
# bench/ab.sh BASE [OUT] - start-up of this build against an earlier one
# (BASE, any git revision), to tell a regression from noise: `make bench-ab
# BASE=REV`. BASE is built in a temporary worktree. One hyperfine run of
# `run --image tiny -- /bin/true` with both builds and bwrap, in many short
# rounds whose order turns every round (A B C, C B A, ...): a burst of other
# work, or whatever a command leaves behind for the next one (the kernel
# frees a namespace after the process is gone), then falls on each side
# alike. With six long rounds in a fixed order, the build listed later came
# out 0.8 ms slower in every round on this machine, and so did the earlier
# one when the order was swapped. bench/ratios.py pools the rounds; the
# difference of the medians gets a 95 % interval by resampling the rounds.
# Run as an unprivileged user with the image tiny in its store, or as root
# (then as SBX_BENCH_USER, as bench/run.sh does).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
base=${1:?usage: bench/ab.sh BASE-REVISION [OUT]}
out=${2:-/dev/stdout}
ROUNDS=${BENCH_ROUNDS:-30} RUNS=${BENCH_RUNS:-10}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bench: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
rev=$(git -C "$top" rev-parse --short "$base^{commit}") || { echo "bench: '$base' is not a revision of $top" >&2; exit 125; }
tmp=$(mktemp -d)
chmod 0755 "$tmp"
trap 'git -C "$top" worktree remove --force "$tmp/src" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

git -C "$top" worktree add --detach "$tmp/src" "$rev" >/dev/null 2>&1
make -C "$tmp/src" -j"$(nproc)" sbxrun >"$tmp/build.log" 2>&1 || { tail -5 "$tmp/build.log" >&2; echo "bench: building $rev failed" >&2; exit 1; }
# each build beside the stock profiles of its own revision, where it looks first
mkdir -p "$tmp/base" "$tmp/new"
cp -r "$tmp/src/sbxrun" "$tmp/src/profiles" "$tmp/base/"
cp -r "$SBX" "$top/profiles" "$tmp/new/"
chmod -R a+rX "$tmp/base" "$tmp/new"

if [ "$(id -u)" = 0 ]; then
	chmod 0777 "$tmp" # hyperfine, as the bench user, writes its JSON here
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img" 2>/dev/null
	run_as=(runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8)
else
	run_as=(env)
fi
d=$("${run_as[@]}" "$tmp/new/sbxrun" image inspect tiny | sed -n 's/^digest: *sha256://p')
[ -n "$d" ] || { echo "bench: no image 'tiny' (bash tests/images.sh DIR; sbxrun image import DIR/tiny.tar --name tiny)" >&2; exit 1; }
R=$("${run_as[@]}" sh -c 'echo "${XDG_DATA_HOME:-$HOME/.local/share}"')/sbxrun/images/$d/rootfs

names=("$rev" "this build" "bwrap")
cmds=("$tmp/base/sbxrun run --image tiny -- /bin/true" "$tmp/new/sbxrun run --image tiny -- /bin/true"
      "bwrap --unshare-all --die-with-parent --ro-bind $R / --proc /proc --dev /dev --tmpfs /tmp /bin/true")
args=()
for k in $(seq 1 "$ROUNDS"); do
	order="0 1 2"
	[ $((k % 2)) = 0 ] && order="2 1 0"
	for i in $order; do args+=(-n "${names[$i]} #$k" "${cmds[$i]}"); done
done
load=$(cut -d" " -f1 /proc/loadavg)
"${run_as[@]}" hyperfine -N --warmup 2 --runs "$RUNS" --export-json "$tmp/ab.json" "${args[@]}" >/dev/null 2>"$tmp/err" ||
	{ cat "$tmp/err" >&2; exit 1; }
{
	echo "## Start-up against $rev (bench/ab.sh)"
	echo
	echo "$ROUNDS rounds of $RUNS runs, order turned every round; load before: $load; $(date -u '+%Y-%m-%d %H:%M') UTC."
	echo
	python3 "$top/bench/ratios.py" "$tmp/ab.json" "$rev"
	python3 - "$tmp/ab.json" "$rev" <<'EOF'
import json, random, re, statistics, sys
per = {}
for r in json.load(open(sys.argv[1]))["results"]:
    m = re.fullmatch(r"(.+) #(\d+)", r["command"])
    per.setdefault(int(m.group(2)), {})[m.group(1)] = statistics.median(r["times"]) * 1000
d = [v["this build"] - v[sys.argv[2]] for v in per.values()]
rnd = random.Random(1)
boot = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(2000))
lo, hi = boot[50], boot[1949]
print("- this build minus %s, median over %d rounds: %+.2f ms, 95 %% interval [%+.2f, %+.2f] ms: %s" % (
    sys.argv[2], len(d), statistics.median(d), lo, hi,
    "**a regression beyond the noise**" if lo > 0 else "**no regression beyond the noise**"))
EOF
} >> "$out"
