# also-as-root
# serial: the machine's cgroups, pgrep for sleeps by name, timing (SBX_JOBS=2: after the user pass)
# root-only: test_no_cgroup_left_behind
# vm-tests user-outside: test_fork_bomb_ends_its_sandbox test_pids_limit_counts_only_the_sandbox test_memory_bomb_python
# vm-tests user-outside: test_memory_bomb_busybox test_memory_bomb_through_dev_shm test_timeout_dodged_with_setsid_double_fork_and_ignored_term
# vm-tests user-outside: test_zombie_flood test_mechanism_in_record_matches_doctor test_strict_refuses_a_fallback
# vm-tests user-outside: test_quota_above_a_cgroup_memory_limit_can_be_filled test_strict_refuses_a_disk_quota_it_can_only_kill_for
# vm-tests user-outside: test_memory_six_children_are_summed test_memory_six_children_are_summed_in_a_session
# vm-tests user-outside: test_memory_shared_mapping_is_summed test_memory_dev_shm_fill_stops_at_the_limit test_memory_under_the_limit_is_not_killed
# (in the VM's user-outside mode, a user with no cgroup of its own, only what
# the cgroup decides: its disk and storage tests are the user-systemd mode's)
# Resource limits (issue 5): each bomb ends its own sandbox and nothing else.
# Afterwards no process of the sandbox is left, and the host's process count
# for the sandbox's host uid, its free memory and its free disk are as before.
# As an unprivileged user this machine has only the fallbacks (RLIMIT_DATA
# with sbxrun's own sum of the sandbox's memory, RLIMIT_NPROC, affinity); as
# root it has cgroup v1; `sbxrun doctor` says which, and the --json record
# must agree.

# The host uid the sandbox's processes run as (paths.h: SBX_ROOT_HOST_UID).
sbx_uid() { if [ "$AS_ROOT" = 1 ]; then echo 2147000000; else id -u; fi; }

# Live processes of the sandbox's host uid (for root: only sandboxes have that
# uid). Zombies are left out: one whose parent is alive elsewhere is not ours,
# and ours would show through their parent (below).
host_procs() { ps -u "$(sbx_uid)" -o stat= 2>/dev/null | grep -vc '^Z' || true; }

# Each sandboxed command prints its user namespace first: it names the
# sandbox's processes on the host precisely, even while other sandboxes of the
# same uid run (the test suite runs files in parallel with other work).
NS='readlink /proc/self/ns/user; '
take_ns() { ns=$(printf '%s\n' "$out" | head -1); out=$(printf '%s\n' "$out" | tail -n +2); }
in_ns() { # ns: host pids in that user namespace
	local p
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/ns/user" 2>/dev/null)" = "$1" ] && echo "${p#/proc/}"
	done
	return 0
}

# Nothing of the sandbox is left (zombies included: their parent would be),
# and, when no other sandbox of this uid ran meanwhile, the count is as before.
assert_host_back() { # before ns
	local now left
	case "$2" in user:*) ;; *) fail "the command did not print its user namespace: '$2'" ;; esac
	for _ in $(seq 1 50); do
		left=$(in_ns "$2")
		[ -z "$left" ] && break
		sleep 0.1
	done
	[ -z "$left" ] || fail "processes of the sandbox survived: $(ps -o pid=,stat=,args= -p "$(echo $left | tr ' ' ,)")"
	for _ in $(seq 1 50); do
		now=$(host_procs)
		[ "$now" -le "$1" ] && return 0
		sleep 0.1
	done
	pgrep -u "$(id -u)" -x sbxrun >/dev/null && return 0 # another sandbox is running
	fail "host processes of uid $(sbx_uid): $1 before, $now after: $(ps -u "$(sbx_uid)" -o pid=,stat=,args= | head -20)"
}

avail_kb() { df -Pk "$1" | awk 'NR==2 {print $4}'; }
mem_avail_kb() { awk '/^MemAvailable:/ {print $2}' /proc/meminfo; }

# Free space may drift with other work on the machine, but not by what the
# sandbox wrote (tens of MB).
assert_free_back() { # path before_kb
	local now
	now=$(avail_kb "$1")
	[ "$now" -ge $(($2 - 8192)) ] || fail "free space on $1: ${2}K before, ${now}K after"
}

# The mechanism doctor announces for a limit: cgroup2, cgroup1, rlimit,
# rlimit+accounting (memory without a cgroup), affinity.
doctor_mech() { # limit
	"$SBX" doctor 2>/dev/null | awk -v l="limit $1" 'index($0, l) == 1 {print $4}'
}

test_fork_bomb_ends_its_sandbox() {
	local before start
	before=$(host_procs)
	start=$(date +%s)
	# Ends by a failed fork in the first shell (exit 2) or by the timeout (124).
	run timeout 60 "$SBX" run --image tiny --pids 50 --timeout 5s -- /bin/sh -c "$NS"'b() { b | b & }; b; sleep 100'
	take_ns
	assert_ne 0 "$status" "fork bomb exit status"
	[ $(($(date +%s) - start)) -lt 30 ] || fail "the fork bomb ran for $(($(date +%s) - start))s"
	assert_host_back "$before" "$ns"
	# The host still forks.
	run "$SBX" run --image tiny -- sh -c 'for i in 1 2 3 4 5; do sleep 0 & done; wait; echo forked'
	assert_status 0
	assert_eq forked "$out"
}

