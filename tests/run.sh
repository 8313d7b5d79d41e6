#!/bin/bash
# tests/run.sh - the whole suite behind `make check`: unit tests, the checks
# (layers, docs, completions, fuzz smoke), then the integration tests as an
# unprivileged test user (created here when run as root, as CI does) and, for
# files marked "# also-as-root", as root. SBX_TIER=net (make check-net) runs
# only the tests of that tier ("# tier net: ..." lines), which make check
# lists as skipped with their reason. SBX_JOBS=2 runs the root pass beside
# the user pass (their own users, homes and run directories). Ends with a
# summary per tier and "N passed, N failed, N skipped" (tests/summary.sh).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
results=$(mktemp)
# A world-readable copy of what the test user needs (a CI clone may sit
# below a directory the test user cannot enter); one per run, so that two
# runs on one machine do not clobber each other.
T=$(mktemp -d /tmp/sbxrun-check.XXXXXX)
chmod 0755 "$T"
cleanup() {
	for u in "$TEST_USER" root; do runuser -u "$u" -- true 2>/dev/null; done
	pkill -u "${TEST_USER:-nobody}" -f "$T/sbxrun" 2>/dev/null
	rm -rf "$T" "$results"
}
trap cleanup EXIT
TEST_USER=${SBX_TEST_USER:-sbxtest}
export SBX_TIER=${SBX_TIER:-integration}
case $SBX_TIER in integration | net | slow) ;; *) echo "run.sh: SBX_TIER is integration, net or slow, not '$SBX_TIER'" >&2; exit 2 ;; esac
start=$(date +%s)

if [ "$SBX_TIER" = integration ]; then
echo "== unit tests"
# one result per binary; its assertions ("NAME: N passed, N failed") apart
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	n=$(basename "$t")
	line=$("$t" 2>&1 | tee /dev/stderr | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -1)
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -n "$line" ] || { p=0; f=1; }
	echo "assertions $n $p $f" >> "$results"
	if [ "$f" = 0 ]; then echo "pass unit $n" >> "$results"; else echo "fail unit $n: $f assertions failed" >> "$results"; fi
done

echo "== layers: no #include points up (HACKING.md)"
if sh tools/check-layers.sh; then echo "pass checks layers" >> "$results"; else echo "fail checks layers: an #include points up" >> "$results"; fi

echo "== documents: every one the files cite is in the repository (docs/testing.md)"
if bash tools/check-doc-refs.sh; then echo "pass doc references" >> "$results"; else echo "fail doc references: a file cites a missing document" >> "$results"; fi

echo "== the Makefile on a bare machine: make demo builds after deps"
if bash tests/makefile.sh; then echo "pass checks makefile bare machine" >> "$results"; else echo "fail checks makefile bare machine" >> "$results"; fi

echo "== the AppArmor profile the .deb ships compiles (tests/apparmor.sh)"
bash tests/apparmor.sh; rc=$?
if [ "$rc" = 0 ]; then echo "pass checks apparmor profile" >> "$results"
elif [ "$rc" = 77 ]; then echo "skip checks apparmor profile: no apparmor_parser (sh tests/deps.sh)" >> "$results"
else echo "FAIL the AppArmor profile"; echo "fail checks apparmor profile" >> "$results"; fi

