#!/bin/bash
# tests/experiments/fuse-quota.sh - which mechanisms give an unprivileged
# user ENOSPC at a disk quota for overlay's writable layer on this kernel.
# Run as an unprivileged user (in the VM: runuser -u sbxtest -- bash THIS).
# Each experiment runs in its own `unshare -Urm` (user + mount namespace).
# Prints what it saw; nothing here asserts. Results: tests/experiments/README.md.
set -u
W=${W:-$HOME/fq}
rm -rf "$W"; mkdir -p "$W"
echo "== kernel $(uname -r); /dev/fuse: $(ls -l /dev/fuse 2>&1)"
echo "== $(fuse-overlayfs --version 2>&1 | head -1); fuse2fs: $(dpkg-query -W -f='${Version}' fuse2fs 2>&1)"
mklower() { mkdir -p "$1/d/sub" && echo lower > "$1/d/f" && echo x > "$1/d/sub/g" && echo keep > "$1/k"; }
mklower "$W/lower"
# semantics every writable layer must keep: a whiteout, an opaque directory, a rename of a lower dir
SEM='rm /m/k && test ! -e /m/k && echo "whiteout ok"; rm -rf /m/d && mkdir /m/d && test ! -e /m/d/f && echo "opaque ok"; mkdir -p /m/e && echo y > /m/e/y && mv /m/e /m/e2 && echo "rename ok"'
FILL='dd if=/dev/zero of=/m/fill bs=1M count=200 2>&1 | tail -2; rm -f /m/fill; mkdir /m/i; n=0; while : > /m/i/$n 2>/tmp/ierr.$$; do n=$((n+1)); [ $n -ge 100000 ] && break; done; echo "inodes: $n files, then: $(cat /tmp/ierr.$$)"; rm -rf /m/i'
export W SEM FILL

echo "== E1 kernel overlay, upper on a tmpfs in the user namespace (size=64m)"
unshare -Urm bash -c 'mount -t tmpfs -o size=64m t "$W/t1" 2>&1 || { mkdir -p "$W/t1"; mount -t tmpfs -o size=64m t "$W/t1"; }
mkdir -p "$W/t1/u" "$W/t1/w" "$W/m1"
mount -t overlay o -o lowerdir=$W/lower,upperdir=$W/t1/u,workdir=$W/t1/w,userxattr "$W/m1" 2>&1 && echo mounted
setfattr -n user.x -v 1 "$W/t1/u" 2>&1 || python3 -c "import os;os.setxattr(\"$W/t1/u\",\"user.x\",b\"1\")" 2>&1 | tail -1' 2>&1 | sed 's/^/   /'

echo "== E2 fuse2fs on a sparse 64M ext4 image, mounted in the user namespace"
truncate -s 64M "$W/img2"; t0=$(date +%s%N); mke2fs -q -t ext4 -F -m 0 "$W/img2"; echo "   mke2fs 64M: $(( ($(date +%s%N)-t0)/1000000 )) ms"
truncate -s 8G "$W/img8"; t0=$(date +%s%N); mke2fs -q -t ext4 -F -m 0 "$W/img8"; echo "   mke2fs 8G sparse: $(( ($(date +%s%N)-t0)/1000000 )) ms, $(du -k "$W/img8" | cut -f1) KiB used"
unshare -Urm bash -c 'mkdir -p "$W/f2" "$W/m2"
fuse2fs -o fakeroot "$W/img2" "$W/f2" 2>&1; sleep 1; grep f2 /proc/self/mountinfo | cut -d" " -f5,9- || echo "not mounted"
mkdir -p "$W/f2/u" "$W/f2/w" && echo dirs ok
echo "-- kernel overlay, upper on fuse2fs:"
mount -t overlay o -o lowerdir=$W/lower,upperdir=$W/f2/u,workdir=$W/f2/w,userxattr "$W/m2" 2>&1 && echo mounted; dmesg 2>/dev/null | tail -2
echo "-- fuse-overlayfs, upper on fuse2fs:"
fuse-overlayfs -o lowerdir=$W/lower,upperdir=$W/f2/u,workdir=$W/f2/w "$W/m2" 2>&1 && echo mounted
mount --bind "$W/m2" /mnt 2>/dev/null; ln -sfn "$W/m2" /tmp/m.$$ ; mkdir -p /m 2>/dev/null
bash -c "cd $W/m2 && ${SEM//\/m/.}"; bash -c "${FILL//\/m/$W/m2}"
df -k "$W/f2" | tail -1' 2>&1 | sed 's/^/   /'

echo "== E3 fuse-overlayfs, upper on a size-capped tmpfs (size=64m,nr_inodes=16384) in the user namespace"
unshare -Urm bash -c 'mkdir -p "$W/t3" "$W/m3"; mount -t tmpfs -o size=64m,nr_inodes=16384 t "$W/t3" && mkdir "$W/t3/u" "$W/t3/w"
fuse-overlayfs -o lowerdir=$W/lower,upperdir=$W/t3/u,workdir=$W/t3/w "$W/m3" 2>&1 && echo mounted
bash -c "cd $W/m3 && ${SEM//\/m/.}"; ls -la "$W/t3/u" "$W/t3/u/d" 2>&1 | grep -v "^total"
bash -c "${FILL//\/m/$W/m3}"; df -k "$W/t3" | tail -1; df -i "$W/t3" | tail -1' 2>&1 | sed 's/^/   /'

