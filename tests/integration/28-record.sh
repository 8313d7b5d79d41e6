# also-as-root
# The --json result record (issue 9): one line, a fixed schema, real values.

check_record() { # file expected_exit expected_reason
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
assert len(lines) == 1, lines
r = json.loads(lines[0])
schema = {"command": list, "image": str, "profile": str, "exit_code": int, "signal": int,
          "reason": str, "duration_ms": int, "peak_memory_bytes": int, "network": str,
          "limits": dict, "egress": dict}
for k, t in schema.items():
    assert isinstance(r.get(k), t), (k, r.get(k))
assert r["exit_code"] == int(sys.argv[2]), r
assert r["reason"] == sys.argv[3], r
assert r["reason"] in ("exit", "signal", "timeout", "oom", "pids", "disk", "error")
for k in ("timeout", "memory", "disk", "pids", "cpus"):
    assert set(r["limits"][k]) == {"value", "mechanism"}, r["limits"][k]
for k in ("allowed", "refused", "bytes_up", "bytes_down"):
    assert isinstance(r["egress"][k], int)
print("ok")
PY
}

test_record_exit_signal_timeout() {
	run "$SBX" run --image tiny --json "$TESTDIR/a.json" -- sh -c 'echo out; exit 3'
	assert_status 3
	assert_eq out "$out"
	assert_eq ok "$(check_record a.json 3 exit)"
	run "$SBX" run --image tiny --json "$TESTDIR/b.json" -- sh -c 'kill -9 $$'
	assert_eq ok "$(check_record b.json 137 signal)"
	run "$SBX" run --image tiny --timeout 500ms --json "$TESTDIR/c.json" -- sleep 10
	assert_eq ok "$(check_record c.json 124 timeout)"
	assert_contains "$(cat c.json)" '"timeout":{"value":"500ms","mechanism":"wall-clock"}'
}

# The peak is the command's own (init reports it: sbxrun need not wait for
# init's exit to know it).
test_record_peak_memory_is_the_commands() {
	run "$SBX" run --image tiny --json "$TESTDIR/p.json" -- dd if=/dev/zero of=/dev/null bs=64M count=1
	assert_status 0
	local peak
	peak=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["peak_memory_bytes"])' p.json)
	[ "$peak" -ge $((64 << 20)) ] && [ "$peak" -lt $((1 << 30)) ] || fail "peak_memory_bytes $peak for a 64M buffer"
}

test_record_on_an_fd_is_not_mixed_into_output() {
	run sh -c "'$SBX' run --image tiny --json-fd 3 -- sh -c 'echo out; echo err >&2' 3>'$TESTDIR/r.json'"
	assert_status 0
	assert_eq out "$out"
	assert_eq err "$err"
	assert_eq ok "$(check_record r.json 0 exit)"
	run "$SBX" run --image tiny --json-fd 1 -- true
	assert_bad_input "json-fd"
	run "$SBX" run --image tiny --json x --json-fd 3 -- true
	assert_bad_input "--json"
}

# A symlink planted at --json or --events FILE is refused before the sandbox
# runs (issue 26: --events appended into its target, --json said only
# "Operation not permitted"); a dangling one creates nothing.
test_record_refuses_planted_symlinks() {
	echo host > target
	ln -s "$TESTDIR/target" ev
	ln -s "$TESTDIR/target" j.json
	ln -s "$TESTDIR/new" d.json
	run "$SBX" run --image tiny --events "$TESTDIR/ev" -- echo ran
	assert_bad_input "--events '$TESTDIR/ev': is a symbolic link"
	assert_eq "" "$out" "output of a refused run"
	run "$SBX" run --image tiny --json "$TESTDIR/j.json" -- echo ran
	assert_bad_input "--json '$TESTDIR/j.json': is a symbolic link"
	assert_eq "" "$out" "output of a refused run"
	run "$SBX" run --image tiny --json "$TESTDIR/d.json" -- echo ran
	assert_bad_input "--json '$TESTDIR/d.json': is a symbolic link"
	assert_eq host "$(cat target)" "the symlinks' target"
	[ ! -e new ] || fail "a dangling --json symlink created its target"
	mkfifo fifo
	run "$SBX" run --image tiny --events "$TESTDIR/fifo" -- echo ran
	assert_bad_input "--events '$TESTDIR/fifo': not a regular file"
	# the record itself: in place, no temporary name left beside it
	run "$SBX" run --image tiny --json "$TESTDIR/r.json" --events "$TESTDIR/e" -- true
	assert_status 0
	assert_eq ok "$(check_record r.json 0 exit)"
	assert_eq "" "$(ls -A | grep sbxrun || true)" "temporary names left"
}