test_pids_limit_counts_only_the_sandbox() {
	local before
	before=$(host_procs)
	# 40 sleepers of this uid on the host must not eat into the sandbox's 30.
	for _ in $(seq 1 40); do sleep 20 & done
	run "$SBX" run --image tiny --pids 30 --timeout 20s -- sh -c \
		"$NS"'n=0; for i in $(seq 1 10); do sleep 3 & n=$((n+1)); done; echo $n'
	kill $(jobs -p) 2>/dev/null; wait 2>/dev/null
	take_ns
	assert_host_back "$before" "$ns"
	assert_status 0
	assert_eq 10 "$out"
	# ...while more than the limit inside fails.
	run "$SBX" run --image tiny --pids 30 --timeout 20s -- sh -c \
		"$NS"'for i in $(seq 1 60); do sleep 3 & done 2>/dev/null; echo done'
	take_ns
	assert_not_contains "$out" "done" "stdout (60 processes under --pids 30)"
	assert_host_back "$before" "$ns"
}

test_memory_bomb_python() {
	local before mem
	before=$(host_procs)
	mem=$(mem_avail_kb)
	run timeout 60 "$SBX" run --memory 64M --timeout 30s -- python3 -c '
import os
print(os.readlink("/proc/self/ns/user"), flush=True)
x = []
while True:
    x.append(bytearray(1 << 20))'
	case "$status" in
	137) assert_contains "$err" "out of memory" ;;
	1) assert_contains "$err" "MemoryError" ;;
	*) fail "memory bomb: expected 137 (cgroup) or 1 (RLIMIT_DATA), got $status: $err" ;;
	esac
	take_ns
	assert_host_back "$before" "$ns"
	[ "$(mem_avail_kb)" -ge $((mem - 262144)) ] || fail "host memory: ${mem}K before, $(mem_avail_kb)K after"
	# Below the limit, memory is there to use.
	run "$SBX" run --memory 64M -- python3 -c 'x = bytearray(16 << 20); print(len(x))'
	assert_status 0
	assert_eq 16777216 "$out"
}

test_memory_bomb_busybox() {
	local before
	before=$(host_procs)
	# The string doubles until the shell cannot allocate (or is killed).
	run timeout 60 "$SBX" run --image tiny --memory 32M --timeout 20s -- sh -c "$NS"'x=aaaaaaaa; while :; do x="$x$x"; done'
	take_ns
	assert_ne 0 "$status" "memory bomb"
	assert_not_contains "$err" "timeout" "memory bomb (ended by the timeout, not the limit)"
	assert_host_back "$before" "$ns"
}

test_memory_bomb_through_dev_shm() {
	local before shm
	before=$(host_procs)
	shm=$(avail_kb /dev/shm)
	run timeout 60 "$SBX" run --image tiny --memory 64M --disk 32M --timeout 20s -- sh -c \
		"$NS"'dd if=/dev/zero of=/dev/shm/fill bs=1M count=256 2>&1; echo "dd=$?"; ls -l /dev/shm/fill'
	take_ns
	# Either the quota (ENOSPC; on disk storage one file stops at the quota)
	# or the memory cgroup (a kill) stops it.
	if [ "$status" = 0 ]; then
		assert_quota_stopped "$out"
		assert_not_contains "$out" "dd=0"
	else
		assert_eq 137 "$status" "dd through /dev/shm"
	fi
	assert_host_back "$before" "$ns"
	assert_free_back /dev/shm "$shm"
}

test_disk_fill_ends_in_enospc() {
	local tmp home
	tmp=$(avail_kb /tmp)
	home=$(avail_kb "$HOME")
	local mode
	mode=$(storage_mode)
	for dir in /tmp /workspace /root; do
		run "$SBX" run --image tiny --disk 16M -- sh -c \
			"trap '' XFSZ; dd if=/dev/zero of=$dir/big bs=1M count=64 2>&1; echo dd=\$?; df -k $dir | tail -1"
		# on disk (Linux < 6.6) the walk may end the sandbox right after dd stops
		[ "$mode" = disk ] && [ "$status" = 137 ] || assert_status 0
		assert_quota_stopped "$out$err"
		assert_not_contains "$out" "dd=0" "dd into $dir"
	done
	assert_free_back /tmp "$tmp"
	assert_free_back "$HOME" "$home"
}

