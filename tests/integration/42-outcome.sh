# also-as-root
# How a command ended, told the same way everywhere (issue 28): killed by the
# memory limit, the timeout, the process limit or the disk quota, a command
# gets the same sentence, the same exit status and the same reason from
# `run` (and its --json record), `run --session` (and its --json) and the
# MCP server's exec tool. And what the sandbox's child knows of an error,
# its hint, reaches the user's terminal.

# The mechanism doctor announces for a limit (cgroup1, rlimit, ...), in
# $DOCTOR (one run of doctor).
doctor_mech() { printf '%s\n' "$DOCTOR" | awk -v l="limit $1" 'index($0, l) == 1 {print $4}'; }

# The causes, each one argv, made inside the tiny image with its busybox and
# the static probe helper: shmem (which RLIMIT_DATA does not see) past the
# memory limit; a sleep past a 1 s timeout; 40 forks under 30 processes (a
# fork the shell cannot make ends it with 2); 40 MiB written under 16 MiB.
OOM='probe alloc 128 5 shared'
TIMEOUT='sleep 5'
PIDS='i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done; echo all-forked'
DISK='for i in $(seq 40); do dd if=/dev/zero of=/workspace/f$i bs=1M count=1 2>/dev/null; sleep 0.02; done; sleep 5'

# status|reason|sentence of one front end, on one line; the sentence is the
# one "sbxrun: " line the front end printed (MCP: its result's last line).
field() { sed -n "s/.*\"$2\":\"\{0,1\}\([^\",}]*\).*/\1/p" "$1"; } # one-line record, one key
sentence() { printf '%s\n' "$1" | sed -n 's/^sbxrun: //p' | head -1; }

by_run() { # script [timeout]
	run "$SBX" run --image tiny -p "$TESTDIR/o.ini" ${2:+--timeout "$2"} --json "$TESTDIR/r.json" -- sh -c "$1"
	[ "$(field "$TESTDIR/r.json" exit_code)" = "$status" ] || fail "run: --json exit_code differs from $status"
	echo "$status|$(field "$TESTDIR/r.json" reason)|$(sentence "$err")"
}

by_session() { # script [timeout]
	run "$SBX" run --session "$S" ${2:+--timeout "$2"} --json "$TESTDIR/s.json" -- sh -c "$1"
	[ "$(field "$TESTDIR/s.json" exit_code)" = "$status" ] || fail "run --session: --json exit_code differs from $status"
	echo "$status|$(field "$TESTDIR/s.json" reason)|$(sentence "$err")"
}

# One MCP server on the session, one exec call per line of "calls"
# ("SECONDS|- script"); prints status|reason|sentence per call.
by_mcp() {
	python3 - "$SBX" "$S" <<'PY'
import json, subprocess, sys
sbx, name = sys.argv[1:3]
p = subprocess.Popen([sbx, "mcp", "--session", name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
for i, line in enumerate(open("calls")):
    tmo, script = line.rstrip("\n").split(" ", 1)
    args = {"cmd": ["sh", "-c", script]}
    if tmo != "-":
        args["timeout"] = int(tmo)
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": "exec", "arguments": args}}) + "\n").encode())
    p.stdin.flush()
    r = json.loads(p.stdout.readline())["result"]
    sc, tail = r["structuredContent"], r["content"][0]["text"].splitlines()[-1]
    # "[SENTENCE; exit code N]" where a limit ended it
    sent = tail[1:].rsplit("; exit code", 1)[0] if "; exit code" in tail and not tail.startswith("[killed by") else ""
    print("%d|%s|%s" % (sc["exit_code"], sc["reason"], sent))
p.stdin.close(); p.wait(30)
PY
}

test_four_causes_told_alike_by_four_front_ends() {
	printf '[sandbox]\nstorage = disk\n[limits]\nmemory = 64M\npids = 30\ndisk = 16M\n' > "$TESTDIR/o.ini"
	S=oc$$
	"$SBX" session start --image tiny -p "$TESTDIR/o.ini" "$S" > /dev/null || fail "session start"
	at_exit "'$SBX' session stop '$S' >/dev/null 2>&1 || true"
	DOCTOR=$("$SBX" doctor 2>/dev/null)
	local pids_reason=exit # RLIMIT_NPROC: the shell's own failure
	case $(doctor_mech pids) in cgroup*) pids_reason=pids ;; esac
	local runs=() sessions=() mcps=() i
	# what the disk quota ends stays in the session's layer: the session's
	# own disk command last (after the MCP server's, which leaves it so too)
	runs+=("$(by_run "$TIMEOUT" 1s)") sessions+=("$(by_session "$TIMEOUT" 1s)")
	runs+=("$(by_run "$OOM")") sessions+=("$(by_session "$OOM")")
	runs+=("$(by_run "$PIDS")") sessions+=("$(by_session "$PIDS")")
	runs+=("$(by_run "$DISK")")
	printf '1 %s\n- %s\n- %s\n- %s\n' "$TIMEOUT" "$OOM" "$PIDS" "$DISK" > calls
	mapfile -t mcps < <(by_mcp)
	sessions+=("$(by_session "$DISK")")
	local want=("124|timeout" "137|oom" "2|$pids_reason" "137|disk") what=(timeout oom pids disk)
	for i in 0 1 2 3; do
		assert_eq "${want[$i]}" "$(echo "${runs[$i]}" | cut -d'|' -f1-2)" "${what[$i]}: run (status|reason)"
		assert_eq "${runs[$i]}" "${sessions[$i]}" "${what[$i]}: run --session against run"
		assert_eq "${runs[$i]}" "${mcps[$i]:-}" "${what[$i]}: the MCP server against run"
		[ "${want[$i]#*|}" = exit ] || [ -n "$(echo "${runs[$i]}" | cut -d'|' -f3)" ] ||
			fail "${what[$i]}: no sentence: ${runs[$i]}"
	done
	case $(doctor_mech memory) in
	rlimit+accounting) assert_contains "${runs[1]}" "out of memory (accounted by sbxrun, no cgroup): the sandbox reached its memory limit (64M) and was killed" ;;
	*) assert_contains "${runs[1]}" "out of memory: the sandbox reached its memory limit (64M) and was killed" ;;
	esac
	assert_contains "${runs[0]}" "timeout: the command ran longer than 1s and was killed"
	assert_contains "${runs[3]}" "disk quota: the sandbox wrote more than 16M on disk and was killed"
}

# The host finds the bind's source; the sandbox's child, opening it, does
# not (a /proc/self path names the caller, not the child: as a source
# removed between the check and the mount would). The child's hint comes
# through the sync message to the user's stderr.
test_a_hint_from_the_child_reaches_the_user() {
	echo data > "$TESTDIR/src"
	run bash -c "exec 7<'$TESTDIR/src'; exec '$SBX' run --image tiny --bind /proc/self/fd/7:/mnt/x -- cat /mnt/x"
	assert_status 125
	assert_contains "$err" "sbxrun: error: sandbox setup: --bind: open '/proc/self/fd/7': No such file or directory"
	assert_contains "$err" "hint: the source was there when sbxrun checked it and is gone now"
}
