# also-as-root
# user-only: test_debian_npm_installs_hundreds_of_packages test_gateway_holds_unread_answers_on_disk
# tier net: test_npm_install_twice_through_the_gateway_second_from_the_cache -- reaches the npm registry (a real npm install, twice)
# tier net: test_a_real_project_installed_tested_reviewed_and_applied -- reaches the npm registry (jest and its 300 packages)
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
	at_exit "kill $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/gwlab$$.ini'"
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
	# (its packument is there, complete: an index document)
	assert_not_contains "$(printf '%s\n' "$out" | grep -v ' (index) ')" "slow" "cache ls after the kill"
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

# libcurl (with its TLS library) is loaded into the host side by the
# gateway's first fetch, not when the gateway is made: loading it in every
# `packages` sandbox held the host side from supervising for 5-12 ms, so
# the command started later and its end was seen later (issue 34, point 8;
# bench/netstart.sh times it). The sandbox waits at each step for a file
# the test makes; the host side's maps are read in between.
test_gateway_loads_libcurl_at_its_first_fetch() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	mkdir -p "$TESTDIR/sync"
	local pid before after
	"$SBX" run -p "gwlab$$" --image minimal --bind "$TESTDIR/sync:/sync" -- sh -c '
		echo up
		while [ ! -e /sync/fetch ]; do sleep 0.05; done
		curl -sS -x "$npm_config_proxy" -o /dev/null -w "good %{http_code}\n" http://packages.sbxrun.internal/npm/good/-/good-1.0.0.tgz
		while [ ! -e /sync/end ]; do sleep 0.05; done' > "$TESTDIR/out" 2>&1 &
	pid=$!
	# the maps read in between; the sandbox let go before any assertion
	for _ in $(seq 200); do grep -q up "$TESTDIR/out" 2>/dev/null && break; sleep 0.1; done
	before=$(cat "/proc/$pid/maps")
	touch "$TESTDIR/sync/fetch"
	for _ in $(seq 200); do grep -q 'good ' "$TESTDIR/out" && break; sleep 0.1; done
	after=$(cat "/proc/$pid/maps")
	touch "$TESTDIR/sync/end"
	wait "$pid" || fail "the sandbox: $(cat "$TESTDIR/out")"
	assert_contains "$(cat "$TESTDIR/out")" "good 200"
	assert_contains "$before" "sbxrun" "the host side's maps"
	assert_not_contains "$before" "libcurl" "the host side's maps before any fetch"
	assert_contains "$after" "libcurl" "the host side's maps after a fetch"
}

# The package rules of [packages] (allow, deny, min_age, offline): a
# profile over the fixture lab's, by the lines given.
gw_rules_profile() { # name lines
	printf 'inherit = gwlab%s\n[packages]\n%b' "$$" "$2" > "$HOME/.config/sbxrun/profiles/$1$$.ini"
	echo "$1$$"
}

# The refusal events of an events file: "NAME VERSION STATUS RULE" lines
# (STATUS "report" for what [packages] mode = report served).
gw_refusals() { # file
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "package-refused":
        st = e["status"] if e["decision"] == "enforce" else e["decision"]
        print(e["name"] or "-", e["version"] or "-", st, e.get("rule", "-"))' "$1" | sort
}

# One sandbox asks the fixture lab's gateway for npm paths: "LABEL PATH"
# pairs; prints "LABEL STATUS" and the body's first line for each.
gw_ask() { # profile events pairs...
	local p=$1 ev=$2
	shift 2
	run "$SBX" run -p "$p" --image minimal --events "$ev" -- sh -c '
		while [ $# -gt 1 ]; do
			if [ "$1" = until200 ]; then  # up to 30 s for PATH to be served
				for i in $(seq 120); do
					[ "$(curl -s -x "$npm_config_proxy" -o /dev/null -w "%{http_code}" "http://packages.sbxrun.internal/npm/$2")" = 200 ] && break
					sleep 0.25
				done
				shift 2; continue
			fi
			curl -sS -x "$npm_config_proxy" -o /tmp/body -w "$1 %{http_code}\n" "http://packages.sbxrun.internal/npm/$2"
			tr -d "\000" < /tmp/body | head -c 600 | head -1; echo
			shift 2
		done' sh "$@"
}

test_gateway_rules_allow_deny_and_min_age() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p
	p=$(gw_rules_profile rules 'allow = npm:aged\nallow = npm:withdep\nallow = npm:evil*\ndeny = npm:evil*\nmin_age = 7d\n')
	gw_ask "$p" "$TESTDIR/ev" off left-pad offtar left-pad/-/left-pad-1.0.0.tgz dep withdep depoff depoff \
		evil evil-x aged aged again aged young aged/-/aged-2.0.0.tgz mature aged/-/aged-1.1.0.tgz
	assert_status 0
	# off the allow list, and a dependency off it: refused with its name,
	# as npm shows it (the JSON body's "error"); never asked upstream
	assert_contains "$out" "off 403"
	assert_contains "$out" '{"error":"sbxrun package gateway: npm '"'left-pad'"' is not on the allow list ([packages] allow, '
	assert_contains "$out" "offtar 403"
	assert_contains "$out" "dep 200"
	assert_contains "$out" "depoff 403"
	assert_contains "$out" "npm 'depoff' is not on the allow list"
	# deny wins over allow
	assert_contains "$out" "evil 403"
	assert_contains "$out" "npm 'evil-x' is denied by [packages] deny = npm:evil* ($HOME/.config/sbxrun/profiles/$p.ini:6)"
	# min_age: 2.0.0 (two days old) hidden, latest back on 1.1.0
	assert_contains "$out" "aged 200"
	local doc
	doc=$(printf '%s\n' "$out" | grep -A1 '^aged 200' | tail -1)
	assert_contains "$doc" '"dist-tags":{"latest":"1.1.0"}'
	assert_contains "$doc" '"1.0.0":{'
	assert_not_contains "$doc" '2.0.0' "the served packument"
	# a pin to it (a lockfile's) is refused with package, version, age and rule
	assert_contains "$out" "young 403"
	assert_contains "$out" "npm aged@2.0.0: published 2 days ago, [packages] min_age is 7 days"
	assert_contains "$out" "mature 200"
	# sbxrun's own line for the hidden version: once, though asked twice
	assert_eq 1 "$(printf '%s\n' "$err" | grep -cF "sbxrun: gateway: npm 'aged': 1 version younger than [packages] min_age (7 days) hidden: 2.0.0 (published 2 days ago)")" "$err"
	assert_contains "$err" "sbxrun: gateway: npm 'depoff' is not on the allow list"
	local refused
	refused=$(gw_refusals "$TESTDIR/ev")
	assert_contains "$refused" "left-pad - 403 allow"
	assert_contains "$refused" "left-pad 1.0.0 403 allow"
	assert_contains "$refused" "depoff - 403 allow"
	assert_contains "$refused" "evil-x - 403 deny = npm:evil*"
	assert_contains "$refused" "aged 2.0.0 403 min_age = 7 days"
	assert_contains "$(gw_events "$TESTDIR/ev")" "aged 1.1.0 miss"
	# nothing refused by name reached the upstream; the age rule asked for the full packument
	assert_eq "" "$(grep -E '^(left-pad|depoff|evil-x)' "$TESTDIR/reg.log" || true)" "upstream requests"
	assert_eq 0 "$(grep -c 'aged-2.0.0' "$TESTDIR/reg.log")" "young tarball requests upstream"
}

# [packages] mode = report: what the rules would refuse (deny, allow, min_age,
# not_after, malicious) is served, nothing hidden from the packument, and
# told: a package-refused event with "decision": "report" once per package,
# version and rule, one stderr line per package and rule. offline is no
# rule of theirs: it refuses as before.
test_gateway_report_mode_serves_and_tells() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p t0=$SECONDS
	p=$(gw_rules_profile report 'allow = npm:aged\nallow = npm:evil*\ndeny = npm:evil*\nmin_age = 7d\nmode = report\n')
	gw_ask "$p" "$TESTDIR/ev" evil evil-x eviltar evil-x/-/evil-x-1.0.0.tgz off left-pad aged aged \
		again aged young aged/-/aged-2.0.0.tgz
	assert_status 0
	assert_contains "$out" "evil 200"
	assert_contains "$out" "eviltar 200"
	assert_contains "$out" "off 200"
	assert_contains "$out" "young 200"
	# nothing hidden: 2.0.0 stays the latest
	local doc
	doc=$(printf '%s\n' "$out" | grep -A1 '^aged 200' | head -2 | tail -1)
	assert_contains "$doc" '"dist-tags":{"latest":"2.0.0"}'
	assert_not_contains "$err" "hidden" "report mode's stderr"
	# one line a package and rule, though asked twice and by two paths
	assert_eq 1 "$(printf '%s\n' "$err" | grep -cF "sbxrun: gateway: report: npm 'evil-x' would be refused: npm 'evil-x' is denied by [packages] deny = npm:evil* ($HOME/.config/sbxrun/profiles/$p.ini:5) (served: [packages] mode = report)")" "$err"
	assert_eq 1 "$(printf '%s\n' "$err" | grep -cF "sbxrun: gateway: report: npm 'aged' would be refused: published 2 days ago, [packages] min_age is 7 days (served: [packages] mode = report)")" "$err"
	assert_contains "$err" "sbxrun: gateway: report: npm 'left-pad' would be refused: npm 'left-pad' is not on the allow list"
	local refused
	refused=$(gw_refusals "$TESTDIR/ev")
	assert_contains "$refused" "evil-x - report deny = npm:evil*"
	assert_contains "$refused" "left-pad - report allow"
	assert_contains "$refused" "aged 2.0.0 report min_age = 7 days"
	assert_not_contains "$refused" " 403 " "report mode's events"
	assert_eq 1 "$(printf '%s\n' "$refused" | grep -c '^aged 2.0.0 ')" "$refused"
	# served means fetched: the young tarball came from upstream
	assert_contains "$(gw_events "$TESTDIR/ev")" "aged 2.0.0 miss"
	assert_contains "$(gw_events "$TESTDIR/ev")" "evil-x 1.0.0 miss"
	# offline is no rule report mode relaxes: what the cache lacks is refused
	p=$(gw_rules_profile reportoff 'mode = report\noffline = yes\n')
	gw_ask "$p" "$TESTDIR/ev2" gone withdep
	assert_status 0
	assert_contains "$out" "gone 503"
	assert_contains "$out" "offline: npm 'withdep' is not in the cache"
	assert_contains "$(gw_refusals "$TESTDIR/ev2")" "withdep - 503 offline"
	echo "report mode: $((SECONDS - t0))s" >&2
}

