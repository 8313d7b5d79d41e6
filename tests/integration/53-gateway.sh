# also-as-root
# tier net: test_npm_install_twice_through_the_gateway_second_from_the_cache -- reaches the npm registry (a real npm install, twice)
# The package gateway (issue 27): npm in a `packages` sandbox talks plain
# HTTP to http://packages.sbxrun.internal/npm/, the host side fetches from
# the image's registry (read at import: no registry host is written here),
# checks every tarball against its packument's integrity and keeps it in a
# content-addressed cache shared by the user's sandboxes. A local fixture
# registry (tests/helper/npmreg.py, allowed as a lab mirror is) plays the
# bad upstreams. Each test has its own cache (XDG_CACHE_HOME).

gw_need_node() {
	"$SBX" image inspect node >/dev/null 2>&1 || fail "the node test image is not imported (tests/images.sh)"
}

# The package events of an events file: "NAME VERSION CACHE" lines.
gw_events() { # file
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "package":
        print(e["name"], e["version"], e["cache"], e["bytes"])' "$1" | sort
}

test_npm_install_twice_through_the_gateway_second_from_the_cache() {
	gw_need_node
	export XDG_CACHE_HOME="$TESTDIR/cache"
	local t0=$SECONDS
	run "$SBX" run -p packages --image node --events "$TESTDIR/ev1" -- sh -c '
		echo "registry=$(npm config get registry)"
		cd /tmp && npm install --no-audit --no-fund chalk@4 >/dev/null 2>npm.err || cat npm.err
		node -e "console.log(typeof require(\"/tmp/node_modules/chalk\").red === \"function\")"
		grep -c "\"resolved\": \"http://packages.sbxrun.internal/npm/" package-lock.json'
	assert_status 0
	assert_contains "$out" "registry=http://packages.sbxrun.internal/npm/"
	assert_contains "$out" "true"
	local cold
	cold=$(gw_events "$TESTDIR/ev1")
	[ "$(printf '%s\n' "$cold" | grep -c ' miss ')" -ge 6 ] || fail "cold install: $cold"
	local n
	n=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha512" | grep -vc '\.lock$\|\.tmp\.')
	[ "$n" -ge 6 ] || fail "$n tarballs in the cache"
	echo "cold install: $((SECONDS - t0))s" >&2

	# A fresh sandbox: every tarball from the cache, none from upstream;
	# npm ci checks the lockfile's integrity itself.
	t0=$SECONDS
	run "$SBX" run -p packages --image node --events "$TESTDIR/ev2" -- sh -c '
		cd /tmp && npm install --no-audit --no-fund chalk@4 >/dev/null 2>npm.err || cat npm.err
		rm -rf node_modules ~/.npm && npm ci --no-audit --no-fund >/dev/null 2>&1 && echo "ci=ok"
		node -e "const fs = require(\"fs\"), l = JSON.parse(fs.readFileSync(\"package-lock.json\"));
			const other = \"sha512-\" + require(\"crypto\").createHash(\"sha512\").update(\"x\").digest(\"base64\");
			for (const p of Object.values(l.packages)) if (p.integrity) p.integrity = other;
			fs.writeFileSync(\"package-lock.json\", JSON.stringify(l));"
		rm -rf node_modules ~/.npm && npm ci --no-audit --no-fund --fetch-retries=0 2>&1 | grep -m1 -o EINTEGRITY'
	assert_status 0
	assert_contains "$out" "ci=ok"
	assert_contains "$out" "EINTEGRITY"
	local warm
	warm=$(gw_events "$TESTDIR/ev2")
	[ -n "$warm" ] || fail "no package events"
	assert_not_contains "$warm" " miss " "second install's events"
	assert_not_contains "$warm" " shared " "second install's events"
	echo "warm install and two npm ci: $((SECONDS - t0))s" >&2
}

# Starts the fixture registry; sets REG (its pid) and RPORT, and a lab
# profile naming it as the npm upstream with a short timeout.
gw_fixture() {
	python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	REG=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	RPORT=$(head -1 "$TESTDIR/.reg-port")
	[ -n "$RPORT" ] || fail "the fixture registry did not start"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\ntimeout = 2s\n' "$RPORT" \
		> "$HOME/.config/sbxrun/profiles/gwlab$$.ini"
	trap "kill $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/gwlab$$.ini'" EXIT
}

test_gateway_refuses_bad_upstreams() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	run "$SBX" run -p "gwlab$$" --image minimal --events "$TESTDIR/ev" -- sh -c '
		get() { curl -sS -x "$npm_config_proxy" -o /tmp/body -w "$1 %{http_code}\n" "http://packages.sbxrun.internal/npm/$2"; grep -a "gateway" /tmp/body; }
		get good good/-/good-1.0.0.tgz
		get trunc trunc/-/trunc-1.0.0.tgz
		get stall stall
		get huge huge
		get other other/-/other-1.0.0.tgz
		get redir redir/-/redir-1.0.0.tgz
		get loop loop/-/loop-1.0.0.tgz
		get path "../../../etc/passwd"
		get api "-/npm/v1/security/audits/quick"
		curl -sS -x "$npm_config_proxy" -o /dev/null -w "other-endpoint %{http_code}\n" http://packages.sbxrun.internal/etc/passwd
		get bad bad/-/bad-1.0.0.tgz'
	assert_status 0
	assert_contains "$out" "good 200"
	assert_contains "$out" "trunc 502"
	assert_contains "$out" "stall 502"
	assert_contains "$out" "stalled (timed out)"
	assert_contains "$out" "huge 502"
	assert_contains "$out" "larger than the gateway's cap"
	assert_contains "$out" "other 403"
	assert_contains "$out" "host 'not-allowed.example.test' port 80 is not in profile"
	assert_contains "$out" "redir 502"
	assert_contains "$out" "host '10.1.2.3' port 80 is not in profile"
	assert_contains "$out" "loop 502"
	assert_contains "$out" "host '127.0.0.1'"
	assert_contains "$out" "path 404"
	assert_contains "$out" "api 404"
	assert_contains "$out" "other-endpoint 404"
	assert_contains "$out" "bad 502"
	assert_contains "$err" "sbxrun: gateway: npm bad@1.0.0: integrity mismatch: the index says sha512"
	assert_contains "$err" "(nothing cached)"
	assert_contains "$(cat "$TESTDIR/ev")" '"event":"package-refused"'
	# only the good tarball entered the cache; nothing half-written stays
	local files
	files=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha512" | grep -v '\.lock$\|\.meta$')
	assert_eq 1 "$(printf '%s\n' "$files" | grep -c .)" "files in the cache: $files"
}

