# also-as-root
# tier net: test_sdk_client -- reaches the npm registry (npm install of the MCP SDK client)
# `sbxrun mcp`: the MCP server driven by the official TypeScript SDK client,
# raw bad input, and what is left behind when the client goes away (issue 14).

# A local HTTP server for download; prints its port in $PORT.
serve() {
	mkdir -p www
	echo hello > www/small.txt
	http_serve www
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = agent\n[download]\nallow = host.sbxrun.internal:%s\n' "$PORT" \
		> "$HOME/.config/sbxrun/profiles/mcp$$.ini"
	at_exit "kill $SRV 2>/dev/null; rm -f '$HOME/.config/sbxrun/profiles/mcp$$.ini'"
}

no_mcp_left() { # what
	sleep 0.5
	run "$SBX" session ls
	assert_not_contains "$out" "mcp-" "sessions left after $1"
	if pgrep -u "$(id -u)" -f "$SBX mcp" >/dev/null; then fail "an sbxrun mcp process is left after $1"; fi
	if pgrep -f "mcpmark70" >/dev/null; then fail "a command is left running after $1"; fi
}

test_sdk_client() {
	install_sdk
	serve
	mkdir -p proj && echo 'the user checkout' > proj/README
	run timeout 300 node sdk/client.mjs "$SBX" "$PORT" --profile "mcp$$" --image minimal --project proj
	[ "$status" = 0 ] || fail "client: $out $err"
	assert_contains "$out" "ok diff_changes of q.txt"
	[ ! -e proj/q.txt ] || fail "the agent's file was written into the user's checkout"
	assert_contains "$out" "ok REPL keeps a variable"
	assert_contains "$out" "ok Ctrl-C stops the loop"
	assert_contains "$out" "ok cancellation kills the command"
	assert_contains "$out" "ok open_image returns the PNG"
	assert_contains "$out" "ok closed"
	no_mcp_left "a clean exit"
}

# Feeds lines to `sbxrun mcp`, then waits for it to end; stdout in $out.
raw() { # input-file [args]
	local in=$1; shift
	run timeout 60 "$SBX" mcp "$@" < "$in"
}

test_bad_input_keeps_serving() {
	{
		echo 'garbage'
		echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"1999-01-01"}}'
		echo ''
		echo '[1,2]'
		echo '{"jsonrpc":"2.0","id":2,"method":"no/such"}'
		head -c 9000000 /dev/zero | tr '\0' 'x'; echo
		printf '\x80\xff{{{\n'
		echo '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"exec","arguments":{"cmd":"ls"}}}'
		echo '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"exec","arguments":{"cmd":["ls"],"bogus":1}}}'
		echo '{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}'
		echo '{"jsonrpc":"2.0","id":6,"method":"ping"}'
	} > in.txt
	raw in.txt --image tiny
	assert_status 0
	printf '%s\n' "$out" > out.txt
	python3 -c '
import json, sys
msgs = [json.loads(l) for l in open("out.txt") if l.strip()]
by = {m.get("id"): m for m in msgs}
assert by[1]["result"]["protocolVersion"] == "2025-11-25", by[1]
assert by[2]["error"]["code"] == -32601, by[2]
assert by[3]["error"]["code"] == -32602 and "cmd" in by[3]["error"]["message"], by[3]
assert by[4]["error"]["code"] == -32602 and "bogus" in by[4]["error"]["message"], by[4]
assert by[5]["result"]["isError"] is True, by[5]
assert by[6]["result"] == {}, by[6]
nulls = [m["error"]["code"] for m in msgs if m.get("id") is None]
assert nulls.count(-32700) == 3 and nulls.count(-32600) == 1, nulls
' || fail "replies: $(head -c 1500 out.txt)"
	no_mcp_left "bad input"
}

test_version_negotiation() {
	echo '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}' > in.txt
	raw in.txt
	assert_contains "$out" '"protocolVersion":"2025-06-18"'
}

