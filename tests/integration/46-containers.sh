# also-as-root
# root-only: test_podman_default_root_is_nested test_podman_default_user_is_nested
# root-only: test_nested_escapes_hold test_nested_limits_hold test_strict_refuses_nested
# root-only: test_docker_like_seccomp_says_why test_unconfined_is_full test_missing_library_names_the_package
# tests/integration/46-containers.sh - sbxrun inside real rootful podman
# containers (issue 41): (a) podman's default seccomp and masked /proc, as
# root and as a user in the container: the nested tier; (b) a seccomp
# profile that refuses user namespaces as Docker's default does: exit 125
# with the cause and the fix; (c) seccomp unconfined and /proc unmasked:
# full. The container is the tiny test image, imported into a podman store
# of this run once ($TOP/pm46, vfs: no mount to leave behind), with sbxrun,
# the profiles and the host's libraries bound in read-only (the tiny image
# has none; one test gives it the C library alone).
# Root only: rootless podman needs subuid ranges the test user lacks.

pm46() {
	[ "$AS_ROOT" = 1 ] || skip "podman runs in the root pass"
	command -v podman >/dev/null && command -v runc >/dev/null ||
		{ [ "${CI:-}" = true ] && fail "podman/runc missing (tests/deps.sh)"; skip "podman or runc is not installed (tests/deps.sh)"; }
	local d=$TOP/pm46 n u
	mkdir -p "$d"
	n=$(ulimit -Hn); u=$(ulimit -Hu)
	[ "$n" = unlimited ] || [ "$n" -gt 4096 ] && n=4096
	[ "$u" = unlimited ] || [ "$u" -gt 4096 ] && u=4096
	export CONTAINERS_CONF=$d/containers.conf CONTAINERS_STORAGE_CONF=$d/storage.conf
	(
		flock 9
		[ -s "$d/storage.conf" ] || {
			printf '[containers]\ndefault_ulimits = ["nofile=%s:%s", "nproc=%s:%s"]\n[engine]\nruntime = "runc"\n' \
				"$n" "$n" "$u" "$u" > "$d/containers.conf"
			printf '[storage]\ndriver = "vfs"\ngraphroot = "%s/storage"\nrunroot = "%s/run"\n' "$d" "$d" > "$d/storage.conf"
		}
		podman image exists localhost/sbx46 || podman import -q "$IMAGES/tiny.tar" localhost/sbx46 >/dev/null
		# the C library alone, for a container without libarchive
		[ -d "$d/libc" ] || { mkdir -p "$d/libc.new" &&
			cp -L /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 "$d/libc.new/" &&
			mv "$d/libc.new" "$d/libc"; }
	) 9> "$d/lock"
	# a profile refusing user namespaces as Docker's default does: clone3
	# ENOSYS (libc falls back to clone), clone with CLONE_NEWUSER, unshare
	# and setns EPERM
	cat > "$TESTDIR/docker-like.json" <<'JSON'
{"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [
 {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
 {"names": ["unshare", "setns", "sethostname"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
 {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
  "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}]}
JSON
}

# in_pod [podman run options] -- SCRIPT: SCRIPT in a fresh container, as
# its root unless --user is given; sbxrun is $SBX there (the tiny image has
# no C library: the host's libraries are bound where the binary looks),
# tiny imported.
in_pod() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	run timeout 120 podman run --rm --network none "${opts[@]}" \
		-v "$SBX:/sbx/sbxrun:ro" -v "$IMAGES/tiny.tar:/sbx/tiny.tar:ro" \
		-v "$TOP/profiles:/usr/local/share/sbxrun/profiles:ro" \
		-v /usr/lib/x86_64-linux-gnu:/lib/x86_64-linux-gnu:ro -v /usr/lib64:/lib64:ro \
		-e HOME=/tmp/home localhost/sbx46 /bin/sh -c '
		mkdir -p $HOME
		sbx() { /sbx/sbxrun "$@"; }
		sbx -q image import /sbx/tiny.tar --name tiny >/dev/null || exit 99
		'"$1"
}

nested_checks='
	sbx doctor | grep -E "^(tier|sethostname|proc) "
	echo "host=$(hostname)"
	sbx run --image tiny --json /tmp/r.json -- sh -c "echo in=\$(hostname); ls /proc | tr \"\\n\" \" \"; echo; if test -e /proc/1; then echo PROC\"\"ONE; fi" 2>/tmp/err
	echo "rc=$?"; cat /tmp/err; cat /tmp/r.json'

assert_nested() {
	assert_status 0
	assert_contains "$out" "tier                 nested"
	assert_contains "$out" "sethostname          refused"
	local host
	host=$(printf '%s\n' "$out" | sed -n 's/^host=//p')
	assert_ne "" "$host" "the container's host name"
	assert_contains "$out" "in=$host" "the sandbox keeps the container's host name"
	assert_contains "$out" "rc=0"
	assert_contains "$out" "sbxrun: warning: tier nested: the container's host name kept"
	assert_contains "$out" '"tier":"nested"'
	assert_contains "$out" '"hostname":"container"'
	# the container's pid 1 (and every process of it) is not in the sandbox's /proc
	assert_not_contains "$out" "PROCONE"
	case "$out" in *'"proc":"subset=pid"'*) ;; *) assert_contains "$out" '"proc":"none"' ;; esac
}

test_podman_default_root_is_nested() {
	pm46
	in_pod -- "$nested_checks"
	assert_nested
}

test_podman_default_user_is_nested() {
	pm46
	in_pod --user 1000:1000 -- "$nested_checks"
	assert_nested
}

# Outside the workspace nothing of the container is written, the network
# is only the sandbox's lo, no process of the container shows, and -q
# silences the tier's line.
test_nested_escapes_hold() {
	pm46
	in_pod -- '
	echo kept > /tmp/outside
	sbx run -q --image tiny --net none -- sh -c "echo changed > /tmp/outside; ls /sbx 2>&1;
		echo procs=\$(ls /proc | grep -c \"^[0-9]\"); cat /tmp/outside" 2>&1
	echo "outside=$(cat /tmp/outside)"
	sbx run -q --image tiny --net none -- probe connect 1.1.1.1:53 2>&1; echo "net=$?"'
	assert_status 0
	assert_contains "$out" "outside=kept" "the container's /tmp after the run"
	assert_contains "$out" "No such file or directory" "the container's files are not in the sandbox"
	assert_not_contains "$out" "tier nested" "-q"
	assert_contains "$out" "net=1" "--net none in the nested tier"
	assert_contains "$out" "procs=0" "process directories in the sandbox's /proc"
}

test_nested_limits_hold() {
	pm46
	in_pod -- '
	start=$(date +%s)
	sbx run -q --image tiny --timeout 1s -- sleep 30; echo "timeout=$? secs=$(($(date +%s) - start))"
	sbx run -q --image tiny --pids 20 --timeout 20s -- sh -c "for i in \$(seq 1 40); do sleep 3 & done 2>/dev/null; echo done"; echo "pids=$?"'
	assert_status 0
	assert_contains "$out" "timeout=124"
	local secs
	secs=$(printf '%s\n' "$out" | sed -n 's/.*secs=//p')
	[ "$secs" -lt 10 ] || fail "the timeout took $secs s"
	assert_not_contains "$out" "done" "40 processes under --pids 20"
}

# enforce = strict and [sandbox] tier = full refuse the nested tier: one
# line naming why, one naming the fix.
test_strict_refuses_nested() {
	pm46
	in_pod -- '
	mkdir -p $HOME/.config/sbxrun/profiles
	printf "[sandbox]\ninherit = default\ntier = full\n" > $HOME/.config/sbxrun/profiles/full.ini
	printf "[sandbox]\ninherit = default\n[limits]\nenforce = strict\n" > $HOME/.config/sbxrun/profiles/strict.ini
	sbx run --image tiny -p full --json /tmp/r.json -- true 2>&1; echo "full=$?"
	sbx run --image tiny -p strict --pids unlimited --memory unlimited --cpus unlimited -- true 2>&1; echo "strict=$?"
	if test -e /tmp/r.json; then echo RECORD; fi'
	assert_status 0
	assert_contains "$out" "full=125"
	assert_contains "$out" "strict=125"
	assert_not_contains "$out" "RECORD" "a record of a run refused"
	assert_contains "$out" "tier full is required ([sandbox] tier = full"
	assert_contains "$out" "tier full is required ([limits] enforce = strict)"
	assert_contains "$out" "hint: run the container with --security-opt seccomp=unconfined"
	[ "$(printf '%s\n' "$out" | grep -c '^sbxrun: error:')" = 2 ] || fail "not one error line each: $out"
}

test_docker_like_seccomp_says_why() {
	pm46
	in_pod --security-opt "seccomp=$TESTDIR/docker-like.json" -- '
	sbx doctor | grep -E "^(tier|user namespace) " -A1; echo "doctor=$?"
	sbx run --image tiny -- true 2>&1; echo "run=$?"'
	assert_status 0
	assert_contains "$out" "tier                 none: no user namespace can be made here: the seccomp filter"
	assert_contains "$out" "run=125"
	assert_contains "$out" "sbxrun: error: no user namespace can be made here: the seccomp filter sbxrun runs under refuses it"
	assert_contains "$out" "hint: run the container with --security-opt seccomp=unconfined"
	assert_not_contains "$out" "Function not implemented" "clone3's ENOSYS (clone is tried)"
}

test_unconfined_is_full() {
	pm46
	in_pod --security-opt seccomp=unconfined --security-opt unmask=ALL -- '
	sbx doctor | grep -E "^tier "
	sbx run --image tiny --json /tmp/r.json -- sh -c "hostname; cat /proc/1/cmdline" 2>&1; echo; echo "rc=$?"
	cat /tmp/r.json'
	assert_status 0
	assert_contains "$out" "tier                 full"
	assert_contains "$out" "sbxrun-init" "the sandbox's own pid 1"
	assert_contains "$out" '"tier":"full"'
	assert_not_contains "$out" "tier nested"
	assert_not_contains "$out" '"nested"'
}

test_missing_library_names_the_package() {
	pm46
	run timeout 60 podman run --rm --network none -v "$SBX:/sbx/sbxrun:ro" -v "$IMAGES/tiny.tar:/sbx/tiny.tar:ro" \
		-v "$TOP/pm46/libc:/lib/x86_64-linux-gnu:ro" -v "$TOP/pm46/libc:/lib64:ro" \
		-e HOME=/tmp localhost/sbx46 /sbx/sbxrun image import /sbx/tiny.tar --name tiny
	assert_status 125
	# libcrypto (the digest) or libarchive, whichever import needs first
	assert_contains "$err" "sbxrun: error: "
	assert_contains "$err" "cannot load lib"
	assert_contains "$err" "hint: apt-get install lib"
	assert_not_contains "$err" "status"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 2 ] || fail "more than an error and a hint: $err"
}
