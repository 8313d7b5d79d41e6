#!/bin/bash
# tests/vm/guest-check.sh --images DIR [--results FILE] [--modes "M..."] [--deb DEB] [FILE...]
# Runs inside the VM (tests/vm/check.sh boots it), as root: integration test
# files of this checkout (host-built: ./sbxrun, tests/helper/probe; nothing is
# compiled here) through tests/run_file.sh, as tests/run.sh does, in three modes:
#   root          as root, from this system service's cgroup (only files
#                 marked "# also-as-root", as in tests/run.sh);
#   user-systemd  as $SBX_TEST_USER (sbxtest), started by that user's own
#                 systemd manager (systemd-run --user -M sbxtest@): a cgroup
#                 under user@UID.service, which the user owns;
#   user-outside  as sbxtest from this system service's cgroup, which it
#                 cannot write, with the user's bus at hand: the shape of a
#                 login shell in session-N.scope.
# DIR holds the test images (tests/images.sh: minimal.tar.zst, tiny.tar).
# Each result line is labelled with its mode ("pass integration [user-systemd]
# 40-limits/test_..."), appended to FILE as soon as a test file is done, and
# the run ends with "N passed, N failed, N skipped" (CI=true: a skip counts
# as a failure), exiting nonzero on failure.
# --deb DEB (a path in this checkout, e.g. build/deb/sbxrun_0.1_amd64.deb;
# make check-deb): after the modes, tests/vm/guest-deb.sh installs the package
# and checks the installed sbxrun (`--modes ""` runs that alone).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
images="" results_out="" modes="root user-systemd user-outside" deb=""
while [ $# -gt 0 ]; do
	case $1 in
	--images) images=$2; shift 2 ;;
	--results) results_out=$2; shift 2 ;;
	--modes) modes=$2; shift 2 ;;
	--deb) deb=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || set -- 20-run.sh 26-session.sh 30-escape.sh 40-limits.sh 41-doctor.sh 43-agent-storage.sh 45-cgroup2.sh 47-landlock.sh \
	50-egress.sh
[ -s "$images/tiny.tar" ] || { echo "guest-check: no test images in '$images' (--images DIR)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "guest-check: runs as root (it switches to the test user itself)" >&2; exit 2; }
user=${SBX_TEST_USER:-sbxtest}
uid=$(id -u "$user") || exit 2

# A world-readable copy of what the tests need, as tests/run.sh makes. On
# disk (/var/tmp): the test users' homes below it hold storage = disk's
# writable layers, and Debian 13 mounts a tmpfs on /tmp, whose pages a
# memory cgroup counts (a 600M write under memory 256M was killed there).
T=$(mktemp -d /var/tmp/sbxrun-vmcheck.XXXXXX)
chmod 0755 "$T"
trap 'rm -rf "$T"' EXIT
cp -R "$top/sbxrun" "$top/profiles" "$top/rootfs" "$top/contrib" "$top/tests" "$T/"
[ -d "$top/completions" ] && cp -R "$top/completions" "$T/"
mkdir "$T/images" && cp "$images/minimal.tar.zst" "$images/tiny.tar" "$T/images/"
chmod -R a+rX "$T"
results=${results_out:-$T/results}
: > "$results"

# in_mode MODE CMD...: CMD with the environment of tests/run.sh, as that mode's user.
# SBX_FULL_SIZE=0: 43-agent-storage writes 600M, not 5G (2G RAM, an 8G disk
# with the OS on it; 1G takes about 36 s to write under TCG).
in_mode() {
	local mode=$1; shift
	local envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8
		    SBX="$T/sbxrun" IMAGES="$T/images" TOP="$T" CI="${CI:-}" TMPDIR=/tmp
		    SBX_TESTS="${SBX_TESTS:-}" SBX_FULL_SIZE=0)
	local bus=("XDG_RUNTIME_DIR=/run/user/$uid" "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/$uid/bus")
	case $mode in
	root) env -i HOME="$T/home-root" "${envs[@]}" "$@" ;;
	user-systemd) systemd-run -M "$user@" --user --wait --pipe --quiet --collect -- \
		env -i HOME="$T/home-$user" "${envs[@]}" "${bus[@]}" "$@" ;;
	user-outside) runuser -u "$user" -- env -i HOME="$T/home-$user" "${envs[@]}" "${bus[@]}" "$@" ;;
	*) echo "guest-check: unknown mode '$mode'" >&2; return 2 ;;
	esac
}

