# also-as-root
# Session snapshots, forks and restore (issue 36, parts 3 and 5).

test_a_fork_sees_the_snapshot_and_not_what_came_after() {
	local n=s$$a f=s$$af
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'echo one > /workspace/a; echo layer > /etc/one; rm /etc/os-release'
	assert_status 0
	run "$SBX" session snapshot "$n"
	assert_status 0
	assert_eq "$n-1" "$out" "the default snapshot name"
	run "$SBX" run --session "$n" -- sh -c 'echo two > /workspace/b; echo later > /etc/two; echo changed > /workspace/a'
	assert_status 0
	start_session "$f" --from "$n-1"
	run "$SBX" run --session "$f" -- sh -c 'cat /workspace/a /etc/one; ls /workspace /etc/two /etc/os-release 2>&1'
	assert_contains "$out" "one
layer"
	assert_not_contains "$out" "changed"
	assert_contains "$out" "/etc/two: No such file"
	assert_contains "$out" "/etc/os-release: No such file" "a file deleted before the snapshot (its whiteout)"
	assert_not_contains "$out" "b"$'\n'
	# the fork writes on its own layer: neither the source nor the snapshot sees it
	run "$SBX" run --session "$f" -- sh -c 'echo fork > /workspace/a; echo new > /etc/one; echo w > /workspace/w'
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'cat /workspace/a; ls /workspace'
	assert_eq "changed
a
b" "$out"
	run "$SBX" session snapshots
	assert_contains "$out" "$n-1"
	assert_contains "$out" "$n "
	# a second snapshot takes the next number; a fork of a fork keeps both layers
	run "$SBX" session snapshot "$f"
	assert_eq "$f-1" "$out"
	start_session "$f"x --from "$f-1"
	run "$SBX" run --session "$f"x -- sh -c 'cat /workspace/a /etc/one /workspace/w; ls /etc/os-release 2>&1'
	assert_eq "fork
new
w
ls: /etc/os-release: No such file or directory" "$out"
	run "$SBX" session snapshot-rm "$f-1"
	assert_bad_input "in use"
	"$SBX" session stop "$f"x >/dev/null
	run "$SBX" session snapshot-rm "$n-1"
	assert_bad_input "is below snapshot '$f-1'"
	run "$SBX" session snapshot-rm "$f-1"
	assert_status 0
	run "$SBX" session snapshots
	assert_not_contains "$out" "$f-1"
}

# A writer keeps going during the snapshot and the fork: what the snapshot
# holds is one moment (the writer makes x/N, then y/N: in any one moment x
# has as many files as y or one more, whichever directory the copy reads
# first), and the writer goes on after it.
test_a_fork_while_the_source_keeps_writing() {
	local n=s$$b f=s$$bf
	start_session "$n" --image tiny
	"$SBX" run --session "$n" -- sh -c 'mkdir /workspace/x /workspace/y; i=0; while :; do i=$((i+1)); : > /workspace/x/$i; : > /workspace/y/$i; [ $((i % 8)) = 0 ] && usleep 1000; done' 2>/dev/null &
	local writer=$!
	sleep 1
	local t0=$(date +%s%N)
	run "$SBX" session snapshot "$n" moment
	assert_status 0
	local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	start_session "$f" --from moment
	local before=$("$SBX" run --session "$n" -- sh -c 'ls /workspace/y | wc -l')
	sleep 0.5
	local after=$("$SBX" run --session "$n" -- sh -c 'ls /workspace/y | wc -l')
	kill "$writer" 2>/dev/null || true
	[ "$after" -gt "$before" ] || fail "the writer stopped after the snapshot ($before, then $after)"
	# generous: the machine the suite runs on may be busy with disk writes
	[ "$ms" -lt 30000 ] || fail "the snapshot took $ms ms"
	run "$SBX" run --session "$f" -- sh -c 'echo $(ls /workspace/x | wc -l) $(ls /workspace/y | wc -l)'
	assert_status 0
	set -- $out
	[ "$2" -gt 0 ] || fail "nothing written before the snapshot: $out"
	[ "$1" -ge "$2" ] && [ "$1" -le $(( $2 + 1 )) ] || fail "the snapshot is not of one moment (files in x, in y): $out"
}