# A python3 driver: sends lines, reads replies by id, then does what the
# last argument says to the server (eof, term, kill).
drive() { # how [sbxrun args]
	local how=$1; shift
	python3 - "$SBX" "$how" "$@" <<'PY'
import json, os, signal, subprocess, sys, time
sbx, how, args = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen([sbx, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def reply(i):
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m
call = lambda i, name, a: send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": name, "arguments": a}})
call(1, "exec", {"cmd": ["sh", "-c", "echo in-the-box > /workspace/mark; echo ok"]})
r = reply(1); assert r["result"]["structuredContent"]["stdout"] == "ok\n", r
time.sleep(0.1)
if how.startswith("restart"):  # the session goes; the next call starts another
    subprocess.run([sbx, "session", "stop", "mcp-%d" % p.pid], check=True)
    call(9, "exec", {"cmd": ["true"]}); r = reply(9)
    assert r["result"]["structuredContent"]["exit_code"] == 0, r
    how = how[len("restart-"):]
call(2, "exec", {"cmd": ["sh", "-c", "sleep 123; : mcpmark70"]})
call(3, "exec", {"cmd": ["sh", "-c", "sleep 123; : mcpmark70"], "session_name": "bg", "yield_time_ms": 200})
reply(3)
time.sleep(0.5)
assert subprocess.run(["pgrep", "-f", "mcpmark70"], capture_output=True).stdout.count(b"\n") == 2, "not running"
if how == "eof": p.stdin.close()
elif how == "term": p.send_signal(signal.SIGTERM)
elif how == "kill": p.kill()
t = time.time()
p.wait(30)
print("ended in %.1f s with %s" % (time.time() - t, p.returncode))
PY
}

test_stdin_eof_ends_everything() {
	run drive eof -p default --image tiny
	assert_status 0
	assert_contains "$out" "with 0"
	no_mcp_left "stdin EOF"
}

test_sigterm_ends_everything() {
	run drive term -p default --image tiny
	assert_status 0
	no_mcp_left "SIGTERM"
}

test_sigkill_leaves_no_session() {
	run drive kill -p default --image tiny
	assert_status 0
	# the watchdog stops the session the killed server could not
	for _ in $(seq 100); do "$SBX" session ls | grep -q "mcp-" || break; sleep 0.1; done
	no_mcp_left "SIGKILL"
}

test_sigkill_after_a_restart_leaves_no_session() {
	run drive restart-kill -p default --image tiny
	assert_status 0
	for _ in $(seq 100); do "$SBX" session ls | grep -q "mcp-" || break; sleep 0.1; done
	no_mcp_left "SIGKILL after the session was restarted"
}

test_attached_session_stays() {
	local n=m$$
	"$SBX" session start --image tiny "$n" >/dev/null || fail "session start"
	at_exit "'$SBX' session stop '$n' >/dev/null 2>&1"
	run drive eof --session "$n"
	assert_status 0
	run "$SBX" run --session "$n" -- cat /workspace/mark
	assert_eq in-the-box "$out" "the agent's file, seen from the same session"
	run "$SBX" session ls
	assert_contains "$out" "$n"
	run "$SBX" mcp --session "no-such-$$" < /dev/null
	assert_bad_input "not running"
}

# Sends the tools/call lines of a file, prints each reply, then closes stdin.
calls() { # file [sbxrun args]
	local in=$1; shift
	python3 - "$SBX" "$in" "$@" <<'PY'
import json, subprocess, sys
sbx, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen([sbx, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
want = set()
for line in open(path):
    m = json.loads(line); want.add(m["id"])
    p.stdin.write(line.encode()); p.stdin.flush()
while want:
    r = json.loads(p.stdout.readline()); want.discard(r.get("id")); print(json.dumps(r))
p.stdin.close(); p.wait(60)
PY
}

test_memory_limit_is_reported() {
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = default\n[limits]\nmemory = 64M\n' > "$HOME/.config/sbxrun/profiles/small$$.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/small$$.ini'"
	echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"cmd":["python3","-c","b = bytearray(500 << 20)"]}}}' > in.txt
	run timeout 120 bash -c "$(declare -f calls); SBX='$SBX' calls in.txt -p small$$ --image minimal"
	assert_status 0
	case "$out" in
	*'"reason": "oom"'*'"exit_code": 137'* | *'"exit_code": 137'*'"reason": "oom"'*) ;;      # the memory cgroup
	*'"exit_code": 1,'*MemoryError*) ;;                                                      # RLIMIT_DATA
	*) fail "memory limit: $out" ;;
	esac
	no_mcp_left "a memory limit"
}

