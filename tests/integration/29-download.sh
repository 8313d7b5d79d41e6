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
	trap "kill $SRV; '$SBX' session stop d$$ >/dev/null 2>&1; rm -f '$HOME/.config/sbxrun/profiles/dl$$.ini'" EXIT
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
