#!/bin/bash
# tests/vm/fresh.sh [--worktree] - the host side of `make check-fresh`: proves
# that the README's two commands work as the very first commands on a bare
# Debian 12. It builds (once; cached) the bare VM image (tests/vm/build.sh
# with SBX_VM_VARIANT=bare: systemd, but no compiler, no pkg-config, no -dev
# package, no test user; git and make only), boots it with QEMU's user-mode
# network to the Debian archive of the image's sources, and runs
# tests/vm/guest-fresh.sh there as root: a clean `git clone` of this checkout
# (shared read-only; HEAD, or with --worktree HEAD plus the uncommitted
# changes and untracked files), then `make demo`, then `make check`.
# Nothing is built on the host. Prints the guest's output (each line with
# the time since the job began), then both exit statuses and, last, the
# `N passed, N failed, N skipped` line of `make check`. Exits 0 when both
# passed, 1 when one failed, 125 when the VM itself failed (run.sh).
# SBX_ONLY and SBX_TESTS narrow its `make check` as they do on the host (a
# rerun of what failed there; not the proof, which is the whole suite).
# SBX_VM_TIMEOUT caps the whole VM run (here 14400 s by default: under TCG
# the whole run took 116 minutes on a quiet machine); the other SBX_VM_*
# settings of run.sh apply.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
worktree=""
case ${1:-} in
"") ;;
--worktree) worktree=1 ;;
*) echo "usage: tests/vm/fresh.sh [--worktree]" >&2; exit 2 ;;
esac
head=$(git rev-parse --short HEAD 2>/dev/null) || { echo "check-fresh: $top is not a git checkout with a commit" >&2; exit 2; }
start=$(date +%s)
export SBX_VM_VARIANT=bare SBX_VM_NET=user SBX_VM_TIMEOUT=${SBX_VM_TIMEOUT:-14400}
sh tests/vm/build.sh > /dev/null || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/sbxrun-fresh.XXXXXX")
trap 'rm -rf "$work"' EXIT
what="HEAD $head"
if [ -n "$worktree" ]; then
	git diff --binary HEAD > "$work/worktree.patch"
	git ls-files -z --others --exclude-standard | tar --null -T - -cf "$work/untracked.tar"
	what="$what with the working tree's changes ($(git status --porcelain | wc -l) files)"
elif [ -n "$(git status --porcelain --untracked-files=no)" ]; then
	echo "check-fresh: note: uncommitted changes are not in the clone (--worktree adds them)"
fi
# A network that intercepts TLS (this machine kind's does: npm and pip over
# HTTPS fail without its CA) needs its CA on every machine on it, as an
# admin installs it there: the host's own additions to Debian's bundle go
# to the guest, which trusts them before anything else (guest-fresh.sh).
mkdir -p "$work/ca"
find /usr/local/share/ca-certificates -name '*.crt' -type f -exec cp {} "$work/ca/" \; 2>/dev/null
echo "check-fresh: bare image ready after $(($(date +%s) - start)) s; booting the VM to clone $what"
bash tests/vm/run.sh --share "$top:/mnt/src:ro" --share "$work:/mnt/work:rw" -- \
	env CI="${CI:-}" SBX_ONLY="${SBX_ONLY:-}" SBX_TESTS="${SBX_TESTS:-}" \
	bash /mnt/src/tests/vm/guest-fresh.sh /mnt/src /mnt/work
rc=$?

# The summary, from the status file and the log of `make check`.
status() { # STEP: "exit RC after M min S s", "did not finish" or "did not run"
	local _ r secs
	if read -r _ r secs < <(grep "^$1 " "$work/status" 2>/dev/null); then
		echo "exit $r after $((secs / 60)) min $((secs % 60)) s"
	elif [ -s "$work/$1.log" ]; then echo "did not finish"
	else echo "did not run"; fi
}
echo "check-fresh: make demo: $(status demo)"
echo "check-fresh: make check: $(status check)"
[ "$rc" = 125 ] && echo "check-fresh: the VM did not finish (see the vm: lines above)"
# The skipped and failed tests, as tests/run.sh lists them at its end.
for what in skipped failed; do
	sed -n "/^\[[ 0-9:]*\] == $what\$/,/^\[[ 0-9:]*\] [^ ]/p" "$work/check.log" 2>/dev/null |
		sed -n "s/^\[[ 0-9:]*\]   /check-fresh: $what: /p"
done
echo "check-fresh: $(($(date +%s) - start)) s in all"
summary=$(grep -E '^\[[ 0-9:]+\] [0-9]+ passed, [0-9]+ failed' "$work/check.log" 2>/dev/null | tail -1 | sed 's/^\[[ 0-9:]*\] //')
echo "${summary:-make check: no summary line}"
case $rc in 0|125) exit "$rc" ;; *) exit 1 ;; esac
