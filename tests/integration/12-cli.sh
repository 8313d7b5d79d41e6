# The command line from one table (issues 28, 29): every command's --help
# from src/base/options.c, a bad option named in one line (exit 125), -v as
# --verbose alone, and sentences that say what happened without errno text.

test_help_of_every_command() {
	local c
	for c in "" run shell session "session start" "session ls" "session stop" "session rm" \
		 download cp image "image build" "image import" "image ls" "image rm" \
		 "image inspect" "image export" profile "profile ls" "profile show" \
		 "profile export" mcp proxy doctor; do
		# shellcheck disable=SC2086
		run "$SBX" $c --help
		assert_status 0 "sbxrun $c --help"
		assert_contains "$out" "usage: sbxrun${c:+ $c}" "sbxrun $c --help"
		assert_contains "$out" "--verbose" "sbxrun $c --help"
		[ -z "$err" ] || fail "sbxrun $c --help wrote to stderr: $err"
	done
	run "$SBX" image --help
	assert_contains "$out" "  export [OPTIONS] SESSION|IMAGE|--snapshot SNAP -o FILE"
	assert_contains "$out" "--workspace"
	run "$SBX" image export --help
	assert_contains "$out" "--format FORMAT"
	assert_contains "$out" "--max-size SIZE"
	run "$SBX" session rm --help
	assert_contains "$out" "-f, --force"
	run "$SBX" --help
	assert_contains "$out" "--trace"
}

test_bad_options_are_named() {
	run "$SBX" image export img -o "$TESTDIR/x.tar" --frobnicate
	assert_bad_input "unknown option: '--frobnicate' (see 'sbxrun image export --help')"
	run "$SBX" image export img -o "$TESTDIR/x.tar" --format zip
	assert_bad_input "--format: invalid value 'zip' (one of: tar, oci, docker)"
	run "$SBX" image import "$TESTDIR/x.tar" --nme x
	assert_bad_input "unknown option: '--nme' (see 'sbxrun image import --help')"
	run "$SBX" image ls -z
	assert_bad_input "unknown option: '-z' (see 'sbxrun image ls --help')"
	run "$SBX" session stop --force x
	assert_bad_input "unknown option: '--force' (see 'sbxrun session stop --help')"
	run "$SBX" profile show --x default
	assert_bad_input "unknown option: '--x' (see 'sbxrun profile show --help')"
	run "$SBX" cp --max-size
	assert_bad_input "option needs a value: '--max-size' (see 'sbxrun cp --help')"
	run "$SBX" doctor --fast
	assert_bad_input "unknown option: '--fast' (see 'sbxrun doctor --help')"
	run "$SBX" --frob run -- true
	assert_bad_input "unknown option: '--frob' (see 'sbxrun --help')"
	run "$SBX" image frob
	assert_bad_input "image: unknown command 'frob' (build, import, ls, rm, inspect, export"
	[ ! -e "$TESTDIR/x.tar" ] || fail "a refused export left $TESTDIR/x.tar"
}

# -v is --verbose however often it is given; the step trace is --trace.
test_verbose_has_one_meaning() {
	run "$SBX" -v -v run --image tiny -- true
	assert_status 0
	assert_not_contains "$err" "sbxrun: trace " "-v -v"
	run "$SBX" --trace run --image tiny -- true
	assert_status 0
	assert_contains "$err" "sbxrun: trace " "--trace"
}

# A sentence that says what happened ends there: no ": No such file or
# directory" glued on. (The session ones are in 26-session.sh.)
test_messages_carry_no_errno_suffix() {
	run "$SBX" run -p no-such-profile-$$ -- true
	assert_bad_input "profile 'no-such-profile-$$' not found in"
	assert_not_contains "$err" "No such file" "profile not found"
	run "$SBX" session rm nosuch$$
	assert_bad_input "no session 'nosuch$$'"
	assert_not_contains "$err" "No such file" "session rm"
	run "$SBX" run --session nosuch$$ -- true
	assert_bad_input "session 'nosuch$$' is not running"
	assert_not_contains "$err" "No such file" "run --session"
	mkdir "$TESTDIR/d.ini"
	run "$SBX" run -p "$TESTDIR/d.ini" -- true
	assert_bad_input "Is a directory" # here the errno is what there is to say
}
