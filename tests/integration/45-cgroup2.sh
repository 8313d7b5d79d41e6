# also-as-root
# vm-only: needs a pure cgroup v2 host under systemd (make check-vm runs it in
# a Debian 12 VM with its own 6.1 kernel). Exact limits through a delegated
# cgroup v2 subtree: asked of systemd as a transient scope when sbxrun's own
# cgroup is not writable (a login shell), or sbxrun's own when it is.

json_get() { # file python-expr
	python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# Every cgroup directory sbxrun made: the sandboxes' and the scopes'.
sbx_cgroups() { find /sys/fs/cgroup -type d \( -name 'sbxrun-*' \) 2>/dev/null | sort; }

setup_v2() {
	[ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ] || fail "not a cgroup v2 host"
	[ -d /run/systemd/system ] || fail "systemd is not running"
}

test_doctor_finds_a_delegated_subtree() {
	setup_v2
	run "$SBX" doctor
	assert_contains "$out" "cgroup v2 delegation ok:"
	assert_contains "$out" "memory pids cpu"
	assert_contains "$out" "limit memory         ok: cgroup2"
	assert_contains "$out" "limit cpus           ok: cgroup2"
}

test_memory_bomb_is_a_cgroup_oom_kill() {
	setup_v2
	run timeout 120 "$SBX" run --memory 64M --timeout 60s --json "$TESTDIR/r.json" -- python3 -c '
x = []
while True:
    x.append(bytearray(8 << 20))'
	assert_status 137
	assert_contains "$err" "out of memory: the sandbox reached its memory limit (64M)"
	[ "$(printf '%s\n' "$err" | grep -c .)" = 1 ] || fail "one stderr line expected: $err"
	assert_eq oom "$(json_get "$TESTDIR/r.json" 'r["reason"]')" reason
	assert_eq cgroup2 "$(json_get "$TESTDIR/r.json" 'r["limits"]["memory"]["mechanism"]')" mechanism
	assert_contains "$(json_get "$TESTDIR/r.json" 'r["cgroup"]')" "cgroup v2 (" cgroup
	# Below the limit memory is there to use.
	run "$SBX" run --memory 64M -- python3 -c 'x = bytearray(32 << 20); print(len(x))'
	assert_status 0
}

test_fork_bomb_is_held_by_pids_max() {
	setup_v2
	local before after
	before=$(ls -d /proc/[0-9]* | wc -l)
	run timeout 120 "$SBX" run --image tiny --pids 50 --timeout 15s --json "$TESTDIR/r.json" -- sh -c \
		'b() { b & b & wait; }; b'
	assert_eq cgroup2 "$(json_get "$TESTDIR/r.json" 'r["limits"]["pids"]["mechanism"]')" mechanism
	# forks past pids.max fail, so the bomb dies out well before its timeout
	[ "$status" != 124 ] || fail "the fork bomb ran into the timeout: $err"
	for _ in $(seq 1 50); do
		after=$(ls -d /proc/[0-9]* | wc -l)
		[ "$after" -le $((before + 5)) ] && break
		sleep 0.2
	done
	[ "$after" -le $((before + 5)) ] || fail "processes: $before before, $after after"
}

test_cpus_half_is_held_by_cpu_max() {
	setup_v2
	"$SBX" run --image tiny --cpus 0.5 --timeout 30s -- sh -c 'while :; do :; done' &
	local pid=$! cg="" u0 u1
	for _ in $(seq 1 100); do
		cg=$(grep -l '^50000 100000$' $(sbx_cgroups | sed 's|$|/cpu.max|') 2>/dev/null | head -1)
		[ -n "$cg" ] && break
		sleep 0.1
	done
	[ -n "$cg" ] || { kill $pid; fail "no sandbox cgroup with cpu.max 50000 100000: $(sbx_cgroups)"; }
	cg=$(dirname "$cg")
	sleep 1
	u0=$(awk '/^usage_usec/ {print $2}' "$cg/cpu.stat")
	sleep 4
	u1=$(awk '/^usage_usec/ {print $2}' "$cg/cpu.stat")
	kill -INT $pid; wait $pid 2>/dev/null || true
	# about 2 s of CPU in 4 s (0.5 CPU); the busy loop alone would take 4 s
	local used=$(((u1 - u0) / 1000))
	[ "$used" -ge 1000 ] && [ "$used" -le 2800 ] || fail "CPU used in 4 s under --cpus 0.5: ${used} ms"
}

test_session_commands_share_its_cgroup() {
	setup_v2
	local s=cg2-$$ file cg n
	"$SBX" session start --image tiny --memory 256M "$s" >/dev/null || fail "session start"
	file=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["memory_file"])' \
		"$(ls -d /run/user/$(id -u)/sbxrun/sessions/"$s" /tmp/sbxrun-$(id -u)/sessions/"$s" 2>/dev/null | head -1)/info.json")
	cg=$(dirname "$file")
	"$SBX" run --session "$s" -- sleep 30 &
	local p1=$!
	"$SBX" run --session "$s" -- sleep 30 &
	local p2=$!
	for _ in $(seq 1 50); do
		n=$(find "$cg" -name cgroup.procs -exec cat {} + | wc -l)
		[ "$n" -ge 3 ] && break
		sleep 0.1
	done
	[ "$n" -ge 3 ] || fail "the session's cgroup $cg holds $n processes, expected its init and two commands"
	run "$SBX" session ls
	assert_contains "$out" "$s"
	"$SBX" session stop "$s" >/dev/null
	wait $p1 $p2 2>/dev/null || true
	for _ in $(seq 1 50); do [ -d "$cg" ] || break; sleep 0.1; done
	[ ! -d "$cg" ] || fail "the session's cgroup $cg is left after stop"
}

test_nothing_is_left_after_ten_runs_and_a_kill_9() {
	setup_v2
	for i in $(seq 1 10); do
		"$SBX" run --image tiny --memory 64M --pids 50 -- true || fail "run $i"
	done
	sleep 1
	[ -z "$(sbx_cgroups)" ] || fail "cgroups left after 10 runs: $(sbx_cgroups)"
	"$SBX" run --image tiny --memory 64M -- sleep 60 &
	local pid=$!
	for _ in $(seq 1 50); do [ -n "$(sbx_cgroups)" ] && break; sleep 0.1; done
	kill -9 $pid
	wait $pid 2>/dev/null || true
	for _ in $(seq 1 50); do [ -z "$(sbx_cgroups)" ] && break; sleep 0.2; done
	if [ -n "$(sbx_cgroups)" ]; then
		# the next run sweeps what a killed one left
		"$SBX" run --image tiny --memory 64M -- true
		sleep 1
	fi
	[ -z "$(sbx_cgroups)" ] || fail "cgroups left after a kill -9: $(sbx_cgroups)"
}

test_verbose_names_the_scope() {
	setup_v2
	run "$SBX" -v run --image tiny --memory 64M -- true
	assert_status 0
	assert_contains "$err" "cgroup: cgroup v2 ("
}
