#!/bin/bash
# tests/run.sh - the whole suite behind `make check`: unit tests, fuzz smoke,
# then the integration tests as an unprivileged test user (created here when
# run as root, as CI does) and, for files marked "# also-as-root", as root.
# Ends with "N passed, N failed, N skipped".
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

echo "== unit tests"
for t in build/tests/test_*; do
	[ -x "$t" ] || continue
	line=$("$t" 2>&1 | tee /dev/stderr | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -1)
	p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/'); f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	[ -n "$line" ] || { p=0; f=1; }
	for _ in $(seq 1 "$p"); do echo "pass unit $(basename "$t")" >> "$results"; done
	for _ in $(seq 1 "$f"); do echo "fail unit $(basename "$t")" >> "$results"; done
done

echo "== layers: no #include points up (HACKING.md)"
if sh tools/check-layers.sh; then echo "pass layers" >> "$results"; else echo "fail layers: an #include points up" >> "$results"; fi

echo "== the Makefile on a bare machine: make demo builds after deps"
if bash tests/makefile.sh; then echo "pass makefile bare machine" >> "$results"; else echo "fail makefile bare machine" >> "$results"; fi

echo "== man page and completions against the option table"
for pair in man:man/sbxrun.1 bash:completions/sbxrun.bash zsh:completions/_sbxrun fish:completions/sbxrun.fish; do
	kind=${pair%%:*} file=${pair#*:}
	if build/gen-docs "$kind" | cmp -s - "$file"; then
		echo "pass docs $file" >> "$results"
	else
		echo "FAIL $file differs from the option table (run 'make docs')"; echo "fail docs $file" >> "$results"
	fi
done
got=$(PATH="$top:$PATH" bash -c 'source completions/sbxrun.bash; COMP_WORDS=(sbxrun run --ne); COMP_CWORD=2; _sbxrun; echo "${COMPREPLY[*]}"; COMP_WORDS=(sbxrun run --net ""); COMP_CWORD=3; _sbxrun; echo "${COMPREPLY[*]}"; COMP_WORDS=(sbxrun shell -p ""); COMP_CWORD=3; _sbxrun; echo "${COMPREPLY[*]}"')
if [ "$(echo "$got" | sed -n 1p)" = "--net" ] && [ "$(echo "$got" | sed -n 2p)" = "none packages full" ] &&
   echo "$got" | sed -n 3p | grep -qw packages; then
	echo "pass bash completion" >> "$results"
else
	echo "FAIL bash completion: $got"; echo "fail bash completion" >> "$results"
fi

for sh in zsh fish; do
	f=completions/_sbxrun; [ "$sh" = fish ] && f=completions/sbxrun.fish
	if ! command -v "$sh" >/dev/null; then echo "skip $sh completion syntax: $sh is not installed" >> "$results"
	elif "$sh" -n "$f"; then echo "pass $sh completion syntax" >> "$results"
	else echo "fail $sh completion syntax" >> "$results"; fi
done

# a quick rerun with SBX_ONLY leaves the fuzz smoke out unless it names "fuzz"
if [ -x tests/fuzz/run.sh ] && { [ -z "${SBX_ONLY:-}" ] || echo " $SBX_ONLY " | grep -q " fuzz "; }; then
	echo "== fuzz smoke"
	if bash tests/fuzz/run.sh smoke; then echo "pass fuzz smoke" >> "$results"; else echo "fail fuzz smoke" >> "$results"; fi
fi

echo "== test images"
cp -R sbxrun profiles rootfs tests "$T/"
[ -d completions ] && cp -R completions "$T/"
chmod -R a+rX "$T"
bash tests/images.sh "$T/images" || { echo "fail images: could not build test images" >> "$results"; }
chmod -R a+rX "$T/images" 2>/dev/null

run_as() { # user file
	local user=$1 file=$2 home
	if [ "$user" = root ]; then home=$T/home-root; else home=$T/home-$user; fi
	local envs=(HOME="$home" PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
		    LANG=C.UTF-8 SBX="$T/sbxrun" IMAGES="$T/images" TOP="$T" CI="${CI:-}" TMPDIR=/tmp
		    SBX_TESTS="${SBX_TESTS:-}")
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
	echo "skip root runs: not running as root" >> "$results"
fi

for u in "${users[@]}"; do
	echo "== integration tests as $u"
	setup_home "$u"
	for f in "$T"/tests/integration/*.sh; do
		[ -f "$f" ] || continue
		# files that need a pure cgroup v2 host under systemd run in make check-vm
		if grep -q '^# vm-only' "$f" && [ "${SBX_VM:-}" != 1 ]; then continue; fi
		# SBX_ONLY="40-limits 26-session": only these files (a quick rerun)
		if [ -n "${SBX_ONLY:-}" ] && ! echo " $SBX_ONLY " | grep -q " $(basename "$f" .sh) "; then continue; fi
		if [ "$u" = root ] && ! grep -q '^# also-as-root' "$f"; then continue; fi
		run_as "$u" "$f"
	done
done

bash tests/summary.sh "$results"
