#!/bin/sh
# rootfs/build.sh RECIPE OUTPUT [SUITE] - builds a Debian rootfs tarball of
# SUITE (bookworm, Debian 12, by default; or trixie, Debian 13)
# from Debian's own archive with mmdebstrap. As root directly; otherwise in
# unshare mode where a subuid range exists, else in fakechroot mode (no
# setuid helper at all). The archive is mmdebstrap's default (or the host's
# apt configuration): no registry host is named here.
#
# Every program by the system's own PATH, mmdebstrap by its absolute path:
# under sbxrun's AppArmor profile this runs as sbxrun's child, and whatever
# the caller's PATH names first must not be what runs (sbxrun also starts
# this with a fixed environment: src/cmd/image_cmd.c).
set -eu
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
mmdebstrap=/usr/bin/mmdebstrap
recipe=${1:?usage: build.sh minimal|full OUTPUT}
out=${2:?usage: build.sh minimal|full OUTPUT}
suite=${3:-bookworm}
case $suite in
bookworm | trixie) ;;
*) echo "build.sh: suite '$suite': bookworm or trixie" >&2; exit 2 ;;
esac
here=$(cd "$(dirname "$0")" && pwd)
list="$here/$recipe.packages"
[ -f "$list" ] || { echo "build.sh: no recipe '$recipe' ($list)" >&2; exit 2; }
pkgs=$(grep -v '^#' "$list" | tr -s ' \n' ',' | sed 's/^,//; s/,$//')

if [ "$(id -u)" = 0 ]; then
	mode=root
elif grep -q "^$(id -un):" /etc/subuid 2>/dev/null && [ -x /usr/bin/newuidmap ]; then
	mode=unshare
else
	mode=fakechroot
fi

# A virtual environment first on PATH makes `pip install` work as in the
# hosted containers (Debian's pip refuses the system site otherwise);
# /etc/environment carries that PATH, and sbxrun reads it from the image.
path=/opt/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
[ -x "$mmdebstrap" ] || { echo "build.sh: no $mmdebstrap (as root: apt install mmdebstrap)" >&2; exit 2; }
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT
"$mmdebstrap" --mode="$mode" --variant=minbase --format=tar \
	--include="$pkgs" \
	--customize-hook='chroot "$1" python3 -m venv --system-site-packages /opt/venv' \
	--customize-hook="echo 'PATH=\"$path\"' > \"\$1/etc/environment\"" \
	--customize-hook='rm -rf "$1"/var/cache/apt/*.bin "$1"/var/lib/apt/lists/* "$1"/usr/share/doc/* "$1"/usr/share/man/*' \
	"$suite" - > "$tmp"
case "$out" in
*.zst) /usr/bin/zstd -q -T0 -f "$tmp" -o "$out" ;;
*.gz) /usr/bin/gzip -c "$tmp" > "$out" ;;
*.xz) /usr/bin/xz -T0 -c "$tmp" > "$out" ;;
*) mv "$tmp" "$out" ;;
esac
