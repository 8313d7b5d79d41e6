#!/bin/bash
# tests/vm/guest-deb.sh DEB IMAGE RESULTS - runs in the VM (guest-check.sh
# --deb; make check-deb), as root: installs the Debian package of `make deb`
# as a user would (apt-get from the image's Debian archive over QEMU's user
# network, without Recommends, so that Depends alone must be enough), then
# checks as sbxtest that the installed sbxrun imports IMAGE (the minimal test
# image) and runs `sbxrun run -- true` with the stock default profile, that
# `man sbxrun` renders, that `sbxrun profile ls` finds the stock profiles in
# /usr/share/sbxrun and that bash loads the completion. Appends
# "pass|fail package [deb] NAME" lines to RESULTS.
set -u
deb=$1 image=$2 results=$3
user=${SBX_TEST_USER:-sbxtest}
uid=$(id -u "$user") || exit 2
# check NAME CMD...: CMD's output indented, a result line by its status.
check() {
	local name=$1 out rc t0; shift
	t0=$(date +%s)
	out=$("$@" 2>&1); rc=$?
	[ -n "$out" ] && printf '%s\n' "$out" | grep -v '^(Reading database' | sed 's/^/  /'
	if [ "$rc" = 0 ]; then echo "pass package [deb] $name" >> "$results"; else echo "fail package [deb] $name (exit $rc)" >> "$results"; fi
	echo "== [deb] $name: exit $rc, $(($(date +%s) - t0)) s"
	return "$rc"
}
# as_user CMD...: as the user in a login shell's shape (runuser, the user's bus).
as_user() {
	runuser -u "$user" -- env -i HOME="$(getent passwd "$user" | cut -d: -f6)" LANG=C.UTF-8 \
		PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="/run/user/$uid" \
		DBUS_SESSION_BUS_ADDRESS="unix:path=/run/user/$uid/bus" "$@"
}

# apt reads the file as _apt: a world-readable copy. The image keeps no
# package lists and its dpkg excludes /usr/share/man (tests/vm/build.sh):
# let our man page in (dpkg makes no directory it excludes), and man-db to
# read it.
tmp=$(mktemp -d /tmp/sbxrun-deb.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp" && cp "$deb" "$image" "$tmp/" && chmod a+r "$tmp"/*
deb=$tmp/$(basename "$deb") image=$tmp/$(basename "$image")
export DEBIAN_FRONTEND=noninteractive
check "apt-get update" apt-get update -qq || exit 1
mkdir -p /usr/share/man/man1
check "apt-get install the package" apt-get install -y -qq --no-install-recommends \
	-o Dpkg::Options::=--path-include=/usr/share/man/man1/sbxrun.1.gz "$deb" man-db || exit 1
check "installed where PREFIX=/usr puts it" sh -c 'dpkg -L sbxrun | grep -x -e /usr/bin/sbxrun \
	-e /usr/share/sbxrun/profiles/default.ini -e /usr/share/sbxrun/rootfs/build.sh \
	-e /usr/share/bash-completion/completions/sbxrun -e /usr/share/zsh/vendor-completions/_sbxrun \
	-e /usr/share/fish/vendor_completions.d/sbxrun.fish | wc -l | grep -x 6'
export -f as_user; export user uid
check "image import (as $user)" as_user sbxrun image import "$image" --name minimal
check "run -- true (as $user)" as_user sbxrun run -- true
check "run prints (as $user)" bash -c "as_user sbxrun run -- echo from-the-sandbox | grep -x from-the-sandbox"
# shellcheck disable=SC2016 # expanded by the inner bash
check "profile ls finds the stock profiles" bash -c 'out=$(as_user sbxrun profile ls) || exit 1; echo "$out"
	[ "$(echo "$out" | grep -c -E "^(default|agent|ci|packages) +stock +/usr/share/sbxrun/profiles/")" = 4 ]'
# shellcheck disable=SC2016 # expanded by the inner bash
check "man sbxrun renders" bash -c 'out=$(MANPAGER=cat MANWIDTH=80 man sbxrun) || exit 1; echo "$out" | head -6
	echo "$out" | grep -q "^SYNOPSIS" && [ "$(echo "$out" | wc -l)" -gt 100 ]'
check "bash loads the completion" bash -c '. /usr/share/bash-completion/completions/sbxrun && complete -p sbxrun'

# The AppArmor profile (issue 35): installed for /usr/bin/sbxrun; loaded by
# the postinst where AppArmor is enabled and its parser is AppArmor 4 (Debian
# 13; not Debian 12: AppArmor 3, nothing said); unloaded on remove, gone on
# purge.
aa4() { [ -d /sys/kernel/security/apparmor ] && [ -e /etc/apparmor.d/abi/4.0 ]; }
aa_loaded() { grep -q '^sbxrun ' /sys/kernel/security/apparmor/profiles 2>/dev/null; }
check "the AppArmor profile names /usr/bin/sbxrun" grep -q '^profile sbxrun /usr/bin/sbxrun flags=(unconfined)' /etc/apparmor.d/sbxrun
if aa4; then
	check "the AppArmor profile is loaded (AppArmor 4)" aa_loaded
	check "run -- true with the profile loaded (as $user)" as_user sbxrun run -- true
else
	check "the AppArmor profile is not loaded (no AppArmor 4 here)" sh -c '! grep -q "^sbxrun " /sys/kernel/security/apparmor/profiles 2>/dev/null'
	# shellcheck disable=SC2016 # expanded by the inner sh
	check "dpkg-reconfigure says nothing of AppArmor" sh -c 'out=$(dpkg-reconfigure -fnoninteractive sbxrun 2>&1); echo "$out"; ! echo "$out" | grep -qi apparmor'
fi
check "apt-get remove unloads the profile and keeps its file" sh -c 'apt-get remove -y -qq sbxrun >/dev/null &&
	! grep -q "^sbxrun " /sys/kernel/security/apparmor/profiles 2>/dev/null && [ -f /etc/apparmor.d/sbxrun ]'
check "apt-get purge removes the profile" sh -c 'apt-get purge -y -qq sbxrun >/dev/null && [ ! -e /etc/apparmor.d/sbxrun ]'
