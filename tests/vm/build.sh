#!/bin/sh
# tests/vm/build.sh - builds, once, the Debian bookworm VM that tests/vm/run.sh
# boots: Debian's own 6.1 kernel (linux-image-amd64), systemd, dbus, a user
# sbxtest (uid 1000) with lingering, the runtime libraries of a host-built
# sbxrun and the test tools, and sbx-vm-job.service (guest/) that runs the
# job and powers off. Networking (systemd-networkd, DHCP; the DNS of QEMU's
# user network) only starts when run.sh gives the VM a NIC. Output: disk.img (ext4, raw), vmlinuz, initrd.img in
# /var/cache/sbxrun-vm/img-KEY (root) or ~/.cache/sbxrun-vm/img-KEY, KEY being
# a hash of this file and guest/*, so a second call costs nothing. Prints that
# directory on stdout; progress goes to stderr. mmdebstrap gets no mirror
# argument: it uses the host's apt configuration.
# Not root: mmdebstrap's unshare mode (needs a subuid range) and fakeroot.
# SBX_VM_VARIANT=bare (tests/vm/fresh.sh, make check-fresh): a bare Debian 12
# instead, with systemd but none of the build dependencies (no compiler, no
# pkg-config, no -dev packages, no sbxtest user), only git and make added,
# cached apart in CACHE/bare-KEY.
# SBX_VM_SUITE=trixie (make check-vm13): the same VM of Debian 13 instead
# (its 6.12 kernel, systemd 257, AppArmor 4.1 enabled with its profiles;
# 64-bit time_t library names), cached apart in CACHE/img13-KEY.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" = 0 ]; then cache=/var/cache/sbxrun-vm; else cache=${XDG_CACHE_HOME:-$HOME/.cache}/sbxrun-vm; fi
case ${SBX_VM_VARIANT:-} in
"") variant=img ;;
bare) variant=bare ;;
*) echo "vm: SBX_VM_VARIANT is unset or bare" >&2; exit 2 ;;
esac
suite=${SBX_VM_SUITE:-bookworm}
case $suite in
bookworm) ;;
trixie) [ "$variant" = img ] || { echo "vm: SBX_VM_SUITE=trixie is for the test VM only" >&2; exit 2; }
	variant=img13 ;;