test_inode_fill_ends_in_enospc() {
	# Builtins only (echo, not the special builtin ":" whose failed redirection
	# would end the shell), no fork per file: fast even for many inodes.
	# Through fuse-overlayfs each file costs FUSE round trips, which the VM's
	# emulation makes slow: there the bomb fills the tmpfs the layer shares
	# through the workspace, and the root must then refuse a file too.
	local dir=/tmp
	[ "$(storage_detail)" = fuse-overlayfs+tmpfs ] && dir=/workspace
	run timeout 120 "$SBX" run --image tiny --disk 16M --timeout 60s -- sh -c \
		"mkdir $dir/i; i=0; while echo -n > $dir/i/f\$i; do i=\$((i+1)); [ \$i -lt 1000000 ] || break; done; echo \"files=\$i\"; echo -n > /tmp/one-more && echo root-took-one-more; exit 0"
	if [ "$(storage_mode)" = disk ]; then
		# inodes count 4 KiB each in sbxrun's accounting: the walk ends it
		assert_status 137
		assert_contains "$err" "disk quota"
		return 0
	fi
	assert_status 0
	assert_contains "$err" "No space left on device"
	assert_not_contains "$out" "root-took-one-more"
	out=$(printf '%s\n' "$out" | grep '^files=')
	local n=${out#files=}
	[ "$n" -lt 1000000 ] || fail "no inode cap: $n files"
	[ "$n" -gt 100 ] || fail "only $n files"
}

test_timeout_dodged_with_setsid_double_fork_and_ignored_term() {
	local before start
	before=$(host_procs)
	start=$(date +%s)
	run timeout 60 "$SBX" run --image tiny --timeout 2s -- sh -c "$NS"'
		trap "" TERM HUP INT
		( setsid sh -c "trap \"\" TERM HUP; ( sleep 411 & ) ; sleep 412" & )
		( sleep 413 & )
		sleep 414'
	take_ns
	assert_status 124
	assert_contains "$err" "timeout"
	[ $(($(date +%s) - start)) -lt 15 ] || fail "the timeout took $(($(date +%s) - start))s"
	assert_host_back "$before" "$ns"
	! pgrep -f '^sleep 41[1234]' >/dev/null || fail "survivors: $(pgrep -af '^sleep 41[1234]')"
}

test_zombie_flood() {
	local before
	before=$(host_procs)
	# sh starts 200 children that exit after it has become sleep, which never
	# reaps: 200 zombies until it ends; then sbxrun's init must reap them all.
	run timeout 60 "$SBX" run --image tiny --timeout 20s -- sh -c "$NS"'
		for i in $(seq 1 200); do (sleep 1; exit 0) & done
		(sleep 2; grep -l "^State:.*Z" /proc/[0-9]*/status | wc -l) &
		exec sleep 3'
	take_ns
	assert_status 0
	[ "$out" -ge 150 ] || fail "the zombies were not made: $out"
	assert_host_back "$before" "$ns"
	# Under a pids limit, zombies count: the flood stops there and ends.
	run timeout 60 "$SBX" run --image tiny --pids 40 --timeout 10s -- sh -c \
		"$NS"'for i in $(seq 1 200); do sleep 0 & done 2>/dev/null; exec sleep 1'
	take_ns
	assert_not_contains "$err" "timeout" "zombie flood under --pids"
	assert_host_back "$before" "$ns"
}

test_mechanism_in_record_matches_doctor() {
	local mem pids
	mem=$(doctor_mech memory)
	pids=$(doctor_mech pids)
	[ -n "$mem" ] && [ -n "$pids" ] || fail "doctor shows no limit lines"
	run "$SBX" -v run --image tiny --memory 64M --pids 50 --json "$TESTDIR/r.json" -- true
	assert_status 0
	assert_contains "$err" "limit memory"
	python3 - "$TESTDIR/r.json" "$mem" "$pids" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["limits"]["memory"]["mechanism"] == sys.argv[2], (r["limits"], sys.argv[2])
assert r["limits"]["pids"]["mechanism"] == sys.argv[3], (r["limits"], sys.argv[3])
PY
	# On this machine (hybrid, v1 writable by root only) the answer is known.
	if [ -w /sys/fs/cgroup/memory ] && [ ! -e /sys/fs/cgroup/cgroup.controllers ]; then
		assert_eq cgroup1 "$mem"
	elif [ ! -e /sys/fs/cgroup/cgroup.controllers ] && [ ! -w /sys/fs/cgroup/memory ]; then
		assert_eq rlimit+accounting "$mem"
		assert_eq rlimit "$pids"
	fi
}

test_strict_refuses_a_fallback() {
	printf '[limits]\nenforce = strict\nmemory = 64M\n' > "$TESTDIR/strict.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/strict.ini" -- true
	if [ "$(doctor_mech memory)" = rlimit+accounting ]; then
		assert_status 125
		assert_contains "$err" "'memory'"
	elif [ "$(storage_detail)" = disk ]; then
		# before 6.6 without fuse-overlayfs (or as root): the disk quota is a walk
		assert_status 125
		assert_contains "$err" "'disk'"
	else
		assert_status 0
	fi
}

test_no_cgroup_left_behind() {
	# Cgroups are named sbxrun-PID-N after the host process that made them:
	# this run's (its pid known) must all be gone when it has ended. Others
	# may run sbxrun as root meanwhile (the user pass beside this one, a
	# test killing an sbxrun on purpose): theirs are not this test's to judge.
	"$SBX" run --image tiny --memory 64M --pids 50 --cpus 1 -- sleep 2 > "$TESTDIR/out" 2>&1 &
	local pid=$! d seen=
	for _ in $(seq 40); do
		[ -n "$(find /sys/fs/cgroup -maxdepth 4 -type d -name "sbxrun-$pid-*" 2>/dev/null)" ] && { seen=1; break; }
		sleep 0.05
	done
	wait "$pid" || fail "the run failed: $(cat "$TESTDIR/out")"
	case $(doctor_mech memory) in cgroup*)
		[ -n "$seen" ] || fail "the run made no cgroup named sbxrun-$pid-*: the check below would prove nothing" ;;
	esac
	for d in $(find /sys/fs/cgroup -maxdepth 4 -type d -name "sbxrun-$pid-*" 2>/dev/null); do
		fail "cgroup left behind: $d"
	done
}

