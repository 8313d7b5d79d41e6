#!/bin/bash
# tests/apparmor.sh - the AppArmor profile the .deb ships compiles (make
# check's checks; issue 35): contrib/apparmor-sbxrun as `make
# install-apparmor` writes it for /usr/bin/sbxrun (what debian/rules does),
# through apparmor_parser -Q (compile, load nothing) -K (no cache), against
# an AppArmor feature set given with -M where the kernel has none to offer
# (this machine's kernel has no AppArmor).
#
# An AppArmor 4 parser (Debian 13, Ubuntu 24.04) compiles the profile whole,
# against the abi/4.0 feature set its package ships. Debian 12's AppArmor 3
# knows neither that abi nor the `userns` rule (no feature set file can teach
# a parser a rule), so there the profile is compiled with those two lines
# set aside (abi/3.0; the rest: the attachment, flags, the include of
# local/sbxrun), and the two lines are checked as text; the whole profile is
# then compiled by AppArmor 4.1 in the Debian 13 image's test
# (tests/slow/trixie-image.sh, make check-slow). Exit 77: no parser.
set -eu
cd "$(dirname "$0")/.."
command -v apparmor_parser >/dev/null || { echo "no apparmor_parser (sh tests/deps.sh installs apparmor)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s install-apparmor DESTDIR="$tmp/root" BINDIR=/usr/bin >/dev/null
prof=$tmp/root/etc/apparmor.d/sbxrun
grep -qx 'profile sbxrun /usr/bin/sbxrun flags=(unconfined) {' "$prof" || { echo "the profile does not name /usr/bin/sbxrun"; exit 1; }
grep -qx 'abi <abi/4.0>,' "$prof" || { echo "no 'abi <abi/4.0>,' line"; exit 1; }
grep -qx '  userns,' "$prof" || { echo "no 'userns,' rule"; exit 1; }
grep -qx '  include if exists <local/sbxrun>' "$prof" || { echo "no include of local/sbxrun"; exit 1; }
ver=$(apparmor_parser --version | sed -n 's/^AppArmor parser version \([0-9]*\).*/\1/p')
abi=/etc/apparmor.d/abi
if [ "${ver:-0}" -ge 4 ]; then
	feat=$abi/4.0
	[ -e /sys/kernel/security/apparmor/features ] && feat=/sys/kernel/security/apparmor/features
	apparmor_parser -Q -K -M "$feat" "$prof"
	echo "AppArmor $ver: the profile compiles whole (features: $feat)"
else
	sed -e 's|^abi <abi/4.0>,|abi <abi/3.0>,|' -e '/^[[:space:]]*userns,[[:space:]]*$/d' "$prof" > "$tmp/sbxrun3"
	apparmor_parser -Q -K -M "$abi/3.0" "$tmp/sbxrun3"
	echo "AppArmor $ver: the profile compiles without its AppArmor 4 lines (abi/4.0, userns); whole in make check-slow"
fi
# and a broken profile is refused (the check can fail)
printf 'profile sbxrun /usr/bin/sbxrun {\n  no_such_rule,\n}\n' > "$tmp/bad"
if apparmor_parser -Q -K -M "$abi/3.0" "$tmp/bad" 2>/dev/null; then echo "a broken profile compiled"; exit 1; fi
