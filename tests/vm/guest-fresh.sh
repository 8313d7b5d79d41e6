#!/bin/bash
# tests/vm/guest-fresh.sh SRC OUT - runs inside the bare VM (build.sh with
# SBX_VM_VARIANT=bare; tests/vm/fresh.sh boots it), as root: the README's two
# commands as the very first commands on a bare Debian 12. It clones SRC (the
# checkout, shared read-only) into /root/sbxrun as a user would (git clone,
# over git's pack protocol, HEAD only), applies OUT/worktree.patch and
# OUT/untracked.tar when fresh.sh put them there (--worktree), then runs
# `make demo` and then `make check` there. Every output line carries the
# minutes:seconds since the start, and no mirror's name (see redact). OUT (shared
# read-write) gets demo.log, check.log and "status": one line "STEP RC SECONDS"
# per step (clone, demo, check). Exits 0 when both commands did.
set -u
src=${1:?usage: guest-fresh.sh SRC OUT} out=${2:?usage: guest-fresh.sh SRC OUT}
[ "$(id -u)" = 0 ] || { echo "guest-fresh: runs as root" >&2; exit 2; }
status=$out/status
: > "$status"
shopt -s extglob

# No mirror's or registry's name in a log: the hosts of the apt sources, the
# host part of URLs and the values of `sbxrun image inspect`'s source lines
# (apt hosts, npm registry, pypi index, and their continuation lines) become …
mapfile -t mirrors < <(grep -hsoE '[a-z]+://[^/[:space:]]+' /etc/apt/sources.list /etc/apt/sources.list.d/* |
	sed 's#.*://##' | sort -u)
redact() { # line -> $l
	local h
	l=${1//:\/\/+([^\/[:space:]\"\'])/://…}
	for h in "${mirrors[@]}"; do l=${l//"$h"/…}; done
	if [[ $l =~ ^(apt\ hosts|npm\ registry|pypi\ index):[[:space:]]+ ]]; then
		in_sources=1
		[[ $l == *"(not recorded)" ]] || l="${BASH_REMATCH[0]}…"
	elif [ "$in_sources" = 1 ] && [[ $l =~ ^[[:space:]]+[^[:space:]]+$ ]]; then
		l=${l%%+([^[:space:]])}…
	else
		in_sources=0
	fi
}
# stamp: each line of stdin, redacted, with the time since the start.
stamp() {
	local l line in_sources=0
	while IFS= read -r line || [ -n "$line" ]; do
		redact "$line"
		printf '[%3d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$l"
	done
}
# step NAME LOG CMD...: CMD, its output stamped on ours and in LOG, its status
# and seconds in the status file.
step() {
	local name=$1 log=$2 t0=$SECONDS rc; shift 2
	"$@" 2>&1 < /dev/null | stamp | tee -a "$log"
	rc=${PIPESTATUS[0]}
	echo "$name $rc $((SECONDS - t0))" >> "$status"
	echo "== $name: exit $rc after $((SECONDS - t0)) s" | stamp | tee -a "$log"
	return "$rc"
}

{
	echo "== the machine"
	# shellcheck disable=SC1091 # the guest's own
	. /etc/os-release
	echo "$PRETTY_NAME, kernel $(uname -r), $(nproc) CPUs, $(awk '/^MemTotal/ {print int($2 / 1024)}' /proc/meminfo) MB, $(dpkg-query -W -f '.\n' | wc -l) packages"
	has="" hasnt=""
	for c in cc gcc clang pkg-config make git sudo curl python3 mmdebstrap zstd; do
		if command -v "$c" > /dev/null; then has="$has $c"; else hasnt="$hasnt $c"; fi
	done
	echo "commands present:${has:- none}; absent:${hasnt:- none}"
	echo "apt sources (what mmdebstrap took from the host's configuration):"
	grep -hsE '^[[:space:]]*(deb|URIs:|Suites:)' /etc/apt/sources.list /etc/apt/sources.list.d/* | sed 's/^/  /'
	echo "network: $(ip -4 -o addr show scope global | awk '{print $2, $4}' | head -1), $(ip route | grep '^default' || echo 'no default route')"
} | stamp

# The CAs of the host's network (fresh.sh): Debian's ca-certificates, which
# deps installs, adds them to the bundle from there.
if compgen -G "$out/ca/*.crt" > /dev/null; then
	mkdir -p /usr/local/share/ca-certificates/host-network
	cp "$out"/ca/*.crt /usr/local/share/ca-certificates/host-network/
	if command -v update-ca-certificates > /dev/null; then update-ca-certificates > /dev/null 2>&1; fi
	echo "trusted: the host network's $(find "$out/ca" -name '*.crt' | wc -l) CA certificate(s) (TLS is intercepted there)" | stamp
fi

cd /root || exit 2
rm -rf sbxrun
if ! step clone "$out/clone.log" git clone --no-local "$src" /root/sbxrun; then
	echo "guest-fresh: git clone failed" | stamp; exit 1
fi
cd /root/sbxrun || exit 2
echo "checkout: $(git log -1 --format='%h %s' | cut -c1-100)" | stamp
if [ -f "$out/worktree.patch" ]; then
	if [ -s "$out/worktree.patch" ] && ! git apply --binary "$out/worktree.patch"; then
		echo "guest-fresh: the working tree's changes do not apply" | stamp; exit 1
	fi
	[ -f "$out/untracked.tar" ] && tar -xf "$out/untracked.tar"
	echo "with the working tree's changes: $(git status --porcelain | wc -l) files differ from HEAD" | stamp
fi

[ -n "${SBX_ONLY:-}${SBX_TESTS:-}" ] &&
	echo "make check narrowed: SBX_ONLY='${SBX_ONLY:-}' SBX_TESTS='${SBX_TESTS:-}' (not the whole suite)" | stamp
step demo "$out/demo.log" make demo
demo=$?
step check "$out/check.log" make check
check=$?
[ "$demo" = 0 ] && [ "$check" = 0 ]
