# also-as-root
# serial: /etc/sbxrun/policy.ini binds every user (SBX_JOBS=2: after the user pass)
# root-only: test_etc_policy_change_reaches_a_running_session test_net_rules_of_another_users_session
# tier net: test_ask_through_the_mcp_sdk_client -- reaches the npm registry (npm install of the MCP SDK client)
# Live network rules (issue 42, item 2): `sbxrun net allow|deny` change a
# running session's rules through its control socket, and a change to the
# administrator's policy reaches running sessions and `proxy --listen`
# sidecars within a second, without a restart.

# A host no rule names, reached for real: the name does not resolve, so the
# session's proxy hands it by name to its upstream proxy (https_proxy, as in
# a company's network), tests/helper/fwdproxy.py, which tunnels every
# CONNECT to the test's HTTP server. Sets PORT (the server) and PXPORT.
fixtures() {
	echo hello > "$TESTDIR/hello.txt"
	http_serve "$TESTDIR"
	python3 -u "$TOP/tests/helper/fwdproxy.py" "$TESTDIR/fwd.log" "127.0.0.1:$PORT" > "$TESTDIR/.px-port" &
	FWD=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.px-port" ] && break; sleep 0.1; done
	PXPORT=$(head -1 "$TESTDIR/.px-port")
	[ -n "$PXPORT" ] || fail "the upstream proxy fixture did not start"
}

# The HTTP status of GET http://HOST/hello.txt from inside session $1.
get() { # session host
	run "$SBX" run --session "$1" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 "http://$2/hello.txt"
}

test_net_allow_lets_a_refused_host_through_without_a_restart() {
	local n=ln$$a
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	https_proxy="http://127.0.0.1:$PXPORT" start_session "$n" --image minimal -p packages --events "$TESTDIR/ev.jsonl"
	get "$n" approved.invalid
	assert_eq 403 "$out" "a host no rule names"
	run "$SBX" net allow "$n" approved.invalid
	assert_status 0 "net allow"
	get "$n" approved.invalid
	assert_eq 200 "$out" "the same request after net allow, same session"
	get "$n" approved.invalid
	assert_eq 200 "$out" "--for session (the default) holds"
	assert_contains "$(cat "$TESTDIR/fwd.log")" "CONNECT approved.invalid:80"
	# once: the next connection, then refused again
	run "$SBX" net allow --for once "$n" once.invalid
	assert_status 0 "net allow --for once"
	get "$n" once.invalid
	assert_eq 200 "$out" "the first request after --for once"
	get "$n" once.invalid
	assert_eq 403 "$out" "the second request after --for once"
	# a port is a port: 8080 was not approved
	get "$n" approved.invalid:8080
	assert_eq 403 "$out" "another port than the approved one"
	# what the session holds now, and the record of who changed it
	run "$SBX" session ls --json
	assert_status 0
	local line
	line=$(grep "\"name\":\"$n\"" <<<"$out") || fail "no line for $n: $out"
	assert_contains "$line" '{"rule":"allow-session","host":"approved.invalid"}'
	assert_contains "$line" '"egress":"packages"'
	assert_not_contains "$line" 'once.invalid' "a used once-rule is not held"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"rule":"allow-session","host":"approved.invalid","by":"sbxrun net"'
	# deny tightens: the next connection is refused; allow cannot lift it
	run "$SBX" net deny "$n" approved.invalid
	assert_status 0 "net deny"
	get "$n" approved.invalid
	assert_eq 403 "$out" "after net deny"
	run "$SBX" net allow "$n" approved.invalid
	assert_bad_input "cannot allow 'approved.invalid': denied by a live rule"
	run "$SBX" session ls --json
	assert_contains "$out" '{"rule":"deny","host":"approved.invalid"}'
	# a deny cuts what is open to the host: a slow answer (2 bytes a
	# second for 500 s) ends when the host is denied
	run "$SBX" net allow "$n" drip.invalid
	assert_status 0
	"$SBX" run --session "$n" -- curl -s -o /dev/null -w '%{http_code} %{size_download}' -x http://127.0.0.1:3128 \
		http://drip.invalid/drip > "$TESTDIR/drip.out" 2>&1 &
	local drip=$!
	sleep 2
	kill -0 "$drip" 2>/dev/null || fail "the slow request ended before the deny: $(cat "$TESTDIR/drip.out")"
	run "$SBX" net deny "$n" drip.invalid
	assert_status 0
	for _ in $(seq 50); do kill -0 "$drip" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$drip" 2>/dev/null; then
		kill "$drip"
		fail "the open connection to a denied host was not cut within 5 s"
	fi
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"host":"drip.invalid","port":80,"decision":"cut"'
}

