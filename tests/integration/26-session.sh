# also-as-root
# root-only: test_runtime_dir_taken_by_another_user
# vm-modes: user-systemd user-outside
# Sessions: a sandbox that outlives one command (issue 7).

sock_dir() { echo "${XDG_RUNTIME_DIR:-/tmp/sbxrun-$(id -u)}${XDG_RUNTIME_DIR:+/sbxrun}/sessions/$1"; }

test_lifecycle_and_persistence() {
	local n=t$$a
	start_session "$n" --image minimal
	run "$SBX" session ls
	assert_contains "$out" "$n"
	assert_contains "$out" "running"
	grep "$n" <<<"$out" | grep -qE ' [0-9]+[KMG] +running' || fail "no memory in use shown: $out"
	run "$SBX" run --session "$n" -- sh -c 'echo kept > /workspace/f; echo pkg > /etc/marker'
	assert_status 0
	run "$SBX" run --session "$n" -- sh -c 'cat /workspace/f /etc/marker'
	assert_eq "kept
pkg" "$out"
	run "$SBX" session start "$n"
	assert_bad_input "already running"
	run "$SBX" session stop "$n"
	assert_status 0
	run "$SBX" session ls
	assert_not_contains "$out" "$n"
	run "$SBX" run --session "$n" -- true
	assert_bad_input "not running"
}

test_exit_codes_timeout_and_stdio() {
	local n=t$$b
	start_session "$n" --image tiny
	run "$SBX" run --session "$n" -- sh -c 'exit 9'; assert_status 9
	run "$SBX" run --session "$n" -- no-such-cmd; assert_status 127
	run "$SBX" run --session "$n" -- sh -c 'kill -9 $$'; assert_status 137
	run sh -c "echo piped | '$SBX' run --session '$n' -- sh -c 'cat; echo e >&2'"
	assert_eq piped "$out"; assert_eq e "$err"
	local start=$(date +%s)
	run "$SBX" run --session "$n" --timeout 1s -- sh -c 'sleep 200 & (setsid sleep 201 &); sleep 202'
	assert_status 124
	[ $(( $(date +%s) - start )) -lt 10 ] || fail "timeout was slow"
	sleep 0.3
	run "$SBX" run --session "$n" -- sh -c 'ps | grep -c "sleep 20[012]" || true'
	assert_eq 0 "$out" "processes left by the timed-out command"
	run "$SBX" run --session "$n" -e A=1 -w /tmp -- sh -c 'echo $A; pwd'
	assert_eq "1
/tmp" "$out"
	run "$SBX" run --session "$n" --net full -- true
	assert_bad_input "--net"
	# a session without [sandbox] user: --user other than root is refused, not ignored
	run "$SBX" run --session "$n" -u 1000 -- id -u
	assert_bad_input "--user"
}

test_concurrent_runs() {
	local n=t$$c
	start_session "$n" --image tiny
	for i in 1 2 3 4; do
		"$SBX" run --session "$n" -- sh -c "sleep 0.5; echo $i > /workspace/c$i" &
	done
	wait
	run "$SBX" run --session "$n" -- sh -c 'cat /workspace/c1 /workspace/c2 /workspace/c3 /workspace/c4'
	assert_eq "1
2
3
4" "$out"
}

test_signals_reach_a_session_command() {
	local n=t$$d
	start_session "$n" --image tiny
	"$SBX" run --session "$n" -- sh -c 'trap "echo got; exit 42" TERM; echo ready; while :; do sleep 0.1; done' > o 2>&1 &
	local pid=$!
	for _ in $(seq 50); do grep -q ready o && break; sleep 0.1; done
	kill -TERM "$pid"
	set +e; wait "$pid"; status=$?; set -e
	assert_status 42
}

test_agent_drives_the_control_socket_directly() {
	local n=t$$e
	start_session "$n" --image minimal
	run python3 - "$(sock_dir "$n")/control.sock" <<'PY'
import json, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.send(json.dumps({"op": "exec", "cmd": ["sh", "-c", "echo out; echo err >&2; exit 3"],
                   "env": ["X=1"], "workdir": "/tmp", "timeout_ms": 10000}).encode())
r = json.loads(s.recv(1 << 20))
print(r["exit_code"], r["reason"], repr(r["stdout"]), repr(r["stderr"]))
PY
	assert_status 0
	assert_eq "3 exit 'out\n' 'err\n'" "$out"
}

