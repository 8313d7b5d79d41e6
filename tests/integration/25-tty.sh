# The interactive terminal: run -t and shell on a real pseudo-terminal,
# driven through tmux (issue 7, terminal part).

# Starts CMD in a detached tmux session of its own; prints the session name.
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

test_run_t_gives_a_terminal_with_size_and_job_control() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	local s
	s=$(tmux_start "stty -g > $TESTDIR/before; '$SBX' run -t -- bash --norc -i; echo EXIT=\$? > $TESTDIR/exit; stty -g > $TESTDIR/after; sleep 60")
	wait_for "$s" "#"
	keys "$s" 'tty; stty size' Enter
	wait_for "$s" "30 100"
	assert_contains "$(screen "$s")" "/dev/pts/0"
	keys "$s" 'sleep 50' Enter; sleep 0.3; keys "$s" C-c
	keys "$s" 'echo after-int' Enter
	wait_for "$s" "after-int"
	keys "$s" 'sleep 40' Enter; sleep 0.3; keys "$s" C-z
	wait_for "$s" "Stopped"
	keys "$s" 'fg' Enter; sleep 0.3; keys "$s" C-c
	tmux -L "$s" resize-window -t "$s" -x 80 -y 20; sleep 0.3
	keys "$s" 'stty size' Enter
	wait_for "$s" "20 80"
	keys "$s" 'exit 5' Enter
	for _ in $(seq 50); do [ -s "$TESTDIR/exit" ] && break; sleep 0.1; done
	tmux -L "$s" kill-server
	assert_eq "EXIT=5" "$(cat "$TESTDIR/exit")"
	assert_eq "$(cat "$TESTDIR/before")" "$(cat "$TESTDIR/after")" "terminal settings after the run"
}

test_shell_is_a_login_shell_on_a_terminal() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	local s
	s=$(tmux_start "'$SBX' shell --hostname labbox; echo EXIT=\$? > $TESTDIR/exit; sleep 60")
	wait_for "$s" "root@labbox"
	keys "$s" 'shopt -q login_shell && echo is-login; tty' Enter
	wait_for "$s" "is-login"
	keys "$s" 'exit' Enter
	for _ in $(seq 50); do [ -s "$TESTDIR/exit" ] && break; sleep 0.1; done
	tmux -L "$s" kill-server
	assert_eq "EXIT=0" "$(cat "$TESTDIR/exit")"
}

test_shell_reads_stdin_when_not_a_terminal() {
	run sh -c "printf 'echo from-stdin; exit 4\n' | '$SBX' shell"
	assert_status 4
	assert_eq "from-stdin" "$out"
}

test_terminal_cannot_be_fed_keystrokes_to_the_caller() {
	# A command with -t talks to its own devpts; TIOCSTI on it reaches only it.
	run "$SBX" run -t --image tiny -- sh -c 'ls /dev/pts; readlink /proc/self/fd/0'
	assert_status 0
	assert_contains "$out" "/dev/pts/0"
}