test_profile_timeout_is_the_ceiling() {
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = default\n[limits]\ntimeout = 2s\n' > "$HOME/.config/sbxrun/profiles/t$$.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/t$$.ini'"
	echo '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"exec","arguments":{"cmd":["sleep","30"],"timeout":600}}}' > in.txt
	local t0=$SECONDS
	run timeout 60 bash -c "$(declare -f calls); SBX='$SBX' calls in.txt -p t$$ --image tiny"
	assert_status 0
	assert_contains "$out" '"reason": "timeout"'
	[ $((SECONDS - t0)) -lt 20 ] || fail "the profile's 2 s did not cap a 600 s timeout"
	no_mcp_left "a timeout"
}

# The server was not polling when a terminal command ended (stopped here,
# busy with other calls there): its output, its terminal's hang-up and its
# exit status then arrive in one wake-up, and the status must survive that.
test_terminal_status_arrives_with_its_hangup() {
	run timeout 60 python3 - "$SBX" -p default --image tiny <<'PY'
import json, os, signal, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "mcp", *sys.argv[2:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, name, a):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": name, "arguments": a}}) + "\n").encode()); p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m["result"]["structuredContent"]
r = call(1, "exec", {"cmd": ["sh", "-c", "echo started; sleep 1; echo bye; exit 5"], "session_name": "t",
                     "yield_time_ms": 300})
assert r["reason"] == "running" and "started" in r["stdout"], r
os.kill(p.pid, signal.SIGSTOP); time.sleep(3); os.kill(p.pid, signal.SIGCONT)
time.sleep(0.5)
r = call(2, "feed_chars", {"session_name": "t", "chars": "", "yield_time_ms": 2000})
print(json.dumps(r))
p.stdin.close(); p.wait(30)
PY
	assert_status 0
	assert_contains "$out" '"exit_code": 5'
	assert_contains "$out" 'bye'
	no_mcp_left "a terminal command's end"
}

# Issue 26: the download tool is held to [download]'s speed floor (2 s in
# this profile): a server dripping 2 bytes a second is stopped with the
# reason, and nothing of it reaches the workspace.
test_download_tool_stops_a_stalled_server() {
	serve
	printf 'inherit = mcp%s\n[download]\nmin_speed_time = 2s\n' "$$" > "$HOME/.config/sbxrun/profiles/mcpslow$$.ini"
	at_exit "kill $SRV 2>/dev/null; rm -f '$HOME/.config/sbxrun/profiles/mcp$$.ini' '$HOME/.config/sbxrun/profiles/mcpslow$$.ini'"
	run timeout 60 python3 - "$SBX" "$PORT" -p "mcpslow$$" --image tiny <<'PY'
import json, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "mcp", *sys.argv[3:]], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def call(i, name, a):
    p.stdin.write((json.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call",
                               "params": {"name": name, "arguments": a}}) + "\n").encode()); p.stdin.flush()
    while True:
        m = json.loads(p.stdout.readline())
        if m.get("id") == i: return m["result"]
t = time.time()
r = call(1, "download", {"url": "http://host.sbxrun.internal:%s/drip" % sys.argv[2], "filepath": "drip.bin"})
print("took %.0f s, error %s: %s" % (time.time() - t, r.get("isError"), r["content"][0]["text"]))
r = call(2, "exec", {"cmd": ["ls", "-A", "/workspace"]})
print("workspace: [%s]" % r["structuredContent"]["stdout"].strip())
p.stdin.close(); p.wait(30)
PY
	assert_status 0
	assert_contains "$out" "error True: download: download 'http://host.sbxrun.internal:$PORT/drip': stopped: slower than 1K bytes a second for 2s"
	assert_contains "$out" "workspace: []"
	case "$out" in "took "[0-9]" s"*) ;; *) fail "a 2 s speed floor took too long: $out" ;; esac
	no_mcp_left "a stalled download"
}