test_control_socket_refuses_a_peer_inside_a_sandbox() {
	local n=t$$f
	start_session "$n" --image tiny
	local d
	d=$(sock_dir "$n")
	[ "$(stat -c %a "$d/control.sock")" = 600 ] || fail "socket mode $(stat -c %a "$d/control.sock")"
	run "$SBX" run --image minimal --bind "$d:/s" -- python3 -c '
import json, socket
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
try:
    s.connect("/s/control.sock")
    s.send(json.dumps({"op": "exec", "cmd": ["true"]}).encode())
    r = s.recv(65536)
    print("refused" if not r else "reply: %r" % r)
except OSError:
    print("refused")'
	assert_eq "refused" "$out" "$err"
	# as root the sandbox is another uid and cannot even reach the socket
	[ "$AS_ROOT" = 1 ] || assert_contains "$(cat "$d/log")" "another user namespace"
}

test_idle_session_ends_by_itself() {
	local n=t$$g
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = default\n[limits]\nidle = 1s\n' > "$HOME/.config/sbxrun/profiles/idle$$.ini"
	"$SBX" session start -p "idle$$" --image tiny "$n" >/dev/null
	sleep 2.5
	run "$SBX" session ls
	rm -f "$HOME/.config/sbxrun/profiles/idle$$.ini"
	assert_not_contains "$out" "$n"
}

test_shell_in_a_session() {
	local n=t$$h
	start_session "$n" --image minimal
	run sh -c "printf 'echo in-session; exit 6\n' | '$SBX' shell --session '$n'"
	assert_status 6
	assert_eq in-session "$out"
	command -v tmux >/dev/null || skip "tmux is not installed"
	local s="sbx$$x"
	tmux -L "$s" new-session -d -s "$s" -x 90 -y 25 "'$SBX' shell --session '$n'; echo EXIT=\$? > $TESTDIR/exit; sleep 30"
	for _ in $(seq 50); do tmux -L "$s" capture-pane -p -t "$s" | grep -q '#' && break; sleep 0.1; done
	tmux -L "$s" send-keys -t "$s" 'stty size; exit 3' Enter
	for _ in $(seq 50); do [ -s "$TESTDIR/exit" ] && break; sleep 0.1; done
	local screen
	screen=$(tmux -L "$s" capture-pane -p -t "$s")
	tmux -L "$s" kill-server
	assert_contains "$screen" "25 90"
	assert_eq "EXIT=3" "$(cat "$TESTDIR/exit")"
}

test_crashed_supervisor_is_cleaned() {
	local n=t$$i
	"$SBX" session start --image tiny "$n" >/dev/null
	local d pid
	d=$(sock_dir "$n")
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$d/info.json")
	kill -9 "$pid"
	sleep 0.3
	run "$SBX" session ls
	assert_contains "$out" "dead"
	run "$SBX" session rm "$n"
	assert_status 0
	[ ! -e "$d" ] || fail "state left in $d"
}

# `session rm -f` stops a running session and removes it, as `docker rm -f`
# does: afterwards neither its supervisor nor its state is left. Without -f
# the refusal says how, and carries no errno text.
test_rm_force_stops_and_removes() {
	local n=t$$k d pid
	start_session "$n" --image tiny
	d=$(sock_dir "$n")
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$d/info.json")
	run "$SBX" session rm "$n"
	assert_bad_input "session '$n' is running (stop it with 'sbxrun session stop $n', or stop and remove it with 'sbxrun session rm -f $n')"
	assert_not_contains "$err" "busy" "the refusal"
	kill -0 "$pid" 2>/dev/null || fail "rm without -f touched the supervisor"
	run "$SBX" session rm -f "$n"
	assert_status 0
	# gone, or a zombie that its reaper (not sbxrun) has yet to collect
	local st
	st=$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -c1)
	[ -z "$st" ] || [ "$st" = Z ] || fail "supervisor $pid still running after rm -f (state $st)"
	[ ! -e "$d" ] || fail "state left in $d: $(ls -la "$d")"
	run "$SBX" session ls
	assert_not_contains "$out" "$n"
	# --force after the name, and on a session already gone
	start_session "$n" --image tiny
	run "$SBX" session rm "$n" --force
	assert_status 0
	run "$SBX" session rm --force "$n"
	assert_bad_input "no session '$n'"
	assert_not_contains "$err" "No such file"
}

