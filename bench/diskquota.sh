#!/bin/bash
# bench/diskquota.sh - how the disk quota holds with storage = disk (chosen on
# its own on kernels before 6.6, whose tmpfs cannot hold overlay's writable
# layer): the supervisor sums the writable layer (every inode at least 4 KiB)
# every 50 to 500 ms, by what a walk costs, and ends the sandbox past the
# quota; one file cannot grow past the quota (RLIMIT_FSIZE). Measures (1) a
# fast writer of one file and (2) of many 1 MiB files under --disk 64M, (3) an
# inode bomb of empty files, (4) the cost of one walk over 1k, 10k and 100k
# files. Appends a markdown section to $1 (or prints it).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=${1:-/dev/stdout}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
printf '[sandbox]\nstorage = disk\n' > "$tmp/disk.ini"

# DISKUSE_BENCH: a prebuilt one (the test VM has no compiler)
if [ -n "${DISKUSE_BENCH:-}" ]; then cp "$DISKUSE_BENCH" "$tmp/diskuse_bench"; else
	cc -O2 -std=gnu11 -iquote "$top/src" -o "$tmp/diskuse_bench" "$top/bench/diskuse_bench.c" "$top/src/sandbox/diskuse.c"
fi

# (1) a writer as fast as the disk: 1 MiB per write, the total printed after each
"$SBX" run --profile "$tmp/disk.ini" --image minimal --disk 64M --timeout 60s -- python3 -u -c '
import os
b = b"\0" * (1 << 20); n = 0
with open("/tmp/fill", "wb", buffering=0) as f:
    while True:
        f.write(b); n += 1; print(n, flush=True)' > "$tmp/w.out" 2> "$tmp/w.err" || true
written=$(tail -1 "$tmp/w.out")
# (2) as fast, 1 MiB files
"$SBX" run --profile "$tmp/disk.ini" --image minimal --disk 64M --timeout 60s -- python3 -u -c '
b = b"\0" * (1 << 20); n = 0
while True:
    with open("/tmp/f%d" % n, "wb", buffering=0) as f: f.write(b)
    n += 1; print(n, flush=True)' > "$tmp/m.out" 2> "$tmp/m.err" || true
many=$(tail -1 "$tmp/m.out")
# (3) an inode bomb of empty files, for 10 s
"$SBX" run --profile "$tmp/disk.ini" --image minimal --disk 64M --timeout 10s -- python3 -u -c '
import os
os.mkdir("/tmp/i"); n = 0
while True:
    open("/tmp/i/%d" % n, "w").close(); n += 1
    if n % 1000 == 0: print(n, flush=True)' > "$tmp/i.out" 2> "$tmp/i.err" || true
files=$(tail -1 "$tmp/i.out")

{
echo "## Disk quota with storage = disk (kernels before 6.6)"
echo
echo "Kernel $(uname -r); quota --disk 64M; the supervisor walks the writable layer every 50-500 ms (20x a walk's cost; 4x within the last quarter of the quota)."
echo
echo "| measure | result |"
echo "|---|---|"
echo "| one file, 1 MiB writes as fast as possible: written | ${written:-0} MiB; stderr: $(tail -1 "$tmp/w.err") |"
echo "| many 1 MiB files as fast as possible: written before the kill | ${many:-0} MiB (overshoot $(( ${many:-0} - 64 )) MiB); stderr: $(tail -1 "$tmp/m.err") |"
echo "| inode bomb of empty files, 10 s | ${files:-0} files created; stderr: $(head -1 "$tmp/i.err") |"
for n in 1000 10000 100000; do
	mkdir "$tmp/tree$n"
	echo "| one walk over a tree of $n files | $("$tmp/diskuse_bench" "$tmp/tree$n" "$n" | sed 's/^[0-9]* files: //') |"
	rm -rf "$tmp/tree$n"
done
echo
} >> "$out"

# (5) the writable layer's cost by storage: what this machine picks on its own
# (tmpfs, or fuse-overlayfs over tmpfs before 6.6) against storage = disk:
# 256 MiB in 1 MiB writes, then 5000 files of 4 KiB, timed inside; and the
# start-up of `run -- true`, median of 9. Quota 1G.
layer_bench() { # profile-args...
	local t0 t1 times=()
	"$SBX" run "$@" --image minimal --disk 1G --timeout 600s -- python3 -c '
import os, time
t = time.monotonic(); b = b"\0" * (1 << 20)
with open("/tmp/big", "wb", buffering=0) as f:
    for _ in range(256): f.write(b)
t1 = time.monotonic(); os.mkdir("/tmp/s")
for i in range(5000):
    with open("/tmp/s/%d" % i, "wb") as f: f.write(b"x" * 4096)
t2 = time.monotonic()
print("%.0f MiB/s; 5000 files in %.2f s" % (256 / (t1 - t), t2 - t1))' 2>&1 | tail -1
	for _ in 1 2 3 4 5 6 7 8 9; do
		t0=$(date +%s%N); "$SBX" run "$@" --image minimal --disk 1G -- true; t1=$(date +%s%N)
		times+=($(( (t1 - t0) / 100000 )))
	done
	printf '%s\n' "${times[@]}" | sort -n | sed -n 5p | awk '{printf "; start-up %.1f ms\n", $1 / 10}'
}
"$SBX" run --image minimal --disk 1G --json "$tmp/auto.json" -- true
auto=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["limits"]["disk"]["mechanism"])' "$tmp/auto.json" 2>/dev/null || echo "?")
{
echo "## Writable layer by storage: throughput and start-up"
echo
echo "Kernel $(uname -r), $(id -un); --disk 1G; 256 MiB in 1 MiB writes and 5000 files of 4 KiB, timed inside; start-up of \`run -- true\`, median of 9."
echo
echo "| storage | result |"
echo "|---|---|"
echo "| $auto (this machine's own choice) | $(layer_bench | tr -d '\n') |"
echo "| disk (storage = disk) | $(layer_bench --profile "$tmp/disk.ini" | tr -d '\n') |"
echo
} >> "$out"