# An approval never reaches what sbxrun never reaches, whatever the
# spelling; bad input is one line and 125.
test_net_allow_never_lifts_address_classes_and_bad_input() {
	local n=ln$$b
	start_session "$n" --image minimal -p packages
	local h
	for h in 127.0.0.1:8080 '[::1]:80' 169.254.169.254 10.1.2.3 192.168.0.1:8080 100.64.0.1 0.0.0.0 \
		host.sbxrun.internal:8080 packages.sbxrun.internal localhost:80; do
		run "$SBX" net allow "$n" "$h"
		assert_bad_input "cannot allow"
	done
	run "$SBX" net allow "$n" 127.0.0.1:8080
	assert_bad_input "loopback"
	run "$SBX" net allow "$n" 169.254.169.254
	assert_contains "$err" "169.254.169.254"
	run "$SBX" net allow "$n" '*.example.org'
	assert_bad_input "a live rule names one host"
	run "$SBX" net allow "$n" 'exa mple.org'
	assert_bad_input "exa mple.org"
	run "$SBX" net allow "$n" 2130706433
	assert_bad_input "2130706433"
	run "$SBX" net allow "$n" example.org:70000
	assert_bad_input "example.org:70000"
	run "$SBX" net allow --for ever "$n" example.org
	assert_bad_input "--for"
	run "$SBX" net allow "$n"
	assert_bad_input "give a SESSION and a HOST"
	run "$SBX" net allow nosuch$$ example.org
	assert_bad_input "session 'nosuch$$' is not running"
	run "$SBX" net deny nosuch$$ example.org
	assert_bad_input "is not running"
	run "$SBX" net permit "$n" example.org
	assert_status 125
	# nothing of the refused ones is held
	run "$SBX" session ls --json
	assert_not_contains "$(grep "\"name\":\"$n\"" <<<"$out")" "allow-session"
	# a session without a proxy has no rules to change
	local m=ln$$c
	start_session "$m" --image minimal
	run "$SBX" net allow "$m" example.org
	assert_bad_input "has no egress proxy (egress is 'none')"
}

# Another user's session: its socket is not in our state directory, and
# its supervisor refuses a peer of another user (session/control.c).
test_net_rules_of_another_users_session() {
	local n=ln$$d
	start_session "$n" --image minimal -p packages
	run setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/nonexistent XDG_RUNTIME_DIR= \
		"$SBX" net allow "$n" example.org
	assert_status 125
	assert_contains "$err" "$n"
}

# --for always writes the host into the session's profile (the user's own
# file), with a comment; a built-in profile is refused, nothing written.
test_net_allow_always_writes_the_users_profile() {
	local n=ln$$e p="$HOME/.config/sbxrun/profiles/live$$.ini"
	mkdir -p "$(dirname "$p")"
	printf 'inherit = packages\n[network]\nallow = pypi.org\n' > "$p"
	at_exit "rm -f '$p'"
	start_session "$n" --image minimal -p "live$$"
	run "$SBX" net allow --for always "$n" always.example.org:8443
	assert_status 0 "net allow --for always"
	assert_contains "$(cat "$p")" "allowed by 'sbxrun net allow --for always' for session '$n'"
	assert_contains "$(cat "$p")" "allow = always.example.org:8443"
	run "$SBX" profile show "live$$"
	assert_status 0 "the profile reads back"
	assert_contains "$out" "always.example.org:8443"
	assert_contains "$out" "pypi.org"
	local m=ln$$f
	start_session "$m" --image minimal -p packages
	run "$SBX" net allow --for always "$m" always.example.org
	assert_bad_input "is not one of yours"
	run "$SBX" session ls --json
	assert_not_contains "$(grep "\"name\":\"$m\"" <<<"$out")" "always.example.org"
}