test_kill_mid_download_leaves_nothing_served() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local dir="$XDG_CACHE_HOME/sbxrun/packages/sha512" pid
	"$SBX" run -p "gwlab$$" --image minimal -- sh -c '
		curl -sS -x "$npm_config_proxy" -o /dev/null http://packages.sbxrun.internal/npm/slow/-/slow-1.0.0.tgz' \
		>/dev/null 2>&1 &
	pid=$!
	for _ in $(seq 100); do ls "$dir" 2>/dev/null | grep -q '\.tmp\.' && break; sleep 0.1; done
	ls "$dir" | grep -q '\.tmp\.' || fail "no download under way: $(ls "$dir" 2>&1)"
	kill -9 "$pid"
	wait "$pid" 2>/dev/null || true
	assert_eq "" "$(ls "$dir" | grep -v '\.lock$\|\.tmp\.' || true)" "complete files after the kill"
	run "$SBX" cache ls
	assert_not_contains "$out" "slow" "cache ls after the kill"
	touch "$TESTDIR/reg.log.release"
	# the next request downloads it again, whole, and serves what matches
	run "$SBX" run -p "gwlab$$" --image minimal --events "$TESTDIR/ev" -- sh -c '
		curl -sS -x "$npm_config_proxy" -o /tmp/s.tgz -w "%{http_code}\n" http://packages.sbxrun.internal/npm/slow/-/slow-1.0.0.tgz
		tar -xzOf /tmp/s.tgz package/package.json'
	assert_status 0
	assert_contains "$out" "200"
	assert_contains "$out" '"name": "slow"'
	assert_contains "$(gw_events "$TESTDIR/ev")" "slow 1.0.0 miss"
	# the killed download's temporary file goes at the next eviction
	"$SBX" cache prune --older 24h >/dev/null
	assert_eq "" "$(ls "$dir" | grep '\.tmp\.' || true)" "temporary files after a prune"
}

test_two_sandboxes_at_once_make_one_download() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local a b dir="$XDG_CACHE_HOME/sbxrun/packages/sha512"
	# the first sandbox's download stays half done until the second asks too
	for n in 1 2; do
		"$SBX" run -p "gwlab$$" --image minimal --events "$TESTDIR/ev$n" -- sh -c '
			echo asking
			curl -sS -x "$npm_config_proxy" -o /tmp/s.tgz -w "%{http_code}\n" http://packages.sbxrun.internal/npm/slow/-/slow-1.0.0.tgz
			tar -xzOf /tmp/s.tgz package/package.json' > "$TESTDIR/out$n" 2>&1 &
		[ "$n" = 1 ] && a=$! || b=$!
		for _ in $(seq 200); do grep -q asking "$TESTDIR/out$n" 2>/dev/null && break; sleep 0.1; done
		[ "$n" = 2 ] || for _ in $(seq 100); do ls "$dir" 2>/dev/null | grep -q '\.tmp\.' && break; sleep 0.1; done
	done
	sleep 1  # the second sandbox's curl reaches the gateway, which finds the lock held
	touch "$TESTDIR/reg.log.release"
	wait "$a" || fail "first sandbox: $(cat "$TESTDIR/out1")"
	wait "$b" || fail "second sandbox: $(cat "$TESTDIR/out2")"
	assert_contains "$(cat "$TESTDIR/out1")" '"name": "slow"'
	assert_contains "$(cat "$TESTDIR/out2")" '"name": "slow"'
	local ev
	ev=$(cat "$TESTDIR/ev1" "$TESTDIR/ev2" > "$TESTDIR/ev" && gw_events "$TESTDIR/ev")
	assert_eq 1 "$(printf '%s\n' "$ev" | grep -c ' miss ')" "downloads: $ev"
	assert_eq 1 "$(printf '%s\n' "$ev" | grep -c ' hit ')" "from the cache: $ev"
	assert_eq 1 "$(grep -c '^slow/-/' "$TESTDIR/reg.log")" "tarball requests upstream"
}
