#!/bin/bash
# bench/undo.sh [OUT] - issue 36's three undo and branch goals (`make
# bench-undo`), on the image tiny, each in one hyperfine run:
#   1. start-up of `run --project DIR -- /bin/true` with DIR a checkout of
#      BENCH_PROJECT_FILES (20,000) files making about 1 GB, against DIR
#      empty: within 5 ms. Rounds alternate the two (their order turned
#      every round); the median of the rounds' differences gets a 95 %
#      interval by resampling them, as bench/netstart.sh. An unchanged run
#      keeps no change set, so nothing piles up between runs.
#   2. `changes diff ID` and `changes apply ID` of a change set of
#      BENCH_CHANGED (10,000) rewritten small text files: under 1 s each.
#      Apply gets a fresh change set before each run (hyperfine --prepare:
#      a run rewrites the files again, with new text).
#   2b. `changes apply ID` of a change set of BENCH_ADDED (20,000) new
#      files in a node_modules-like tree (the shape `npm install` leaves:
#      2,000 package directories of 10 files, median 2 KB), beside `cp -a`
#      of the same tree on the host: under 2 s (issue 40). Each run gets a
#      fresh change set (--prepare: DIR emptied, the tree copied in inside
#      the sandbox from a read-only bind), each cp a fresh destination.
#   3. `session snapshot` of a session that wrote 100 MB (one file) and of
#      one that wrote 10,000 small files; `session start --from SNAP` (the
#      fork) of each against a plain `session start`, each start preceded
#      by the `session rm -f` of the last one (--prepare): the fork within
#      20 ms of a plain start, whatever the snapshot's size.
# The checkout is generated once into ~/.cache/sbxrun-bench (the user's
# who measures). Run as an unprivileged user with the image tiny in its
# store, or as root (then as SBX_BENCH_USER, as bench/run.sh does).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=${1:-}  # else stdout
ROUNDS=${BENCH_ROUNDS:-20} RUNS=${BENCH_RUNS:-10}
FILES=${BENCH_PROJECT_FILES:-20000} CHANGED=${BENCH_CHANGED:-10000} ADDED=${BENCH_ADDED:-20000}
PARTS=${BENCH_PARTS:-start changes added snapshot} # which of the three to run
part() { case " $PARTS " in *" $1 "*) return 0;; esac; return 1; }
command -v hyperfine >/dev/null || { echo "bench: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
tmp=$(mktemp -d)
chmod 0755 "$tmp"
if [ "$(id -u)" = 0 ]; then
	chmod 0777 "$tmp" # the bench user writes its projects and JSON here
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img" 2>/dev/null
	mkdir -p "$tmp/bin"
	cp "$SBX" "$tmp/bin/sbxrun" && cp -r "$top/profiles" "$tmp/bin/" && chmod -R a+rX "$tmp/bin"
	SBX=$tmp/bin/sbxrun
	as_user=(runuser -u "$BENCH_USER" -- env -i HOME="$BENCH_HOME" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8)
	cache=$BENCH_HOME/.cache/sbxrun-bench
else
	as_user=(env)
	cache=${XDG_CACHE_HOME:-$HOME/.cache}/sbxrun-bench
fi
u() { "${as_user[@]}" "$@"; }
S=bench-undo-$$
cleanup() {
	local s
	for s in "$S-w100m" "$S-w10k" "$S-fork" "$S-plain"; do u "$SBX" session rm -f "$s" >/dev/null 2>&1 || true; done
	for s in "$S-100m" "$S-10k" "$S-snap"; do u "$SBX" session snapshot-rm "$s" >/dev/null 2>&1 || true; done
	[ -z "${big:-}" ] || u "$SBX" changes prune --all >/dev/null 2>&1 || true
	rm -rf "$tmp"
}
trap cleanup EXIT
u "$SBX" image inspect tiny >/dev/null 2>&1 ||
	{ echo "bench: no image 'tiny' (bash tests/images.sh DIR; sbxrun image import DIR/tiny.tar --name tiny)" >&2; exit 1; }
if [ -n "$(u "$SBX" changes ls 2>/dev/null | tail -n +2)" ]; then
	echo "bench: the user already keeps change sets (sbxrun changes ls); the bench prunes all of them at the end, so it runs only without" >&2
	exit 1
fi

# the checkout: FILES files in 100 directories of 10 below 10, sizes drawn
# from a log-normal of median 16 KB clipped to 4 MB, scaled to make 1 GB
big=$cache/checkout-$FILES
if part start && [ ! -e "$big/.done" ]; then
	echo "bench: generating the checkout of $FILES files into $big (once)" >&2
	u python3 - "$big" "$FILES" <<'EOF'
import os, random, shutil, sys
root, n = sys.argv[1], int(sys.argv[2])
shutil.rmtree(root, ignore_errors=True)
rnd = random.Random(36)
sizes = [min(4 << 20, int(rnd.lognormvariate(9.7, 1.6))) for _ in range(n)]
k = (1 << 30) / sum(sizes)
block = bytes(rnd.randrange(32, 127) for _ in range(1 << 16)) + b"\n"
for i, s in enumerate(sizes):
    d = os.path.join(root, "src%d" % (i % 10), "mod%d" % (i // 10 % 10))
    os.makedirs(d, exist_ok=True)
    s = max(1, int(s * k))
    with open(os.path.join(d, "file%05d.txt" % i), "wb") as f:
        while s > 0:
            f.write(block[:min(s, len(block))])
            s -= len(block)
open(os.path.join(root, ".done"), "w").close()
EOF
fi
empty=$tmp/empty
small=$tmp/small # the CHANGED small text files that a run rewrites
u mkdir -p "$empty" "$small"
! part changes || u sh -c 'cd "$1" && i=0 && while [ $i -lt "$2" ]; do d=d$((i % 100)); mkdir -p $d; printf "line one\nline %s\nline three\n" $i > $d/f$i.txt; i=$((i + 1)); done' \
	- "$small" "$CHANGED"
# helpers the bench user runs: a rewrite of the small files (each run
# appends a line, so every run changes them, applied or not) keeping the
# change set's id in $tmp/id; an apply of that id; a quiet removal
cat > "$tmp/rewrite.sh" <<EOF
"$SBX" run -i tiny --project "$small" -- sh -c 'for f in d*/*.txt; do echo rewritten >> \$f; done' 2>/dev/null
"$SBX" changes ls | awk 'NR > 1 { id = \$1 } END { print id }' > "$tmp/id"
EOF
printf '%s\n' "exec \"$SBX\" changes apply \$(cat \"$tmp/id\")" > "$tmp/apply.sh"
printf '%s\n' "\"$SBX\" \"\$@\" >/dev/null 2>&1; true" > "$tmp/quiet.sh"
chmod a+r "$tmp"/*.sh
load0=$(cut -d" " -f1 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M')
hf() { # JSON hyperfine-args...
	local j=$1
	shift
	u hyperfine -N --export-json "$j" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
}

# 1. start-up on the checkout against an empty DIR
args=()
names=("run --project, 1 GB checkout" "run --project, empty DIR")
cmds=("$SBX run -i tiny --project $big -- /bin/true" "$SBX run -i tiny --project $empty -- /bin/true")
for k in $(seq 1 "$ROUNDS"); do
	for j in 0 1; do
		i=$(( k % 2 ? j : 1 - j ))
		args+=(-n "${names[$i]} #$k" "${cmds[$i]}")
	done
done
! part start || hf "$tmp/start.json" --warmup 2 --runs "$RUNS" "${args[@]}"

# 2. diff and apply of CHANGED rewritten files
if part changes; then
	u sh "$tmp/rewrite.sh"
	id=$(cat "$tmp/id")
	[ -n "$id" ] || { echo "bench: the rewriting run kept no change set" >&2; exit 1; }
	n=$(u "$SBX" changes show "$id" | wc -l)
	hf "$tmp/diff.json" --warmup 1 --runs 10 -n "changes diff" "$SBX changes diff $id"
	u "$SBX" changes discard "$id"
	hf "$tmp/apply.json" --runs 10 --prepare "sh $tmp/rewrite.sh" -n "changes apply" "sh $tmp/apply.sh"
fi

# 2b. apply of ADDED new files against cp -a of the same tree
if part added; then
	tree=$cache/modules-$ADDED
	if [ ! -e "$tree/.done" ]; then
		u python3 - "$tree" "$ADDED" <<'EOF'
import os, random, shutil, sys
root, n = sys.argv[1], int(sys.argv[2])
shutil.rmtree(root, ignore_errors=True)
rnd = random.Random(40)
for i in range(n):
    d = os.path.join(root, "node_modules", "pkg%04d" % (i // 10), "lib" if i % 10 > 3 else "")
    os.makedirs(d, exist_ok=True)
    s = min(1 << 20, int(rnd.lognormvariate(7.6, 1.2)))
    with open(os.path.join(d, "file%d.js" % (i % 10)), "w") as f:
        f.write(("// %d\n" % i) * max(1, s // 8))
open(os.path.join(root, ".done"), "w").close()
EOF
	fi
	proj=$tmp/added dst=$tmp/cpdst
	u mkdir -p "$proj"
	cat > "$tmp/add.sh" <<EOF
rm -rf "$proj/node_modules"
"$SBX" run -i tiny --project "$proj" --bind "$tree:/mnt/tree" -- cp -a /mnt/tree/node_modules . 2>/dev/null
"$SBX" changes ls | awk 'NR > 1 { id = \$1 } END { print id }' > "$tmp/id"
EOF
	chmod a+r "$tmp/add.sh"
	hf "$tmp/added.json" --runs 10 --prepare "sh $tmp/add.sh" -n "changes apply, $ADDED new files" "sh $tmp/apply.sh" \
		--prepare "rm -rf $dst" -n "cp -a, the same $ADDED files" "cp -a $tree/node_modules $dst"
fi

# 3. snapshots of 100 MB and of 10,000 files, forks against plain starts
if part snapshot; then
	u "$SBX" session start --image tiny "$S-w100m" >/dev/null
	u "$SBX" run --session "$S-w100m" -- dd if=/dev/urandom of=/workspace/data bs=1M count=100 2>/dev/null
	u "$SBX" session start --image tiny "$S-w10k" >/dev/null
	u "$SBX" run --session "$S-w10k" -- sh -c 'cd /workspace && i=0 && while [ $i -lt 10000 ]; do d=d$((i % 100)); mkdir -p $d; echo "file $i" > $d/f$i; i=$((i + 1)); done'
	hf "$tmp/snap.json" --runs 10 \
		--prepare "sh $tmp/quiet.sh session snapshot-rm $S-snap" -n "snapshot, 100 MB" "$SBX session snapshot $S-w100m $S-snap" \
		--prepare "sh $tmp/quiet.sh session snapshot-rm $S-snap" -n "snapshot, 10,000 files" "$SBX session snapshot $S-w10k $S-snap"
	u "$SBX" session snapshot-rm "$S-snap" >/dev/null 2>&1 || true
	u "$SBX" session snapshot "$S-w100m" "$S-100m" >/dev/null
	u "$SBX" session snapshot "$S-w10k" "$S-10k" >/dev/null
	args=()
	rm_fork="sh $tmp/quiet.sh session rm -f $S-fork"
	rm_plain="sh $tmp/quiet.sh session rm -f $S-plain"
	for k in $(seq 1 "$((ROUNDS / 2))"); do
		args+=(--prepare "$rm_plain" -n "session start #$k" "$SBX session start --image tiny $S-plain"
		       --prepare "$rm_fork" -n "session start --from (100 MB) #$k" "$SBX session start --from $S-100m $S-fork"
		       --prepare "$rm_fork" -n "session start --from (10,000 files) #$k" "$SBX session start --from $S-10k $S-fork")
	done
	hf "$tmp/fork.json" --runs "$RUNS" "${args[@]}"
fi

report() {
	echo "## Undo and branches (issue 36, bench/undo.sh)"
	echo
	echo "$started UTC; load before: $load0, after: $(cut -d" " -f1 /proc/loadavg); image tiny;" \
		"checkout: $FILES files, $(du -sh "$big" 2>/dev/null | cut -f1); change set: $CHANGED rewritten files${n:+ ($n entries)}."
	echo
	python3 - "$tmp" <<'EOF'
import json, random, re, statistics, sys
tmp = sys.argv[1]
rnd = random.Random(1)
def rounds(path):
    per, pooled = {}, {}
    for r in json.load(open(path))["results"]:
        m = re.fullmatch(r"(.+?)(?: #(\d+))?", r["command"])
        per.setdefault(m.group(2), {})[m.group(1)] = statistics.median(r["times"]) * 1000
        pooled.setdefault(m.group(1), []).extend(t * 1000 for t in r["times"])
    return per, pooled
def interval(per, a, b):
    d = [v[a] - v[b] for v in per.values()]
    boot = sorted(statistics.median(rnd.choices(d, k=len(d))) for _ in range(2000))
    return statistics.median(d), boot[50], boot[1949], len(d)
def within(what, per, pooled, a, b, goal):
    m, lo, hi, n = interval(per, a, b)
    v = "within %g ms" % goal if hi <= goal else "more than %g ms" % goal if lo > goal else "not told apart from %g ms" % goal
    print("- %s: `%s` minus `%s`, median over %d rounds: %+.2f ms, 95 %% interval [%+.2f, %+.2f] ms (medians %.2f and %.2f ms): **%s**"
          % (what, a, b, n, m, lo, hi, statistics.median(pooled[a]), statistics.median(pooled[b]), v))
def under(path, goal):
    for name, t in rounds(path)[1].items():
        v = "met" if statistics.median(t) <= goal else "missed"
        print("- `%s`: median %.0f ms, min %.0f, max %.0f over %d runs (goal under %g ms): **%s**"
              % (name, statistics.median(t), min(t), max(t), len(t), goal, v))
import os
if os.path.exists(tmp + "/start.json"):
    per, pooled = rounds(tmp + "/start.json")
    within("start-up on the checkout", per, pooled, "run --project, 1 GB checkout", "run --project, empty DIR", 5.0)
if os.path.exists(tmp + "/apply.json"):
    under(tmp + "/diff.json", 1000)
    under(tmp + "/apply.json", 1000)
if os.path.exists(tmp + "/added.json"):
    for name, t in rounds(tmp + "/added.json")[1].items():
        goal = 2000 if name.startswith("changes") else None
        v = "" if goal is None else ": **%s** (goal under %d ms)" % ("met" if statistics.median(t) <= goal else "missed", goal)
        print("- `%s`: median %.0f ms, min %.0f, max %.0f over %d runs%s" % (name, statistics.median(t), min(t), max(t), len(t), v))
if os.path.exists(tmp + "/fork.json"):
    for name, t in rounds(tmp + "/snap.json")[1].items():
        print("- `%s`: median %.0f ms, min %.0f over %d runs" % (name, statistics.median(t), min(t), len(t)))
    per, pooled = rounds(tmp + "/fork.json")
    for snap in ("100 MB", "10,000 files"):
        within("fork", per, pooled, "session start --from (%s)" % snap, "session start", 20.0)
EOF
}
if [ -n "$out" ]; then report >> "$out"; else report; fi
