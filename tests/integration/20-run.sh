# also-as-root
# serial: pgrep for sleeps by name across users (SBX_JOBS=2: after the user pass)
# root-only: test_root_only_host_file_stays_unreadable
# vm-modes: user-systemd
# sbxrun run: a real Debian sandbox under user namespaces (issue 3).

test_debian_and_python() {
	run "$SBX" run -- sh -c '. /etc/os-release; echo "$ID $VERSION_ID"; python3 -c "print(6*7)"'
	assert_status 0
	assert_eq "debian 12
42" "$out"
}

test_exit_codes() {
	run "$SBX" run --image tiny -- true; assert_status 0
	run "$SBX" run --image tiny -- sh -c 'exit 7'; assert_status 7
	run "$SBX" run --image tiny -- /etc/passwd; assert_status 126
	assert_contains "$err" "cannot execute"
	run "$SBX" run --image tiny -- no-such-command; assert_status 127
	assert_contains "$err" "'no-such-command': command not found"
	run "$SBX" run --image tiny -- sh -c 'kill -9 $$'; assert_status 137
}

# Sleeps of this run's own lengths: another test run on the machine (as
# root and as the test user, or a second checkout) has its own.
uniq_sleep() { echo $((100000 + RANDOM * 3)); }

test_timeout_kills_everything_promptly() {
	local start end s
	s=$(uniq_sleep)
	start=$(date +%s)
	run "$SBX" run --image tiny --timeout 1s -- sh -c "sleep $s & (setsid sleep $((s + 1)) &) ; trap '' TERM; sleep $((s + 2))"
	end=$(date +%s)
	assert_status 124
	assert_contains "$err" "timeout"
	[ $((end - start)) -lt 10 ] || fail "timeout took $((end - start))s"
	sleep 0.5
	! pgrep -f "^sleep ($s|$((s + 1))|$((s + 2)))\$" >/dev/null || fail "processes survived the timeout: $(pgrep -af "^sleep $s")"
}

test_writes_are_gone_after_the_run() {
	run "$SBX" run -- sh -c 'echo x > /root/mark && echo y > /workspace/mark && echo z > /etc/mark && cat /etc/mark'
	assert_status 0
	assert_eq z "$out"
	run "$SBX" run -- sh -c 'ls /root/mark /workspace/mark /etc/mark'
	assert_status 2
}

test_host_home_and_files_invisible() {
	echo "host-secret" > "$HOME/host-secret-file"
	run "$SBX" run --image tiny -- sh -c "cat '$HOME/host-secret-file'; find / -xdev -name host-secret-file 2>/dev/null; ls /home"
	assert_not_contains "$out" "host-secret"
	assert_eq "user" "$out"
	rm -f "$HOME/host-secret-file"
}

test_root_only_host_file_stays_unreadable() {
	local f=/root/.sbxrun-test-secret
	echo "root-secret" > "$f"; chmod 600 "$f"
	run "$SBX" run --image tiny --bind /root:/hostroot -- cat /hostroot/.sbxrun-test-secret
	rm -f "$f"
	assert_ne 0 "$status"
	assert_not_contains "$out" "root-secret"
	run "$SBX" run --image tiny -- cat /proc/self/uid_map
	assert_not_contains "$out" " 0          1" "uid_map"
}

test_stdio_passes_through() {
	run sh -c "printf 'in-data' | '$SBX' run --image tiny -- sh -c 'cat; echo; echo to-err >&2; exit 3'"
	assert_status 3
	assert_eq "in-data" "$out"
	assert_eq "to-err" "$err"
}

test_sigterm_reaches_the_command() {
	"$SBX" run --image tiny -- sh -c 'trap "echo got-term; exit 42" TERM; echo ready; while :; do sleep 0.1; done' \
		> "$TESTDIR/o" 2>&1 &
	local pid=$!
	for _ in $(seq 50); do grep -q ready "$TESTDIR/o" && break; sleep 0.1; done
	kill -TERM "$pid"
	set +e; wait "$pid"; status=$?; set -e
	assert_status 42
	assert_contains "$(cat "$TESTDIR/o")" "got-term"
}