# kill -9 of the supervisor of a session on disk: `session rm` removes its
# writable layer too, not only the directory with the socket and the lock.
test_crashed_disk_session_leaves_nothing() {
	local n=t$$j
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = default\n[sandbox]\nstorage = disk\n' > "$HOME/.config/sbxrun/profiles/disk$$.ini"
	local runs=${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/run d pid run before
	before=$(ls "$runs" 2>/dev/null || true)
	"$SBX" session start -p "disk$$" --image tiny "$n" >/dev/null || fail "session start failed"
	rm -f "$HOME/.config/sbxrun/profiles/disk$$.ini"
	d=$(sock_dir "$n")
	pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$d/info.json")
	run=$runs/$(ls "$runs" | grep -vxF "$before" | head -1)
	[ -d "$run/upper" ] || fail "no writable layer on disk in '$run'"
	"$SBX" run --session "$n" -- sh -c 'echo data > /workspace/f' || fail "run in the session"
	kill -9 "$pid"
	for _ in $(seq 50); do "$SBX" session ls | grep "$n" | grep -q dead && break; sleep 0.1; done
	run "$SBX" session ls
	assert_contains "$(grep "$n" <<<"$out")" "dead" "session ls after kill -9"
	run "$SBX" session rm "$n"
	assert_status 0
	[ ! -e "$d" ] || fail "state left in $d: $(ls -la "$d")"
	[ ! -e "$run" ] || fail "writable layer left in $run: $(ls -la "$run")"
	run "$SBX" session ls
	assert_not_contains "$out" "$n"
}

# Another user made /tmp/sbxrun-UID first: the sessions of UID still start,
# in a private directory of their own, which every later command finds.
# (A uid of no account, so that the test user's own directory is untouched.)
test_runtime_dir_taken_by_another_user() {
	local uid=$((42000 + $$ % 10000)) home
	home=$(mktemp -d /tmp/sbxt-home.XXXXXX)
	chown "$uid:$uid" "$home"
	rm -rf "/tmp/sbxrun-$uid" /tmp/sbxrun-"$uid".*
	mkdir -m 0777 "/tmp/sbxrun-$uid"
	chown nobody "/tmp/sbxrun-$uid"
	as_uid() { setpriv --reuid "$uid" --regid "$uid" --clear-groups env HOME="$home" "$@"; }
	# (the trap runs after the function's locals are gone: values only)
	trap "setpriv --reuid $uid --regid $uid --clear-groups env HOME='$home' '$SBX' session stop s1 \
		>/dev/null 2>&1 || true; rm -rf '$home' '/tmp/sbxrun-$uid' /tmp/sbxrun-$uid.*" EXIT
	cd "$home"
	as_uid "$SBX" image import "$IMAGES/tiny.tar" --name tiny >/dev/null || fail "import as uid $uid"
	run as_uid "$SBX" session start --image tiny s1
	assert_status 0
	run as_uid "$SBX" run --session s1 -- echo in-s1
	assert_status 0
	assert_eq in-s1 "$out"
	run as_uid "$SBX" session ls
	assert_contains "$out" "running"
	local priv
	priv=$(readlink "$home/.local/share/sbxrun/rundir")
	case $priv in /tmp/sbxrun-$uid.??????) ;; *) fail "no private runtime directory recorded: '$priv'" ;; esac
	[ "$(stat -c '%u %a' "$priv")" = "$uid 700" ] || fail "$priv: $(stat -c '%u %a' "$priv")"
	[ -S "$priv/sessions/s1/control.sock" ] || fail "no control socket in $priv"
	[ -z "$(ls -A "/tmp/sbxrun-$uid")" ] || fail "something written into the other user's directory"
	# the other user's directory goes away: the session is still found
	rm -rf "/tmp/sbxrun-$uid"
	run as_uid "$SBX" session stop s1
	assert_status 0
}