# The policy's ceiling, changed while a session and a sidecar run: their
# next request is refused within a second, the change is on the event
# stream; a policy that cannot be read keeps the rules held, said once.
test_policy_change_reaches_a_session_and_a_sidecar() {
	local n=ln$$g
	echo hello > "$TESTDIR/hello.txt"
	http_serve "$TESTDIR"
	at_exit "kill $SRV 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$PORT" > "$TESTDIR/lab.ini"
	: > "$TESTDIR/policy.ini"
	export SBXRUN_POLICY=$TESTDIR/policy.ini
	start_session "$n" --image minimal -p "$TESTDIR/lab.ini" --events "$TESTDIR/ev.jsonl"
	"$SBX" proxy --listen 127.0.0.1:0 -p "$TESTDIR/lab.ini" --image minimal --events "$TESTDIR/side.jsonl" \
		2> "$TESTDIR/proxy.err" &
	local px=$!
	at_exit "kill $SRV $px 2>/dev/null || true"
	listen_port "$px" "$TESTDIR/proxy.err"
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 200 "$out" "the session before the policy changed"
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$LISTEN_PORT" "http://host.sbxrun.internal:$PORT/hello.txt"
	assert_eq 200 "$out" "the sidecar before the policy changed"
	# the administrator narrows [network] allow: written elsewhere, renamed in
	printf '[network]\nallow = pypi.org\n' > "$TESTDIR/policy.new"
	mv "$TESTDIR/policy.new" "$TESTDIR/policy.ini"
	sleep 1
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 403 "$out" "the session's next request, a second after"
	run curl -s -w '%{http_code}' -x "http://127.0.0.1:$LISTEN_PORT" "http://host.sbxrun.internal:$PORT/hello.txt"
	assert_contains "$out" "403" "the sidecar's next request, a second after"
	assert_contains "$out" "administrator's policy $TESTDIR/policy.ini"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" "\"policy\":\"$TESTDIR/policy.ini: pypi.org\",\"time\""
	assert_contains "$(cat "$TESTDIR/side.jsonl")" "\"event\":\"policy\""
	run "$SBX" session ls --json
	assert_contains "$(grep "\"name\":\"$n\"" <<<"$out")" "{\"rule\":\"policy\",\"host\":\"$TESTDIR/policy.ini: pypi.org\"}"
	# an approval cannot go past the policy either
	run "$SBX" net allow "$n" example.org
	assert_bad_input "not allowed by the administrator's policy $TESTDIR/policy.ini"
	# a file that cannot be read: the rules held are kept, and it is said
	# (a new command refuses to start under it: sbxrun run --session too)
	printf '[network]\nallow = \n[nonsense\n' > "$TESTDIR/policy.ini"
	sleep 1
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$LISTEN_PORT" "http://host.sbxrun.internal:$PORT/hello.txt"
	assert_eq 403 "$out" "a bad policy keeps the rules held (the sidecar)"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"policy":"unchanged (the rules held before are kept)"'
	assert_contains "$(cat "$TESTDIR/proxy.err")" "policy not read again, the rules held before are kept"
	[ "$(grep -c 'policy not read again' "$TESTDIR/proxy.err")" = 1 ] || fail "said more than once: $(cat "$TESTDIR/proxy.err")"
	touch "$TESTDIR/policy.ini"
	sleep 0.5
	[ "$(grep -c 'policy not read again' "$TESTDIR/proxy.err")" = 1 ] || fail "said again: $(cat "$TESTDIR/proxy.err")"
	# lifted again: the same session and sidecar reach the host
	: > "$TESTDIR/policy.ini"
	sleep 1
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 200 "$out" "after the policy was lifted"
	run curl -s -o /dev/null -w '%{http_code}' -x "http://127.0.0.1:$LISTEN_PORT" "http://host.sbxrun.internal:$PORT/hello.txt"
	assert_eq 200 "$out" "the sidecar after the policy was lifted"
}

