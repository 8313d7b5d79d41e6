# also-as-root
# serial: the kernel log (SBX_JOBS=2: after the user pass)
# root-only: test_doctor_leaves_the_kernel_log_alone
# `sbxrun doctor` (issue 5) checked against what this machine really has.

doc_line() { printf '%s\n' "$out" | grep -m1 "^$1 " || true; }

test_doctor_runs_and_says_a_sandbox_can_be_made() {
	run "$SBX" doctor
	assert_status 0
	assert_eq "" "$err" "stderr"
	for name in kernel "user namespace" overlay seccomp landlock cgroup "subuid range" \
		    newuidmap "limit memory" "limit pids" "limit cpus"; do
		[ -n "$(doc_line "$name")" ] || fail "no '$name' line in: $out"
	done
}

test_doctor_kernel_is_uname() {
	run "$SBX" doctor
	assert_contains "$(doc_line kernel)" "ok: $(uname -r)"
}

test_doctor_user_namespace_matches_unshare() {
	run "$SBX" doctor
	if unshare -Urm true 2>/dev/null; then
		assert_contains "$(doc_line 'user namespace')" "ok"
	else
		assert_contains "$(doc_line 'user namespace')" "missing"
	fi
	assert_contains "$(doc_line max_user_namespaces)" "= $(cat /proc/sys/user/max_user_namespaces)"
}

# Issue 26: what the sandbox gets of the user's inotify instances (40-limits
# checks that it gets no more).
test_doctor_says_the_sandbox_inotify_share() {
	local host
	host=$(cat /proc/sys/user/max_inotify_instances)
	run "$SBX" doctor
	assert_contains "$(doc_line inotify)" "ok: the sandbox's user namespace gets half of this user's: $((host / 2)) of $host inotify instances"
}

test_doctor_cgroup_layout() {
	run "$SBX" doctor
	local fs
	fs=$(stat -f -c %T /sys/fs/cgroup)
	if [ "$fs" = cgroup2fs ]; then
		assert_contains "$(doc_line cgroup)" "ok: v2"
	elif [ -d /sys/fs/cgroup/unified ] && [ "$(stat -f -c %T /sys/fs/cgroup/unified)" = cgroup2fs ]; then
		assert_contains "$(doc_line cgroup)" "ok: hybrid"
		# the v2 controllers named are the kernel's
		assert_contains "$(doc_line cgroup)" "v2: $(cat /sys/fs/cgroup/unified/cgroup.controllers)"
	else
		assert_contains "$(doc_line cgroup)" "ok: v1"
	fi
	if [ -d /sys/fs/cgroup/memory ]; then
		assert_contains "$(doc_line cgroup)" "memory"
	fi
}

test_doctor_limits_follow_cgroup_access() {
	run "$SBX" doctor
	# This machine: memory and pids live in v1, writable by root only.
	if [ -d /sys/fs/cgroup/memory ] && [ -d /sys/fs/cgroup/pids ] && \
	   [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
		if [ "$AS_ROOT" = 1 ]; then
			assert_contains "$(doc_line 'cgroup v1')" "ok: writable memory pids"
			assert_contains "$(doc_line 'limit memory')" "ok: cgroup1"
			assert_contains "$(doc_line 'limit pids')" "ok: cgroup1"
		else
			assert_contains "$(doc_line 'cgroup v1')" "missing"
			assert_contains "$(doc_line 'cgroup v2 delegation')" "missing"
			assert_contains "$(doc_line 'limit memory')" "fallback: rlimit+accounting (RLIMIT_DATA"
			assert_contains "$(doc_line 'limit pids')" "fallback: rlimit (RLIMIT_NPROC"
			assert_contains "$(doc_line 'limit cpus')" "fallback: affinity"
			assert_contains "$out" "hint: "
		fi
	fi
	assert_contains "$(doc_line 'limit open_files')" "ok: rlimit"
}

test_doctor_ids() {
	run "$SBX" doctor
	local me
	me=$(id -un)
	if grep -q "^$me:" /etc/subuid 2>/dev/null && grep -q "^$me:" /etc/subgid 2>/dev/null; then
		assert_contains "$(doc_line 'subuid range')" "ok"
	else
		assert_contains "$(doc_line 'subuid range')" "missing (optional)"
	fi
	if [ -x /usr/bin/newuidmap ]; then
		assert_contains "$(doc_line newuidmap)" "ok"
	else
		assert_contains "$(doc_line newuidmap)" "missing (optional)"
	fi
}

test_doctor_landlock_and_seccomp() {
	run "$SBX" doctor
	assert_contains "$(doc_line seccomp)" "ok: filters"
	grep -q '^Seccomp:' /proc/self/status || fail "no Seccomp line in /proc/self/status"
	if grep -qw landlock /sys/kernel/security/lsm 2>/dev/null; then
		assert_contains "$(doc_line landlock)" "ok: ABI"
	fi
}

test_doctor_rejects_arguments() {
	run "$SBX" doctor extra
	assert_bad_input "extra"
}

# Its probes mount only what works: on Linux < 6.6 an overlay on a tmpfs
# without user xattrs made the kernel log "overlayfs: failed to set xattr on
# upper" at every doctor (seen in the Debian 12 VM). Root reads the log.
test_doctor_leaves_the_kernel_log_alone() {
	local before after
	dmesg > /dev/null || fail "root cannot read the kernel log"
	before=$(dmesg | grep -c overlayfs) || true
	run "$SBX" doctor
	assert_status 0
	after=$(dmesg | grep -c overlayfs) || true
	assert_eq "$before" "$after" "overlayfs lines in the kernel log: $(dmesg | grep overlayfs | tail -2)"
}