# [packages] not_after (the registry as it was on a date) and malicious (an
# OSV feed, the OpenSSF format): what each names is hidden from the
# packument and refused as a pin (a lockfile's), with the rule and the
# record; a feed that cannot be read is no gateway at all (125).
test_gateway_not_after_and_a_malicious_feed() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p d feed="$TESTDIR/osv"
	d=$(date -u -d '25 days ago' +%F)
	mkdir -p "$feed/npm/withdep" "$feed/npm/aged"
	printf '{"id":"MAL-2099-1","affected":[{"package":{"ecosystem":"npm","name":"withdep"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"}]}]}]}' \
		> "$feed/npm/withdep/MAL-2099-1.json"
	printf '{"id":"MAL-2099-2","affected":[{"package":{"ecosystem":"npm","name":"aged"},"versions":["1.1.0"]}]}' \
		> "$feed/npm/aged/MAL-2099-2.json"
	# the ecosystem's own date wins over the one for all (2000-01-01 would
	# hide every version)
	p=$(gw_rules_profile when "not_after = 2000-01-01\nnot_after = npm:$d\nnot_after = deb:none\n")
	gw_ask "$p" "$TESTDIR/ev" aged aged old aged/-/aged-1.0.0.tgz later aged/-/aged-1.1.0.tgz
	assert_status 0
	local doc
	doc=$(printf '%s\n' "$out" | grep -A1 '^aged 200' | tail -1)
	assert_contains "$doc" '"dist-tags":{"latest":"1.0.0"}'
	assert_not_contains "$doc" '1.1.0' "the packument as it was $d"
	assert_contains "$out" "old 200"
	assert_contains "$out" "later 403"
	assert_contains "$out" "npm aged@1.1.0: published $(date -u -d '20 days ago' +%F)"
	assert_contains "$out" ", after [packages] not_after = npm:$d"
	assert_contains "$err" "sbxrun: gateway: npm 'aged': 2 versions under [packages] not_after = npm:$d hidden: 2.0.0 (published 2 days ago), 1.1.0 (published 20 days ago)"
	assert_contains "$(gw_refusals "$TESTDIR/ev")" "aged 1.1.0 403 not_after = npm:$d"

	p=$(gw_rules_profile feed "malicious = $feed\n")
	gw_ask "$p" "$TESTDIR/ev2" whole withdep wholetar withdep/-/withdep-1.0.0.tgz aged aged \
		pin aged/-/aged-1.1.0.tgz fine aged/-/aged-1.0.0.tgz
	assert_status 0
	assert_contains "$out" "whole 403"
	assert_contains "$out" "npm 'withdep' is known malicious (MAL-2099-1, [packages] malicious $feed/npm/withdep/MAL-2099-1.json)"
	assert_contains "$out" "wholetar 403"
	doc=$(printf '%s\n' "$out" | grep -A1 '^aged 200' | tail -1)
	assert_contains "$doc" '"dist-tags":{"latest":"2.0.0"}'
	assert_not_contains "$doc" '"1.1.0"' "the packument, its malicious version hidden"
	assert_contains "$out" "pin 403"
	assert_contains "$out" "npm 'aged@1.1.0' is known malicious (MAL-2099-2,"
	assert_contains "$out" "fine 200"
	assert_contains "$err" "sbxrun: gateway: npm 'aged': 1 version under [packages] malicious hidden: 1.1.0 (MAL-2099-2)"
	local refused
	refused=$(gw_refusals "$TESTDIR/ev2")
	assert_contains "$refused" "withdep - 403 malicious = MAL-2099-1"
	assert_contains "$refused" "aged 1.1.0 403 malicious = MAL-2099-2"
	# nothing of withdep, nor the malicious tarball, was asked upstream
	assert_eq 0 "$(grep -cE '^/?(withdep|aged/-/aged-1.1.0)' "$TESTDIR/reg.log")" "upstream requests"

	# a feed that is not OSV JSON: no gateway, no run
	printf '{"id":' > "$feed/npm/aged/MAL-2099-3.json"
	run "$SBX" run -p "$p" --image minimal -- true
	assert_status 125
	assert_contains "$err" "$feed/npm/aged/MAL-2099-3.json"
	assert_contains "$err" "not JSON"
}