test_etc_policy_change_reaches_a_running_session() {
	local n=ln$$h pol=/etc/sbxrun/policy.ini
	[ ! -e "$pol" ] || skip "$pol exists already: not this test's to change"
	echo hello > "$TESTDIR/hello.txt"
	http_serve "$TESTDIR"
	local made=
	[ -d /etc/sbxrun ] || { mkdir /etc/sbxrun; made=1; }
	at_exit "kill $SRV 2>/dev/null || true; rm -f '$pol'; [ -z '$made' ] || rmdir /etc/sbxrun 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$PORT" > "$TESTDIR/lab.ini"
	start_session "$n" --image minimal -p "$TESTDIR/lab.ini" --events "$TESTDIR/ev.jsonl"
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 200 "$out" "before the policy"
	printf '[network]\negress = none\n' > "$pol"
	sleep 1
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 403 "$out" "a second after root capped egress"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" "\"policy\":\"$pol: egress none\""
	# root's [packages] deny reaches the session's gateway the same way
	export XDG_CACHE_HOME="$TESTDIR/cache"
	local m=ln$$m p=pk$$m
	npm_fixture "$p"
	at_exit "kill $SRV $REG 2>/dev/null || true; rm -f '$pol' '$HOME/.config/sbxrun/profiles/$p.ini'; [ -z '$made' ] || rmdir /etc/sbxrun 2>/dev/null || true"
	rm -f "$pol"
	start_session "$m" --image minimal -p "$p" --events "$TESTDIR/ev2.jsonl"
	npm_get "$m" left-pad
	assert_eq 200 "$out" "left-pad before root's deny"
	printf '[packages]\ndeny = npm:left-pad\n' > "$pol"
	within_a_second "$m" left-pad 403
	assert_contains "$(cat "$TESTDIR/ev2.jsonl")" "\"packages\":\"deny = npm:left-pad (policy $pol:2)\",\"by\":\"policy\""
	rm -f "$pol"
}

# The fixture npm registry (tests/helper/npmreg.py) as a profile's npm
# upstream, in the user's profile $1 (its own lines after); sets REG, RPORT.
npm_fixture() { # profile-name [lines]
	python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	REG=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	RPORT=$(head -1 "$TESTDIR/.reg-port")
	[ -n "$RPORT" ] || fail "the fixture registry did not start"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\ntimeout = 2s\n%b' "$RPORT" "${2:-}" \
		> "$HOME/.config/sbxrun/profiles/$1.ini"
}

# The status of GET http://packages.sbxrun.internal/npm/$2 from session $1.
npm_get() { # session path
	run "$SBX" run --session "$1" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 \
		"http://packages.sbxrun.internal/npm/$2"
}

# The same through the sidecar on $SCPORT: status, then the body.
npm_side() { # path
	run curl -s -w ' %{http_code}' -x "http://127.0.0.1:$SCPORT" "http://packages.sbxrun.internal/npm/$1"
}

# Waits up to a second for session $1's npm_get of $2 to give $3; says
# how long it took.
within_a_second() { # session path status
	local t0
	t0=$(date +%s%N)
	for _ in $(seq 20); do
		npm_get "$1" "$2"
		[ "$out" = "$3" ] && break
		sleep 0.05
	done
	assert_eq "$3" "$out" "session $1's request for $2 a second after the change"
	echo "    $2: $3 after $(( ($(date +%s%N) - t0) / 1000000 )) ms" >&2
}