test_restore_rolls_back() {
	local n=s$$c
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'echo kept > /workspace/a; echo kept > /etc/k'
	run "$SBX" session snapshot "$n" "$n-good"
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'rm /workspace/a /etc/k; echo bad > /workspace/b; sleep 300' &
	sleep 1
	run "$SBX" session restore "$n" "$n-good"
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'cat /workspace/a /etc/k; ls /workspace; ps | grep -c "sleep 30[0]" || true'
	assert_eq "kept
kept
a
0" "$out"
	run "$SBX" session ls
	assert_contains "$out" "$n"
	run "$SBX" session restore "$n" no-such-snapshot
	assert_bad_input "no snapshot 'no-such-snapshot'"
}

test_a_snapshot_of_a_1tb_sparse_file_stays_small() {
	local n=s$$d f=s$$df
	# no quota: with the layer on disk (Linux < 6.6 as root) the quota caps
	# a file's size (RLIMIT_FSIZE), and the file is a TB long, if empty
	start_session "$n" --image tiny --disk unlimited
	run "$SBX" run --session "$n" -- sh -c 'truncate -s 1099511627776 /workspace/big && echo end >> /workspace/big && truncate -s 1099511627776 /root/big'
	assert_status 0
	run "$SBX" session snapshot "$n" sparse
	assert_status 0
	local kb=$(du -sk "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/snapshots/sparse" | cut -f1)
	[ "$kb" -lt 10240 ] || fail "the snapshot takes $kb KiB"
	run "$SBX" session snapshots
	assert_contains "$out" "sparse"
	start_session "$f" --from sparse
	# sizes from ls and the end by dd's seek: busybox's wc and tail would read a TB of zeros
	run "$SBX" run --session "$f" -- sh -c 'ls -l /root/big /workspace/big | awk "{print \$5}"; dd if=/workspace/big bs=1 skip=1099511627776 count=4 2>/dev/null'
	assert_eq "1099511627776
1099511627780
end" "$out"
}

test_bad_snapshot_names_are_refused() {
	local n=s$$e
	start_session "$n" --image tiny
	for bad in 'a/b' '..' $'x\ny' '.hidden' ''; do
		run "$SBX" session snapshot "$n" "$bad"
		assert_bad_input "invalid snapshot name"
		run "$SBX" session start --from "$bad" s$$e2
		assert_status 125
		run "$SBX" session snapshot-rm "$bad"
		assert_status 125
	done
	run "$SBX" session snapshot "$n" $'x\ny'
	assert_contains "$err" "'x?y'" "the newline shown as '?'"
	# no name read as an option where it is handed on (issue 40)
	for bad in -v --help; do
		run "$SBX" session snapshot -- "$n" "$bad"
		assert_bad_input "invalid snapshot name '$bad' (letters, digits, '.', '_', '-', at most 64, not first '.' or '-')"
	done
	# a '--' after the session's name ends the options too: never an
	# operand, and what follows it is the name, checked (issue 40)
	run "$SBX" session snapshot "$n" -- -v
	assert_bad_input "invalid snapshot name '-v' (letters"
	run "$SBX" session snapshot "$n" -- --
	assert_bad_input "invalid snapshot name '--' (letters"
	run "$SBX" session snapshot "$n" -- ok0
	assert_status 0
	assert_eq ok0 "$out" "the snapshot named after '--'"
	run "$SBX" session snapshot "$n" -- ok0 extra
	assert_bad_input "session snapshot: expected"
	run "$SBX" session snapshot "$n" ok1
	assert_status 0
	run "$SBX" session snapshot "$n" ok1
	assert_bad_input "snapshot 'ok1' exists"
	run "$SBX" session snapshot no-such-session
	assert_status 125
	[ ! -e "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/snapshots/a" ] || fail "something was made for 'a/b'"
}