# [packages] malicious = URL: the gateway fetches the feed as it starts
# (from a server that answers after a second: a request made meanwhile
# waits for it), and its records apply; a feed that cannot be loaded (not
# OSV JSON, 404) is a 503 naming why for every package request, cached or
# not: nothing it would have to check is served.
# A feed server on the host serving the files of $1, each answer after a
# second; where NAME.next exists, it becomes NAME once NAME has been
# served (the feed changes after its first fetch). Sets fport and fpid.
feed_server() {
	python3 - "$1" "$TESTDIR/.feed-port" <<'PY' 2> "$TESTDIR/feedsrv.err" &
import http.server, os, sys, time
root = sys.argv[1]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        time.sleep(1)
        p = os.path.join(root, os.path.basename(self.path))
        if not os.path.isfile(p):
            self.send_response(404); self.send_header("Content-Length", "0"); self.end_headers(); return
        b = open(p, "rb").read()
        self.send_response(200); self.send_header("Content-Length", str(len(b))); self.end_headers()
        self.wfile.write(b)
        if os.path.isfile(p + ".next"):
            os.rename(p + ".next", p)
s = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
open(sys.argv[2] + ".t", "w").write(str(s.server_address[1])); os.rename(sys.argv[2] + ".t", sys.argv[2])
s.serve_forever()
PY
	fpid=$!
	at_exit "kill $fpid 2>/dev/null"
	for _ in $(seq 100); do [ -s "$TESTDIR/.feed-port" ] && break; sleep 0.1; done
	fport=$(cat "$TESTDIR/.feed-port")
	[ -n "$fport" ] || fail "the feed server did not start: $(cat "$TESTDIR/feedsrv.err")"
}

test_gateway_malicious_feed_by_url() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local d="$TESTDIR/feedsrv" fport fpid p u
	mkdir -p "$d"
	printf '[{"id":"MAL-2099-7","affected":[{"package":{"ecosystem":"npm","name":"aged"},"versions":["1.1.0"]}]}]' > "$d/feed.json"
	printf '{"id":' > "$d/broken.json"
	feed_server "$d"
	u="http://host.sbxrun.internal:$fport"
	p=$(gw_rules_profile feedurl "malicious = $u/feed.json\ntimeout = 10s\n")
	gw_ask "$p" "$TESTDIR/ev" pin aged/-/aged-1.1.0.tgz aged aged fine aged/-/aged-1.0.0.tgz
	assert_status 0
	assert_contains "$out" "pin 403"
	assert_contains "$out" "npm 'aged@1.1.0' is known malicious (MAL-2099-7, [packages] malicious $u/feed.json)"
	assert_not_contains "$(printf '%s\n' "$out" | grep -A1 '^aged 200' | tail -1)" '"1.1.0"' "the packument, its malicious version hidden"
	assert_contains "$out" "fine 200"
	assert_contains "$err" "sbxrun: gateway: [packages] malicious $u/feed.json: 1 affected packages"
	assert_contains "$(cat "$TESTDIR/ev")" '"url":"'"$u"'/feed.json","loaded":true,"packages":1'
	assert_eq 0 "$(grep -c 'aged-1.1.0' "$TESTDIR/reg.log")" "upstream asked for the malicious tarball"
	# a policy's feed URL (another file: not in the cache yet): reached
	# although no allow list names its host
	cp "$d/feed.json" "$d/feed-pol.json"
	printf '[packages]\nmalicious = %s/feed-pol.json\n' "$u" > "$TESTDIR/policy.ini"
	SBXRUN_POLICY="$TESTDIR/policy.ini" gw_ask "$(gw_rules_profile feedpol "timeout = 10s\n")" "$TESTDIR/ev-pol" pin aged/-/aged-1.1.0.tgz
	assert_contains "$out" "pin 403"
	assert_contains "$out" "(MAL-2099-7, [packages] malicious $u/feed-pol.json)"
	assert_contains "$(cat "$TESTDIR/ev-pol")" '"url":"'"$u"'/feed-pol.json","loaded":true,"packages":1'
	for f in broken.json missing.json; do
		p=$(gw_rules_profile "feed${f%.json}" "malicious = $u/$f\ntimeout = 10s\n")
		gw_ask "$p" "$TESTDIR/ev-$f" fine aged/-/aged-1.0.0.tgz again aged/-/aged-1.0.0.tgz
		assert_status 0
		assert_contains "$out" "fine 503"
		assert_contains "$out" "again 503"
		assert_contains "$out" "[packages] malicious $u/$f could not be loaded ("
		assert_contains "$out" "$([ $f = broken.json ] && echo "not JSON" || echo "upstream answered 404")"
		assert_contains "$err" "package requests get 503 until it is"
	done
	# the copy kept in the cache stands in, the server gone: within
	# index_max_age taken in without asking; past it (1s) taken in and
	# asked again behind it; offline = yes, a URL never fetched is a 503
	kill "$fpid"
	gw_ask "$(gw_rules_profile feedurl "malicious = $u/feed.json\ntimeout = 10s\n")" "$TESTDIR/ev-c" pin aged/-/aged-1.1.0.tgz
	assert_contains "$out" "pin 403"
	assert_contains "$err" "[packages] malicious $u/feed.json: 1 affected packages (the cache's copy, "
	sleep 1.1
	gw_ask "$(gw_rules_profile feedstale "malicious = $u/feed.json\nindex_max_age = 1s\n")" "$TESTDIR/ev-s" \
		pin aged/-/aged-1.1.0.tgz
	assert_contains "$out" "pin 403"
	assert_contains "$err" "s old; asked again behind it)"
	gw_ask "$(gw_rules_profile feedoff "malicious = $u/missing.json\noffline = yes\n")" "$TESTDIR/ev-o" \
		fine aged/-/aged-1.0.0.tgz
	assert_contains "$out" "fine 503"
	assert_contains "$out" "is not loaded (not in the cache, and [packages] offline = yes)"
	# the feed's host is the gateway's to reach: a URL that is no
	# upstream's is refused when the profile is read
	printf '[packages]\nmalicious = http://feeds.example.org/osv.json\n' > "$TESTDIR/badfeed.ini"
	run "$SBX" run -p "$TESTDIR/badfeed.ini" --image tiny -- true
	assert_bad_input "$TESTDIR/badfeed.ini:2: malicious: 'http://feeds.example.org/osv.json': not an https:// URL (or http://host.sbxrun.internal:PORT/ for a mirror on this host)"
}

# A feed in hand is asked again each index_max_age while the gateway runs
# (a sidecar runs for weeks): what the URL answers then replaces what it
# gave, so a record it dropped is no longer refused and one it added is,
# within the same run.
test_gateway_malicious_feed_asked_again() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local d="$TESTDIR/feedsrv" fport fpid u
	mkdir -p "$d"
	printf '[{"id":"MAL-2099-7","affected":[{"package":{"ecosystem":"npm","name":"aged"},"versions":["1.1.0"]}]}]' > "$d/feed.json"
	printf '[{"id":"MAL-2099-8","affected":[{"package":{"ecosystem":"npm","name":"aged"},"versions":["1.0.0"]}]}]' > "$d/feed.json.next"
	feed_server "$d"
	u="http://host.sbxrun.internal:$fport"
	gw_ask "$(gw_rules_profile feedagain "malicious = $u/feed.json\nindex_max_age = 1s\ntimeout = 10s\n")" "$TESTDIR/ev" \
		before aged/-/aged-1.1.0.tgz until200 aged/-/aged-1.1.0.tgz after aged/-/aged-1.1.0.tgz added aged/-/aged-1.0.0.tgz
	assert_status 0
	assert_contains "$out" "before 403"
	assert_contains "$out" "after 200"
	assert_contains "$out" "added 403"
	assert_contains "$out" "(MAL-2099-8, [packages] malicious $u/feed.json)"
	assert_contains "$(cat "$TESTDIR/ev")" '"url":"'"$u"'/feed.json","loaded":true,"again":true,"packages":1'
	[ ! -e "$d/feed.json.next" ] || fail "the feed was not asked again"
}

