# The teaching-lab scenario of docs/design.md, end to end, as the unprivileged
# user (issues 7 and 8): start a packages session, install a package, download
# a file into it from the host side, work in a shell, export, stop.

test_teaching_lab_end_to_end() {
	echo "course data" > handout.txt
	http_serve
	local srv=$SRV port=$PORT
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[download]\nallow = host.sbxrun.internal:%s\n' "$port" > "$HOME/.config/sbxrun/profiles/lab$$.ini"
	local n=alice$$
	"$SBX" session start --profile "lab$$" "$n" >/dev/null || fail "session start"
	at_exit "kill $srv 2>/dev/null || true; '$SBX' session stop '$n' >/dev/null 2>&1 || true; rm -f '$HOME/.config/sbxrun/profiles/lab$$.ini'"

	run "$SBX" run --session "$n" -- sh -c 'apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends sl >/dev/null 2>&1; ls /usr/games/sl'
	assert_eq /usr/games/sl "$out" "$err"
	run "$SBX" download --session "$n" "http://host.sbxrun.internal:$port/handout.txt" handout.txt
	assert_status 0
	run sh -c "printf 'cat handout.txt > answer.txt; echo my answer >> answer.txt; python3 -c \"print(6*7)\" >> answer.txt; ls /usr/games/sl; exit 0\n' | '$SBX' shell --session '$n'"
	assert_status 0
	assert_contains "$out" "/usr/games/sl"
	run python3 -c 'import urllib.request' # the host is fine; inside:
	run "$SBX" run --session "$n" -- python3 -c 'import urllib.request; urllib.request.urlopen("http://192.0.2.10/", timeout=5)'
	assert_contains "$err" "Network is unreachable"
	run "$SBX" image export "$n" --workspace -o "$TESTDIR/alice.tar.zst"
	assert_status 0
	mkdir got && tar --zstd -C got -xf alice.tar.zst
	assert_eq "course data
my answer
42" "$(cat got/answer.txt)"
	run "$SBX" session stop "$n"
	assert_status 0
	run "$SBX" session ls
	assert_not_contains "$out" "$n"
}