# Issue 42's "tried from outside": a [packages] deny or offline = yes added
# to the policy while a session and a sidecar run reaches their gateways:
# the next request is refused, the change is on each event stream, and the
# way around the gateway (the registry's own host through the proxy, open
# while no package rule exists) closes with it.
test_package_policy_reaches_a_session_and_a_sidecar() {
	local n=ln$$j p=pk$$j
	export XDG_CACHE_HOME="$TESTDIR/cache"
	npm_fixture "$p"
	at_exit "kill $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$p.ini'"
	: > "$TESTDIR/policy.ini"
	export SBXRUN_POLICY=$TESTDIR/policy.ini
	start_session "$n" --image minimal -p "$p" --events "$TESTDIR/ev.jsonl"
	"$SBX" proxy --listen 127.0.0.1:0 -p "$p" --image minimal --events "$TESTDIR/side.jsonl" \
		2> "$TESTDIR/proxy.err" &
	local sc=$!
	at_exit "kill $REG $sc 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$p.ini'"
	listen_port "$sc" "$TESTDIR/proxy.err"
	SCPORT=$LISTEN_PORT
	npm_get "$n" good
	assert_eq 200 "$out" "the session's gateway before the policy changed"
	npm_side good
	assert_contains "$out" " 200" "the sidecar's gateway before the policy changed"
	run "$SBX" run --session "$n" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 \
		"http://host.sbxrun.internal:$RPORT/left-pad"
	assert_eq 200 "$out" "the registry's own host, no package rule yet"
	# root denies a package: written elsewhere, renamed in
	printf '[packages]\ndeny = npm:left-pad\n' > "$TESTDIR/policy.new"
	mv "$TESTDIR/policy.new" "$TESTDIR/policy.ini"
	within_a_second "$n" left-pad 403
	npm_side left-pad
	assert_contains "$out" " 403" "the sidecar's next request"
	assert_contains "$out" "npm 'left-pad' is denied by [packages] deny = npm:left-pad (policy $TESTDIR/policy.ini:2)"
	npm_get "$n" good
	assert_eq 200 "$out" "a package the deny does not name"
	run "$SBX" run --session "$n" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 \
		"http://host.sbxrun.internal:$RPORT/left-pad"
	assert_eq 403 "$out" "the way around the gateway, closed with the first package rule"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" "\"packages\":\"deny = npm:left-pad (policy $TESTDIR/policy.ini:2)\",\"by\":\"policy\""
	assert_contains "$(cat "$TESTDIR/side.jsonl")" "\"packages\":\"deny = npm:left-pad (policy $TESTDIR/policy.ini:2)\""
	# offline: only what the cache holds (good's packument is cached, other never asked)
	printf '[packages]\noffline = yes\n' > "$TESTDIR/policy.ini"
	within_a_second "$n" other 503
	npm_side other
	assert_contains "$out" "offline: npm 'other' is not in the cache"
	assert_eq 0 "$(grep -c '^other' "$TESTDIR/reg.log" || true)" "upstream requests for other"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"packages":"offline","by":"policy"'
	# a file that cannot be read keeps what is held, said once
	printf '[packages]\noffline = perhaps\n' > "$TESTDIR/policy.ini"
	sleep 0.5
	npm_side other
	assert_contains "$out" "offline: npm 'other' is not in the cache" "a bad policy keeps the rules held (the sidecar)"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"policy":"unchanged (the rules held before are kept)"'
	touch "$TESTDIR/policy.ini"
	sleep 0.3
	[ "$(grep -c 'policy not read again' "$TESTDIR/proxy.err")" = 1 ] || fail "said other than once: $(cat "$TESTDIR/proxy.err")"
	# lifted: the same session and sidecar fetch again
	: > "$TESTDIR/policy.ini"
	within_a_second "$n" other 200
	npm_side left-pad
	assert_contains "$out" " 200" "the sidecar after the policy was lifted"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"packages":"none","by":"policy"'
}

# The session's own profile read again: a [packages] deny and a narrower
# [network] allow apply to its next requests, the command line's values
# of the start kept; a profile that no longer reads keeps the rules held.
test_profile_change_reaches_a_running_session() {
	local n=ln$$k p=pk$$k
	export XDG_CACHE_HOME="$TESTDIR/cache"
	echo hello > "$TESTDIR/hello.txt"
	http_serve "$TESTDIR"
	npm_fixture "$p" "[network]\nallow = host.sbxrun.internal:$PORT\n"
	local prof=$HOME/.config/sbxrun/profiles/$p.ini
	at_exit "kill $REG $SRV 2>/dev/null || true; rm -f '$prof'"
	start_session "$n" --image minimal -p "$p" --events "$TESTDIR/ev.jsonl" --allow example.org
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 200 "$out" "the profile's host before the change"
	npm_get "$n" left-pad
	assert_eq 200 "$out" "left-pad before the change"
	printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\ntimeout = 2s\ndeny = npm:left-pad\n' \
		"$RPORT" > "$prof.new"
	mv "$prof.new" "$prof"
	within_a_second "$n" left-pad 403
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 403 "$out" "the host the profile no longer allows"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" "\"packages\":\"deny = npm:left-pad ($prof:5)\",\"by\":\"profile $prof\""
	run "$SBX" session ls --json
	local line
	line=$(grep "\"name\":\"$n\"" <<<"$out") || fail "no line for $n: $out"
	assert_contains "$line" '{"rule":"allow","host":"example.org"}' "the command line's --allow, kept"
	assert_not_contains "$line" "host.sbxrun.internal:$PORT\"" "the entry the profile dropped"
	# a profile that does not read: what it gave at the start stands in for
	# it (left-pad served again, the host reached again), said once
	printf '[packages]\ndeny = \xff\n' > "$prof"
	within_a_second "$n" left-pad 200
	get "$n" "host.sbxrun.internal:$PORT"
	assert_eq 200 "$out" "the host the profile allowed at the start"
	touch "$prof"
	sleep 0.3
	assert_eq 1 "$(grep -c '"policy":"profile not read again (what it gave at the start is kept)"' "$TESTDIR/ev.jsonl")" \
		"said once: $(cat "$TESTDIR/ev.jsonl")"
}