# Under rules the gateway alone reaches the upstream it serves: a client
# sent around it, through the proxy to the registry's own host, is refused
# (without rules that way is open, as the first run shows).
test_gateway_rules_close_the_way_around() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p
	p=$(gw_rules_profile around 'allow = npm:good\n')
	# a feed alone, or not_after alone, is a package rule too (the registry
	# reached directly would serve what it names)
	printf '[]' > "$TESTDIR/empty-feed.json"
	local q r
	q=$(gw_rules_profile aroundfeed "malicious = $TESTDIR/empty-feed.json\n")
	r=$(gw_rules_profile aroundwhen 'not_after = 2100-01-01\n')
	for prof in "gwlab$$" "$p" "$q" "$r"; do
		run "$SBX" run -p "$prof" --image minimal -- sh -c '
			curl -sS -x "$npm_config_proxy" -o /dev/null -w "direct %{http_code}\n" "http://host.sbxrun.internal:$1/left-pad"
			curl -sS -x "$npm_config_proxy" -o /dev/null -w "gateway %{http_code}\n" "http://packages.sbxrun.internal/npm/good"' sh "$RPORT"
		assert_status 0
		echo "$prof: $out" >&2
		assert_contains "$out" "gateway 200"
		if [ "$prof" != "gwlab$$" ]; then
			assert_contains "$out" "direct 403"
		else
			assert_contains "$out" "direct 200"
		fi
	done
	assert_eq 1 "$(grep -c '^left-pad' "$TESTDIR/reg.log")" "upstream requests for left-pad (the run without rules)"
}

# More packuments at once than the gateway fetches at once (48): the rest
# wait their turn and none is refused (a real npm install of express asks
# for some 70 at once; before, the 49th got a 403). One curl sends all 64
# at once (64 curl processes took seconds to start, and those started late
# missed the test); the fixture holds them for the first second, so all
# are in while the first 48 run (without the line, exactly 16 are refused).
test_gateway_queues_fetches_beyond_its_limit() {
	export XDG_CACHE_HOME="$TESTDIR/cache" NPMREG_DELAY=1
	gw_fixture
	run "$SBX" run -p "gwlab$$" --image minimal -- sh -c '
		set --
		for i in $(seq 1 64); do set -- "$@" -o /dev/null "http://packages.sbxrun.internal/npm/many-$i"; done
		curl -s -Z --parallel-immediate --parallel-max 64 -x "$npm_config_proxy" -w "%{http_code}\n" "$@"'
	assert_status 0
	assert_eq 64 "$(printf '%s\n' "$out" | grep -c '^200$')" "answers: $(printf '%s\n' "$out" | sort | uniq -c) $err"
}

# The host-side sbxrun's resident memory, in KiB: "HWM RSS".
gw_host_kb() { # pid
	awk '/^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } END { print h, r }' "/proc/$1/status"
}

# A sandbox that opens 40 requests for the fixture's big packument (8 MiB)
# and reads none but the last: each answer waits in a file of the cache,
# not in the host's memory, and while upstream is asked whether the cached
# copy is still good (index_max_age = none: every request asks; the
# fixture answers 304 after a second), no request holds that copy in
# memory either (issue 34, point 4). Before, sbxrun held every stale copy
# and every answer whole until it was read: some 330 MiB more.
test_gateway_holds_unread_answers_on_disk() {
	export XDG_CACHE_HOME="$TESTDIR/cache" NPMREG_BIG_MB=8 NPMREG_304_DELAY=1
	gw_fixture
	# (what is measured is memory, not stalls: the fixture makes 8 MiB
	# documents, which takes it seconds on a loaded machine)
	sed -i 's/^timeout = 2s$/timeout = 30s/' "$HOME/.config/sbxrun/profiles/gwlab$$.ini"
	echo 'index_max_age = none' >> "$HOME/.config/sbxrun/profiles/gwlab$$.ini"
	"$SBX" run -p "gwlab$$" --image minimal -- bash -c '
		p=${npm_config_proxy#http://}; p=${p%/}
		curl -sS -x "$npm_config_proxy" -o /tmp/whole -w "warm %{http_code} %{size_download}\n" \
			http://packages.sbxrun.internal/npm/big
		fds=()
		for i in $(seq 40); do
			exec {fd}<>"/dev/tcp/${p%:*}/${p##*:}"
			printf "GET http://packages.sbxrun.internal/npm/big HTTP/1.1\r\nHost: packages.sbxrun.internal\r\nAccept: application/json\r\n\r\n" >&$fd
			fds+=($fd)
		done
		# the last is read whole: the same document; the other 39 wait
		tr -d "\r" <&${fds[39]} | sed "1,/^\$/d" > /tmp/late
		cmp -s /tmp/whole /tmp/late && echo "late answer whole $(wc -c < /tmp/late)"
		echo held
		sleep 5' > "$TESTDIR/out" 2>&1 &
	local pid=$! kb
	for _ in $(seq 600); do grep -q '^held' "$TESTDIR/out" && break; sleep 0.1; done
	grep -q '^held' "$TESTDIR/out" || fail "the sandbox did not get that far: $(cat "$TESTDIR/out")"
	sleep 2
	kb=$(gw_host_kb "$pid")
	wait "$pid" || fail "the sandbox failed: $(cat "$TESTDIR/out")"
	out=$(cat "$TESTDIR/out")
	assert_contains "$out" "warm 200"
	assert_contains "$out" "late answer whole"
	[ "$(grep -c '^big$' "$TESTDIR/reg.log.304")" -ge 30 ] || fail "revalidations: $(cat "$TESTDIR/reg.log.304")"
	echo "host-side sbxrun with 40 unread answers of 8 MiB: VmHWM VmRSS $kb KiB" >&2
	# one answer is built in memory at a time (the packument parsed and
	# written out); 40 held would be 320 MiB
	[ "${kb% *}" -lt 120000 ] || fail "the host-side sbxrun grew to $kb KiB (VmHWM VmRSS)"
}

test_gateway_offline_serves_the_cache_alone() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	# online first: good's packument and tarball, aged's packument only
	gw_ask "gwlab$$" "$TESTDIR/ev1" doc good tar good/-/good-1.0.0.tgz aged aged
	assert_status 0
	assert_contains "$out" "tar 200"
	local before p
	before=$(wc -l < "$TESTDIR/reg.log")
	p=$(gw_rules_profile offline 'offline = yes\n')
	gw_ask "$p" "$TESTDIR/ev2" doc good tar good/-/good-1.0.0.tgz agedtar aged/-/aged-1.0.0.tgz \
		miss trunc misstar trunc/-/trunc-1.0.0.tgz
	assert_status 0
	assert_contains "$out" "doc 200"
	assert_contains "$out" "tar 200"
	assert_contains "$out" "agedtar 503"
	assert_contains "$out" "offline: npm 'aged@1.0.0' is not in the cache ([packages] offline = yes)"
	assert_contains "$out" "miss 503"
	assert_contains "$out" "offline: npm 'trunc' is not in the cache ([packages] offline = yes)"
	assert_contains "$out" "misstar 503"
	assert_contains "$err" "sbxrun: gateway: offline: npm 'trunc' is not in the cache"
	assert_contains "$(gw_events "$TESTDIR/ev2")" "good 1.0.0 hit"
	assert_contains "$(gw_refusals "$TESTDIR/ev2")" "trunc - 503 offline"
	assert_contains "$(gw_refusals "$TESTDIR/ev2")" "aged 1.0.0 503 offline"
	# the upstream saw nothing of the offline sandbox
	assert_eq "$before" "$(wc -l < "$TESTDIR/reg.log")" "upstream requests: $(cat "$TESTDIR/reg.log")"
}