test_file_size_and_open_files() {
	run "$SBX" run --image tiny -- sh -c 'ulimit -c'
	assert_eq 0 "$out" "core size"
	printf '[limits]\nfile_size = 1M\nopen_files = 64\n' > "$TESTDIR/f.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/f.ini" -- sh -c \
		'trap "" XFSZ; ulimit -n; dd if=/dev/zero of=/tmp/f bs=1M count=4 2>/dev/null; echo "dd=$?"; wc -c < /tmp/f'
	assert_eq "64
dd=1
1048576" "$out" "open files, then a write past file_size"
}

test_open_files_above_the_hard_limit_is_recorded_as_applied() {
	printf '[limits]\nopen_files = 4096\n' > "$TESTDIR/f.ini"
	run bash -c "ulimit -n 256 && exec '$SBX' run --image tiny -p '$TESTDIR/f.ini' --json '$TESTDIR/r.json' -- sh -c 'ulimit -n'"
	assert_status 0
	assert_eq 256 "$out" "the hard limit caps open_files"
	assert_contains "$(cat "$TESTDIR/r.json")" '"open_files":{"value":"256","mechanism":"rlimit"}'
}

test_disk_quota_with_storage_disk() {
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\n' > "$TESTDIR/d.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/d.ini" --json "$TESTDIR/r.json" -- sh -c \
		'for i in $(seq 200); do dd if=/dev/zero of=/workspace/f$i bs=1M count=1 2>/dev/null; sleep 0.02; done; echo wrote-all'
	assert_status 137
	assert_not_contains "$out" "wrote-all"
	assert_contains "$err" "disk quota"
	assert_contains "$(cat "$TESTDIR/r.json")" '"reason":"disk"'
	run "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- sh -c 'echo small > /workspace/f; cat /workspace/f'
	assert_eq small "$out"
}

# Issue 26: what the sandbox hides from its owner's walk (a directory it may
# not read, or one past the old depth limit of 512) is counted all the same.
# Each run writes 40M under a 16M quota in steps slow enough for the walk
# (every 50 to 500 ms), then holds on: before, all three ran to the end.
test_disk_storage_quota_counts_what_modes_and_depth_hide() {
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\n' > "$TESTDIR/d.ini"
	local fill='for i in $(seq 40); do dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null || exit 3; sleep 0.02; done'
	local deep
	deep=$(printf 'd/%.0s' $(seq 700))
	for how in \
		"mkdir /workspace/h && chmod 0300 /workspace/h && cd /workspace/h && $fill; echo wrote-all; sleep 3; echo survived" \
		"mkdir /workspace/h && chmod 0300 /workspace/h && cd /workspace/h && $fill; chmod 0000 /workspace/h; echo wrote-all; sleep 3; echo survived" \
		"mkdir -p /tmp/$deep && cd /tmp/$deep && $fill; echo wrote-all; sleep 3; echo survived"; do
		run "$SBX" run --image tiny -p "$TESTDIR/d.ini" --timeout 60s -- sh -c "$how"
		assert_status 137 "${how%%&&*}"
		assert_not_contains "$out" "survived"
		assert_contains "$err" "sbxrun: disk quota: the sandbox wrote more than 16M on disk and was killed"
	done
	local runs=$HOME/.local/share/sbxrun/run
	assert_eq 0 "$(ls "$runs" 2>/dev/null | wc -l)" \
		"writable layers left behind ($(cd "$runs" && find . -maxdepth 4 2>&1 | head -20 | tr '\n' ' '))"
}

