#!/bin/bash
# tests/images.sh DIR - the test images: the real minimal Debian image (and
# node, the same with Debian's npm) from
# the recipe (cached by recipe digest in /var/cache/sbxrun-tests when root,
# else ~/.cache/sbxrun-tests), and a tiny busybox-static image with the
# probe helper for fast tests.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
mkdir -p "$dir"
if [ "$(id -u)" = 0 ]; then cache=/var/cache/sbxrun-tests; else cache=${XDG_CACHE_HOME:-$HOME/.cache}/sbxrun-tests; fi
mkdir -p "$cache"
# minimal, and node: minimal with Debian's npm (9.2), for the package
# gateway's real npm installs from the fixture registry
recipes="minimal node"
for recipe in $recipes; do
	key=$(cat "$top/rootfs/build.sh" "$top/rootfs/$recipe.packages" | sha256sum | cut -c1-16)
	if [ ! -s "$cache/$recipe-$key.tar.zst" ]; then
		echo "images: building the $recipe image with mmdebstrap (cached as $cache/$recipe-$key.tar.zst)"
		sh "$top/rootfs/build.sh" "$recipe" "$cache/part-$recipe-$key.tar.zst" >"$cache/build.log" 2>&1 \
			|| { tail -20 "$cache/build.log"; exit 1; }
		mv "$cache/part-$recipe-$key.tar.zst" "$cache/$recipe-$key.tar.zst"
	fi
	cp "$cache/$recipe-$key.tar.zst" "$dir/$recipe.tar.zst"
done

# tiny: busybox-static, the probe, a passwd with root and a user.
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t"/root/{bin,etc,tmp,root,home/user,proc,dev,sys,workspace,usr/bin}
cp /bin/busybox "$t/root/bin/busybox"
for a in sh ls cat echo id sleep true false mkdir rm touch chown stat kill ps env grep \
	 head wc dd mount hostname readlink uname printf test find cp mv chmod ln seq nproc df; do
	ln -s busybox "$t/root/bin/$a"
done
[ -x "$top/tests/helper/probe" ] && cp "$top/tests/helper/probe" "$t/root/bin/probe"
printf 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000:user:/home/user:/bin/sh\n' > "$t/root/etc/passwd"
printf 'root:x:0:\nuser:x:1000:\n' > "$t/root/etc/group"
printf 'PATH="/bin:/usr/bin"\n' > "$t/root/etc/environment"
printf 'ID=tiny\nPRETTY_NAME="sbxrun tiny test image"\n' > "$t/root/etc/os-release"
chmod 1777 "$t/root/tmp"
tar --numeric-owner --owner=0 --group=0 -C "$t/root" -cf "$dir/tiny.tar" .
