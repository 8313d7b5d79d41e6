# also-as-root
# Host-side download into a session's workspace (issue 8).

# The test HTTP server (http_serve: redirects on /to-*), a profile that
# allows it for download, and a session.
serve() {
	echo hello > small.txt
	head -c 200000 /dev/zero > big.bin
	http_serve
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = default\n[download]\nallow = host.sbxrun.internal:%s\nmax_size = 100K\n' "$PORT" \
		> "$HOME/.config/sbxrun/profiles/dl$$.ini"
	"$SBX" session start --image tiny "d$$" >/dev/null
	at_exit "kill $SRV; '$SBX' session stop d$$ >/dev/null 2>&1; rm -f '$HOME/.config/sbxrun/profiles/dl$$.ini'"
}
dl() { run "$SBX" download --session "d$$" -p "dl$$" "$@"; }
U() { echo "http://host.sbxrun.internal:$PORT$1"; }

test_download_into_the_workspace() {
	serve
	dl "$(U /small.txt)" got.txt
	assert_status 0
	run "$SBX" run --session "d$$" -- cat /workspace/got.txt
	assert_eq hello "$out"
	dl "$(U /to-ok)" sub-missing/x
	assert_bad_input "sub-missing"
	dl "$(U /to-ok)" via-redirect
	assert_status 0
	dl --sha256 "$(sha256sum small.txt | cut -c1-64)" "$(U /small.txt)" checked
	assert_status 0
}

test_refusals() {
	serve
	dl "http://127.0.0.1:$PORT/small.txt" x;  assert_bad_input "not in [download] allow"
	dl "$(U /to-file)" x;                      assert_bad_input "only http and https"
	dl "$(U /to-other)" x;                     assert_bad_input "not-allowed.example.test"
	dl "$(U /to-private)" x;                   assert_bad_input "10.1.2.3"
	dl "$(U /to-meta)" x;                      assert_bad_input "169.254.169.254"
	dl "$(U /big.bin)" x;                      assert_bad_input "max_size"
	dl --sha256 "$(printf '0%.0s' $(seq 64))" "$(U /small.txt)" x; assert_bad_input "SHA-256 mismatch"
	dl "$(U /small.txt)" ../x;                 assert_bad_input "'..'"
	dl "$(U /small.txt)" /etc/x;               assert_bad_input "relative"
	run "$SBX" run --session "d$$" -- ls -A /workspace
	assert_eq "" "$out" "workspace after refusals"
}

test_planted_symlink_and_fifo_are_not_followed() {
	serve
	echo host-secret > secret
	"$SBX" run --session "d$$" -- sh -c "ln -s '$TESTDIR' /workspace/out; ln -s '$TESTDIR/secret' /workspace/s; mkfifo /workspace/f"
	dl "$(U /small.txt)" out/x
	assert_bad_input "symlink"
	[ ! -e "$TESTDIR/x" ] || fail "wrote through a planted symlink"
	dl "$(U /small.txt)" s
	assert_status 0
	assert_eq host-secret "$(cat secret)"
	timeout 20 "$SBX" download --session "d$$" -p "dl$$" "$(U /small.txt)" f || fail "download onto a FIFO hung or failed"
	run "$SBX" run --session "d$$" -- sh -c 'cat /workspace/s /workspace/f'
	assert_eq "hello
hello" "$out"
}

test_download_without_session_stays_below_cwd() {
	serve
	mkdir -p dest
	(cd dest && "$SBX" download -p "dl$$" "$(U /small.txt)" a.txt) || fail "download to cwd failed"
	assert_eq hello "$(cat dest/a.txt)"
	ln -s /tmp dest/link
	run sh -c "cd dest && '$SBX' download -p dl$$ '$(U /small.txt)' link/b.txt"
	assert_bad_input "symlink"
}