# Issue 36: an agent keeps its sandbox's files, changes them and rolls back;
# it restores only what it took itself, and a server's own session takes
# its snapshots with it when it ends.
test_snapshot_tools_roll_back() {
	"$SBX" -q session snapshots > before.txt 2>&1 || true
	python3 - "$SBX" "keep$$" "$TOP/tests/mcp" <<'PY' > out.txt 2>&1
import subprocess, sys
sbx, name = sys.argv[1], sys.argv[2]
sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, sys.argv[3])
from tools import Server, text
srv = Server([sbx, "mcp", "-p", "default", "--image", "tiny"])
call = srv.call
sh = lambda s: call("exec", {"cmd": ["sh", "-c", s]})["structuredContent"]
assert sh("echo one > /workspace/f; echo gone > /etc/gone")["exit_code"] == 0
r = call("snapshot", {"name": name}); assert not r.get("isError") and name in text(r), r
assert sh("echo two > /workspace/f; rm /etc/gone; echo new > /etc/new")["exit_code"] == 0
r = call("restore", {"snapshot": name}); assert not r.get("isError"), r
o = sh("cat /workspace/f /etc/gone; ls /etc/new 2>&1")
assert o["stdout"].startswith("one\ngone\n") and "No such file" in o["stdout"], o
r = call("list_snapshots", {}); assert r["structuredContent"]["snapshots"] == [name], r
r = call("restore", {"snapshot": "someone-elses"}); assert r.get("isError") and "no snapshot" in text(r), r
r = call("snapshot", {"name": "../x"}); assert r.get("isError"), r
for bad in ("-v", "--help"):  # the command's rule and message (issue 40)
    r = call("snapshot", {"name": bad})
    assert r.get("isError") and "invalid snapshot name '%s' (letters" % bad in text(r), r
r = call("list_snapshots", {}); assert r["structuredContent"]["snapshots"] == [name], r
listed = subprocess.run([sbx, "session", "snapshots"], capture_output=True, text=True).stdout
assert name in listed, listed
srv.close()
print("done")
PY
	[ "$(tail -1 out.txt)" = done ] || fail "the snapshot tools: $(cat out.txt)"
	run "$SBX" session snapshots
	assert_not_contains "$out" "keep$$" "a snapshot left after the server's own session ended"
	no_mcp_left "the snapshot tools"
}

# Issue 36: on a project (`sbxrun mcp --project DIR`), an agent lists and
# diffs what it changed there; the user's copy is never written, and the
# change set is the user's to apply when the server has ended.
test_project_tools_list_and_diff() {
	mkdir -p proj
	echo one > proj/a
	echo bee > proj/b
	python3 - "$SBX" "$TOP/tests/mcp" <<'PY' > out.txt 2>&1
import sys
sbx = sys.argv[1]
sys.dont_write_bytecode = True  # nothing written into the tree
sys.path.insert(0, sys.argv[2])
from tools import Server, text
srv = Server([sbx, "mcp", "-p", "default", "--image", "tiny", "--project", "proj"])
call = srv.call
r = call("list_changes", {}); assert not r.get("isError") and r["structuredContent"]["entries"] == [], r
o = call("exec", {"cmd": ["sh", "-c", "echo two >> a; rm b; printf 'x\\0y' > bin; ln -s a l; mkfifo p; "
                          "printf 1 > \"$(printf 'n\\033[2J')\"; chmod +x bin; cat a"]})["structuredContent"]
assert o["exit_code"] == 0 and o["stdout"] == "one\ntwo\n", o
assert open("proj/a").read() == "one\n", "the user's copy was written"
r = call("list_changes", {}); s = r["structuredContent"]
assert (s["added"], s["changed"], s["deleted"], s["not_applied"]) == (4, 1, 1, 1), r
# the model apply reads: deletions first, the mode apply gives, the
# link's target, the verdict; no raw control byte in a name
got = [(e["kind"], e["type"], e["mode"], e["target"], e["skipped"], e["path"]) for e in s["entries"]]
assert got == [("deleted", "file", None, None, None, "b"), ("changed", "file", "0644", None, None, "a"),
               ("added", "file", "0755", None, None, "bin"), ("added", "symlink", None, "a", None, "l"),
               ("added", "file", "0644", None, None, "n\\x1b[2J"),
               ("added", "special", None, None, "a device, FIFO or socket is never applied", "p")], got
assert all(e["conflict"] is None for e in s["entries"]), r
t = text(r); assert t.index("deleted file: b") < t.index("changed file 0644: a") and "\x1b" not in t, t
assert "added symlink: l -> a" in t and "added special: p (never applied: " in t, t
r = call("diff_changes", {"paths": ["n\\x1b[2J"]})  # the name as listed
assert text(r) == ('diff --git "a/n\\033[2J" "b/n\\033[2J"\nnew file mode 100644\n--- /dev/null\n'
                  '+++ "b/n\\033[2J"\n@@ -0,0 +1,1 @@\n+1\n\\ No newline at end of file\n'), r
r = call("diff_changes", {"paths": ["a"]})
assert not r.get("isError") and text(r) == "diff --git a/a b/a\n--- a/a\n+++ b/a\n@@ -1,1 +1,2 @@\n one\n+two\n", r
r = call("diff_changes", {}); t = text(r)
assert "-bee" in t and "deleted file mode 100644" in t and "Binary files /dev/null and b/bin differ" in t, r
assert "\x1b" not in t, t
r = call("diff_changes", {"paths": "a"}); assert r.get("isError") or "error" in r, r
print(s["id"])
srv.close()
print("done")
PY
	[ "$(tail -1 out.txt)" = done ] || fail "the project tools: $(cat out.txt)"
	id=$(tail -2 out.txt | head -1)
	assert_eq "one" "$(cat proj/a)" "the project after the server ended"
	run "$SBX" changes show "$id"
	assert_status 0
	assert_contains "$out" "changed file"
	run "$SBX" changes discard "$id"
	assert_status 0
	# a server on no project says so
	printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"list_changes","arguments":{}}}' > in.txt
	raw in.txt -p default --image tiny
	assert_contains "$out" "works on no project"
	no_mcp_left "the project tools"
}