# Two profiles whose npm upstreams are two registries with the same names
# and other bytes (issue 34, point 3): each profile gets its own
# registry's packument and tarball, never the other's cached index, while
# the other's is fresh and offline alike.
test_two_upstreams_never_share_an_index() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local regb portb pb="gwlabb$$" pdir="$HOME/.config/sbxrun/profiles"
	NPMREG_FLAVOUR=b python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/regb.log" > "$TESTDIR/.regb-port" &
	regb=$!
	at_exit "kill $REG $regb 2>/dev/null || true; rm -f '$pdir/gwlab$$.ini' '$pdir/$pb.ini' '$pdir/offb$$.ini'"
	for _ in $(seq 100); do [ -s "$TESTDIR/.regb-port" ] && break; sleep 0.1; done
	portb=$(head -1 "$TESTDIR/.regb-port")
	[ -n "$portb" ] || fail "the second fixture registry did not start"
	printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\ntimeout = 2s\n' "$portb" > "$pdir/$pb.ini"
	printf 'inherit = %s\n[packages]\noffline = yes\n' "$pb" > "$pdir/offb$$.ini"
	# each line: NAME STATUS and what the tarball's index.js exports
	local get='get() { for p in "$@"; do
		curl -sS -x "$npm_config_proxy" -o /tmp/p.tgz -w "$p %{http_code} " "http://packages.sbxrun.internal/npm/$p/-/$p-1.0.0.tgz"
		tar -xzOf /tmp/p.tgz package/index.js 2>/dev/null || echo; done; }'
	run "$SBX" run -p "gwlab$$" --image minimal -- sh -c "$get; get good depoff"
	assert_status 0
	assert_contains "$out" "good 200 module.exports = 42;"
	assert_contains "$out" "depoff 200 module.exports = 42;"
	# B while A's packument is fresh: B is asked, and B's tarball served
	run "$SBX" run -p "$pb" --image minimal -- sh -c "$get; get good"
	assert_status 0
	assert_contains "$out" 'good 200 module.exports = "b";'
	assert_eq 1 "$(grep -c '^good$' "$TESTDIR/regb.log" || true)" "good's packument asked of B"
	assert_eq 1 "$(grep -c '^good/-/' "$TESTDIR/regb.log" || true)" "good's tarball asked of B"
	# offline on B: B's own copy of good; A's depoff is not B's to serve
	run "$SBX" run -p "offb$$" --image minimal -- sh -c "$get; get good depoff"
	assert_status 0
	assert_contains "$out" 'good 200 module.exports = "b";'
	assert_contains "$out" "depoff 503"
	# and A still gets A's, from its own fresh copy
	run "$SBX" run -p "gwlab$$" --image minimal -- sh -c "$get; get good"
	assert_status 0
	assert_contains "$out" "good 200 module.exports = 42;"
	assert_eq 1 "$(grep -c '^good$' "$TESTDIR/reg.log")" "good's packument asked of A"
	# B down: a failure, never A's copy
	kill "$regb"
	wait "$regb" 2>/dev/null || true
	run "$SBX" run -p "$pb" --image minimal -- sh -c "$get; get depoff"
	assert_status 0
	assert_contains "$out" "depoff 502"
}