mkdir -p "$T/home-root" "$T/home-$user" && chown "$user:" "$T/home-$user"
for mode in $modes; do
	echo "== [$mode] where the tests run"
	# shellcheck disable=SC2016 # expanded by the inner shell
	in_mode "$mode" sh -c 'echo "$(id -un): $(cat /proc/self/cgroup)"; "$SBX" doctor 2>&1' | sed 's/^/  /'
	[ "$mode" = root ] || echo "  user@$uid.service subtree_control: $(cat "/sys/fs/cgroup/user.slice/user-$uid.slice/user@$uid.service/cgroup.subtree_control" 2>&1)"
	if ! out=$(in_mode "$mode" bash "$T/tests/setup_images.sh" 2>&1); then
		echo "$out"; echo "fail checks [$mode] setup: image import" >> "$results"
	fi
	r=$T/results.$mode
	: > "$r"; chmod a+w "$r"
	for f in "$@"; do
		f=$T/tests/integration/$(basename "$f" .sh).sh
		[ -f "$f" ] || { echo "fail checks [$mode] $(basename "$f"): no such test file" >> "$results"; continue; }
		if [ "$mode" = root ] && ! grep -q '^# also-as-root' "$f"; then
			echo "== [$mode] $(basename "$f"): not marked also-as-root, not run as root"; continue
		fi
		# "# vm-modes: M..." in a file: what differs between the modes
		# does not touch it (CI's time is budgeted); it runs in those only
		# (SBX_VM_ALL_MODES=1, make check-vm-full: every file in every mode)
		vm_modes=$(sed -n 's/^# vm-modes: *//p' "$f" | head -1)
		[ "${SBX_VM_ALL_MODES:-}" = 1 ] && vm_modes=""
		if [ -n "$vm_modes" ] && [[ " $vm_modes " != *" $mode "* ]]; then
			echo "== [$mode] $(basename "$f"): runs in the VM as $vm_modes only"; continue
		fi
		# "# vm-tests MODE: test_a test_b": in MODE, only these tests of the
		# file (what that mode alone can tell: the cgroup's or the fallback's
		# limits); the rest ran in the other modes
		sel=${SBX_TESTS:-}
		if [ -z "$sel" ] && [ "${SBX_VM_ALL_MODES:-}" != 1 ]; then
			sel=$(sed -n "s/^# vm-tests $mode: *//p" "$f" | tr '\n' ' ')
		fi
		echo "== [$mode] $(basename "$f")${sel:+ (only $(wc -w <<< "$sel") of its tests: # vm-tests $mode)}"
		: > "$r"
		t0=$(date +%s)
		SBX_TESTS=$sel in_mode "$mode" bash "$T/tests/run_file.sh" "$f" "$r" 2>&1 | sed "s/^/[$mode] /"
		echo "== [$mode] $(basename "$f"): $(($(date +%s) - t0)) s"
		echo "time $(($(date +%s) - t0)) $(basename "$f" .sh) $mode" >> "$results"
		# "pass integration 40-limits/test_x (user)" -> "pass integration [user-systemd] 40-limits/test_x"
		sed -E "s/^(pass|fail|skip|tier) ([^ ]+) /\1 \2 [$mode] /; s/ \((root|user)\)(:|$)/\2/" "$r" >> "$results"
	done
done

if [ -n "$deb" ]; then
	case $deb in /*) ;; *) deb=$top/$deb ;; esac
	echo "== [deb] $(basename "$deb")"
	bash "$top/tests/vm/guest-deb.sh" "$deb" "$T/images/minimal.tar.zst" "$results"
fi
bash "$T/tests/summary.sh" "$results"
