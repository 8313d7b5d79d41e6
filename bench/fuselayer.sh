#!/bin/bash
# bench/fuselayer.sh - the cost of fuse-overlayfs as sbxrun runs it (served on
# an fd, writeback=0, noacl; src/sandbox/fuselayer.c) against the kernel's
# overlay, both with the upper layer on a 1G tmpfs, and the kernel's overlay on
# disk (/var/tmp): 256 MiB in 1 MiB writes and 5000 files of 4 KiB. As root on
# any kernel (unshare -m), on real hardware rather than in the TCG VM, whose
# context switches make FUSE look far slower than it is. Prints markdown rows.
set -eu
[ "$(id -u)" = 0 ] || { echo "fuselayer.sh: run as root (mounts in unshare -m)" >&2; exit 2; }
top=$(cd "$(dirname "$0")/.." && pwd)
B=$(mktemp -d); D=$(mktemp -d /var/tmp/sbxrun-fuselayer.XXXXXX)
trap 'rm -rf "$B" "$D"' EXIT
cc -O2 -o "$B/fdmount" "$top/tests/experiments/fdmount.c"
mkdir -p "$B/l" "$B/m" "$B/t"; echo k > "$B/l/k"
W='t0=$(date +%s%N); dd if=/dev/zero of=$M/big bs=1M count=256 2>/dev/null; t1=$(date +%s%N); python3 -c "
import os
os.mkdir(\"$M/s\")
for i in range(5000):
    with open(\"$M/s/%d\" % i, \"wb\") as f: f.write(b\"x\" * 4096)
"; t2=$(date +%s%N); echo -n "256 MiB: $(( 256000 / ((t1-t0)/1000000) )) MiB/s; 5000 files: $(( (t2-t1)/1000000 )) ms"'
export B D W
echo "| layer | result |"
echo "|---|---|"
unshare -m bash -c 'mount -t tmpfs -o size=1g t $B/t; mkdir $B/t/u $B/t/w; mount -t overlay o -o lowerdir=$B/l,upperdir=$B/t/u,workdir=$B/t/w $B/m; M=$B/m; echo -n "| kernel overlay, upper on tmpfs | "; eval "$W"; echo " |"'
for wb in 0 1; do
	WB=$wb unshare -m bash -c 'mount -t tmpfs -o size=1g t $B/t; mkdir $B/t/u $B/t/w; t0=$(date +%s%N); $B/fdmount $B/m x -- fuse-overlayfs -f -o lowerdir=$B/l,upperdir=$B/t/u,workdir=$B/t/w,writeback=$WB,noacl @ 2>/dev/null & stat $B/m/k >/dev/null; t1=$(date +%s%N); echo -n "| fuse-overlayfs writeback=$WB, upper on tmpfs (serving $(( (t1-t0)/1000000 )) ms after start) | "; M=$B/m; eval "$W"; echo " |"; kill %1'
done
unshare -m bash -c 'mkdir $D/u $D/w; mount -t overlay o -o lowerdir=$B/l,upperdir=$D/u,workdir=$D/w $B/m; M=$B/m; echo -n "| kernel overlay, upper on disk ($(df --output=fstype /var/tmp | tail -1)) | "; eval "$W"; echo " |"'