test_disk_quota_gives_enospc() {
	run "$SBX" run --image tiny --disk 8M -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=/workspace/f bs=1M count=20'
	assert_ne 0 "$status"
	assert_quota_stopped "$err"
	run "$SBX" run --image tiny --disk 8M -- sh -c 'trap "" XFSZ; dd if=/dev/zero of=/tmp/f bs=1M count=20'
	assert_quota_stopped "$err"
}

test_chown_to_unmapped_uid_succeeds() {
	run "$SBX" run -- sh -c 'touch /tmp/f && chown 1234:5 /tmp/f && chgrp 7 /tmp/f && echo ok'
	assert_status 0
	assert_eq ok "$out"
}

test_dpkg_install_with_maintainer_scripts() {
	command -v dpkg-deb >/dev/null || skip "dpkg-deb is not installed on the host"
	mkdir -p pkg/DEBIAN pkg/usr/share/sbxtest
	echo hi > pkg/usr/share/sbxtest/file
	printf 'Package: sbxtest-pkg\nVersion: 1.0\nArchitecture: all\nMaintainer: t <t@example.test>\nDescription: test\n' > pkg/DEBIAN/control
	printf '#!/bin/sh\nset -e\nchown 1234:1234 /usr/share/sbxtest/file\nchgrp 5 /usr/share/sbxtest/file\necho ran > /usr/share/sbxtest/ran\n' > pkg/DEBIAN/postinst
	chmod 755 pkg/DEBIAN/postinst
	dpkg-deb --root-owner-group --build pkg t.deb >/dev/null
	chmod a+rx "$TESTDIR"; chmod a+r t.deb  # as root the sandbox is another uid
	run "$SBX" run --bind "$TESTDIR:/pkgs" -- sh -c 'dpkg -i /pkgs/t.deb >/dev/null && cat /usr/share/sbxtest/ran && dpkg --audit && echo audit-clean'
	assert_status 0
	assert_eq "ran
audit-clean" "$out"
}

test_readonly_bind_stays_readonly() {
	mkdir -p src; echo data > src/f
	chmod a+rx "$TESTDIR"; chmod a+rwx src  # as root the sandbox is another uid
	run "$SBX" run --image tiny --bind "$TESTDIR/src:/data" -- sh -c 'cat /data/f; echo x > /data/g'
	assert_ne 0 "$status"
	assert_eq data "$out"
	assert_contains "$err" "Read-only file system"
	run "$SBX" run --image tiny --bind "$TESTDIR/src:/data" -- sh -c 'mount -o remount,rw /data; echo x > /data/g'
	assert_ne 0 "$status"
	[ ! -e src/g ] || fail "wrote through a read-only bind"
	run "$SBX" run --image tiny --bind "$TESTDIR/src:/data:rw" -- sh -c 'echo y > /data/g'
	assert_status 0
	assert_eq y "$(cat src/g)"
}

test_caller_fd_and_variable_do_not_cross() {
	exec 7<"$TESTDIR"
	run env SBX_TEST_SECRET=hunter2 "$SBX" run --image tiny -- sh -c 'ls /proc/self/fd; env'
	exec 7<&-
	assert_status 0
	assert_not_contains "$out" "hunter2"
	assert_eq "0 1 2 3" "$(echo "$out" | grep -E '^[0-9]+$' | tr '\n' ' ' | sed 's/ $//')" "fds inside"
	run env SBX_TEST_SECRET=hunter2 "$SBX" run --image tiny -e SBX_TEST_SECRET -e A=b -- sh -c 'echo $SBX_TEST_SECRET $A'
	assert_eq "hunter2 b" "$out"
}