# The session's supervisor walks the same way while a command runs.
test_disk_storage_session_quota_counts_hidden_files() {
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\n' > "$TESTDIR/d.ini"
	local name=dq$$
	"$SBX" session start --image tiny -p "$TESTDIR/d.ini" "$name" > /dev/null || fail "session start"
	at_exit "'$SBX' session stop '$name' >/dev/null 2>&1 || true"
	run "$SBX" run --session "$name" --timeout 60s -- sh -c 'mkdir /workspace/h && chmod 0300 /workspace/h &&
		cd /workspace/h && for i in $(seq 40); do dd if=/dev/zero of=f$i bs=1M count=1 2>/dev/null; sleep 0.02; done
		echo wrote-all; sleep 3; echo survived'
	assert_status 137 "a session command writing 40M below a 0300 directory under a 16M quota"
	assert_not_contains "$out" "survived"
}

# Issue 26: inotify instances are counted per user, host-wide. The
# sandbox's user namespace gets half of the host user's (its own
# /proc/sys/user/max_inotify_instances; the kernel checks every level up), so
# while the sandbox holds every instance it can get, the user's own programs
# on the host still get one. Before, the sandbox took all 128.
test_inotify_instances_leave_the_host_user_room() {
	local host n
	host=$(cat /proc/sys/user/max_inotify_instances)
	"$SBX" run --image tiny -- probe inotify-fill 20 > "$TESTDIR/fill" 2> "$TESTDIR/fill.err" &
	local pid=$!
	for _ in $(seq 150); do [ -s "$TESTDIR/fill" ] && break; sleep 0.1; done
	run "${TOP:-$(pwd)}/tests/helper/probe" inotify
	kill "$pid"
	wait "$pid" || true
	assert_status 0 "inotify_init on the host while the sandbox holds all it can: $err"
	out=$(cat "$TESTDIR/fill")
	assert_contains "$out" "inotify-fill: " "the sandbox's probe ($(cat "$TESTDIR/fill.err"))"
	assert_contains "$out" " EMFILE" "the sandbox's refusal"
	n=$(printf '%s\n' "$out" | sed -n 's/^inotify-fill: \([0-9]*\) .*/\1/p')
	[ "$n" -ge 1 ] && [ "$n" -le $((host / 2)) ] ||
		fail "the sandbox got $n inotify instances, the host user has $host: expected 1 to $((host / 2))"
}

test_disk_storage_stops_one_file_at_the_quota() {
	# the walk ends the sandbox a little after the quota is passed; one file
	# cannot grow past it at all (RLIMIT_FSIZE, 512-byte blocks for ulimit)
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\n' > "$TESTDIR/d.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- sh -c 'ulimit -f'
	assert_status 0
	assert_eq 32768 "$out" "RLIMIT_FSIZE in 512-byte blocks"
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\nfile_size = 1M\n' > "$TESTDIR/e.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/e.ini" -- sh -c 'ulimit -f'
	assert_eq 2048 "$out" "a smaller file_size stays"
}

test_disk_storage_below_a_tmpfs_is_said() {
	# storage = disk where the data directory lies below a tmpfs (a home
	# under /tmp, which Debian 13 mounts as one) is memory: sbxrun says so
	local d
	d=$(mktemp -d /dev/shm/sbxt.XXXXXX) || skip "cannot make a directory in /dev/shm"
	[ "$(stat -f -c %T "$d")" = tmpfs ] || { rm -rf "$d"; skip "/dev/shm is not a tmpfs here"; }
	printf '[sandbox]\nstorage = disk\n' > "$TESTDIR/d.ini"
	run env XDG_DATA_HOME="$d" "$SBX" -q image import "$IMAGES/tiny.tar" --name tiny
	assert_status 0
	run env XDG_DATA_HOME="$d" "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- echo ran
	rm -rf "$d"
	assert_status 0
	assert_eq ran "$out" "the command still runs"
	assert_contains "$err" "is on a tmpfs: the writable layer is in memory, not on disk"
	if [ "$(stat -f -c %T "${XDG_DATA_HOME:-$HOME/.local/share}" 2>/dev/null)" != tmpfs ]; then
		run "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- true
		assert_status 0
		assert_not_contains "$err" "on a tmpfs"
	fi
}

test_disk_storage_counts_inodes() {
	# empty files take no blocks: each inode counts one 4 KiB block
	printf '[sandbox]\nstorage = disk\n[limits]\ndisk = 16M\n' > "$TESTDIR/d.ini"
	run timeout 120 "$SBX" run --image tiny -p "$TESTDIR/d.ini" --timeout 60s -- sh -c \
		'mkdir /workspace/i; i=0; while echo -n > /workspace/i/f$i; do i=$((i+1)); [ $i -lt 100000 ] || break; done; echo "files=$i"'
	assert_status 137
	assert_contains "$err" "disk quota"
	assert_not_contains "$out" "files=100000"
}

test_quota_above_a_cgroup_memory_limit_can_be_filled() {
	# tmpfs pages count as memory in a cgroup: with a quota above the memory
	# limit the writable layer goes to disk, so the quota can be used.
	run "$SBX" -v run --image tiny --memory 64M --disk 256M --timeout 60s -- sh -c \
		'dd if=/dev/zero of=/workspace/f bs=1M count=150 2>/dev/null; wc -c < /workspace/f'
	assert_status 0
	assert_eq 157286400 "$out" "a 150M file under --memory 64M --disk 256M"
	case $(doctor_mech memory) in
	cgroup*) assert_contains "$err" "writable layer on disk" ;;
	esac
}