# Issue 40: a walk of the change set (list_changes, diff_changes) runs in a
# child of the server with a deadline, the profile's timeout: past it the
# child is killed and the call answered with a tool error that names it.
test_project_walk_has_a_deadline() {
	local n=pw$$
	mkdir -p proj "$HOME/.config/sbxrun/profiles"
	echo one > proj/a
	start_session "$n" --image tiny --project proj
	"$SBX" run --session "$n" -- sh -c 'mkdir d && cd d && i=0; while [ $i -lt 20000 ]; do : > f$i; i=$((i+1)); done' ||
		fail "the files"
	printf 'inherit = default\n[limits]\ntimeout = 5ms\n' > "$HOME/.config/sbxrun/profiles/tmo$$.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/tmo$$.ini'; '$SBX' session stop '$n' >/dev/null 2>&1"
	python3 - "$SBX" "$TOP/tests/mcp" "tmo$$" "$n" <<'PY' > out.txt 2>&1
import sys
sbx = sys.argv[1]
sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from tools import Server, text
srv = Server([sbx, "mcp", "-p", sys.argv[3], "--session", sys.argv[4]])
for tool in ("list_changes", "diff_changes"):
    r = srv.call(tool, {})
    assert r.get("isError") and "did not end within its deadline of 5ms" in text(r), r
srv.close()
print("done")
PY
	[ "$(tail -1 out.txt)" = done ] || fail "the deadline: $(cat out.txt)"
	no_mcp_left "a walk past its deadline"
}

