# also-as-root
# root-only: test_podman_default_root_is_nested test_podman_default_user_is_nested
# root-only: test_nested_escapes_hold test_nested_limits_hold test_strict_refuses_nested
# root-only: test_unconfined_is_full test_missing_library_names_the_package
# root-only: test_docker_like_root_is_landlock test_docker_like_user_is_landlock
# root-only: test_landlock_escapes_hold_root test_landlock_escapes_hold_user
# root-only: test_landlock_limits_hold test_landlock_packages_reach_the_proxy_only
# root-only: test_strict_refuses_landlock test_landlock_terminal_is_its_own
# root-only: test_rootless_user_is_nested test_rootless_docker_like_user_is_landlock
# root-only: test_rootless_root_is_nested
# tests/integration/46-containers.sh - sbxrun inside real rootful podman
# containers (issue 41): (a) podman's default seccomp and masked /proc, as
# root and as a user in the container: the nested tier; (b) a seccomp
# profile that refuses user namespaces as Docker's default does (made from
# podman's own default): the landlock tier, whose escape tests run as root
# and as a user; (c) seccomp unconfined and /proc unmasked: full. The container is the tiny test image, imported into a podman store
# of this run once ($TOP/pm46, vfs: no mount to leave behind), with sbxrun,
# the profiles and the host's libraries bound in read-only (the tiny image
# has none; one test gives it the C library alone).
# Rootless podman (the test_rootless_ tests): a second account of the
# test's own ("${SBX_TEST_USER}p", made by pm46r with a subuid range; the
# test user is never given one, other files rely on it having none) runs
# podman as itself, its storage under its home; the same checks run in its
# containers. Root only: the root pass makes that account.

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
	# podman's default profile made to refuse user namespaces as Docker's
	# default does (there only CAP_SYS_ADMIN may): clone3 ENOSYS (libc
	# falls back to clone), clone with CLONE_NEWUSER, unshare, setns, mount
	# and umount2 EPERM; clone without namespace flags allowed
	python3 - /usr/share/containers/seccomp.json "$TESTDIR/docker-like.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
gone = {"clone", "clone3", "unshare", "setns", "mount", "umount2"}
for r in d["syscalls"]:
    r["names"] = [n for n in r["names"] if n not in gone]
d["syscalls"] = [r for r in d["syscalls"] if r["names"]]
newuser, ns = 0x10000000, 0x7E020000
d["syscalls"] += [
    {"names": ["clone3"], "action": "SCMP_ACT_ERRNO", "errnoRet": 38},
    {"names": ["unshare", "setns", "mount", "umount2"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1},
    {"names": ["clone"], "action": "SCMP_ACT_ALLOW",
     "args": [{"index": 0, "value": ns, "valueTwo": 0, "op": "SCMP_CMP_MASKED_EQ"}]},
    {"names": ["clone"], "action": "SCMP_ACT_ERRNO", "errnoRet": 1,
     "args": [{"index": 0, "value": newuser, "valueTwo": newuser, "op": "SCMP_CMP_MASKED_EQ"}]}]
json.dump(d, open(sys.argv[2], "w"))
PY
}

PODMAN=(podman)