# Ask (issue 42, item 1): with [network] ask, a request no rule allows or
# refuses is held, listed by net pending, and completed by net allow from
# another shell; a deny ("no"), the timeout, or no one to ask (a run outside
# a session) is the same 403 as without ask; an address class is never held.
test_ask_holds_until_net_allow_and_refuses_on_no_or_timeout() {
	local n=ln$$i
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 3s\n' > "$TESTDIR/ask.ini"
	https_proxy="http://127.0.0.1:$PXPORT" start_session "$n" --image minimal -p "$TESTDIR/ask.ini" \
		--events "$TESTDIR/ev.jsonl"
	"$SBX" run --session "$n" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 \
		http://asked.invalid/hello.txt > "$TESTDIR/held.out" 2>&1 &
	local held=$!
	local listed=
	for _ in $(seq 50); do
		run "$SBX" net pending "$n"
		[[ "$out" == *asked.invalid:80* ]] && { listed=1; break; }
		sleep 0.1
	done
	[ -n "$listed" ] || fail "the held request is not listed by net pending: $out $err"
	run "$SBX" net pending
	assert_contains "$out" "$n" "net pending without a session lists every session's"
	kill -0 "$held" 2>/dev/null || fail "the request was answered before anyone was asked: $(cat "$TESTDIR/held.out")"
	run "$SBX" net allow "$n" asked.invalid
	assert_status 0
	wait "$held" || true
	assert_eq 200 "$(cat "$TESTDIR/held.out")" "the held request, completed by net allow"
	assert_contains "$(cat "$TESTDIR/ev.jsonl")" '"host":"asked.invalid","port":80,"decision":"asked"'
	run "$SBX" net pending "$n"
	assert_not_contains "$out" "asked.invalid" "decided: no longer pending"
	# "no": a deny while it is held refuses it at once
	"$SBX" run --session "$n" -- curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 \
		http://refused.invalid/hello.txt > "$TESTDIR/no.out" 2>&1 &
	held=$!
	for _ in $(seq 50); do
		run "$SBX" net pending "$n"
		[[ "$out" == *refused.invalid* ]] && break
		sleep 0.1
	done
	run "$SBX" net deny "$n" refused.invalid
	assert_status 0
	wait "$held" || true
	assert_eq 403 "$(cat "$TESTDIR/no.out")" "a held request denied"
	# no answer: refused at the timeout (3 s), not before
	local t0 t1
	t0=$(date +%s%N)
	get "$n" unanswered.invalid
	t1=$(date +%s%N)
	assert_eq 403 "$out" "no answer within ask_timeout"
	[ $(( (t1 - t0) / 1000000 )) -ge 2500 ] || fail "refused after $(( (t1 - t0) / 1000000 )) ms, before ask_timeout"
	# never held: what no approval could reach
	t0=$(date +%s%N)
	get "$n" 10.1.2.3
	t1=$(date +%s%N)
	assert_eq 403 "$out" "a private address"
	[ $(( (t1 - t0) / 1000000 )) -lt 2500 ] || fail "a private address was held"
	# no one to ask: a run outside a session refuses at once
	https_proxy="http://127.0.0.1:$PXPORT" run "$SBX" run --image minimal -p "$TESTDIR/ask.ini" -- \
		curl -s -o /dev/null -w '%{http_code}' -x http://127.0.0.1:3128 http://asked.invalid/hello.txt
	assert_eq 403 "$out" "a run has no one to ask"
	run "$SBX" net pending nosuch$$
	assert_bad_input "session 'nosuch$$' is not running"
	run "$SBX" profile show agent
	assert_contains "$out" "ask = yes"
}