# A client that goes away in the middle of a diff_changes while the sandbox
# renames a FIFO over a file and back: every diff answers (the server's
# reads never wait on a FIFO), the server keeps a few times the 256 KiB
# cut of a 64 MiB file's diff, and when the client is gone the server
# exits and its session stops.
test_a_client_gone_mid_diff_leaves_nothing() {
	mkdir -p proj
	echo one > proj/a
	head -c 67108864 /dev/zero | tr '\0' '\n' > proj/big
	python3 - "$SBX" <<'PY' > out.txt 2>&1
import json, os, select, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp", "-p", "default", "--image", "tiny", "--project", "proj"],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
buf, n = b"", 0
def ask(tool, args, wait=True):
    global buf, n
    n += 1
    m = {"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {"name": tool, "arguments": args}}
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
    while wait:
        while b"\n" not in buf:
            if not select.select([p.stdout], [], [], 10)[0]:
                print("no answer to %s in 10 s" % tool, flush=True); os._exit(1)
            buf += os.read(p.stdout.fileno(), 1 << 20)
        line, buf = buf.split(b"\n", 1)
        r = json.loads(line)
        if r.get("id") == n:
            return r["result"]
r = ask("exec", {"cmd": ["rm", "big"]}); assert r["structuredContent"]["exit_code"] == 0, r
ask("exec", {"cmd": ["sh", "-c", "while :; do echo x > t; mv t a; mkfifo p; mv p a; done"],
             "session_name": "swap", "yield_time_ms": 100})
for _ in range(8):
    r = ask("diff_changes", {})
    assert "the diff goes on past 256 KiB" in r["content"][0]["text"], r
hwm = int(open("/proc/%d/status" % p.pid).read().split("VmHWM:")[1].split()[0])
assert hwm < 8192, "the server's peak memory: %d KiB" % hwm
ask("diff_changes", {}, wait=False)
print("done", flush=True)
os._exit(0)  # gone mid-call: the server's stdin and stdout close
PY
	grep -qx done out.txt || fail "the diffs: $(cat out.txt)"
	for _ in $(seq 100); do
		pgrep -u "$(id -u)" -f "$SBX mcp" >/dev/null || "$SBX" session ls | grep -q "mcp-" || break
		sleep 0.1
	done
	no_mcp_left "a client gone mid-call"
	"$SBX" changes prune --all >/dev/null
}

# Issue 40: snapshot and restore ran in the server's loop with no deadline
# (the server answered nothing else while a snapshot copied). Now each is a
# child with the profile's timeout as its deadline, as the change set's
# walks: a list_snapshots sent after a snapshot of 20,000 files is
# answered first, and the snapshot past its deadline is killed and
# answered with a tool error naming it; the session is left running (a
# pause the killed snapshot held undoes itself) and keeps no snapshot.
test_snapshot_tool_has_a_deadline_and_the_server_keeps_answering() {
	local n=ms$$
	mkdir -p "$HOME/.config/sbxrun/profiles"
	start_session "$n" --image tiny
	"$SBX" run --session "$n" -- sh -c 'mkdir -p /workspace/w && cd /workspace/w && i=0; while [ $i -lt 20000 ]; do echo $i > f$i; i=$((i+1)); done' ||
		fail "the files"
	printf 'inherit = default\n[limits]\ntimeout = 300ms\n' > "$HOME/.config/sbxrun/profiles/stmo$$.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/stmo$$.ini'; '$SBX' session stop '$n' >/dev/null 2>&1"
	python3 - "$SBX" "stmo$$" "$n" "big$$" <<'PY' > out.txt 2>&1
import json, os, select, subprocess, sys, time
p = subprocess.Popen([sys.argv[1], "mcp", "-p", sys.argv[2], "--session", sys.argv[3]],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
buf, big = b"", sys.argv[4]
def send(i, method, params):
    m = {"jsonrpc": "2.0", "id": i, "method": method, "params": params}
    p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def answers(k, wait=30):
    global buf
    got, end = [], time.time() + wait
    while len(got) < k:
        while b"\n" not in buf:
            if not select.select([p.stdout], [], [], max(0, end - time.time()))[0]:
                print("answers so far:", got, flush=True); os._exit(1)
            buf += os.read(p.stdout.fileno(), 1 << 20)
        line, buf = buf.split(b"\n", 1)
        r = json.loads(line)
        if "id" in r:
            got.append(r)
    return got
send(0, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}})
answers(1)
t0 = time.time()
send(1, "tools/call", {"name": "snapshot", "arguments": {"name": big}})
send(2, "tools/call", {"name": "list_snapshots", "arguments": {}})
send(3, "tools/call", {"name": "snapshot", "arguments": {"name": "other"}})
a = answers(3)
ids = [r["id"] for r in a]
assert ids[-1] == 1, ids  # the snapshot answered last: the server kept answering
by = {r["id"]: r["result"] for r in a}
text = lambda r: "".join(c.get("text", "") for c in r["content"])
assert by[2]["structuredContent"]["snapshots"] == [], by[2]
assert by[3].get("isError") and "a snapshot or restore of this sandbox is running" in text(by[3]), by[3]
assert by[1].get("isError") and "snapshot: did not end within its deadline of 300ms" in text(by[1]), by[1]
assert time.time() - t0 < 20, time.time() - t0
send(4, "tools/call", {"name": "list_snapshots", "arguments": {}})
assert answers(1)[0]["result"]["structuredContent"]["snapshots"] == []
restore = lambda i: send(i, "tools/call", {"name": "restore", "arguments": {"snapshot": big}})
restore(5)
r = answers(1)[0]["result"]; assert r.get("isError") and "no snapshot '%s' was taken" % big in text(r), r
p.stdin.close(); p.wait(30)
print("done")
PY
	[ "$(tail -1 out.txt)" = done ] || fail "the snapshot's deadline: $(cat out.txt)"
	run timeout 20 "$SBX" run --session "$n" -- sh -c 'cat /workspace/w/f7'
	assert_status 0 "a command in the session after the snapshot killed at its deadline"
	assert_eq 7 "$out"
	run "$SBX" session snapshots
	assert_not_contains "$out" "big$$" "a snapshot kept past its deadline"
}