# Issue 26: a server that drips 2 bytes a second is stopped by the speed
# floor and by the deadline (short ones here), into a session and onto the
# host, and nothing is left: not in the workspace, not in the staging
# directory (the user's cache), not beside a host DEST.
limits_profiles() {
	printf 'inherit = dl%s\n[download]\nmin_speed_time = 2s\n' "$$" > "$HOME/.config/sbxrun/profiles/slow$$.ini"
	printf 'inherit = dl%s\n[download]\nmin_speed_time = none\ntimeout = 2s\n' "$$" \
		> "$HOME/.config/sbxrun/profiles/late$$.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/slow$$.ini' '$HOME/.config/sbxrun/profiles/late$$.ini'"
	export XDG_CACHE_HOME="$TESTDIR/cache"
}
nothing_left() { # what
	run "$SBX" run --session "d$$" -- ls -A /workspace
	assert_eq "" "$out" "workspace after $1"
	assert_eq "" "$(ls -A host 2>/dev/null)" "host DEST directory after $1"
	assert_eq "" "$(find "$XDG_CACHE_HOME" -name '*download*' 2>/dev/null)" "staging directory after $1"
}

test_stalled_download_is_stopped() {
	serve
	limits_profiles
	mkdir host
	local t0=$SECONDS
	run "$SBX" download -p "slow$$" "$(U /drip)" "d$$:drip"
	assert_bad_input "download '$(U /drip)': stopped: slower than 1K bytes a second for 2s ([download] min_speed, min_speed_time)"
	run sh -c "cd host && exec '$SBX' download -p late$$ '$(U /drip)' drip"
	assert_bad_input "stopped at its 2s deadline ([download] timeout)"
	[ $((SECONDS - t0)) -lt 15 ] || fail "two 2 s limits took $((SECONDS - t0)) s"
	nothing_left "stopped downloads"
	printf '[download]\ntimeout = 0\n' > "$HOME/.config/sbxrun/profiles/late$$.ini"
	run "$SBX" download -p "late$$" "$(U /small.txt)" "d$$:x"
	assert_bad_input "late$$.ini:2: timeout: '0': zero is not a limit (use 'none' for no limit)"
}

# The caller's current directory is none of download's business: from a
# directory the user cannot write, SESSION:DEST works and leaves nothing.
test_session_download_from_an_unwritable_directory() {
	serve
	mkdir ro && chmod 0555 ro
	(cd ro && "$SBX" download -p "dl$$" "$(U /small.txt)" "d$$:in-ws.txt") || fail "download from a 0555 directory"
	(cd / && "$SBX" download --session "d$$" -p "dl$$" "$(U /small.txt)" from-root.txt) || fail "download from /"
	run "$SBX" run --session "d$$" -- cat /workspace/in-ws.txt /workspace/from-root.txt
	assert_eq "hello
hello" "$out"
	assert_eq "" "$(ls -A ro)" "the current directory"
	! ls -A / | grep -q "^d$$:\|^\.sbxrun-download-" || fail "download wrote into /"
	run "$SBX" download -p "dl$$" "$(U /small.txt)" "other$$:x"
	assert_bad_input "session 'other$$' is not running"
	run "$SBX" download --session "d$$" -p "dl$$" "$(U /small.txt)" "other$$:x"
	assert_bad_input "but --session says 'd$$'"
}

# SIGTERM into the session, SIGINT (Ctrl-C; a background job of a script
# ignores it unless reset) onto the host.
test_a_signal_mid_download_leaves_nothing() {
	serve
	limits_profiles
	mkdir host
	"$SBX" download -p "dl$$" "$(U /drip)" "d$$:drip" 2>/dev/null &
	local a=$!
	(cd host && exec env --default-signal=INT "$SBX" download -p "dl$$" "$(U /drip)" drip 2>/dev/null) &
	local b=$!
	sleep 1.5
	kill -0 "$a" && kill -0 "$b" || fail "the downloads ended before the signal"
	run "$SBX" run --session "d$$" -- ls -A /workspace
	assert_eq "" "$out" "workspace during a download (staged outside)"
	kill -TERM "$a"
	kill -INT "$b"
	local sa=0 sb=0
	wait "$a" || sa=$?
	wait "$b" || sb=$?
	assert_eq "143 130" "$sa $sb" "exit statuses after SIGTERM and SIGINT"
	nothing_left "SIGTERM and SIGINT"
}