# The snapshots directory must be the caller's own: a symlink to another
# directory (another user's) or one that others may write is never read.
test_another_users_snapshot_directory_is_never_read() {
	local n=s$$f
	start_session "$n" --image tiny
	run "$SBX" session snapshot "$n" mine
	assert_status 0
	local data="$TESTDIR/data" other="$TESTDIR/other"
	mkdir -p "$data/sbxrun" "$other/planted/layer/etc"
	echo planted > "$other/planted/layer/etc/planted"
	printf '{"name":"planted","image":"tiny","profile":"default","parent":"","created":1,"size":1}\n' > "$other/planted/manifest.json"
	ln -s "$other" "$data/sbxrun/snapshots"
	XDG_DATA_HOME="$data" run "$SBX" session start --from planted s$$f2
	assert_bad_input "snapshots"
	XDG_DATA_HOME="$data" run "$SBX" session snapshots
	assert_bad_input "snapshots"
	rm "$data/sbxrun/snapshots"
	mv "$other" "$data/sbxrun/snapshots"
	chmod 0777 "$data/sbxrun/snapshots"
	XDG_DATA_HOME="$data" run "$SBX" session start --from planted s$$f2
	assert_bad_input "only you may write"
	if [ "$AS_ROOT" = 1 ]; then
		chmod 0700 "$data/sbxrun/snapshots"
		chown nobody "$data/sbxrun/snapshots"
		XDG_DATA_HOME="$data" run "$SBX" session start --from planted s$$f2
		assert_bad_input "not a directory of yours"
	fi
}

# storage = disk keeps the writable layer in a run directory on the host
# (bound into the staging directory, a bind the old root's detach took
# with it): the snapshot reads it there. Failed through `sbxrun mcp` as
# root, whose agent profile made the session's layer a disk one.
test_a_snapshot_of_a_disk_storage_session() {
	local n=s$$d f=s$$df
	printf 'inherit = default\n[sandbox]\nstorage = disk\n' > disk.ini
	start_session "$n" --image tiny -p "$TESTDIR/disk.ini"
	run "$SBX" run --session "$n" -- sh -c 'echo kept > /workspace/a; echo layer > /etc/one; rm /etc/os-release'
	assert_status 0
	run "$SBX" session snapshot "$n"
	assert_status 0 "snapshot of a storage = disk session: $err"
	run "$SBX" run --session "$n" -- sh -c 'echo later > /workspace/a'
	start_session "$f" --from "$n-1"
	run "$SBX" run --session "$f" -- sh -c 'cat /workspace/a /etc/one; ls /etc/os-release 2>&1'
	assert_eq "kept
layer
ls: /etc/os-release: No such file or directory" "$out"
	"$SBX" session stop "$f" >/dev/null
	run "$SBX" session snapshot-rm "$n-1"
	assert_status 0
}

# The session is paused only for a second pass over a first copy made while
# it ran: what changed since that began is copied again, so the pause is a
# walk of the layer, well short of the whole copy, and the snapshot still
# holds the moment of the pause (a file written just before it).
test_the_pause_is_a_walk_not_the_copy() {
	local n=s$$p f=s$$pf
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c '
		mkdir -p /workspace/w /etc/many && i=0 && while [ $i -lt 2000 ]; do
			echo "w $i" > /workspace/w/$i; echo "e $i" > /etc/many/$i; i=$((i + 1)); done'
	assert_status 0
	sleep 2 # older than the second before the snapshot
	run "$SBX" run --session "$n" -- sh -c 'echo late > /workspace/w/7; rm /etc/many/8; echo new > /etc/many/new'
	local t0=$(date +%s%N)
	run "$SBX" -v session snapshot "$n" "$n-snap"
	local total=$((($(date +%s%N) - t0) / 1000000))
	assert_status 0
	local paused=$(printf '%s\n' "$err" | sed -n 's/.*the session was paused \([0-9]*\) ms.*/\1/p')
	[ -n "$paused" ] || fail "no pause in: $err"
	echo "    4000 files: paused $paused ms of the snapshot's $total ms" >&2
	[ $((paused * 2)) -lt "$total" ] || fail "paused $paused ms of $total ms"
	start_session "$f" --from "$n-snap"
	run "$SBX" run --session "$f" -- sh -c 'cat /workspace/w/7 /workspace/w/9 /etc/many/new; ls /workspace/w | wc -l; ls /etc/many | wc -l; ls /etc/many/8 2>&1'
	assert_eq "late
w 9
new
2000
2000
ls: /etc/many/8: No such file or directory" "$out"
}

