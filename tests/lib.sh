# tests/lib.sh - assert helpers for the integration tests (sourced).
# A test file defines functions named test_*; tests/run_file.sh runs each in
# a subshell. Available: $SBX (the binary), $TESTDIR (fresh temp dir per
# test), $IMAGES (tarballs), $AS_ROOT (1 when running as root).

fail() { echo "    $*" >&2; exit 1; }
skip() { echo "$*" > "$TESTDIR/.skip"; exit 77; }

assert_eq() { # expected actual [what]
	[ "$1" = "$2" ] || fail "${3:-value}: expected '$1', got '$2'"
}
assert_ne() {
	[ "$1" != "$2" ] || fail "${3:-value}: expected something other than '$1'"
}
assert_contains() { # haystack needle [what]
	case "$1" in *"$2"*) ;; *) fail "${3:-output} does not contain '$2': $(printf '%s' "$1" | head -c 600)" ;; esac
}
assert_not_contains() {
	case "$1" in *"$2"*) fail "${3:-output} contains '$2': $(printf '%s' "$1" | head -c 600)" ;; esac
}
# Runs a command, keeping status, stdout and stderr in $status $out $err.
run() {
	set +e
	"$@" > "$TESTDIR/.out" 2> "$TESTDIR/.err"
	status=$?
	set -e
	out=$(cat "$TESTDIR/.out")
	err=$(cat "$TESTDIR/.err")
}
assert_status() { # expected [what]
	[ "$status" = "$1" ] || fail "${2:-status}: expected $1, got $status; stderr: $(printf '%s' "$err" | head -c 800)"
}
# One line on stderr naming the culprit, exit 125.
assert_bad_input() { # needle
	assert_status 125
	assert_contains "$err" "$1" stderr
	[ "$(printf '%s\n' "$err" | grep -c .)" -le 2 ] || fail "more than one error line: $err"
}

# at_exit CMD: CMD is run when the test's shell exits, after those added
# before it: a fixture's clean-up and start_session's share the one EXIT
# trap instead of replacing each other's. One that fails (a server already
# gone) neither stops the rest nor, under set -e, turns a pass into a failure.
exit_cmds=()
at_exit() {
	exit_cmds+=("$1")
	trap 'for c in "${exit_cmds[@]}"; do eval "$c" || true; done' EXIT
}

# A session for this test (start options after the name), stopped with
# every other one it started when the test's shell exits.
sessions=()
start_session() { # name [options]
	local name=$1; shift
	"$SBX" session start "$@" "$name" >/dev/null || fail "session start $name failed"
	[ ${#sessions[@]} -gt 0 ] || at_exit 'for s in "${sessions[@]}"; do "$SBX" session stop "$s" >/dev/null 2>&1 || true; done'
	sessions+=("$name")
}

# Where tmpfs storage goes on this kernel (sbxrun doctor's storage line):
# tmpfs; fuse-overlayfs+tmpfs before Linux 6.6 (no user xattrs on tmpfs for
# the kernel's overlay), where FUSE is usable (not for root); else disk.
storage_detail() {
	case $("$SBX" doctor 2>/dev/null | sed -n 's/^storage  *//p') in
	ok:*fuse-overlayfs*) echo fuse-overlayfs+tmpfs ;;
	ok:*tmpfs*) echo tmpfs ;;
	*disk*) echo disk ;;
	*) echo unknown ;;
	esac
}
# The same, as where the quota is exact: "tmpfs" (either) or "disk".
storage_mode() {
	case $(storage_detail) in
	*tmpfs) echo tmpfs ;;
	*) storage_detail ;;
	esac
}

# A write past the quota was stopped: ENOSPC on tmpfs; with storage on disk
# one file stops at the quota (EFBIG) and the sandbox is ended past it.
assert_quota_stopped() { # output-with-stderr
	if [ "$(storage_mode)" = disk ]; then
		case "$1" in
		*"No space left on device"* | *"File too large"* | *"File size limit exceeded"* | *"disk quota"*) ;;
		*) fail "no quota stop (storage on disk): $(printf '%s' "$1" | head -c 600)" ;;
		esac
	else
		assert_contains "$1" "No space left on device" "a write past the quota"
	fi
}

# Starts tests/helper/httpd.py on 127.0.0.1 serving DIR (default: the test's
# directory); sets SRV (its pid, for the caller to kill) and PORT.
http_serve() { # [dir]
	python3 -u "$TOP/tests/helper/httpd.py" "${1:-.}" > "$TESTDIR/.httpd-port" &
	SRV=$!
	# a minute: python's start-up in CI's emulated VM, beside other work
	for _ in $(seq 600); do
		[ -s "$TESTDIR/.httpd-port" ] && break
		kill -0 "$SRV" 2>/dev/null || break
		sleep 0.1
	done
	PORT=$(head -1 "$TESTDIR/.httpd-port")
	[ -n "$PORT" ] || fail "the test's HTTP server did not start (tests/helper/httpd.py)"
}

# Waits until `sbxrun proxy --listen 127.0.0.1:0` (pid PID, its stderr in
# ERRFILE) says where it listens; sets LISTEN_PORT.
listen_port() { # pid errfile
	for _ in $(seq 50); do
		LISTEN_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$2")
		[ -n "$LISTEN_PORT" ] && return 0
		kill -0 "$1" 2>/dev/null || fail "sbxrun proxy ended: $(cat "$2")"
		sleep 0.1
	done
	fail "sbxrun proxy did not say where it listens: $(cat "$2")"
}

# Runs CMD (sh -c) on a fresh pseudo-terminal of its own, as a terminal
# session would (python3's pty: the shell is the terminal's foreground);
# everything written to the terminal goes to $TESTDIR/screen (25-tty,
# 60-project).
on_pty() {
	python3 - "$1" > "$TESTDIR/screen" <<'PY'
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", sys.argv[1]])
out, end = b"", time.time() + 60
while time.time() < end:
    if select.select([fd], [], [], 0.5)[0]:
        try:
            d = os.read(fd, 65536)
        except OSError:
            break
        if not d:
            break
        out += d
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
PY
}

# A real terminal driven through tmux (25-tty, 56-live-net): tmux_start
# starts CMD in a detached tmux session of its own and prints its name;
# screen shows it, keys types into it, wait_for waits for text on it.
tmux_start() {
	local name="sbx$$$RANDOM"
	tmux -L "$name" new-session -d -s "$name" -x 100 -y 30 "$1" || fail "tmux did not start"
	echo "$name"
}
screen() { tmux -L "$1" capture-pane -p -t "$1"; }
keys() { local s=$1; shift; tmux -L "$s" send-keys -t "$s" "$@"; }
wait_for() { # session text [seconds]
	for _ in $(seq $((${3:-10} * 10))); do screen "$1" | grep -qF -- "$2" && return 0; sleep 0.1; done
	fail "screen never showed '$2': $(screen "$1")"
}

# The official MCP TypeScript SDK client (tests/mcp/*.mjs drive `sbxrun mcp`
# with it) in ./sdk, from the registry npm is configured with: the net tier.
# Node.js and npm are there on CI: no skip under CI=true.
install_sdk() {
	if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
		[ "${CI:-}" = true ] && fail "node and npm are required under CI=true"
		skip "node or npm is not installed"
	fi
	mkdir -p sdk
	(cd sdk && npm install --no-audit --no-fund --loglevel=error "@modelcontextprotocol/sdk@1.32.2" >npm.log 2>&1) ||
		fail "npm install of the MCP SDK failed: $(tail -5 sdk/npm.log)"
	cp "$TOP"/tests/mcp/*.mjs sdk/
}