echo "== man page and completions against the option table"
for pair in man:man/sbxrun.1 bash:completions/sbxrun.bash zsh:completions/_sbxrun fish:completions/sbxrun.fish; do
	kind=${pair%%:*} file=${pair#*:}
	if build/gen-docs "$kind" | cmp -s - "$file"; then
		echo "pass checks docs $file" >> "$results"
	else
		echo "FAIL $file differs from the option table (run 'make docs')"; echo "fail checks docs $file" >> "$results"
	fi
done
got=$(PATH="$top:$PATH" bash -c 'source completions/sbxrun.bash; COMP_WORDS=(sbxrun run --ne); COMP_CWORD=2; _sbxrun; echo "${COMPREPLY[*]}"; COMP_WORDS=(sbxrun run --net ""); COMP_CWORD=3; _sbxrun; echo "${COMPREPLY[*]}"; COMP_WORDS=(sbxrun shell -p ""); COMP_CWORD=3; _sbxrun; echo "${COMPREPLY[*]}"')
if [ "$(echo "$got" | sed -n 1p)" = "--net" ] && [ "$(echo "$got" | sed -n 2p)" = "none packages full" ] &&
   echo "$got" | sed -n 3p | grep -qw packages; then
	echo "pass checks bash completion" >> "$results"
else
	echo "FAIL bash completion: $got"; echo "fail checks bash completion" >> "$results"
fi

# the verbs' options, where two commands share a name (--format), the global ones
got=$(PATH="$top:$PATH" bash -c 'source completions/sbxrun.bash; c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _sbxrun; echo "${COMPREPLY[*]}"; }
	c sbxrun image ex; c sbxrun image export --format ""; c sbxrun profile export --format ""; c sbxrun session rm --f; c sbxrun --tr; c sbxrun image import x --na')
want=$(printf '%s\n' export "tar oci docker" "kube seccomp" --force --trace --name)
if [ "$got" = "$want" ]; then echo "pass bash completion of verbs" >> "$results"
else echo "FAIL bash completion of verbs: $got"; echo "fail bash completion of verbs" >> "$results"; fi
if command -v fish >/dev/null; then
	got=$(PATH="$top:$PATH" fish -c 'source completions/sbxrun.fish; complete -C "sbxrun image export --fo"; complete -C "sbxrun session rm --fo"' 2>/dev/null | cut -f1)
	if [ "$got" = "$(printf '%s\n' --format --force)" ]; then echo "pass fish completion of verbs" >> "$results"
	else echo "FAIL fish completion of verbs: $got"; echo "fail fish completion of verbs" >> "$results"; fi
fi

for sh in zsh fish; do
	f=completions/_sbxrun; [ "$sh" = fish ] && f=completions/sbxrun.fish
	if ! command -v "$sh" >/dev/null; then echo "skip checks $sh completion syntax: $sh is not installed" >> "$results"
	elif "$sh" -n "$f"; then echo "pass checks $sh completion syntax" >> "$results"
	else echo "fail checks $sh completion syntax" >> "$results"; fi
done

# a quick rerun with SBX_ONLY leaves the fuzz smoke out unless it names "fuzz"
if [ -x tests/fuzz/run.sh ] && { [ -z "${SBX_ONLY:-}" ] || echo " $SBX_ONLY " | grep -q " fuzz "; }; then
	echo "== fuzz smoke"
	if bash tests/fuzz/run.sh smoke; then echo "pass checks fuzz smoke" >> "$results"; else echo "fail checks fuzz smoke" >> "$results"; fi
fi
	echo "== checks: $(($(date +%s) - start)) s"
fi

echo "== test images"
cp -R sbxrun profiles rootfs contrib tests README.md man "$T/"
[ -d docs ] && cp -R docs "$T/"
[ -d completions ] && cp -R completions "$T/"
chmod -R a+rX "$T"
bash tests/images.sh "$T/images" || { echo "fail checks images: could not build test images" >> "$results"; }
chmod -R a+rX "$T/images" 2>/dev/null

run_as() { # user file
	local user=$1 file=$2 home
	if [ "$user" = root ]; then home=$T/home-root; else home=$T/home-$user; fi
	local envs=(HOME="$home" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		    LANG=C.UTF-8 SBX="$T/sbxrun" IMAGES="$T/images" TOP="$T" CI="${CI:-}" TMPDIR=/tmp
		    SBX_TESTS="${SBX_TESTS:-}" SBX_TIER="$SBX_TIER" SBX_TEST_USER="$TEST_USER")
	if [ "$user" = root ] || [ "$(id -u)" != 0 ]; then
		env -i "${envs[@]}" bash "$T/tests/run_file.sh" "$file" "$results"
	else
		chmod a+w "$results"
		runuser -u "$user" -- env -i "${envs[@]}" bash "$T/tests/run_file.sh" "$file" "$results"
	fi
}

setup_home() { # user
	local user=$1 home
	if [ "$user" = root ]; then home=$T/home-root; else home=$T/home-$user; fi
	mkdir -p "$home"
	[ "$user" = root ] || chown "$user" "$home" 2>/dev/null
	run_as "$user" "$T/tests/setup_images.sh" > /dev/null
}

if [ "$(id -u)" = 0 ]; then
	id "$TEST_USER" >/dev/null 2>&1 || useradd --create-home --shell /bin/bash "$TEST_USER"
	users=("$TEST_USER" root)
else
	users=("$(id -un)")
	echo "skip checks root runs: not running as root" >> "$results"
fi

pass_files() { # user [parallel|serial]: the integration files of this tier for that
	# user's pass; with a second word, only those (not) marked "# serial"
	local u=$1 part=${2:-} f
	for f in "$T"/tests/integration/*.sh; do
		[ -f "$f" ] || continue
		# files that need a pure cgroup v2 host under systemd run in make check-vm
		if grep -q '^# vm-only' "$f" && [ "${SBX_VM:-}" != 1 ]; then continue; fi
		# SBX_ONLY="40-limits 26-session": only these files (a quick rerun)
		if [ -n "${SBX_ONLY:-}" ] && ! echo " $SBX_ONLY " | grep -q " $(basename "$f" .sh) "; then continue; fi
		if [ "$u" = root ] && ! grep -q '^# also-as-root' "$f"; then continue; fi
		if [ "$SBX_TIER" != integration ] && ! grep -q "^# tier $SBX_TIER: " "$f"; then continue; fi
		if [ "$part" = parallel ] && grep -q '^# serial' "$f"; then continue; fi
		if [ "$part" = serial ] && ! grep -q '^# serial' "$f"; then continue; fi
		echo "$f"
	done
}

integration_pass() { # user [parallel|serial]
	local u=$1 f t0 p0
	echo "== integration tests ($SBX_TIER) as $u${2:+, $2 files}"
	p0=$(date +%s)
	setup_home "$u"
	for f in $(pass_files "$u" "${2:-}"); do
		t0=$(date +%s)
		run_as "$u" "$f"
		echo "== $(basename "$f") as $u: $(($(date +%s) - t0)) s"
		echo "time $(($(date +%s) - t0)) $(basename "$f" .sh) $u" >> "$results"
	done
	echo "== integration tests ($SBX_TIER) as $u${2:+, $2 files}: $(($(date +%s) - p0)) s"
}

if [ "${SBX_JOBS:-1}" -gt 1 ] && [ "${#users[@]}" -gt 1 ]; then
	# the root pass beside the user pass, each line labelled with its user;
	# files marked "# serial" change what every user sees (the policy in
	# /etc, the system store, the kernel log, the machine's cgroups, every
	# process by name): as root, they wait for the user pass to end
	integration_pass "$TEST_USER" 2>&1 | sed -u "s/^/[user] /" &
	integration_pass root parallel 2>&1 | sed -u "s/^/[root] /"
	wait
	integration_pass root serial 2>&1 | sed -u "s/^/[root] /"
else
	for u in "${users[@]}"; do integration_pass "$u"; done
fi
echo "== all tests: $(($(date +%s) - start)) s"

bash tests/summary.sh "$results"