# Issue 40: a file of the layer swapped for a FIFO between the copier's stat
# and its open does not hang the snapshot (a file of the layer is opened
# O_NONBLOCK and read only if it is still that regular file); the copy
# holds one moment, each pair a file and a FIFO. A snapshot killed half
# way leaves a .new-* directory: it counts toward changes_max until the
# next snapshot removes it.
test_a_fifo_swapped_in_and_a_snapshot_killed_half_way() {
	local n=s$$q snaps=${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/snapshots
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'mkdir /swap && head -c 67108864 /dev/zero > /big'
	"$SBX" run --session "$n" -- probe swap-fifo /swap >/dev/null 2>&1 &
	sleep 0.2
	for i in 1 2 3; do
		run timeout 20 "$SBX" session snapshot "$n" "$n-$i"
		assert_status 0 "snapshot $i with files swapped for FIFOs"
		assert_eq "32 32" "$(find "$snaps/$n-$i/layer/swap" -type f | wc -l) $(find "$snaps/$n-$i/layer/swap" -type p | wc -l)" \
			"files and FIFOs in snapshot $i"
	done
	# killed as soon as its directory is there (a copy of 64 MB is ahead)
	printf '[limits]\nchanges_max = 1K\n' > capped.ini
	mkdir proj
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- true
	local before=$(printf '%s\n' "$err" | sed -n 's/.*change sets take \([^,]*\),.*/\1/p')
	"$SBX" session snapshot "$n" "$n-killed" >/dev/null 2>&1 &
	local pid=$! t=0
	until compgen -G "$snaps/.new-$n-killed-*" >/dev/null; do
		t=$((t + 1)); [ $t -lt 200000 ] || fail "no .new-$n-killed-* seen"
	done
	kill -9 $pid; wait $pid 2>/dev/null || true
	local left=$(compgen -G "$snaps/.new-$n-killed-*")
	[ -d "$left" ] || fail "nothing left by the killed snapshot: $(ls -a "$snaps")"
	head -c 8388608 /dev/zero > "$left/pad" # what a longer copy would have held
	run "$SBX" run -i tiny -p ./capped.ini --project proj -- true
	local after=$(printf '%s\n' "$err" | sed -n 's/.*change sets take \([^,]*\),.*/\1/p')
	[ -n "$before" ] && [ "$before" != "$after" ] || fail "the killed snapshot's 8 MB not counted: $before, then $after"
	run "$SBX" session snapshot "$n" "$n-next"
	assert_status 0
	[ ! -e "$left" ] || fail "the killed snapshot's $left is still there"
	for s in 1 2 3 next; do "$SBX" session snapshot-rm "$n-$s" >/dev/null; done
}

# Issue 40: the pause without a cgroup freezer (SIGSTOP of each process)
# covers a fork-and-exit chain too: each generation an orphan of the one
# before, so one pass over the process tree stops a parent gone since and
# misses its child. The chain appends "N TIME" to /w/log, then makes
# /w/n/N, so a copy of one moment has the log's N files (or one fewer),
# and no generation ran between the pause and the resume: the next line of
# the log after the copy's last comes after a stall of about the pause.
# With the freezer (a session with a cgroup of its own) the same holds.
test_the_pause_holds_a_fork_and_exit_chain() {
	local n=s$$c snaps=${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/snapshots
	start_session "$n" --image tiny
	"$SBX" run --session "$n" -- sh -c 'mkdir -p /w/n && probe fork-chain /w; exec sleep 600' >/dev/null 2>&1 &
	sleep 0.3
	for i in 1 2; do
		run "$SBX" -v session snapshot "$n" "$n-$i"
		assert_status 0
		local paused=$(printf '%s\n' "$err" | sed -n 's/.*the session was paused \([0-9]*\) ms.*/\1/p')
		local logged=$(wc -l < "$snaps/$n-$i/layer/w/log") made=$(ls "$snaps/$n-$i/layer/w/n" | wc -l)
		[ "$logged" -gt 5 ] || fail "the chain wrote $logged lines"
		[ "$made" = "$logged" ] || [ "$made" = $((logged - 1)) ] ||
			fail "snapshot $i: $logged in the log, $made files: written during the pause"
		# a generation's time is taken before its line is written: the
		# one stopped in between writes its line after the resume
		run "$SBX" run --session "$n" -- sh -c "sed -n '${logged},$((logged + 2))p' /w/log"
		local t=($out) stall
		stall=$(( (t[3] - t[1] > t[5] - t[3] ? t[3] - t[1] : t[5] - t[3]) / 1000 ))
		echo "    snapshot $i: paused $paused ms, the chain stalled $stall ms after N=$logged" >&2
		[ "$stall" -ge $((paused / 3)) ] || fail "snapshot $i: paused $paused ms, but the chain went on (its longest stall after N=$logged: $stall ms)"
	done
	for s in 1 2; do "$SBX" session snapshot-rm "$n-$s" >/dev/null; done
}

# Issue 40: a `session snapshot` killed (SIGKILL) during its pause left the
# session stopped for good (every process SIGSTOP'd, or its cgroup
# frozen). A watchdog the pause starts first undoes it when the snapshot
# dies: the watcher below sees the pause (a process of the session
# stopped, or its cgroup frozen), kills the snapshot there, and the
# session runs again within seconds.
test_a_snapshot_killed_in_its_pause_leaves_the_session_running() {
	local n=s$$k
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'mkdir -p /workspace/w && cd /workspace/w && i=0 && while [ $i -lt 20000 ]; do : > f$i; i=$((i + 1)); done'
	assert_status 0
	"$SBX" run --session "$n" -- sleep 6061 >/dev/null 2>&1 &
	local sleeper=""
	for _ in $(seq 100); do sleeper=$(pgrep -f "^sleep 6061$" | head -1); [ -n "$sleeper" ] && break; sleep 0.1; done
	[ -n "$sleeper" ] || fail "the session's sleep 6061 is not running"
	local killed=""
	for try in 1 2 3 4 5; do
		"$SBX" session snapshot "$n" "$n-k$try" >/dev/null 2>&1 &
		local snap=$!
		# the pause: the sleeper stopped (T) or its cgroup frozen; the snapshot killed there
		if python3 - "$sleeper" "$snap" <<'PY'
import os, signal, sys, time
pid, snap = sys.argv[1], int(sys.argv[2])
cg = open("/proc/%s/cgroup" % pid).read().strip().split("::")[-1]
events = "/sys/fs/cgroup%s/cgroup.events" % cg
end = time.time() + 60
while time.time() < end:
    st = open("/proc/%s/stat" % pid).read().rsplit(")", 1)[1].split()[0]
    try:
        frozen = "frozen 1" in open(events).read()
    except OSError:
        frozen = False
    if st in "Tt" or frozen:
        os.kill(snap, signal.SIGKILL)
        sys.exit(0)
    try:
        if os.waitpid(snap, os.WNOHANG)[0]:
            sys.exit(1)
    except ChildProcessError:
        if not os.path.exists("/proc/%d" % snap):
            sys.exit(1)
sys.exit(1)
PY
		then killed=$try; wait $snap 2>/dev/null || true; break; fi
		wait $snap 2>/dev/null || true
		"$SBX" session snapshot-rm "$n-k$try" >/dev/null 2>&1 || true
	done
	[ -n "$killed" ] || fail "no snapshot was caught in its pause in 5 tries"
	local state="" t
	for t in $(seq 50); do
		state=$(awk '{print $3}' "/proc/$sleeper/stat")
		grep -q "frozen 1" "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$sleeper/cgroup")/cgroup.events" 2>/dev/null || [ "$state" = T ] || break
		sleep 0.1
	done
	[ "$state" != T ] || fail "the session's process is still stopped 5 s after the snapshot was killed in its pause"
	run timeout 20 "$SBX" run --session "$n" -- echo runs
	assert_status 0 "a command in the session after the killed snapshot"
	assert_eq "runs" "$out"
	"$SBX" session snapshot-rm "$n-k$killed" >/dev/null 2>&1 || true
}
