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

# The AppArmor profile (issue 35; issue 41: it lends nothing): installed for
# /usr/bin/sbxrun; loaded by the postinst where AppArmor is enabled and its
# parser is AppArmor 4 (Debian 13; not Debian 12: AppArmor 3, nothing said);
# unloaded on remove, gone on purge. Debian 13's kernel mediates user
# namespaces for confined programs (not for unconfined ones: no
# apparmor_restrict_unprivileged_userns), so what each label may do is
# measured here: an exec of sbxrun lands in 'sbxrun' (no userns) and code
# preloaded into it runs there and only there; sbxrun's exec of itself
# (scrubbed: AT_SECURE) moves it into 'sbxrun_userns'; what it starts, the
# sandbox's command and the image recipe's programs, runs stacked with
# 'sbxrun_child' (no userns); aa-exec -p sbxrun gives nothing.
aa4() { [ -d /sys/kernel/security/apparmor ] && [ -e /etc/apparmor.d/abi/4.0 ]; }
# stacked_with_child LABEL: LABEL ("A//&B//&C (mode)") is a stack that holds
# sbxrun_userns and sbxrun_child (the kernel orders the components; a
# program's own profile may be among them, e.g. Debian 13's mmdebstrap).
stacked_with_child() {
	local comps; comps=$(printf '%s\n' "${1% (*}" | sed 's|//&|\n|g')
	printf '%s\n' "$comps" | grep -qx sbxrun_child && printf '%s\n' "$comps" | grep -qx sbxrun_userns
}
export -f stacked_with_child
aa_loaded() { grep -q "^$1 (enforce)" /sys/kernel/security/apparmor/profiles 2>/dev/null; }
check "the AppArmor profile names /usr/bin/sbxrun, not unconfined" sh -c 'grep -q "^profile sbxrun /usr/bin/sbxrun flags=(attach_disconnected,mediate_deleted) {" /etc/apparmor.d/sbxrun &&
	! grep -q "^[^#]*unconfined" /etc/apparmor.d/sbxrun'
