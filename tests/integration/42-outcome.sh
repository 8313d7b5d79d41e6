# also-as-root
# How a command ended, told the same way everywhere (issue 28): killed by the
# memory limit, the timeout, the process limit or the disk quota, a command
# gets the same sentence, the same exit status and the same reason from
# `run` (and its --json record), `run --session` (and its --json) and the
# MCP server's exec tool. And what the sandbox's child knows of an error,
# its hint, reaches the user's terminal.

# The mechanism doctor announces for a limit (cgroup1, rlimit, ...).
doctor_mech() { "$SBX" doctor 2>/dev/null | awk -v l="limit $1" 'index($0, l) == 1 {print $4}'; }

# The causes, each one argv, made inside the tiny image with its busybox and
# the static probe helper: shmem (which RLIMIT_DATA does not see) past the
# memory limit; a sleep past a 1 s timeout; 40 forks under 30 processes (a
# fork the shell cannot make ends it with 2); 40 MiB written under 16 MiB.
OOM='probe alloc 200 5 shared'
TIMEOUT='sleep 5'
PIDS='i=0; while [ $i -lt 40 ]; do sleep 5 & i=$((i+1)); done; echo all-forked'
DISK='for i in $(seq 40); do dd if=/dev/zero of=/workspace/f$i bs=1M count=1 2>/dev/null; sleep 0.02; done; sleep 5'

# status|reason|sentence of one front end, on one line; the sentence is the
# one "sbxrun: " line the front end printed (MCP: its result's last line).
field() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$@"; }
sentence() { printf '%s\n' "$1" | sed -n 's/^sbxrun: //p' | head -1; }

by_run() { # argv-as-sh-script [timeout]
	run "$SBX" run --image tiny -p "$TESTDIR/o.ini" ${2:+--timeout "$2"} --json "$TESTDIR/r.json" -- sh -c "$1"
	[ "$(field "$TESTDIR/r.json" exit_code)" = "$status" ] || fail "run: --json exit_code differs from $status"
	echo "$status|$(field "$TESTDIR/r.json" reason)|$(sentence "$err")"
}

by_session() {
	run "$SBX" run --session "$S" ${2:+--timeout "$2"} --json "$TESTDIR/s.json" -- sh -c "$1"
	[ "$(field "$TESTDIR/s.json" exit_code)" = "$status" ] || fail "run --session: --json exit_code differs from $status"
	echo "$status|$(field "$TESTDIR/s.json" reason)|$(sentence "$err")"
}

by_mcp() {
	python3 - "$SBX" "$S" "$1" "${2:+1}" <<'PY'
import json, subprocess, sys
sbx, name, script, tmo = sys.argv[1:5]
args = {"cmd": ["sh", "-c", script]}
if tmo:
    args["timeout"] = 1
p = subprocess.Popen([sbx, "mcp", "--session", name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                     stderr=subprocess.DEVNULL)
p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": {"name": "exec", "arguments": args}}) + "\n").encode())
p.stdin.flush()
r = json.loads(p.stdout.readline())["result"]
p.stdin.close(); p.wait(30)
sc, tail = r["structuredContent"], r["content"][0]["text"].splitlines()[-1]
# "[SENTENCE; exit code N]" where a limit ended it
sent = tail[1:].rsplit("; exit code", 1)[0] if "; exit code" in tail and not tail.startswith("[killed by") else ""
print("%d|%s|%s" % (sc["exit_code"], sc["reason"], sent))
PY
}

# All four front ends agree, and on what was expected.
assert_same() { # what script timeout status reason
	local a b c
	a=$(by_run "$2" "$3")
	b=$(by_session "$2" "$3")
	c=$(by_mcp "$2" "$3")
	assert_eq "$4|$5" "$(echo "$a" | cut -d'|' -f1-2)" "$1: run (status|reason); all: $a / $b / $c"
	assert_eq "$a" "$b" "$1: run --session against run"
	assert_eq "$a" "$c" "$1: the MCP server against run"
	[ "$5" = exit ] || [ -n "$(echo "$a" | cut -d'|' -f3)" ] || fail "$1: no sentence: $a"
	echo "  $1: $a"
}

test_four_causes_told_alike_by_four_front_ends() {
	printf '[sandbox]\nstorage = disk\n[limits]\nmemory = 64M\npids = 30\ndisk = 16M\n' > "$TESTDIR/o.ini"
	S=oc$$
	"$SBX" session start --image tiny -p "$TESTDIR/o.ini" "$S" > /dev/null || fail "session start"
	trap "'$SBX' session stop '$S' >/dev/null 2>&1 || true" EXIT
	assert_same timeout "$TIMEOUT" 1s 124 timeout
	assert_same oom "$OOM" "" 137 oom
	case $(doctor_mech pids) in
	cgroup*) assert_same pids "$PIDS" "" 2 pids ;;
	*) assert_same pids "$PIDS" "" 2 exit ;; # RLIMIT_NPROC: the shell's own failure
	esac
	# the disk quota last: what it wrote stays in the session's layer
	assert_same disk "$DISK" "" 137 disk
	local a
	a=$(by_run "$OOM")
	case $(doctor_mech memory) in
	rlimit+accounting) assert_contains "$a" "out of memory (accounted by sbxrun, no cgroup): the sandbox reached its memory limit (64M) and was killed" ;;
	*) assert_contains "$a" "out of memory: the sandbox reached its memory limit (64M) and was killed" ;;
	esac
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