test_gateway_rules_bad_values_and_profile_show() {
	local f="$TESTDIR/bad.ini" line
	for line in 'allow = gem:rails|allow: '"'gem:rails'"': unknown ecosystem '"'gem'" \
		'deny = npm:|deny: '"'npm:'"' is not [ECO:]GLOB' \
		'allow = a;b|allow: '"'a;b'"': '"';'"' is not a package name or glob character' \
		'min_age = 7 days|min_age: '"'7 days'"' is not [ECO:]DURATION' \
		'min_age = gem:1d|min_age: '"'gem:1d'"': unknown ecosystem' \
		'offline = maybe|offline: invalid value '"'maybe'"' (one of: no, yes)' \
		'mode = maybe|mode: invalid value '"'maybe'"' (one of: report, enforce)' \
		'not_after = 2025-02-30|not_after: '"'2025-02-30'"' is not [ECO:]DATE (YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ, UTC; ECO:none for an ecosystem the freeze leaves out)' \
		'not_after = pip:2025-01-02|not_after: '"'pip:2025-01-02'"': unknown ecosystem '"'pip'"' (ECO:DATE, ECO one of npm, pypi, deb, go, cargo, maven)' \
		'malicious = feeds/osv|malicious: '"'feeds/osv'"' is neither an absolute path nor an https:// URL' \
		'npm = http://host.sbxrun.internal:/|[packages] npm: '"'http://host.sbxrun.internal:/'"': host.sbxrun.internal needs its port (host.sbxrun.internal:PORT)' \
		'pypi = https://host.sbxrun.internal/|[packages] pypi: '"'https://host.sbxrun.internal/'"': host.sbxrun.internal needs its port (host.sbxrun.internal:PORT)'; do
		printf '[packages]\n%s\n' "${line%%|*}" > "$f"
		run "$SBX" run -p "$f" --image tiny -- true
		assert_bad_input "$f:2: ${line#*|}"
	done
	printf 'inherit = packages\n[packages]\nallow = npm:@types/*\nallow = pypi:numpy\ndeny = npm:@types/evil\nmin_age = 7d\noffline = yes\nnot_after = 2026-11-01\nnot_after = deb:none\n' > "$f"
	run "$SBX" profile show "$f"
	assert_status 0
	assert_contains "$out" "[packages]
timeout = 30s	; default
allow = npm:@types/*	; $f:3
allow = pypi:numpy	; $f:4
deny = npm:@types/evil	; $f:5
min_age = 7d	; $f:6
offline = yes	; $f:7
not_after = 2026-11-01	; $f:8
not_after = deb:none	; $f:9"
}

test_gateway_rules_under_the_policy_ceiling() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	local pol="$TESTDIR/policy.ini" f="$TESTDIR/p.ini"
	printf '[packages]\nallow = npm:good\nallow = npm:aged\ndeny = npm:aged\nmin_age = 7d\n' > "$pol"
	export SBXRUN_POLICY="$pol"
	printf '[packages]\nallow = npm:left-pad\n' > "$f"
	run "$SBX" run -p "$f" --image tiny -- true
	assert_bad_input "profile '$f' asks for allow = npm:left-pad ($f:2); $pol caps [packages] allow at npm:good, npm:aged"
	printf '[packages]\nmin_age = 1d\n' > "$f"
	run "$SBX" run -p "$f" --image tiny -- true
	assert_bad_input "profile '$f' asks for min_age = 1d ($f:2); $pol caps [packages] min_age at 7d or more"
	# a floor in each ecosystem: an ecosystem's own min_age cannot go below it
	printf '[packages]
min_age = 30d
min_age = deb:0
' > "$f"
	run "$SBX" run -p "$f" --image tiny -- true
	assert_bad_input "profile '$f' asks for min_age = deb:0 ($f:3); $pol caps [packages] min_age at 7d or more in deb"
	printf '[packages]\noffline = yes\n' > "$TESTDIR/exam.ini"
	printf '[packages]\noffline = no\n' > "$f"
	run env SBXRUN_POLICY="$TESTDIR/exam.ini" "$SBX" run -p "$f" --image tiny -- true
	assert_bad_input "profile '$f' asks for offline = no ($f:2); $TESTDIR/exam.ini caps [packages] offline at yes"
	# a policy's mode = enforce: no profile turns the rules into reports
	printf '[packages]\nmode = enforce\n' > "$TESTDIR/strict.ini"
	printf '[packages]\nmode = report\n' > "$f"
	run env SBXRUN_POLICY="$TESTDIR/strict.ini" "$SBX" run -p "$f" --image tiny -- true
	assert_bad_input "profile '$f' asks for mode = report ($f:2); $TESTDIR/strict.ini caps [packages] mode at enforce"
	# a profile that says nothing gets the policy's rules, and says so
	printf '[packages]\nmin_age = 30d\n' > "$f"
	run "$SBX" profile show "$f"
	assert_status 0
	assert_contains "$out" "allow = npm:good	; policy $pol:2"
	assert_contains "$out" "deny = npm:aged	; policy $pol:4"
	assert_contains "$out" "min_age = 30d	; $f:2"
	# and the gateway holds them: the policy's deny, its allow list
	gw_fixture
	gw_ask "gwlab$$" "$TESTDIR/ev" good good aged aged off left-pad
	assert_status 0
	assert_contains "$out" "good 200"
	assert_contains "$out" "aged 403"
	assert_contains "$out" "npm 'aged' is denied by [packages] deny = npm:aged (policy $pol:4)"
	assert_contains "$out" "off 403"
	assert_contains "$out" "npm 'left-pad' is not on the allow list ([packages] allow, policy $pol:2)"
}

# What npm itself makes of the rules (the fixture registry, no network):
# the mature version picked, a young pin and a dependency off the allow
# list refused with the gateway's reason in npm's own error.
test_real_npm_under_the_rules() {
	gw_need_node
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p
	p=$(gw_rules_profile npmrules 'allow = npm:aged\nallow = npm:withdep\nmin_age = 7d\n')
	run "$SBX" run -p "$p" --image node -- sh -c '
		export npm_config_fetch_retries=0
		cd /tmp && npm install --no-audit --no-fund aged >/dev/null 2>&1
		node -e "console.log(\"installed \" + require(\"/tmp/node_modules/aged/package.json\").version)"
		mkdir /tmp/b && cd /tmp/b && npm install --no-audit --no-fund aged@2.0.0 2>&1 | grep -m1 "No matching version"
		mkdir /tmp/c && cd /tmp/c && npm install --no-audit --no-fund withdep 2>&1 | grep -m1 "403 Forbidden"
		cd /tmp && rm -rf node_modules ~/.npm && sed -i "s/aged-1.1.0/aged-2.0.0/" package-lock.json &&
			npm ci --no-audit --no-fund 2>&1 | grep -m1 "403 Forbidden"'
	assert_status 0
	assert_contains "$out" "installed 1.1.0"
	assert_contains "$out" "No matching version found for aged@2.0.0"
	assert_contains "$err" "sbxrun: gateway: npm 'aged': 1 version younger than [packages] min_age (7 days) hidden: 2.0.0 (published 2 days ago)"
	assert_contains "$out" "403 Forbidden - GET http://packages.sbxrun.internal/npm/depoff - sbxrun package gateway: npm 'depoff' is not on the allow list"
	assert_contains "$out" "403 Forbidden - GET http://packages.sbxrun.internal/npm/aged/-/aged-2.0.0.tgz - sbxrun package gateway: npm aged@2.0.0: published 2 days ago, [packages] min_age is 7 days"
}

# Issue 34, point 6: Debian 12's own npm (9.2) installs a tree of 600
# packages through the gateway, cold then warm. Through a proxy npm 9 opens
# a connection for each of its requests, all at once (http-proxy-agent 5
# pools nothing; maxsockets does not reach it), and the door shed the
# oldest whose request head had not come yet: npm's "ECONNRESET ... socket
# hang up", retried after 10 s and up to 60 s, then the install failed.
# Without npm's retries one reset fails it. About 30 s cold, 20 s warm.
test_debian_npm_installs_hundreds_of_packages() {
	gw_need_node
	export XDG_CACHE_HOME="$TESTDIR/cache"
	NPMREG_TREE=600 gw_fixture
	local i
	for i in 1 2; do
		run timeout 150 "$SBX" run -p "gwlab$$" --image node --events "$TESTDIR/ev$i" -- sh -c '
			cd /tmp && npm install --no-audit --no-fund --fetch-retries=0 tree-0 2>&1 | tail -4
			echo "tree-* installed: $(ls node_modules | grep -c "^tree-")"'
		assert_status 0 "install $i"
		assert_contains "$out" "added 600 packages" "install $i"
		assert_contains "$out" "tree-* installed: 600" "install $i"
	done
	# cold: every tarball fetched once; warm: every one from the cache
	assert_eq 600 "$(gw_events "$TESTDIR/ev1" | grep -c ' miss ')" "cold install's events"
	assert_eq 600 "$(gw_events "$TESTDIR/ev2" | grep -c ' hit ')" "warm install's events"
}

# `sbxrun proxy --listen` (a pod's sidecar) for a profile: starts it on a
# free port of 127.0.0.1 with the minimal image; sets SC (its pid) and
# SCPORT. Its stderr is in $TESTDIR/sidecar.err.
gw_sidecar() { # profile [options...]
	local p=$1
	shift
	"$SBX" proxy --listen 127.0.0.1:0 --profile "$p" --image minimal "$@" 2> "$TESTDIR/sidecar.err" &
	SC=$!
	at_exit "kill $REG $SC 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/gwlab$$.ini'"
	listen_port "$SC" "$TESTDIR/sidecar.err"
	SCPORT=$LISTEN_PORT
}

# The sidecar holds a client on the host to the profile's rules as a
# sandbox's door does: the gateway's name asked through it as a proxy (the
# variables a pod gets), the secret of --auth-file asked first, the
# tarball served from the cache the second time, and the way around the
# gateway (the registry's own host) closed.
test_sidecar_serves_the_gateway_under_the_rules() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	local p secret="sc-$$-$RANDOM" gw=http://packages.sbxrun.internal/npm
	p=$(gw_rules_profile sidecar 'allow = npm:good\n')
	printf 'sbx:%s\n' "$secret" > "$TESTDIR/auth"
	gw_sidecar "$p" --events "$TESTDIR/ev" --auth-file "$TESTDIR/auth"
	assert_contains "$(cat "$TESTDIR/sidecar.err")" "with the package gateway"
	local px="http://sbx:$secret@127.0.0.1:$SCPORT"
	get() { curl -sS -x "$1" -o "$TESTDIR/body" -w '%{http_code}' "$2"; }
	assert_eq 407 "$(get "http://127.0.0.1:$SCPORT" "$gw/good")" "the gateway without the secret"
	assert_eq 200 "$(get "$px" "$gw/good")" "an allowed packument"
	assert_contains "$(cat "$TESTDIR/body")" '"tarball":"http://packages.sbxrun.internal/npm/good/-/good-1.0.0.tgz"'
	assert_eq 403 "$(get "$px" "$gw/left-pad")" "a package off the allow list"
	assert_contains "$(cat "$TESTDIR/body")" "npm 'left-pad' is not on the allow list ([packages] allow, "
	assert_eq 200 "$(get "$px" "$gw/good/-/good-1.0.0.tgz")" "the tarball"
	assert_eq 200 "$(get "$px" "$gw/good/-/good-1.0.0.tgz")" "the tarball again"
	# around the gateway: plain HTTP and CONNECT to the registry's host
	assert_eq 403 "$(get "$px" "http://host.sbxrun.internal:$RPORT/left-pad")" "plain HTTP to the registry"
	assert_eq 403 "$(curl -s -o /dev/null -w '%{http_connect}' -x "$px" "https://host.sbxrun.internal:$RPORT/left-pad")" \
		"CONNECT to the registry"
	kill -TERM "$SC"
	local rc=0
	wait "$SC" || rc=$?
	assert_eq 0 "$rc" "sbxrun proxy's exit status on SIGTERM"
	assert_eq "good 1.0.0 hit
good 1.0.0 miss" "$(gw_events "$TESTDIR/ev" | cut -d' ' -f1-3)" "the tarball's events"
	assert_eq 1 "$(grep -c 'good-1.0.0.tgz' "$TESTDIR/reg.log")" "upstream requests for the tarball"
	assert_eq "" "$(grep '^left-pad' "$TESTDIR/reg.log" || true)" "upstream requests for left-pad"
	assert_contains "$(gw_refusals "$TESTDIR/ev")" "left-pad - 403 allow"
	assert_contains "$(cat "$TESTDIR/sidecar.err")" "sbxrun: gateway: npm 'left-pad' is not on the allow list"
}

# Issue 34, point 9: behind a company's proxy (https_proxy in sbxrun's
# environment: tests/helper/fwdproxy.py, the only way out, which tunnels
# every CONNECT to the fixture registry, here speaking HTTPS as
# 192.0.2.10, an address routed nowhere) the gateway fetches through it,
# under package rules, which used to refuse to run there at all: sbxrun
# still checks what it connects to (the upstream's address, here a
# literal; a name it looks up itself, refused when it is loopback, never
# asked of the proxy), the rules hold at the gateway, and the way around it
# (CONNECT to the upstream through the sandbox's proxy) stays closed.
test_gateway_fetches_through_the_upstream_proxy() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	local up=192.0.2.10 rport pport p
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-keyout "$TESTDIR/key.pem" -out "$TESTDIR/cert.pem" -subj "/CN=$up" \
		-addext "subjectAltName=IP:$up" 2>/dev/null || fail "openssl could not make the fixture's certificate"
	NPMREG_TLS="$TESTDIR/cert.pem:$TESTDIR/key.pem" NPMREG_URL="https://$up" \
		python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	local reg=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	rport=$(head -1 "$TESTDIR/.reg-port")
	python3 -u "$TOP/tests/helper/fwdproxy.py" "$TESTDIR/proxy.log" "127.0.0.1:$rport" > "$TESTDIR/.px-port" &
	local px=$!
	at_exit "kill $reg $px 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/upx$$.ini' '$HOME/.config/sbxrun/profiles/uplo$$.ini'"
	for _ in $(seq 100); do [ -s "$TESTDIR/.px-port" ] && break; sleep 0.1; done
	pport=$(head -1 "$TESTDIR/.px-port")
	[ -n "$rport" ] && [ -n "$pport" ] || fail "the fixtures did not start"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\nnpm = https://%s/\nallow = npm:good\ntimeout = 5s\n' "$up" \
		> "$HOME/.config/sbxrun/profiles/upx$$.ini"
	run env https_proxy="http://corp:pa%40ss@127.0.0.1:$pport" no_proxy=localhost,127.0.0.1 \
		SSL_CERT_FILE="$TESTDIR/cert.pem" "$SBX" run -p "upx$$" --image minimal -- sh -c '
		get() { curl -sS -x "$npm_config_proxy" -o /tmp/body -w "$1 %{http_code}\n" "$2"; }
		get packument http://packages.sbxrun.internal/npm/good; head -c 200 /tmp/body; echo
		get tarball http://packages.sbxrun.internal/npm/good/-/good-1.0.0.tgz
		get denied http://packages.sbxrun.internal/npm/left-pad
		curl -s -o /dev/null -w "around %{http_connect}\n" -x "$npm_config_proxy" "https://$1/left-pad" || true' sh "$up"
	assert_status 0 "a sandbox under rules behind the upstream proxy"
	assert_contains "$out" "packument 200"
	assert_contains "$out" '"tarball":"http://packages.sbxrun.internal/npm/good/-/good-1.0.0.tgz"'
	assert_contains "$out" "tarball 200"
	assert_contains "$out" "denied 403"
	assert_contains "$out" "around 403"
	assert_contains "$err" "sbxrun: egress: refused '$up' (kept to the package gateway by profile 'upx$$' package rules)"
	# the gateway's two fetches went through the proxy, to the address it
	# checked, with the credentials of the URL; left-pad never left
	local asked
	asked=$(wc -l < "$TESTDIR/proxy.log")
	[ "$asked" -ge 2 ] || fail "$asked CONNECTs at the upstream proxy: $(cat "$TESTDIR/proxy.log")"
	assert_eq "CONNECT $up:443 corp:pa@ss" "$(sort -u "$TESTDIR/proxy.log")" "the upstream proxy's log"
	assert_contains "$(cat "$TESTDIR/reg.log")" "good/-/good-1.0.0.tgz" "the registry's log"
	assert_not_contains "$(cat "$TESTDIR/reg.log")" "left-pad" "the registry's log"
	# a name sbxrun looks up itself: localhost is loopback, refused before
	# the upstream proxy is asked (it would reach its own loopback)
	printf 'inherit = packages\n[packages]\nnpm = https://localhost:%s/\nallow = npm:good\ntimeout = 5s\n' "$rport" \
		> "$HOME/.config/sbxrun/profiles/uplo$$.ini"
	run env https_proxy="http://127.0.0.1:$pport" SSL_CERT_FILE="$TESTDIR/cert.pem" \
		XDG_CACHE_HOME="$TESTDIR/cache-lo" "$SBX" run -p "uplo$$" \
		--image minimal -- curl -sS -x http://127.0.0.1:3128 -o /dev/null -w "loop %{http_code}\n" \
		http://packages.sbxrun.internal/npm/good
	assert_contains "$out" "loop 502"
	assert_contains "$err" "refused to connect: loopback address"
	assert_eq "$asked" "$(wc -l < "$TESTDIR/proxy.log")" "CONNECTs at the upstream proxy after the loopback upstream"
}

# One peer's requests the gateway has taken count toward the sidecar's
# per-peer cap (64): a second wave past it is turned away while the first
# waits on the upstream (the slow tarball, one download for all, released
# once the waves are in), and another peer is still served.
CAPWAVES='
import socket, sys, time
port, release = int(sys.argv[1]), sys.argv[2]
def ask(src):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET http://packages.sbxrun.internal/npm/slow/-/slow-1.0.0.tgz HTTP/1.1\r\n"
              b"Host: packages.sbxrun.internal\r\n\r\n")
    return s
first = [ask("127.0.0.1") for _ in range(60)]
time.sleep(0.4)
second = [ask("127.0.0.1") for _ in range(10)]
other = ask("127.0.0.2")
time.sleep(0.3)
open(release, "w").close()
def status(s):
    s.settimeout(20)
    try:
        head = s.recv(12)
    except OSError:
        return "closed"
    return head[9:12].decode() if head.startswith(b"HTTP/1.") else "closed"
codes = [status(s) for s in first + second]
print("answered %d closed %d other %s" % (codes.count("200"), codes.count("closed"), status(other)))
'

test_sidecar_per_peer_cap_counts_gateway_requests() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	gw_sidecar "gwlab$$"
	run python3 -c "$CAPWAVES" "$SCPORT" "$TESTDIR/reg.log.release"
	assert_status 0 "$err"
	local ok closed
	ok=$(sed -n 's/^answered \([0-9]*\) .*/\1/p' <<<"$out")
	closed=$(sed -n 's/.* closed \([0-9]*\) .*/\1/p' <<<"$out")
	[ -n "$ok" ] && [ "$ok" -le 64 ] && [ "$ok" -ge 48 ] && [ "$((ok + closed))" = 70 ] || fail "one peer: $out"
	assert_contains "$out" "other 200" "another peer"
	assert_eq 1 "$(grep -c '^slow/-/' "$TESTDIR/reg.log")" "tarball requests upstream"
}