if aa4; then
	helper=$(cd "$(dirname "$0")/../helper" && pwd)
	cp "$helper/preload.so" "$tmp/" && chmod a+r "$tmp/preload.so"
	check "the AppArmor profiles are loaded (AppArmor 4): sbxrun, sbxrun_userns, sbxrun_child" \
		bash -c "$(declare -f aa_loaded); aa_loaded sbxrun && aa_loaded sbxrun_userns && aa_loaded sbxrun_child"
	check "run -- true with the profile loaded (as $user)" as_user sbxrun run -- true
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "the sandbox's command runs stacked with sbxrun_child (as $user)" bash -c '
		out=$(as_user sbxrun run -- cat /proc/self/attr/current) || exit 1; echo "$out"
		stacked_with_child "$out"'
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "the sandbox's command cannot make a user namespace (as $user)" bash -c '
		out=$(as_user sbxrun run -- sh -c "unshare -U true && echo made || echo refused" 2>&1); echo "$out"
		echo "$out" | grep -qx refused'
	# the sandbox's processes may still trace one another (gdb, strace):
	# PTRACE_ATTACH of a child from python's ctypes
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "ptrace among the sandbox's processes under the profile (as $user)" bash -c '
		out=$(as_user sbxrun run -- python3 -c "
import ctypes, os, time
libc = ctypes.CDLL(None, use_errno=True)
pid = os.fork()
if pid == 0:
    time.sleep(5); os._exit(0)
r = libc.ptrace(16, pid, 0, 0)
print(\"attach\", r, os.strerror(ctypes.get_errno()) if r else \"ok\")
os.kill(pid, 9)" 2>&1); echo "$out"; [ "$out" = "attach 0 ok" ]'
	# the helper itself, unconfined: it runs and makes one (so that what
	# follows can fail)
	: > "$tmp/preload.out" && chmod a+w "$tmp/preload.out"
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "control: preloaded into an unconfined program, the library makes a user namespace" bash -c '
		as_user env LD_PRELOAD='"$tmp"'/preload.so SBX_PRELOAD_OUT='"$tmp"'/preload.out /bin/true
		cat '"$tmp"'/preload.out; grep -qx "comm=true label=unconfined secure=0 userns=made" '"$tmp"'/preload.out'
	: > "$tmp/preload.out"
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "LD_PRELOAD into sbxrun: runs once, under sbxrun, without a user namespace; run works" bash -c '
		as_user env LD_PRELOAD='"$tmp"'/preload.so SBX_PRELOAD_OUT='"$tmp"'/preload.out sbxrun run -- echo ran; rc=$?
		cat '"$tmp"'/preload.out
		[ "$rc" = 0 ] && [ "$(wc -l < '"$tmp"'/preload.out)" = 1 ] &&
		grep -Eqx "comm=sbxrun label=sbxrun \(enforce\) secure=0 userns=(Operation not permitted|Permission denied)" '"$tmp"'/preload.out'
	check "control: unshare -U true as $user, unconfined" as_user unshare -U true
	check "aa-exec -p sbxrun -- unshare -U true fails" bash -c '! as_user aa-exec -p sbxrun -- unshare -U true'
	check "aa-exec -p sbxrun -- sh -c 'unshare -U true' fails" bash -c "! as_user aa-exec -p sbxrun -- sh -c 'unshare -U true'"
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "aa-exec -p sbxrun_userns -- sbxrun is refused (no secure exec)" bash -c '
		out=$(as_user aa-exec -p sbxrun_userns -- sbxrun run -- true 2>&1); rc=$?; echo "$out"
		[ "$rc" = 125 ] && echo "$out" | grep -q "without a secure exec"'
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "under no_new_privs sbxrun says why it cannot enter sbxrun_userns" bash -c '
		out=$(as_user setpriv --no-new-privs sbxrun run -- true 2>&1); rc=$?; echo "$out"
		[ "$rc" = 125 ] && echo "$out" | grep -q "no_new_privs is set"'
	# A host child: image build runs the recipe (/bin/sh build.sh) and
	# mmdebstrap by absolute path; a stand-in at /usr/bin/mmdebstrap (this
	# VM is thrown away) says where it ran, with what environment, and
	# whether it could make a user namespace.
	mv /usr/bin/mmdebstrap "$tmp/mmdebstrap.real" 2>/dev/null
	cat > /usr/bin/mmdebstrap <<-EOT
	#!/bin/sh
	{ echo "label=\$(cat /proc/self/attr/current)"; echo "PATH=\$PATH"; echo "LD_PRELOAD=\${LD_PRELOAD:-}"
	  if unshare -U true 2>/dev/null; then echo userns=made; else echo userns=refused; fi; } > $tmp/child.out
	exit 3
	EOT
	chmod 0755 /usr/bin/mmdebstrap
	: > "$tmp/child.out" && chmod a+w "$tmp/child.out"
	# shellcheck disable=SC2016 # expanded by the inner bash
	check "image build: mmdebstrap runs stacked with sbxrun_child, fixed PATH, no userns" bash -c '
		as_user env PATH=/nowhere:/usr/bin:/bin LD_PRELOAD='"$tmp"'/preload.so sbxrun image build minimal; echo "image build: exit $?"
		cat '"$tmp"'/child.out || exit 1
		stacked_with_child "$(sed -n "s/^label=//p" '"$tmp"'/child.out)" &&
		grep -qx "PATH=/usr/sbin:/usr/bin:/sbin:/bin" '"$tmp"'/child.out &&
		grep -qx "LD_PRELOAD=" '"$tmp"'/child.out && grep -qx "userns=refused" '"$tmp"'/child.out'
	rm -f /usr/bin/mmdebstrap
	mv "$tmp/mmdebstrap.real" /usr/bin/mmdebstrap 2>/dev/null
	echo "== [deb] the kernel's AppArmor denials so far (for the log):"
	dmesg 2>/dev/null | grep 'apparmor="DENIED"' | tail -n 20 | sed 's/^/  /'
	# What the profile cannot stop (docs/security.md): aa-exec straight
	# into sbxrun_userns from an unconfined program; Ubuntu closes that with
	# kernel.apparmor_restrict_unprivileged_unconfined=1. Said, not judged.
	for v in 0 1; do
		if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_unconfined ]; then
			old=$(cat /proc/sys/kernel/apparmor_restrict_unprivileged_unconfined)
			echo "$v" > /proc/sys/kernel/apparmor_restrict_unprivileged_unconfined
			if as_user aa-exec -p sbxrun_userns -- unshare -U true 2>/dev/null; then r=made; else r=refused; fi
			echo "$old" > /proc/sys/kernel/apparmor_restrict_unprivileged_unconfined
			echo "== [deb] note: apparmor_restrict_unprivileged_unconfined=$v: aa-exec -p sbxrun_userns -- unshare -U true: $r"
		fi
	done
else
	check "the AppArmor profile is not loaded (no AppArmor 4 here)" sh -c '! grep -q "^sbxrun " /sys/kernel/security/apparmor/profiles 2>/dev/null'
	# shellcheck disable=SC2016 # expanded by the inner sh
	check "dpkg-reconfigure says nothing of AppArmor" sh -c 'out=$(dpkg-reconfigure -fnoninteractive sbxrun 2>&1); echo "$out"; ! echo "$out" | grep -qi apparmor'
fi
check "apt-get remove unloads the profile and keeps its file" sh -c 'apt-get remove -y -qq sbxrun >/dev/null &&
	! grep -q "^sbxrun\(_userns\|_child\)\? " /sys/kernel/security/apparmor/profiles 2>/dev/null && [ -f /etc/apparmor.d/sbxrun ]'
check "apt-get purge removes the profile" sh -c 'apt-get purge -y -qq sbxrun >/dev/null && [ ! -e /etc/apparmor.d/sbxrun ]'
