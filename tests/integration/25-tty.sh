# The interactive terminal: run -t and shell on a real pseudo-terminal,
# driven through tmux (issue 7, terminal part).

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


# The command changes the caller's terminal through the stdin it inherits
# (no -t): sbxrun puts the settings back, also after a timeout and a SIGTERM.
test_terminal_settings_are_restored_without_a_tty_of_its_own() {
	on_pty "stty -g > before
		'$SBX' run --image tiny -- busybox stty raw -echo; echo \$? > st1; stty -g > after1
		'$SBX' run --image tiny --timeout 1s -- sh -c 'busybox stty raw -echo; sleep 30'
		echo \$? > st2; stty -g > after2
		'$SBX' run --image tiny -- sh -c 'busybox stty raw -echo; echo ready; sleep 30' < /dev/tty > o 2>&1 &
		p=\$!; for i in \$(seq 100); do grep -q ready o && break; sleep 0.1; done
		kill -TERM \$p; wait \$p; echo \$? > st3; stty -g > after3"
	assert_eq 0 "$(cat st1)" "stty raw inside"
	assert_eq 124 "$(cat st2)" "the timed-out run"
	assert_eq 143 "$(cat st3)" "the run ended by SIGTERM"
	assert_contains "$(cat o)" ready
	assert_eq "$(cat before)" "$(cat after1)" "terminal settings after a run"
	assert_eq "$(cat before)" "$(cat after2)" "terminal settings after a timeout"
	assert_eq "$(cat before)" "$(cat after3)" "terminal settings after SIGTERM to sbxrun"
}

# OSC 52 would set the clipboard of the caller's desktop; queries would type
# their answers into the caller's shell. Colours pass; --raw-tty passes all.
test_clipboard_and_query_escapes_are_filtered_on_a_terminal() {
	on_pty "'$SBX' run --image tiny -- printf 'A\033]52;c;aGk=\007B\033[31mred\033[0m\033[6n\033]2;ttl\007\n'
		'$SBX' run --image tiny -- sh -c 'printf \"E\033]52;c;ZXJy\007F\n\" >&2'
		echo ---; '$SBX' run --image tiny --raw-tty -- printf 'C\033]52;c;aGk=\007D\n'"
	local filtered raw
	filtered=$(sed -n '1,/^---/p' "$TESTDIR/screen")
	raw=$(sed -n '/^---/,$p' "$TESTDIR/screen")
	assert_contains "$filtered" "AB"
	assert_contains "$filtered" "EF"
	assert_not_contains "$filtered" "52;" "what reached the terminal"
	assert_not_contains "$filtered" "$(printf '\033[6n')" "what reached the terminal"
	assert_contains "$filtered" "$(printf '\033[31mred\033[0m')" "colours on the terminal"
	assert_contains "$filtered" "$(printf '\033]2;ttl\007')" "a title on the terminal"
	assert_contains "$raw" "$(printf 'C\033]52;c;aGk=\007D')" "--raw-tty"
	# not a terminal: the bytes pass untouched, as they always did
	run "$SBX" run --image tiny -- printf 'A\033]52;c;aGk=\007B'
	assert_eq "$(printf 'A\033]52;c;aGk=\007B')" "$out"
}

test_terminal_is_held_in_a_session_too() {
	local n=tty$$
	"$SBX" session start --image tiny "$n" >/dev/null || fail "session start failed"
	at_exit "'$SBX' session stop '$n' >/dev/null 2>&1 || true"
	on_pty "stty -g > before
		'$SBX' run --session $n -- sh -c 'busybox stty raw -echo; printf \"A\033]52;c;aGk=\007B\n\"'
		stty -g > after"
	assert_eq "$(cat before)" "$(cat after)" "terminal settings after a run in a session"
	assert_contains "$(cat "$TESTDIR/screen")" "AB"
	assert_not_contains "$(cat "$TESTDIR/screen")" "52;" "what reached the terminal"
}