# Ask on the terminal (issue 42, item 1): an interactive run -t with ask
# holds a request and asks on the caller's stderr, naming the rule each key
# makes; the key is read from the caller's terminal and never reaches the
# sandbox (what is typed meanwhile is dropped); "a" also writes the user's
# own profile; "n" is the 403 of a deny.
test_ask_on_the_terminal_of_run_t() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 20s\n' > "$TESTDIR/ask.ini"
	local q='curl -s -o /dev/null -w "%{http_code}\n" -x http://127.0.0.1:3128'
	local s
	s=$(tmux_start "https_proxy=http://127.0.0.1:$PXPORT '$SBX' run -t --image minimal -p $TESTDIR/ask.ini -- sh -c '
		$q http://asked.invalid/hello.txt; $q http://asked.invalid/hello.txt; read x; echo \"got[\$x]\";
		$q http://no.invalid/hello.txt; echo done'; sleep 60")
	at_exit "kill $SRV $FWD 2>/dev/null || true; tmux -L $s kill-server 2>/dev/null || true"
	wait_for "$s" "asks to reach asked.invalid:80"
	# (the line wraps on the 100 columns: compared without spaces and ends of lines)
	assert_contains "$(screen "$s" | tr -d '\n ')" "$(tr -d ' ' <<<"[o] allow-once asked.invalid:80  [s] allow-session asked.invalid:80  [n] deny asked.invalid:80  [a] allow-session asked.invalid:80 and allow = asked.invalid:80 in $TESTDIR/ask.ini ?")"
	keys "$s" x
	keys "$s" a
	wait_for "$s" "200"
	# always: the profile (the user's own file) holds the host, with why
	assert_contains "$(cat "$TESTDIR/ask.ini")" "allowed by the answer 'always' on the terminal"
	assert_contains "$(cat "$TESTDIR/ask.ini")" "allow = asked.invalid:80"
	# and this run holds it too: the second request is not asked
	sleep 0.5
	assert_eq 1 "$(screen "$s" | grep -c 'asks to reach asked.invalid')" "asked once for the session"
	keys "$s" hi Enter
	wait_for "$s" "got["
	assert_contains "$(screen "$s")" "got[hi]" "the sandbox read neither the answer nor the key dropped while asked"
	wait_for "$s" "asks to reach no.invalid:80"
	keys "$s" n
	wait_for "$s" "done"
	assert_contains "$(screen "$s")" "403"
}

