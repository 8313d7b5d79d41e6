#!/bin/sh
# tests/helper/debrepo.sh DIR - a small flat apt repository for the
# gateway's tests (54-gateway-apt): sbxgood and sbxbad listed in a
# hand-written Packages file and an unsigned Release, sbxbad's bytes then
# changed (same size) so they differ from the SHA256 the index gives, and
# sbxorphan beside them, listed nowhere; and the source packages sbxsrc and
# sbxsrcbad (a .dsc and a tarball each, hand-made: apt-get source
# --download-only does not unpack them) in a Sources file, sbxsrcbad's
# tarball then changed as sbxbad's .deb is.
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
for p in sbxsrc sbxsrcbad; do
	mkdir -p "$dir/build/$p-1.0"
	echo "the source of $p" > "$dir/build/$p-1.0/README"
	tar -C "$dir/build" --owner=0 --group=0 --mtime=@0 -czf "$dir/${p}_1.0.tar.gz" "$p-1.0"
	printf 'Format: 1.0\nSource: %s\nBinary: %s\nArchitecture: all\nVersion: 1.0\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nChecksums-Sha256:\n %s %s %s\n' \
		"$p" "$p" "$(sha256sum < "$dir/${p}_1.0.tar.gz" | cut -d' ' -f1)" "$(stat -c %s "$dir/${p}_1.0.tar.gz")" \
		"${p}_1.0.tar.gz" > "$dir/${p}_1.0.dsc"
	printf 'Package: %s\nBinary: %s\nVersion: 1.0\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nArchitecture: all\nFormat: 1.0\nDirectory: .\nChecksums-Sha256:\n' "$p" "$p"
	for f in "${p}_1.0.dsc" "${p}_1.0.tar.gz"; do
		printf ' %s %s %s\n' "$(sha256sum < "$dir/$f" | cut -d' ' -f1)" "$(stat -c %s "$dir/$f")" "$f"
	done
	echo
done > "$dir/Sources"
rm -rf "$dir/build"
sums() { for f in Packages Sources; do printf ' %s %s %s\n' "$(sha256sum < "$dir/$f" | cut -d' ' -f1)" "$(stat -c %s "$dir/$f")" "$f"; done; }
printf 'Origin: sbxrun-tests\nLabel: sbxrun-tests\nSuite: test\nCodename: test\nDate: Thu, 01 Jan 2026 00:00:00 UTC\nArchitectures: all amd64 arm64 source\nSHA256:\n%s\n' \
	"$(sums)" > "$dir/Release"
# the same size, other bytes: the last 16 of the archive
size=$(stat -c %s "$dir/sbxbad_1.0_all.deb")
printf 'XXXXXXXXXXXXXXXX' | dd of="$dir/sbxbad_1.0_all.deb" bs=1 seek=$((size - 16)) conv=notrunc status=none
size=$(stat -c %s "$dir/sbxsrcbad_1.0.tar.gz")
printf 'XXXXXXXXXXXXXXXX' | dd of="$dir/sbxsrcbad_1.0.tar.gz" bs=1 seek=$((size - 16)) conv=notrunc status=none