test_disk_storage_layer_is_removed_and_swept_after_kill_9() {
	printf '[sandbox]\nstorage = disk\n' > "$TESTDIR/d.ini"
	local runs=$HOME/.local/share/sbxrun/run n0
	run "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- sh -c 'mkdir /a && mv /a /b && echo renamed'
	assert_eq renamed "$out" "a directory renamed in the writable layer"
	n0=$(ls "$runs" 2>/dev/null | wc -l)
	assert_eq 0 "$n0" "writable layers left after a run"
	"$SBX" run --image tiny -p "$TESTDIR/d.ini" -- sleep 30 &
	local pid=$!
	for _ in $(seq 1 50); do [ "$(ls "$runs" | wc -l)" -ge 1 ] && break; sleep 0.1; done
	kill -9 $pid; wait $pid 2>/dev/null || true
	assert_eq 1 "$(ls "$runs" | wc -l)" "the killed run's layer (not removed by it)"
	run "$SBX" run --image tiny -p "$TESTDIR/d.ini" -- true
	assert_eq 0 "$(ls "$runs" | wc -l)" "writable layers left after the next run swept"
}

# Issue 12: before Linux 6.6 (no user xattrs on tmpfs) fuse-overlayfs keeps
# the writable layer on the size-capped tmpfs, where one is usable (not for
# root). What doctor announces (storage_detail, lib.sh), the run must do.

test_disk_quota_gives_enospc_and_the_sandbox_keeps_running() {
	local want
	want=$(storage_detail)
	# through fuse-overlayfs the space comes back when the daemon gets the
	# file's release, which FUSE sends after close() returns: the write after
	# the rm is tried for up to 3 s (one CI run in the VM lost that race)
	run "$SBX" -v run --image tiny --disk 64M --json "$TESTDIR/r.json" --timeout 120s -- sh -c \
		'dd if=/dev/zero of=/tmp/big bs=1M count=100 2>&1; echo "dd=$?"; rm /tmp/big
		 for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15; do echo x 2>/dev/null > /tmp/y && break; sleep 0.2; done
		 echo x > /tmp/y && echo still-running'
	assert_contains "$(cat "$TESTDIR/r.json")" "\"mechanism\":\"$want\"" "the --json storage mechanism"
	if [ "$want" = disk ]; then
		# sbxrun's walk: one file stops at the quota (RLIMIT_FSIZE), or the walk kills
		[ "$status" = 137 ] || assert_status 0
		assert_quota_stopped "$out$err"
		return 0
	fi
	assert_status 0
	assert_contains "$out" "No space left on device" "dd past --disk 64M"
	assert_not_contains "$out" "dd=0"
	assert_contains "$out" "still-running" "the sandbox after ENOSPC"
	[ "$want" = tmpfs ] || assert_contains "$err" "writable layer through fuse-overlayfs"
}

test_writable_layer_keeps_overlay_semantics() {
	# a whiteout, an opaque directory, a renamed directory of the image (not /etc:
	# its resolv.conf and hosts are bound in, as in container engines)
	run "$SBX" run --image tiny -- sh -c 'rm /bin/true && ls /bin/true 2>&1; rm -rf /home && mkdir /home && ls -A /home | wc -l; mv /root /root2 && ls -d /root2 && cat /proc/self/mountinfo | grep -c " / / "'
	assert_status 0
	assert_eq "ls: /bin/true: No such file or directory
0
/root2
1" "$out" "$err"
}

test_fuse_daemon_is_invisible_inside_and_ends_with_the_sandbox() {
	local before
	before=$(host_procs)
	# nothing inside can see (so signal or trace) the layer's daemon
	run "$SBX" run --image tiny --disk 64M -- sh -c "$NS"'for p in /proc/[0-9]*; do tr "\0" " " < $p/cmdline; echo; done 2>/dev/null | grep -c "[f]use-overlayfs -f"; kill -9 -1 2>/dev/null; echo x > /tmp/x && cat /tmp/x'
	take_ns
	assert_status 0
	assert_eq "0
x" "$out" "$err"
	assert_host_back "$before" "$ns"
	# and it dies with a supervisor killed by kill -9
	"$SBX" run --image tiny --disk 64M -- sh -c "$NS"'sleep 30' > "$TESTDIR/ns" &
	local pid=$!
	for _ in $(seq 1 100); do [ -s "$TESTDIR/ns" ] && break; sleep 0.1; done
	kill -9 $pid; wait $pid 2>/dev/null || true
	assert_host_back "$before" "$(head -1 "$TESTDIR/ns")"
}