*) echo "vm: SBX_VM_SUITE is bookworm or trixie" >&2; exit 2 ;;
esac
key=$(cat "$here/build.sh" "$here"/guest/* | sha256sum | cut -c1-16)
dir=$cache/$variant-$key
if [ -s "$dir/disk.img" ]; then echo "$dir"; exit 0; fi
mkdir -p "$cache"
# One build at a time; a concurrent call waits and then finds it done.
exec 9> "$cache/lock"
flock 9
if [ -s "$dir/disk.img" ]; then echo "$dir"; exit 0; fi

pkgs="linux-image-amd64 initramfs-tools systemd systemd-sysv dbus dbus-user-session libpam-systemd
libseccomp2 libcap-ng0 libinih1 libjson-c5 libarchive13 libcurl4 libssl3 libsystemd0
bash python3 iproute2 util-linux passwd procps psmisc curl ca-certificates tmux zstd xz-utils
busybox-static coreutils findutils grep sed kmod fuse-overlayfs fuse3 fuse2fs"
# Debian 13: the libraries' 64-bit time_t names, and AppArmor (its parser
# and the profiles it loads at boot) as a default install has it
[ "$suite" = trixie ] && pkgs=$(echo "$pkgs" | sed 's/libarchive13 /libarchive13t64 /; s/libcurl4 /libcurl4t64 /; s/libssl3 /libssl3t64 /')" apparmor"
# The test user, lingering, so that its systemd manager runs at boot (the
# hooks are the positional parameters).
# shellcheck disable=SC2016 # $1 is the hook's argument, the new root
set -- --customize-hook='chroot "$1" useradd --create-home --uid 1000 --shell /bin/bash sbxtest' \
	--customize-hook='mkdir -p "$1/var/lib/systemd/linger" && touch "$1/var/lib/systemd/linger/sbxtest"'
if [ "$variant" = bare ]; then
	# What a bare machine has (minbase, systemd, dbus, logind), what the job
	# needs (iproute2, kmod), and git and make to clone and to type `make`.
	pkgs="linux-image-amd64 initramfs-tools systemd systemd-sysv dbus libpam-systemd iproute2 kmod git make"
	set --
fi
# The initramfs only needs to find the root disk: a short module list keeps
# it small (and quick to unpack under software emulation).
modules="virtio_pci virtio_blk virtio_console virtio_rng ext4 9pnet_virtio 9p"

tmp=$(mktemp -d "$cache/part-$variant-$key.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)
log=$cache/build.log
[ "$variant" = img ] || log=$cache/build-$variant.log
echo "vm: building the VM image ($variant) with mmdebstrap (log: $log)" >&2
# shellcheck disable=SC2016 # $1 is the hook's argument, the new root
if ! mmdebstrap --variant=minbase --format=tar --include="$(echo $pkgs | tr ' ' ,)" \
	--dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-exclude=/usr/share/man/*' \
	--dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
	--essential-hook='mkdir -p "$1/etc/initramfs-tools/conf.d" "$1/usr/share/initramfs-tools/modules.d"' \
	--essential-hook='echo MODULES=list > "$1/etc/initramfs-tools/conf.d/sbxvm.conf"' \
	--essential-hook="printf '%s\n' $modules > \"\$1/usr/share/initramfs-tools/modules.d/sbxvm\"" \
	--customize-hook='echo sbxvm > "$1/etc/hostname"; printf "127.0.0.1 localhost\n127.0.1.1 sbxvm\n" > "$1/etc/hosts"' \
	--customize-hook='printf "[Match]\nName=en*\n[Network]\nDHCP=ipv4\n" > "$1/etc/systemd/network/80-sbxvm.network"' \
	--customize-hook='rm -f "$1/etc/resolv.conf"; echo "nameserver 10.0.2.3" > "$1/etc/resolv.conf"' \
	"$@" \
	--customize-hook="copy-in $here/guest/sbx-vm-job /usr/local/sbin" \
	--customize-hook="copy-in $here/guest/sbx-vm-job.service /etc/systemd/system" \
	--customize-hook='chroot "$1" systemctl enable sbx-vm-job.service' \
	--customize-hook='chroot "$1" systemctl mask getty.target apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer' \
	--customize-hook='chroot "$1" systemctl set-default multi-user.target' \
	--customize-hook='rm -rf "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/*' \
	"$suite" "$tmp/rootfs.tar" > "$log" 2>&1; then
	tail -30 "$log" >&2
	echo "vm: mmdebstrap failed (log: $log)" >&2
	exit 1
fi

# The tarball keeps ownership; unpacking and mke2fs -d see it as root, or
# in one fakeroot session otherwise. A sparse 8G disk leaves room for the
# tests' image stores; the cached file is never written (run.sh boots it
# with snapshot=on).
fake=""
[ "$(id -u)" = 0 ] || fake=fakeroot
$fake sh -euc '
	mkdir "$1/root"
	tar --numeric-owner --xattrs --xattrs-include="*" -xpf "$1/rootfs.tar" -C "$1/root"
	cp "$1"/root/boot/vmlinuz-* "$1/vmlinuz"; cp "$1"/root/boot/initrd.img-* "$1/initrd.img"
	mke2fs -q -t ext4 -L sbxroot -d "$1/root" "$1/disk.img" 8G
' sh "$tmp" >> "$log" 2>&1 || { tail -20 "$log" >&2; exit 1; }
chmod a+r "$tmp/vmlinuz" "$tmp/initrd.img"
mkdir -p "$tmp/out"
mv "$tmp/disk.img" "$tmp/vmlinuz" "$tmp/initrd.img" "$tmp/out/"
rm -rf "$dir" && mv "$tmp/out" "$dir"
# Images of older recipes (of this variant) go.
for old in "$cache/$variant"-*; do [ "$old" = "$dir" ] || rm -rf "$old"; done
echo "vm: image built in $(($(date +%s) - start)) s: $dir ($(du -sh "$dir/disk.img" | cut -f1) used)" >&2
echo "$dir"