FDM=${FDM:-$(dirname "$0")/fdmount}
echo "== E4 the same with writeback=0, mounted by us on an fd (/dev/fd/N), daemon in the user namespace"
unshare -Urm bash -c 'mkdir -p "$W/t4" "$W/m4"; mount -t tmpfs -o size=64m,nr_inodes=16384 t "$W/t4" && mkdir "$W/t4/u" "$W/t4/w"
"'"$FDM"'" "$W/m4" x -- fuse-overlayfs -f -o writeback=0,lowerdir=$W/lower,upperdir=$W/t4/u,workdir=$W/t4/w @ 2>/dev/null & sleep 1
bash -c "cd $W/m4 && ${SEM//\/m/.}"
python3 -c "
import os,sys
f=os.open(\"$W/m4/fill\",os.O_WRONLY|os.O_CREAT); n=0
try:
    while True: os.write(f,b\"\\0\"*(1<<20)); n+=1
except OSError as e: print(\"write() after\",n,\"MiB:\",e)
try: os.close(f); print(\"close ok\")
except OSError as e: print(\"close:\",e)
os.unlink(\"$W/m4/fill\")"
bash -c "${FILL//\/m/$W/m4}"; umount "$W/m4"; wait; echo "daemon exit $? after umount"' 2>&1 | sed 's/^/   /'

# throughput: 256 MiB in 1 MiB writes, then 5000 files of 4 KiB, quota 1G
TP='t0=$(date +%s%N); dd if=/dev/zero of=$M/big bs=1M count=256 2>/dev/null; sync -f $M/ 2>/dev/null; t1=$(date +%s%N); python3 -c "
import os
os.mkdir(\"$M/s\")
for i in range(5000):
    with open(\"$M/s/%d\" % i, \"wb\") as f: f.write(b\"x\" * 4096)
"; t2=$(date +%s%N); echo "256 MiB: $(( (t1-t0)/1000000 )) ms; 5000 files: $(( (t2-t1)/1000000 )) ms"'
export TP
echo "== E5 throughput (quota 1G)"
unshare -Urm bash -c 'mkdir -p "$W/d5/u" "$W/d5/w" "$W/m5"; mount -t overlay o -o lowerdir=$W/lower,upperdir=$W/d5/u,workdir=$W/d5/w,userxattr "$W/m5"; M=$W/m5; echo -n "kernel overlay, upper on the disk (today): "; eval "$TP"' 2>&1 | sed 's/^/   /'
rm -rf "$W/d5"
unshare -Urm bash -c 'mkdir -p "$W/t5" "$W/m5"; t0=$(date +%s%N); mount -t tmpfs -o size=1g t "$W/t5" && mkdir "$W/t5/u" "$W/t5/w"
"'"$FDM"'" "$W/m5" x -- fuse-overlayfs -f -o writeback=0,lowerdir=$W/lower,upperdir=$W/t5/u,workdir=$W/t5/w @ 2>/dev/null & 
stat "$W/m5/k" >/dev/null; echo -n "fuse-overlayfs on tmpfs (start $(( ($(date +%s%N)-t0)/1000000 )) ms): "; M=$W/m5; eval "$TP"; umount "$W/m5"
"'"$FDM"'" "$W/m5" x -- fuse-overlayfs -f -o writeback=1,lowerdir=$W/lower,upperdir=$W/t5/u,workdir=$W/t5/w @ 2>/dev/null & 
stat "$W/m5/k" >/dev/null; rm -rf "$W/m5/big" "$W/m5/s"; echo -n "same, writeback=1: "; eval "$TP"; umount "$W/m5"' 2>&1 | sed 's/^/   /'
truncate -s 1G "$W/img5"; t0=$(date +%s%N); mke2fs -q -t ext4 -F -m 0 "$W/img5"
unshare -Urm bash -c 'mkdir -p "$W/f5" "$W/m5"; t0='"$t0"'; fuse2fs -o fakeroot "$W/img5" "$W/f5" >/dev/null 2>&1; mkdir "$W/f5/u" "$W/f5/w"
"'"$FDM"'" "$W/m5" x -- fuse-overlayfs -f -o writeback=0,lowerdir=$W/lower,upperdir=$W/f5/u,workdir=$W/f5/w @ 2>/dev/null & 
stat "$W/m5/k" >/dev/null; echo -n "fuse-overlayfs on fuse2fs (start incl. mke2fs $(( ($(date +%s%N)-t0)/1000000 )) ms): "; M=$W/m5; eval "$TP"' 2>&1 | sed 's/^/   /'
rm -rf "$W"