# Issue 40, item 7: the sidecar's answers not yet read were one budget for
# all its peers (one peer's 47 connections took it, and every other peer
# got 503 for a large index), and an answer's deadline was renewed by each
# partial write. With --unread-max 32M each address holds at most 4M (an
# eighth): peer A's sixteen 2 MiB answers left unread are mostly refused,
# peer B still gets its answer; a reader of 160 KB/s (16 s for the answer)
# is cut at --answer-timeout (2 s, and 1 s per MiB) from the first byte.
UNREAD='
import socket, sys, time
port = int(sys.argv[1])
REQ = (b"GET http://packages.sbxrun.internal/npm/big HTTP/1.1\r\nHost: packages.sbxrun.internal\r\n"
       b"Accept: application/json\r\nConnection: close\r\n\r\n")
def ask(src, rcvbuf=0):
    s = socket.socket()
    if rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(REQ)
    return s
def whole(s):
    s.settimeout(20)
    data = b""
    try:
        while True:
            b = s.recv(1 << 16)
            if not b:
                break
            data += b
    except OSError:
        pass
    return data
warm = whole(ask("127.0.0.3"))
full = len(warm)
a = [ask("127.0.0.1") for _ in range(16)]
time.sleep(1)
b = whole(ask("127.0.0.2"))
print("B", b[9:12].decode(), "whole" if len(b) == full else "cut %d of %d" % (len(b), full))
codes = []
for s in a:
    s.settimeout(5)
    codes.append(s.recv(12)[9:12].decode())