# The daemon itself is confined (fuseroot.c, seccomp.c): seen from the host
# side by the same uid, it has no_new_privs and a seccomp filter, and its root
# holds the image, the layer and what loads the binary, nothing of the host
# (no /home, /etc/passwd, /tmp, not the caller's home).
test_fuse_daemon_is_confined_to_its_own_root() {
	local mode
	mode=$(storage_detail)
	if [ "$mode" != fuse-overlayfs+tmpfs ]; then
		# no daemon to confine ($mode): the kernel's overlay is the root
		run "$SBX" run --image tiny --disk 64M -- sh -c 'grep " / / " /proc/self/mountinfo'
		assert_status 0
		assert_contains "$out" " - overlay overlay " "the root without fuse-overlayfs"
		return 0
	fi
	echo secret > "$HOME/sbx-marker.$$"
	echo secret > "$TESTDIR/marker"
	"$SBX" run --image tiny --disk 64M -- sh -c 'echo up; sleep 60' > "$TESTDIR/out" &
	fuse_run=$! # not local: the EXIT trap runs after this function returned
	at_exit 'kill "$fuse_run" 2>/dev/null || true; rm -f "$HOME/sbx-marker.$$"'
	local pid=$fuse_run d="" e p
	# fuse-overlayfs is a child of sbxrun or of a process sbxrun started
	for _ in $(seq 1 300); do
		for p in "$pid" $(pgrep -P "$pid"); do d=$(pgrep -P "$p" -x fuse-overlayfs) && break; done
		[ -n "$d" ] && [ -s "$TESTDIR/out" ] && break
		sleep 0.1
	done
	[ -n "$d" ] && [ -s "$TESTDIR/out" ] || fail "no fuse-overlayfs below sbxrun (pid $pid): $(ps -o pid=,args= --ppid "$pid")"
	p=$(awk '/^PPid:/ {print $2}' "/proc/$d/status")
	[ "$p" = "$pid" ] && p=""
	for p in $p "$d"; do # every process of the daemon (and a waiter above it)
		grep -Eq '^NoNewPrivs:[[:space:]]+1$' "/proc/$p/status" || fail "no_new_privs in $(cat /proc/$p/comm): $(grep NoNewPrivs "/proc/$p/status")"
		grep -Eq '^Seccomp:[[:space:]]+2$' "/proc/$p/status" || fail "no seccomp filter in $(cat /proc/$p/comm): $(grep Seccomp: "/proc/$p/status")"
	done
	# of its capabilities (as the sandbox's root) only a file server's:
	# chown, dac_override, dac_read_search, fowner, fsetid, mknod, setfcap
	local set v
	for set in CapBnd CapPrm CapEff; do
		v=$(awk -v s="$set:" '$1 == s {print $2}' "/proc/$d/status")
		[ -n "$v" ] && (( (0x$v & ~0x8800001f) == 0 )) || fail "$set of fuse-overlayfs: $v (more than 8800001f)"
	done
	local top
	top=$(ls -A "/proc/$d/root/") || fail "its root cannot be read by uid $(id -u)"
	assert_contains "$top" lower "its root"
	assert_contains "$top" layer "its root"
	# (-e, not -x: /lower is noexec)
	[ -e "/proc/$d/root/lower/bin/busybox" ] || fail "no image below /lower: $(ls "/proc/$d/root/lower")"
	for e in $top; do
		case $e in
		lower | layer | usr | bin | sbin | lib | lib64 | etc | dev | proc | fuse-overlayfs) ;;
		*) fail "its root holds '$e': $(echo $top)" ;;
		esac
	done
	assert_eq ld.so.cache "$(ls -A "/proc/$d/root/etc" 2>/dev/null || echo ld.so.cache)" "its /etc"
	[ ! -e "/proc/$d/root$HOME/sbx-marker.$$" ] || fail "it sees the caller's home ($HOME)"
	[ ! -e "/proc/$d/root$TESTDIR/marker" ] || fail "it sees $TESTDIR"
	[ ! -e "/proc/$d/root/etc/passwd" ] || fail "it sees the host's /etc/passwd"
	kill "$pid"; wait "$pid" 2>/dev/null || true
}

test_strict_refuses_a_disk_quota_it_can_only_kill_for() {
	printf '[sandbox]\nstorage = disk\n[limits]\nenforce = strict\ndisk = 16M\n' > "$TESTDIR/s.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/s.ini" -- true
	assert_status 125
	assert_contains "$err" "limit 'disk' cannot be enforced exactly"
	run "$SBX" run --image tiny -p "$TESTDIR/s.ini" --disk unlimited -- true
	assert_status 0
}

# Issue 26: RLIMIT_DATA holds one process, not the sandbox. Where memory has
# no cgroup (as the unprivileged user here), sbxrun sums the sandbox's memory
# itself and kills past the limit, and /dev/shm is a tmpfs of the limit's
# size; where a cgroup holds it (root here), the cgroup's result is asserted.
mem_accounted() { [ "$(doctor_mech memory)" = rlimit+accounting ]; }