# Ask on the terminal of a session's client (issue 42, item 1): `run -t
# --session` relays the session's held requests to its own terminal, as a
# one-shot run -t does; its answer becomes the session's rule, and a request
# decided elsewhere (`net deny` from another shell) is taken back from the
# question.
test_ask_on_the_terminal_of_a_session_client() {
	command -v tmux >/dev/null || skip "tmux is not installed"
	local n=lt$$i
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 20s\n' > "$TESTDIR/ask.ini"
	https_proxy="http://127.0.0.1:$PXPORT" start_session "$n" --image minimal -p "$TESTDIR/ask.ini"
	local q='curl -s -o /dev/null -w "%{http_code}\n" -x http://127.0.0.1:3128'
	local s
	s=$(tmux_start "'$SBX' run -t --session $n -- sh -c '
		$q http://asked.invalid/hello.txt; echo one; $q http://no.invalid/hello.txt; sleep 1; echo done'; sleep 60")
	at_exit "kill $SRV $FWD 2>/dev/null || true; tmux -L $s kill-server 2>/dev/null || true"
	wait_for "$s" "asks to reach asked.invalid:80"
	assert_contains "$(screen "$s" | tr -d '\n ')" "[s]allow-sessionasked.invalid:80[n]denyasked.invalid:80[a]allow-sessionasked.invalid:80andallow=asked.invalid:80in$TESTDIR/ask.ini?" "the session client's question, with always for the session's own profile"
	keys "$s" s
	wait_for "$s" "one"
	assert_contains "$(screen "$s")" "200" "answered on the client's terminal: the held request completed"
	run "$SBX" session ls --json
	assert_contains "$out" '{"rule":"allow-session","host":"asked.invalid:80"}' "the answer, a rule the session holds"
	# decided from another shell while the question is on the terminal
	wait_for "$s" "asks to reach no.invalid:80"
	run "$SBX" net deny "$n" no.invalid
	assert_status 0
	wait_for "$s" "done"
	assert_contains "$(screen "$s")" "decided elsewhere" "the question taken back"
	assert_contains "$(screen "$s")" "403"
}

# Ask through MCP (issue 42, item 1): `sbxrun mcp` with a client that
# declared elicitation asks each held connection with elicitation/create
# (MCP 2025-06-18) naming the rule each choice makes; accept applies it,
# decline is a deny (403 at once); the tool network_requests lists what is
# held and approves nothing.
test_ask_through_mcp_elicitation() {
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 20s\n' > "$TESTDIR/ask.ini"
	https_proxy="http://127.0.0.1:$PXPORT" python3 - "$SBX" "$TESTDIR/ask.ini" <<'PY' > "$TESTDIR/mcp.out" 2>&1 || true
import json, subprocess, sys
sbx, prof = sys.argv[1:3]
p = subprocess.Popen([sbx, "mcp", "--image", "minimal", "-p", prof],
                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(m):
    p.stdin.write((json.dumps(dict(m, jsonrpc="2.0")) + "\n").encode()); p.stdin.flush()
def read():
    return json.loads(p.stdout.readline())
send({"id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18",
      "capabilities": {"elicitation": {}}, "clientInfo": {"name": "t", "version": "1"}}})
assert read()["id"] == 0
curl = "curl -s -o /dev/null -w %%{http_code} -x http://127.0.0.1:3128 http://%s/hello.txt"
asked = 0
def held(n, host, answer, times=1):
    global asked
    cmd = "for i in %s; do %s; echo; done" % (" ".join(["x"] * times), curl % host)
    send({"id": n, "method": "tools/call", "params": {"name": "exec", "arguments": {"cmd": ["sh", "-c", cmd]}}})
    while True:
        m = read()
        if m.get("method") == "elicitation/create":
            asked += 1
            text = m["params"]["message"]
            assert "asks to reach %s:80" % host in text and "allow-once %s:80" % host in text, m
            assert m["params"]["requestedSchema"]["properties"]["decision"]["enum"] == ["allow-once", "allow-session", "deny"], m
            # the agent's side meanwhile: it can list, never approve
            send({"id": n + 100, "method": "tools/call", "params": {"name": "network_requests", "arguments": {}}})
            r = read()
            assert r["id"] == n + 100 and "%s:80 held" % host in r["result"]["content"][0]["text"], r
            send({"id": m["id"], "result": answer})
        elif m.get("id") == n:
            return m["result"]["structuredContent"]["stdout"].replace("\n", " ").strip()
once = {"action": "accept", "content": {"decision": "allow-once"}}
print("accept", held(1, "asked.invalid", once))
# allow-once is one connection: the next, held a few milliseconds later
# (between two looks of the server's), is asked again
asked = 0
print("again", held(4, "asked.invalid", once, times=2), "asked", asked)
print("decline", held(2, "no.invalid", {"action": "decline"}))
print("rules", subprocess.run([sbx, "session", "ls", "--json"], capture_output=True, text=True).stdout)
send({"id": 3, "method": "tools/call", "params": {"name": "allow_host", "arguments": {"host": "x.invalid"}}})
print("allow_host", json.dumps(read()))
p.stdin.close(); p.wait(60)
PY
	local o
	o=$(cat "$TESTDIR/mcp.out")
	assert_contains "$o" "accept 200" "accepted allow-once: the held request completed"
	assert_contains "$o" "again 200 200 asked 2" "allow-once: a connection held right after it is asked again"
	assert_contains "$o" "decline 403" "declined: refused at once"
	assert_contains "$o" "unknown tool" "no tool approves a host"
	assert_contains "$o" '{"rule":"deny","host":"no.invalid:80"}' "the user's no, a deny the session holds"
}

# The same through the official MCP SDK client (tests/mcp/elicit.mjs): it
# declares elicitation, answers allow-once and decline, and meanwhile finds
# that none of the agent's tools can approve a host.
test_ask_through_the_mcp_sdk_client() {
	install_sdk
	fixtures
	at_exit "kill $SRV $FWD 2>/dev/null || true"
	printf 'inherit = packages\n[network]\nask = yes\nask_timeout = 20s\n' > "$TESTDIR/ask.ini"
	https_proxy="http://127.0.0.1:$PXPORT" run timeout 120 node sdk/elicit.mjs "$SBX" "$TESTDIR/ask.ini"
	[ "$status" = 0 ] || fail "client: $out $err"
	assert_contains "$out" "ok accepted allow-once: the held request completed"
	assert_contains "$out" "ok allow-once: the next request is asked again"
	assert_contains "$out" "ok declined: refused"
	assert_contains "$out" "ok no tool of the agent's approves a host"
	assert_contains "$out" "ok closed"
}