print("A 200:", codes.count("200"), "503:", codes.count("503"))
for s in a:
    s.close()
time.sleep(0.5)
slow = ask("127.0.0.4", 16384)
slow.settimeout(30)
got, t0 = 0, time.time()
while time.time() - t0 < 30:
    b = slow.recv(16384)
    if not b:
        break
    got += len(b)
    time.sleep(0.1)
print("slow", "whole" if got >= full else "cut")
'

test_sidecar_unread_answers_are_shared_per_peer_and_timed_from_the_first_byte() {
	export XDG_CACHE_HOME="$TESTDIR/cache" NPMREG_BIG_MB=2
	gw_fixture
	gw_sidecar "gwlab$$" --unread-max 32M --answer-timeout 2s
	run python3 -c "$UNREAD" "$SCPORT"
	assert_status 0 "$err"
	assert_contains "$out" "B 200 whole" "peer B's answer"
	local a200
	a200=$(sed -n 's/^A 200: \([0-9]*\) .*/\1/p' <<<"$out")
	[ -n "$a200" ] && [ "$a200" -ge 1 ] && [ "$a200" -le 2 ] || fail "peer A past its share: $out"
	assert_contains "$out" "503: $((16 - a200))" "peer A's refusals"
	assert_contains "$out" "slow cut" "the slow reader"
	run "$SBX" proxy --listen 127.0.0.1:0 --profile packages --unread-max 10K
	assert_bad_input "--unread-max: 10240 bytes is not between 1M and 1T"
	run "$SBX" proxy --listen 127.0.0.1:0 --profile packages --answer-timeout 10ms
	assert_bad_input "--answer-timeout: 10ms is not between 1s and 24h"
}

# Issue 36's case end to end: an untrusted `npm install && npm test` on the
# user's own checkout (--project), the real npm through the gateway. The
# checkout is not written during the run; the change set holds what npm
# made (node_modules, the lock file) and applying it gives the user that.
test_npm_install_and_test_on_a_project() {
	gw_need_node
	export XDG_CACHE_HOME="$TESTDIR/cache"
	gw_fixture
	mkdir -p app
	printf '{"name": "app", "version": "1.0.0", "dependencies": {"good": "1.0.0"}, "scripts": {"test": "node test.js"}}\n' > app/package.json
	printf 'require("good");\nconsole.log("tests pass");\n' > app/test.js
	before=$(cd app && find . | sort)
	run "$SBX" run -p "gwlab$$" --image node --project app -- sh -c \
		'npm install --no-audit --no-fund >/dev/null 2>&1 && npm test 2>&1'
	assert_status 0
	assert_contains "$out" "tests pass"
	assert_eq "$before" "$(cd app && find . | sort)" "the checkout after the run"
	id=$(printf '%s\n' "$err" | sed -n 's/^sbxrun: changes \([0-9a-f-]*\): .*/\1/p' | head -n 1)
	[ -n "$id" ] || fail "no change set line: $err"
	run "$SBX" changes show "$id"
	assert_contains "$out" "added file"
	assert_contains "$out" "package-lock.json"
	assert_contains "$out" "node_modules/good/index.js"
	run "$SBX" changes apply "$id"
	assert_status 0
	[ -f app/node_modules/good/package.json ] && [ -f app/package-lock.json ] ||
		fail "after apply: $(cd app && find . | sort)"
}

# Issue 40's real project: a JavaScript project tested with jest, its
# packages installed through the gateway from the npm registry, under
# --project. The review folds node_modules (the project's .gitignore) into
# one line, lists it with --all, and what is applied is what was shown.
test_a_real_project_installed_tested_reviewed_and_applied() {
	gw_need_node
	export XDG_CACHE_HOME="$TESTDIR/cache"
	mkdir -p app
	printf '{"name": "app", "version": "1.0.0", "scripts": {"test": "jest"}, "devDependencies": {"jest": "29"}}\n' > app/package.json
	printf 'module.exports = (a, b) => a + b;\n' > app/sum.js
	printf 'const sum = require("./sum");\ntest("adds", () => { expect(sum(1, 2)).toBe(3); });\n' > app/sum.test.js
	printf 'node_modules/\n' > app/.gitignore
	git init -q app # the fold reads the rules of a git work tree
	before=$(cd app && find . | sort)
	run "$SBX" run -p packages --image node --timeout 10m --project app -- sh -c \
		'npm install --no-audit --no-fund >/dev/null 2>npm.err || cat npm.err; rm -f npm.err; npm test 2>&1'
	assert_status 0
	assert_contains "$out" "1 passed"
	assert_eq "$before" "$(cd app && find . | sort)" "the checkout after the run"
	id=$(printf '%s\n' "$err" | sed -n 's/^sbxrun: changes \([0-9a-f-]*\): .*/\1/p' | head -n 1)
	[ -n "$id" ] || fail "no change set line: $err"
	run "$SBX" changes show "$id"
	assert_status 0
	printf '%s\n' "$out" | grep -q '^node_modules/: [0-9,]* added, .*(ignored by .gitignore)' || fail "no fold line: $(printf '%s\n' "$out" | head -20)"
	assert_contains "$out" "package-lock.json"
	assert_not_contains "$out" "node_modules/jest/package.json"
	run "$SBX" changes show --all "$id"
	assert_contains "$out" "node_modules/jest/package.json"
	local n
	n=$(printf '%s\n' "$out" | grep -c 'added file')
	[ "$n" -ge 3000 ] || fail "only $n added files listed with --all"
	run "$SBX" changes apply "$id"
	assert_status 0
	[ "$(cd app && find node_modules -type f | wc -l)" -eq "$((n - 1))" ] ||
		fail "applied $(cd app && find node_modules -type f | wc -l) files of node_modules, shown $n added files (package-lock.json among them)"
	[ -x app/node_modules/.bin/jest ] || fail "the jest launcher is not applied executable"
}