# Six children of 200 MiB, each under RLIMIT_DATA, 1.2 GiB together; the
# shell reports how many of them failed (a cgroup v1 OOM kills one at a time).
SIX='pids=""; for i in 1 2 3 4 5 6; do probe alloc 200 8 >/dev/null & pids="$pids $!"; done
bad=0; for p in $pids; do wait $p || bad=$((bad+1)); done; echo "failed=$bad"; [ $bad = 0 ]'

assert_six_held() { # how (run or session)
	assert_not_contains "$out" "failed=0" "six children of 200 MiB under --memory 256M ($1)"
	if mem_accounted; then
		assert_status 137 "six children of 200 MiB ($1)"
		assert_contains "$err" "out of memory (accounted by sbxrun, no cgroup)"
		assert_eq 1 "$(printf '%s\n' "$err" | grep -c .)" "stderr lines ($1): $err"
	else
		assert_ne 0 "$status" "six children of 200 MiB under a memory cgroup ($1)"
		assert_not_contains "$err" "accounted by sbxrun"
	fi
}

test_memory_six_children_are_summed() {
	local before start
	before=$(host_procs)
	start=$(date +%s)
	run timeout 90 "$SBX" run --image tiny --memory 256M --timeout 60s --json "$TESTDIR/r.json" -- \
		sh -c "$NS$SIX"
	take_ns
	assert_six_held run
	[ $(($(date +%s) - start)) -lt 30 ] || fail "the six children ran for $(($(date +%s) - start))s"
	mem_accounted || assert_contains "$err" "out of memory" "stderr (cgroup)"
	python3 - "$TESTDIR/r.json" "$(doctor_mech memory)" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["limits"]["memory"]["mechanism"] == sys.argv[2], r["limits"]["memory"]
assert r["reason"] == "oom", r["reason"]
if sys.argv[2] == "rlimit+accounting":
    assert r["exit_code"] == 137 and r["peak_memory_bytes"] > 256 << 20, r
PY
	assert_host_back "$before" "$ns"
}

test_memory_six_children_are_summed_in_a_session() {
	local n=mem$$
	"$SBX" session start --image tiny --memory 256M "$n" >/dev/null || fail "session start $n failed"
	at_exit "'$SBX' session stop '$n' >/dev/null 2>&1 || true"
	run timeout 90 "$SBX" run --session "$n" --timeout 60s -- sh -c "$SIX"
	assert_six_held session
	# the session lives on, and a command under the limit runs in it
	run "$SBX" run --session "$n" -- sh -c 'probe alloc 100 1 && echo ok'
	assert_status 0
	assert_contains "$out" "ok"
}

# MAP_SHARED|MAP_ANONYMOUS memory is shmem: RLIMIT_DATA does not see it.
test_memory_shared_mapping_is_summed() {
	run timeout 60 "$SBX" run --image tiny --memory 256M --timeout 30s -- sh -c \
		'probe alloc 600 5 shared; echo "alloc=$?"'
	assert_not_contains "$out" "alloc=0" "600 MiB shared under --memory 256M"
	if mem_accounted; then
		assert_status 137
		assert_contains "$err" "out of memory (accounted by sbxrun, no cgroup)"
	fi
}

test_memory_dev_shm_fill_stops_at_the_limit() {
	local shm
	shm=$(avail_kb /dev/shm)
	run timeout 60 "$SBX" run --image tiny --memory 256M --timeout 30s -- sh -c \
		'dd if=/dev/zero of=/dev/shm/fill bs=1M count=600 2>&1; echo "dd=$?"; wc -c < /dev/shm/fill'
	assert_not_contains "$out" "dd=0" "600 MiB into /dev/shm under --memory 256M"
	if mem_accounted && [ "$status" = 0 ]; then
		assert_contains "$out" "No space left on device" "/dev/shm past the limit"
		[ "$(printf '%s\n' "$out" | tail -1)" -le $((256 << 20)) ] || fail "/dev/shm holds more than 256M: $out"
	elif mem_accounted; then
		assert_status 137
		assert_contains "$err" "out of memory (accounted by sbxrun, no cgroup)"
	fi
	assert_free_back /dev/shm "$shm"
}

# Under the limit nothing is killed: /dev/shm, two processes and a fork whose
# pages are shared with its parent (resident 2 x 120M, proportional 120M).
test_memory_under_the_limit_is_not_killed() {
	run timeout 60 "$SBX" run --image tiny --memory 256M --timeout 30s -- sh -c \
		'dd if=/dev/zero of=/dev/shm/f bs=1M count=40 2>/dev/null; probe alloc 80 2 & probe alloc 80 2 shared; wait $! && echo ok'
	assert_status 0
	assert_contains "$out" "ok"
	assert_not_contains "$err" "out of memory"
	run timeout 60 "$SBX" run --memory 256M --timeout 30s -- python3 -c '
import os, time
x = b"x" * (120 << 20)
pid = os.fork()
time.sleep(1.5)
if pid == 0:
    os._exit(0)
os.waitpid(pid, 0)
print("forked", len(x))'
	assert_status 0
	assert_eq "forked 125829120" "$out" "$err"
	assert_not_contains "$err" "out of memory"
}
