#!/bin/sh
# tests/helper/debrepo.sh DIR - a small flat apt repository for the
# gateway's tests (54-gateway-apt): sbxgood and sbxbad listed in a
# hand-written Packages file and an unsigned Release, sbxbad's bytes then
# changed (same size) so they differ from the SHA256 the index gives, and
# sbxorphan beside them, listed nowhere.
set -eu
dir=$1
mkdir -p "$dir/build"
for p in sbxgood sbxbad sbxorphan; do
	mkdir -p "$dir/build/$p/DEBIAN" "$dir/build/$p/usr/share/$p"
	printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nDescription: a fixture of the gateway tests\n' \
		"$p" > "$dir/build/$p/DEBIAN/control"
	echo "$p is installed" > "$dir/build/$p/usr/share/$p/hello"
	dpkg-deb -Zgzip --root-owner-group --build "$dir/build/$p" "$dir/${p}_1.0_all.deb" >/dev/null
done
rm -rf "$dir/build"
for p in sbxgood sbxbad; do
	f=${p}_1.0_all.deb
	printf 'Package: %s\nVersion: 1.0\nArchitecture: all\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nFilename: ./%s\nSize: %s\nSHA256: %s\nDescription: a fixture of the gateway tests\n\n' \
		"$p" "$f" "$(stat -c %s "$dir/$f")" "$(sha256sum < "$dir/$f" | cut -d' ' -f1)"
done > "$dir/Packages"
printf 'Origin: sbxrun-tests\nLabel: sbxrun-tests\nSuite: test\nCodename: test\nDate: Thu, 01 Jan 2026 00:00:00 UTC\nArchitectures: all amd64 arm64\nSHA256:\n %s %s Packages\n' \
	"$(sha256sum < "$dir/Packages" | cut -d' ' -f1)" "$(stat -c %s "$dir/Packages")" > "$dir/Release"
# the same size, other bytes: the last 16 of the archive
size=$(stat -c %s "$dir/sbxbad_1.0_all.deb")
printf 'XXXXXXXXXXXXXXXX' | dd of="$dir/sbxbad_1.0_all.deb" bs=1 seek=$((size - 16)) conv=notrunc status=none