# sbxrun returns without waiting for the namespaces' teardown (issue 16), but
# only after init killed and reaped everything else: no polling here.
test_nothing_of_the_command_outlives_the_return() {
	local s
	s=$(uniq_sleep)
	run "$SBX" run --image tiny -- sh -c "sleep $s & sleep $((s + 1)) & echo started"
	assert_status 0
	assert_eq started "$out"
	! pgrep -f "^sleep ($s|$((s + 1)))\$" >/dev/null || fail "alive after sbxrun returned: $(pgrep -af "^sleep $s")"
}

# sbxrun reaps its sandbox's init before it returns, so nothing is left to
# the reaper of orphans: under a parent that adopts orphans and never reaps
# them (a child subreaper here; a container's pid 1 such as node or python
# alike), a run leaves no zombie, and no process at all.
test_no_zombie_left_to_a_reaper_that_never_reaps() {
	run python3 - "$SBX" <<'PY'
import ctypes, os, subprocess, sys, time
ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
sbx = sys.argv[1]
codes = [subprocess.run([sbx, "run", "--image", "tiny", "--", *cmd]).returncode
         for cmd in (["true"], ["sh", "-c", "sleep 30 & exit 3"], ["sh", "-c", "kill -9 $$"])]
time.sleep(1)
def stat(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read()
    except OSError:
        return "0 (gone) X 0"
left = [st.split(" (", 1)[1][:40] for st in map(stat, filter(str.isdigit, os.listdir("/proc")))
        if int(st.rsplit(")", 1)[1].split()[1]) == os.getpid()]
print(*codes, "left:", " ".join(left) or "nothing")
PY
	assert_status 0
	assert_eq "0 3 137 left: nothing" "$out"
}

test_kill_9_of_sbxrun_leaves_nothing() {
	"$SBX" run --image tiny -- sh -c 'sleep 987 & sleep 986' &
	local pid=$!
	for _ in $(seq 50); do pgrep -f '^sleep 98[67]' >/dev/null && break; sleep 0.1; done
	pgrep -f '^sleep 98[67]' >/dev/null || fail "the sandbox did not start"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	for _ in $(seq 30); do pgrep -f '^sleep 98[67]' >/dev/null || break; sleep 0.1; done
	! pgrep -f '^sleep 98[67]' >/dev/null || fail "left running: $(pgrep -af '^sleep 98[67]')"
}

test_network_none_is_unreachable() {
	run "$SBX" run -- python3 -c 'import socket; socket.create_connection(("192.0.2.1", 80), timeout=5)'
	assert_ne 0 "$status"
	assert_contains "$err" "Network is unreachable"
	run "$SBX" run --image tiny -- sh -c 'cat /sys/class/net/lo/operstate 2>/dev/null; ls /sys'
	assert_status 0
}

test_network_full_reaches_host_loopback() {
	http_serve
	run "$SBX" -v run --net full -- curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$PORT/"
	kill "$SRV"
	assert_eq 200 "$out"
	assert_contains "$err" "host's network"
	run "$SBX" run -- curl -sS -o /dev/null "http://127.0.0.1:$PORT/"
	assert_ne 0 "$status"
}

test_user_option_and_hostname() {
	run "$SBX" run --image tiny --user user --hostname box -- sh -c 'id -u; hostname; echo $HOME'
	assert_status 0
	assert_eq "1000
box
/home/user" "$out"
	run "$SBX" run --image tiny --user no:body -- true
	assert_bad_input "no:body"
}

test_bad_input_is_exit_125_with_one_line() {
	run "$SBX" run --timeout 5x -- true; assert_bad_input "5x"
	run "$SBX" run --bogus -- true; assert_bad_input "--bogus"
	run "$SBX" run --image no-such-image -- true; assert_bad_input "no-such-image"
	run "$SBX" run --bind /nonexistent-dir:/x -- true; assert_bad_input "/nonexistent-dir"
	run "$SBX" run --bind /tmp:relative -- true; assert_bad_input "relative"
	run "$SBX" run --net sideways -- true; assert_bad_input "sideways"
	run "$SBX" run; assert_bad_input "no command"
}
