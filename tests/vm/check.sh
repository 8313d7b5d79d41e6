#!/bin/bash
# tests/vm/check.sh [FILE...] - the host side of `make check-vm`: builds the VM
# image if needed (tests/vm/build.sh), the test images (tests/images.sh), and
# boots the VM once to run tests/vm/guest-check.sh on this checkout, shared
# read-only (default files: those of guest-check.sh). Expects the build done
# (`make all tests/helper/probe`): nothing is compiled in the VM. Prints the
# guest's output and ends with the summary line; exits with the guest's status
# (125 when the VM itself failed: no boot, SBX_VM_TIMEOUT). Options of
# guest-check.sh pass through, e.g. check.sh --modes root 40-limits.sh.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top" || exit 2
[ -x sbxrun ] && [ -x tests/helper/probe ] || { echo "check-vm: build first: make all tests/helper/probe" >&2; exit 2; }
start=$(date +%s)
sh tests/vm/build.sh > /dev/null || exit 1
work=$(mktemp -d "${TMPDIR:-/tmp}/sbxrun-vmcheck.XXXXXX")
trap 'rm -rf "$work"' EXIT
bash tests/images.sh "$work/images" || { echo "check-vm: could not build the test images" >&2; exit 1; }
: > "$work/results"
echo "check-vm: images ready after $(($(date +%s) - start)) s; booting the VM"
# The VM gets QEMU's user-mode network: 50-egress installs a package from the
# image's Debian archive through sbxrun's proxy, as `make check` does on the
# host. SBX_VM_NET=none runs offline (that one test then fails).
export SBX_VM_NET=${SBX_VM_NET:-user}
bash tests/vm/run.sh --share "$top:/mnt/src:ro" --share "$work:/mnt/work:rw" -- \
	env CI="${CI:-}" SBX_TESTS="${SBX_TESTS:-}" SBX_VM_ALL_MODES="${SBX_VM_ALL_MODES:-}" bash /mnt/src/tests/vm/guest-check.sh --images /mnt/work/images \
	--results /mnt/work/results "$@"
rc=$?
# The summary again, last, from the results file (partial if the VM failed).
[ "$rc" = 125 ] && echo "check-vm: the VM did not finish; results so far:"
echo "check-vm: $(($(date +%s) - start)) s in all"
bash tests/summary.sh "$work/results" || { [ "$rc" = 0 ] && rc=1; }
exit "$rc"