# in_pod [podman run options] -- SCRIPT: SCRIPT in a fresh container, as
# its root unless --user is given; sbxrun is $SBX there (the tiny image has
# no C library: the host's libraries are bound where the binary looks),
# tiny imported.
in_pod() {
	local opts=()
	while [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	run timeout 120 "${PODMAN[@]}" run --rm --network none "${opts[@]}" \
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
nested_escapes='
	echo kept > /tmp/outside
	sbx run -q --image tiny --net none -- sh -c "echo changed > /tmp/outside; ls /sbx 2>&1;
		echo procs=\$(ls /proc | grep -c \"^[0-9]\"); cat /tmp/outside" 2>&1
	echo "outside=$(cat /tmp/outside)"
	sbx run -q --image tiny --net none -- probe connect 1.1.1.1:53 2>&1; echo "net=$?"'

assert_nested_escapes() {
	assert_status 0
	assert_contains "$out" "outside=kept" "the container's /tmp after the run"
	assert_contains "$out" "No such file or directory" "the container's files are not in the sandbox"
	assert_not_contains "$out" "tier nested" "-q"
	assert_contains "$out" "net=1" "--net none in the nested tier"
	assert_contains "$out" "procs=0" "process directories in the sandbox's /proc"
}

test_nested_escapes_hold() {
	pm46
	in_pod -- "$nested_escapes"
	assert_nested_escapes
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

# (b) Docker's default seccomp: no user namespace at all. doctor names the
# landlock tier with its cause and fix; run takes it and says so on
# stderr, in --json and in --events; clone3's ENOSYS is passed (clone is
# tried); the command runs on the container's own files, in a private
# workspace.
landlock_checks='
	sbx doctor | grep -E "^(tier|user namespace) " -A1; echo "doctor=$?"
	sbx run --image tiny --json /tmp/r.json --events /tmp/ev -- sh -c "pwd; echo home=\$HOME; id -u; ls -ld . | cut -c1-10" 2>/tmp/err
	echo "rc=$?"; cat /tmp/err /tmp/r.json /tmp/ev'

assert_landlock() {
	assert_status 0
	assert_contains "$out" "tier                 landlock: no user namespace can be made here: the seccomp filter"
	assert_contains "$out" "hint: run the container with --security-opt seccomp=unconfined"
	assert_contains "$out" "or accept the landlock tier"
	assert_contains "$out" "doctor=0"
	assert_contains "$out" "rc=0"
	assert_contains "$out" "sbxrun: warning: tier landlock: no user namespace: the machine's own file system under Landlock"
	assert_contains "$out" '"tier":"landlock"'
	assert_contains "$out" '"landlock":{"abi":'
	assert_contains "$out" '"event":"tier"'
	assert_not_contains "$out" "Function not implemented" "clone3's ENOSYS (clone is tried)"
	assert_contains "$out" "home=/tmp/sbxrun-landlock." "HOME is the private workspace"
	assert_contains "$out" "drwx------" "the workspace is private (0700)"
}

test_docker_like_root_is_landlock() {
	pm46
	in_pod --security-opt "seccomp=$TESTDIR/docker-like.json" -- "$landlock_checks"
	assert_landlock
	assert_contains "$out" "$(printf '/ws\n')"
}

test_docker_like_user_is_landlock() {
	pm46
	in_pod --user 1000:1000 --security-opt "seccomp=$TESTDIR/docker-like.json" -- "$landlock_checks"
	assert_landlock
	assert_contains "$out" "$(printf '\n1000\n')" "the caller's own uid (no mapping)"
}

# The escapes the landlock tier claims, tried: writes outside the workspace
# (the container's /etc, its /tmp), reading $HOME, /run/secrets, a service
# account token, /proc/1/environ and any process's /proc entry, a TCP
# connect to a listener of the container's loopback (which answers outside
# the sandbox), UDP and unix sockets, a signal to the container's pid 1
# (ABI 6); and the workspace is gone after the run.
landlock_escapes='
	mkdir -p $HOME; echo topsecret > $HOME/secret; echo kept > /tmp/outside
	nc -l -p 7777 >/dev/null 2>&1 & sleep 0.3
	probe connect 127.0.0.1:7777 >/dev/null 2>&1; echo "listener=$?"
	sbx run -q --image tiny -- sh -c "
		echo changed > /tmp/outside || echo TMP-refused
		touch /etc/written || echo ETC-refused
		cat $HOME/secret || echo HOME-refused
		cat /run/secrets/x || echo SECRET-refused
		cat /var/run/secrets/kubernetes.io/serviceaccount/token || echo TOKEN-refused
		cat /proc/1/environ || echo ENVIRON-refused
		cat /proc/1/cmdline || echo CMDLINE-refused
		cat /proc/self/status || echo SELF-refused
		ls /dev/pts || echo PTS-refused
		probe connect 127.0.0.1:7777; echo tcp=\$?
		probe socket inet; echo inet=\$?
		probe socket unix; echo unix=\$?
		kill -0 1 || echo SIGNAL-refused
		echo in > ./inws && cat ./inws && echo WS-ok
		echo t > \$TMPDIR/t && echo TMPDIR-ok
		cat /proc/cpuinfo >/dev/null && echo CPUINFO-ok" 2>&1
	echo "outside=$(cat /tmp/outside)"
	if test -e /etc/written; then echo ETC-WRITTEN; fi
	ls -d /tmp/sbxrun-landlock.* 2>/dev/null || echo WS-GONE'

assert_landlock_escapes() {
	assert_status 0
	assert_contains "$out" "listener=0" "the container's listener answers outside the sandbox"
	local w
	for w in TMP ETC HOME SECRET TOKEN ENVIRON CMDLINE SELF PTS SIGNAL; do
		assert_contains "$out" "$w-refused"
	done
	assert_not_contains "$out" "topsecret"
	assert_not_contains "$out" "s3cr3t"
	assert_not_contains "$out" "t0ken"
	assert_contains "$out" "tcp=1" "a TCP connect to the container's loopback"
	assert_contains "$out" "inet=1" "an AF_INET socket under --net none"
	assert_contains "$out" "unix=1" "an AF_UNIX socket (the container's sockets)"
	assert_contains "$out" "WS-ok"
	assert_contains "$out" "TMPDIR-ok"
	assert_contains "$out" "CPUINFO-ok" "the machine-wide files of /proc"
	assert_contains "$out" "outside=kept"
	assert_not_contains "$out" "ETC-WRITTEN"
	assert_contains "$out" "WS-GONE" "the private workspace after the run"
}

landlock_secrets() {
	printf 's3cr3t\n' > "$TESTDIR/secret"; printf 't0ken\n' > "$TESTDIR/token"
	chmod 644 "$TESTDIR/secret" "$TESTDIR/token"
	landlock_pod=(--security-opt "seccomp=$TESTDIR/docker-like.json" -v "$TESTDIR/secret:/run/secrets/x:ro"
		      -v "$TESTDIR/token:/var/run/secrets/kubernetes.io/serviceaccount/token:ro")
}

test_landlock_escapes_hold_root() {
	pm46
	landlock_secrets
	in_pod "${landlock_pod[@]}" -- "$landlock_escapes"
	assert_landlock_escapes
}

test_landlock_escapes_hold_user() {
	pm46
	landlock_secrets
	in_pod --user 1000:1000 "${landlock_pod[@]}" -- "$landlock_escapes"
	assert_landlock_escapes
}

# The timeout ends the command and what it left behind (no pid namespace
# does it here); an rlimit holds; nothing of the run is left.
test_landlock_limits_hold() {
	pm46
	in_pod --security-opt "seccomp=$TESTDIR/docker-like.json" -- '
	mkdir -p $HOME/.config/sbxrun/profiles
	printf "[sandbox]\ninherit = default\n[limits]\nfile_size = 1M\n" > $HOME/.config/sbxrun/profiles/fs.ini
	start=$(date +%s)
	sbx run -q --image tiny --timeout 1s -- sh -c "(sleep 31 &); sleep 32 & sleep 33"; echo "timeout=$? secs=$(($(date +%s) - start))"
	sleep 0.3; echo "left=$(ps -o args | grep -c "^sleep 3")"
	sbx run -q --image tiny -p fs -- sh -c "dd if=/dev/zero of=big bs=1M count=4; ls -l big" 2>&1
	sbx run -q --image tiny -- sh -c "(sleep 41 &); echo started"; echo "bg=$?"
	sleep 0.3; echo "bgleft=$(ps -o args | grep -c "^sleep 4")"
	ls -d /tmp/sbxrun-landlock.* 2>/dev/null || echo WS-GONE'
	assert_status 0
	assert_contains "$out" "timeout=124"
	local secs
	secs=$(printf '%s\n' "$out" | sed -n 's/.*secs=//p')
	[ "$secs" -lt 10 ] || fail "the timeout took $secs s"
	assert_contains "$out" "left=0" "processes of a timed-out run"
	assert_contains "$out" "File size limit exceeded"
	assert_contains "$out" " 1048576 " "the file at RLIMIT_FSIZE"
	assert_contains "$out" "bg=0"
	assert_contains "$out" "bgleft=0" "a daemonized process after the run"
	assert_contains "$out" "WS-GONE"
}

# -t in the landlock tier: a terminal of its own (its peer opened through
# the master before the domain), and the container's own terminal, in
# /dev/pts, out of reach.
test_landlock_terminal_is_its_own() {
	pm46
	in_pod -t --security-opt "seccomp=$TESTDIR/docker-like.json" -- '
	echo "outer=$(tty)"
	sbx run -q -t --image tiny -- sh -c "echo inner=\$(tty); if (: < /dev/pts/0); then echo PTS0-OPENED; else echo PTS0-refused; fi"; echo "rc=$?"'
	assert_status 0
	assert_contains "$out" "outer=/dev/pts/0"
	assert_contains "$out" "inner=/dev/pts/"
	assert_not_contains "$out" "inner=/dev/pts/0"
	assert_contains "$out" "PTS0-refused" "the container's own terminal"
	assert_not_contains "$out" "PTS0-OPENED"
	assert_contains "$out" "rc=0"
}

# --net packages without a network namespace: the proxy listens on the
# container's loopback and Landlock lets connect reach that port alone.
test_landlock_packages_reach_the_proxy_only() {
	pm46
	in_pod --security-opt "seccomp=$TESTDIR/docker-like.json" -- '
	nc -l -p 7777 >/dev/null 2>&1 & sleep 0.3
	sbx run --image tiny --net packages -- sh -c "
		probe connect 127.0.0.1:7777; echo other=\$?
		probe socket inet6; echo stream6=\$?
		http_proxy=\$SBXRUN_PROXY wget -q -O- http://pkg.invalid/x; echo wget=\$?
		echo \$SBXRUN_PROXY" 2>&1'
	assert_status 0
	assert_contains "$out" "TCP to the proxy's port alone"
	assert_contains "$out" "other=1" "a TCP connect to another port of the loopback"
	assert_contains "$out" "refused 'pkg.invalid' (not in profile 'default' allow list)" "the proxy answered"
	assert_contains "$out" "403 Forbidden"
	assert_contains "$out" "http://127.0.0.1:"
}

# tier = full, tier = nested, enforce = strict and the administrator's
# policy (tier = nested) refuse the landlock tier: one error line naming
# why, one hint naming the fix; no record.
test_strict_refuses_landlock() {
	pm46
	in_pod --security-opt "seccomp=$TESTDIR/docker-like.json" -- '
	mkdir -p $HOME/.config/sbxrun/profiles
	for t in full nested; do printf "[sandbox]\ninherit = default\ntier = $t\n" > $HOME/.config/sbxrun/profiles/$t.ini; done
	printf "[sandbox]\ninherit = default\n[limits]\nenforce = strict\n" > $HOME/.config/sbxrun/profiles/strict.ini
	sbx run --image tiny -p full --json /tmp/r.json -- true 2>&1; echo "full=$?"
	sbx run --image tiny -p nested -- true 2>&1; echo "nested=$?"
	sbx run --image tiny -p strict --pids unlimited --memory unlimited --cpus unlimited -- true 2>&1; echo "strict=$?"
	if test -e /tmp/r.json; then echo RECORD; fi
	ls -d /tmp/sbxrun-landlock.* 2>/dev/null || echo WS-NONE
	mkdir -p /etc/sbxrun; printf "[sandbox]\ntier = nested\n" > /etc/sbxrun/policy.ini
	sbx run --image tiny -- true 2>&1; echo "policy=$?"'
	assert_status 0
	assert_contains "$out" "full=125"
	assert_contains "$out" "nested=125"
	assert_contains "$out" "strict=125"
	assert_not_contains "$out" "RECORD" "a record of a run refused"
	assert_contains "$out" "WS-NONE"
	assert_contains "$out" "sbxrun: error: tier full is required ([sandbox] tier = full, from "
	assert_contains "$out" "sbxrun: error: tier nested is required ([sandbox] tier = nested"
	assert_contains "$out" "sbxrun: error: tier full is required ([limits] enforce = strict), but only landlock is possible here: no user namespace can be made here: the seccomp filter"
	assert_contains "$out" "or accept [sandbox] tier = landlock (without enforce = strict)"
	assert_contains "$out" "policy=125"
	assert_contains "$out" "sbxrun: error: tier nested is required ([sandbox] tier = nested, from policy /etc/sbxrun/policy.ini:2)"
	assert_contains "$out" "the administrator's policy requires it"
	[ "$(printf '%s\n' "$out" | grep -c '^sbxrun: error:')" = 4 ] || fail "not one error line each: $out"
	[ "$(printf '%s\n' "$out" | grep -c '^hint:')" = 4 ] || fail "not one hint each: $out"
}

# Rootless podman: "${SBX_TEST_USER}p", an account made here (idempotent:
# made once, kept) with subuid and subgid ranges of its own, runs podman as
# itself: --runtime runc and the ulimits of pm46's containers.conf, its vfs
# storage and runtime directory under its home (~/pm46), tiny imported
# again once a run. PODMAN then runs podman as that account; the test's directory is
# made readable for its bind mounts; the account's pause process (which
# holds podman's user namespace) is ended with the test.
pm46r() {
	pm46
	command -v newuidmap >/dev/null ||
		{ [ "${CI:-}" = true ] && fail "newuidmap missing (uidmap, tests/deps.sh)"; skip "newuidmap is not installed (uidmap, tests/deps.sh)"; }
	PU=${SBX_TEST_USER:-sbxtest}p
	(
		flock 9
		id "$PU" >/dev/null 2>&1 || useradd --create-home --shell /bin/sh "$PU" || exit 1
		local f end
		for f in subuid subgid; do
			grep -qs "^$PU:" /etc/$f && continue
			end=$(cat /etc/subuid /etc/subgid 2>/dev/null |
				awk -F: '$2 + $3 > m { m = $2 + $3 } END { print (m > 100000 ? m : 100000) }')
			usermod "--add-${f}s" "$end-$((end + 65535))" "$PU" || exit 1
		done
	) 9> "$TOP/pm46/lock-r" || fail "could not make the account $PU with subuid ranges"
	PH=$(getent passwd "$PU" | cut -d: -f6)
	local d=$PH/pm46
	# (rootless podman takes no graphroot from a storage.conf: the flags)
	PODMAN=(runuser -u "$PU" -- env -C "$PH" -i HOME="$PH" PATH=/usr/sbin:/usr/bin:/sbin:/bin
		XDG_RUNTIME_DIR="$d/xdg" CONTAINERS_CONF="$TOP/pm46/containers.conf"
		podman --root "$d/storage" --runroot "$d/run" --storage-driver vfs)
	(
		flock 9
		[ -e "$TOP/pm46/rootless-ready" ] && exit 0
		runuser -u "$PU" -- sh -c 'umask 077; mkdir -p "$1/xdg"' _ "$d" &&
		{ "${PODMAN[@]}" rmi -f localhost/sbx46 >/dev/null 2>&1; "${PODMAN[@]}" import -q "$IMAGES/tiny.tar" localhost/sbx46 >/dev/null; } &&
		touch "$TOP/pm46/rootless-ready"
	) 9> "$TOP/pm46/lock-r" || fail "rootless podman as $PU could not import tiny: $("${PODMAN[@]}" info 2>&1 | tail -3)"
	chmod 755 "$TESTDIR"
	at_exit 'kill "$(cat "$PH/pm46/xdg/libpod/tmp/pause.pid" 2>/dev/null)" 2>/dev/null || true'
}

# As a user of a rootless container, under podman's default seccomp and
# masked /proc: nested, which doctor names; its escape checks hold.
test_rootless_user_is_nested() {
	pm46r
	in_pod --user 1000:1000 -- "$nested_checks"
	assert_nested
	in_pod --user 1000:1000 -- "$nested_escapes"
	assert_nested_escapes
}

# The docker-like seccomp in a rootless container: landlock, named by
# doctor with its cause and fix; its escape checks hold.
test_rootless_docker_like_user_is_landlock() {
	pm46r
	in_pod --user 1000:1000 --security-opt "seccomp=$TESTDIR/docker-like.json" -- "$landlock_checks"
	assert_landlock
	landlock_secrets
	in_pod --user 1000:1000 "${landlock_pod[@]}" -- "$landlock_escapes"
	assert_landlock_escapes
}

# Root of a rootless container is the account's own uid, and its user
# namespace maps 65536 ids more: not 2147000000, the uid sbxrun gives
# root's images and sandboxes on a host, so there they get the highest id
# both maps hold (65536). The tier is nested, as for a user, and its
# escape checks hold.
test_rootless_root_is_nested() {
	pm46r
	in_pod -- "$nested_checks"'
	ls -ldn $HOME/.local/share/sbxrun/images/*/rootfs | awk "{ print \"owner=\" \$3, \$4 }"'
	assert_nested
	assert_contains "$out" "owner=65536 65536" "the image's owner: the highest id the maps hold"
	in_pod -- "$nested_escapes"
	assert_nested_escapes
}
