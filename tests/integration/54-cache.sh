# also-as-root
# root-only: test_system_cache_root_filled_is_read_first test_system_cache_fill_refuses_what_root_does_not_own test_system_cache_a_users_flocks_stall_no_fill_and_a_wait_ends
# The package gateway's cache (issue 27): the size cap and its
# least-recently-used eviction, `sbxrun cache ls|du|prune|fill`, 20
# sandboxes at once sharing one upstream download per artifact, and the
# system cache root fills and users read first (refused when anyone but
# root may write it). The fixture registry (tests/helper/npmreg.py) is
# the upstream; it logs each request, and each tarball's bytes sent.

# Starts the fixture registry (REG, RPORT) and a lab profile naming it,
# with the extra [packages] lines given; each test has its own cache.
cache_fixture() { # [ini lines]
	export XDG_CACHE_HOME="$TESTDIR/cache"
	python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	REG=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	RPORT=$(head -1 "$TESTDIR/.reg-port")
	[ -n "$RPORT" ] || fail "the fixture registry did not start"
	PROF="cachelab$$"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\ntimeout = 5s\n%s\n' \
		"$RPORT" "${1:-}" > "$HOME/.config/sbxrun/profiles/$PROF.ini"
	at_exit "kill $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$PROF.ini'"
}

# The shell function a sandbox uses to fetch tarballs through the gateway.
GET='get() { for p in "$@"; do curl -sS -x "$npm_config_proxy" -o "/tmp/$p.tgz" -w "$p %{http_code}\n" \
	"http://packages.sbxrun.internal/npm/$p/-/$p-1.0.0.tgz"; done; }'

# "NAME CACHE" per package event of an events file
cache_events() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "package":
        print(e["name"], e["cache"])' "$1"
}

upstream_fetches() { # package
	grep -c "^$1/-/" "$TESTDIR/reg.log" || true
}

test_cap_evicts_least_recently_used() {
	cache_fixture "cache_max = 100K"
	# pad1..pad3 are 40K each: pad1 is used again after pad2, so when pad3
	# takes the cache past 100K, pad2 (the least recently used) goes
	run "$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev" -- sh -c "$GET"'
		get pad1 pad2; sleep 0.05; get pad1; sleep 0.05; get pad3'
	assert_status 0
	assert_contains "$out" "pad3 200"
	assert_eq "pad1 miss
pad2 miss
pad1 hit
pad3 miss" "$(cache_events "$TESTDIR/ev")" "events"
	run "$SBX" cache ls -p "$PROF"
	assert_status 0
	assert_contains "$out" "pad1"
	assert_contains "$out" "pad3"
	assert_not_contains "$out" "pad2"
	# what was evicted is fetched again, whole and verified
	run "$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev2" -- sh -c "$GET"'
		get pad2 && tar -xzOf /tmp/pad2.tgz package/package.json'
	assert_status 0
	assert_contains "$out" '"name": "pad2"'
	assert_eq "pad2 miss" "$(cache_events "$TESTDIR/ev2")"
	assert_eq 2 "$(upstream_fetches pad2)" "upstream fetches of pad2"
	assert_eq 1 "$(upstream_fetches pad1)" "upstream fetches of pad1"
	# and the cache stays under its cap: pad1, the least recently used, went
	run "$SBX" cache du -p "$PROF"
	assert_contains "$out" "npm        2 artifacts"
	# a pod's sidecar keeps the cap its command line gives (the one its
	# cache volume was sized from), not the profile's: under 50K, good's
	# commit evicts pad3, the least recently used, where 100K would keep it
	"$SBX" proxy --listen 127.0.0.1:0 --profile "$PROF" --image minimal --cache-max 50K 2> "$TESTDIR/sc.err" &
	local sc=$!
	at_exit "kill $REG $sc 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$PROF.ini'"
	listen_port "$sc" "$TESTDIR/sc.err"
	run curl -sS -x "http://127.0.0.1:$LISTEN_PORT" -o /dev/null -w '%{http_code}' \
		http://packages.sbxrun.internal/npm/good/-/good-1.0.0.tgz
	kill "$sc"
	wait "$sc" || true
	assert_eq 200 "$out" "good through the sidecar ($err)"
	run "$SBX" cache ls -p "$PROF"
	assert_contains "$out" "pad2"
	assert_contains "$out" " good "
	assert_not_contains "$out" "pad3"
}

test_cache_ls_du_prune() {
	cache_fixture
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$GET"'; get good pad1 pad2'
	assert_status 0
	run "$SBX" cache ls
	assert_status 0
	assert_contains "$out" "ECO   NAME"
	assert_contains "$(printf '%s\n' "$out" | grep ' good ')" "npm   good                             1.0.0"
	assert_contains "$(printf '%s\n' "$out" | grep ' pad1 ')" "40.4K"
	assert_contains "$out" "sha512:"
	# the packuments the tarballs were looked up in, with their upstream
	assert_contains "$(printf '%s\n' "$out" | grep ' good ')" "npm   good                             (index)"
	assert_contains "$out" "http://host.sbxrun.internal:$RPORT/"
	run "$SBX" cache du
	assert_status 0
	assert_contains "$out" "npm        3 artifacts    80.9K"
	assert_contains "$out" "npm        3 indexes "
	assert_contains "$out" "total      6 files "
	assert_contains "$out" "  $XDG_CACHE_HOME/sbxrun/packages"
	# least recently used first: good and pad1 go with their packuments,
	# pad2 stays with its own
	run "$SBX" cache prune --max 50K
	assert_status 0
	assert_contains "$out" "evicted 4 files ("
	assert_contains "$out" "2 left ("
	run "$SBX" cache ls
	assert_contains "$out" "pad2"
	assert_not_contains "$out" "pad1"
	run "$SBX" cache prune --older 1h
	assert_contains "$out" "evicted 0 files (0B); 2 left ("
	run "$SBX" cache prune --all
	assert_contains "$out" "evicted 2 files ("
	assert_contains "$out" "0 left (0B)"
	assert_eq "" "$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha512" | grep -v '\.lock$' || true)" "files left"
	[ ! -e "$XDG_CACHE_HOME/sbxrun/packages/index" ] || fail "index documents left after prune --all"
	# bad input: one line naming the value, exit 125
	run "$SBX" cache prune --max 0
	assert_bad_input "cache prune: --max: '0': zero is not a size (use --all)"
	run "$SBX" cache prune --older soon
	assert_bad_input "cache prune: --older"
	assert_contains "$err" "soon"
	run "$SBX" cache ls extra
	assert_bad_input "cache ls: unexpected argument 'extra'"
	run "$SBX" cache nosuch
	assert_bad_input "cache: unknown command 'nosuch'"
	printf 'curl\nBad_Name!\n' > "$TESTDIR/pkgs.list"
	run "$SBX" cache fill "$TESTDIR/pkgs.list"
	assert_bad_input "cache fill: $TESTDIR/pkgs.list:2: 'Bad_Name!' is not a Debian package name"
	run "$SBX" cache fill "$TESTDIR/pkgs.list" --image minimal
	assert_bad_input "cache fill: unexpected argument '--image' (options go before FILE)"
	printf '{"name": "x"}\n' > "$TESTDIR/package-lock.json"
	run "$SBX" cache fill "$TESTDIR/package-lock.json"
	assert_bad_input "cache fill: '$TESTDIR/package-lock.json' is not a package-lock.json of npm 7 or later"
	if [ "$(id -u)" != 0 ]; then
		run "$SBX" cache prune --system --all
		assert_bad_input "cache prune --system: only root writes the system cache"
	fi
}

test_twenty_sandboxes_make_one_fetch_per_artifact() {
	cache_fixture
	local t0=$SECONDS pids=() i
	# each of set-a..set-d is sent a second after it is asked for, so the
	# sandboxes' requests meet while the downloads are under way
	for i in $(seq 20); do
		"$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev$i" -- sh -c "$GET"'
			for p in set-a set-b set-c set-d; do get $p & done; wait
			for p in set-a set-b set-c set-d; do tar -xzOf /tmp/$p.tgz package/package.json | grep -c "\"name\": \"$p\""; done' \
			> "$TESTDIR/out$i" 2>&1 &
		pids+=($!)
	done
	for i in $(seq 20); do
		wait "${pids[$((i - 1))]}" || fail "sandbox $i: $(cat "$TESTDIR/out$i")"
		assert_eq "4" "$(grep -c '^1$' "$TESTDIR/out$i")" "sandbox $i's tarballs: $(cat "$TESTDIR/out$i")"
	done
	echo "20 sandboxes, 4 tarballs each: $((SECONDS - t0)) s" >&2
	local p
	for p in set-a set-b set-c set-d; do
		assert_eq 1 "$(upstream_fetches "$p")" "upstream fetches of $p"
	done
	cat "$TESTDIR"/ev* > "$TESTDIR/ev"
	local ev
	ev=$(cache_events "$TESTDIR/ev")
	assert_eq 80 "$(printf '%s\n' "$ev" | grep -c .)" "package events"
	assert_eq 4 "$(printf '%s\n' "$ev" | grep -c ' miss$')" "downloads: $ev"
	# the upstream moved each tarball's bytes once: about 1x the set
	local moved set
	moved=$(awk '{ s += $2 } END { print s }' "$TESTDIR/reg.log.bytes")
	set=$(ls -l "$XDG_CACHE_HOME/sbxrun/packages/sha512" | awk '$NF ~ /^[0-9a-f]+$/ { s += $5 } END { print s }')
	assert_eq "$set" "$moved" "bytes moved upstream against the set's"
}

# An index document is served from the cache unasked for index_max_age
# (two minutes unless said), then revalidated: the upstream's
# Last-Modified is kept with it and sent back as If-Modified-Since; a 304
# serves the kept copy whole. With index_max_age = none every request asks.
# (index_max_stale = none: the revalidation in the foreground.)
test_index_revalidated_with_if_modified_since() {
	cache_fixture 'index_max_stale = none'
	local doc get_doc
	get_doc='curl -sS -x "$npm_config_proxy" -w " %{http_code}\n" http://packages.sbxrun.internal/npm/good'
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$get_doc; $get_doc"
	assert_status 0
	doc=$(echo "$XDG_CACHE_HOME"/sbxrun/packages/index/npm/*/+good)
	assert_contains "$out" '"name":"good"'
	assert_eq 2 "$(printf '%s\n' "$out" | grep -c '} 200')" "answers"
	assert_eq 1 "$(grep -c '^good$' "$TESTDIR/reg.log")" "packument requests upstream while fresh"
	assert_eq $'\tThu, 01 Jan 2026 00:00:00 GMT' "$(head -1 "$doc")" "the validators kept"
	touch -d '-5 min' "$doc"
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$get_doc"
	assert_status 0
	assert_contains "$out" '"name":"good"'
	assert_contains "$out" "} 200"
	assert_eq "good" "$(cat "$TESTDIR/reg.log.304")" "revalidations answered 304"
	assert_eq 2 "$(grep -c '^good$' "$TESTDIR/reg.log")" "packument requests upstream"
	echo 'index_max_age = none' >> "$HOME/.config/sbxrun/profiles/$PROF.ini"
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$get_doc"
	assert_status 0
	assert_contains "$out" "} 200"
	assert_eq 3 "$(grep -c '^good$' "$TESTDIR/reg.log")" "packument requests upstream (index_max_age = none)"
}

# Index documents count under cache_max as artifacts do (issue 34, point
# 5: a sandbox whose own disk is small filled the host's cache with
# packuments no cap counted): past the cap the least recently used go,
# whatever they are; ls and du show them, prune evicts them.
test_index_documents_under_the_cap() {
	cache_fixture "cache_max = 100K"
	local doc='doc() { for p in "$@"; do curl -sS -x "$npm_config_proxy" -o /dev/null -w "$p %{http_code}\n" "http://packages.sbxrun.internal/npm/$p"; done; }'
	# big1..big3's packuments are 40K each: big1 is read again after big2
	# (fresh: from the cache), so when big3 crosses the cap, big2 goes
	run "$SBX" run -p "$PROF" --image minimal --disk 16M -- sh -c "$doc"'; doc big1 big2; sleep 0.05; doc big1; sleep 0.05; doc big3'
	assert_status 0
	assert_eq 4 "$(printf '%s\n' "$out" | grep -c ' 200$')" "answers: $out"
	assert_eq 1 "$(grep -c '^big1$' "$TESTDIR/reg.log")" "big1 asked upstream"
	run "$SBX" cache ls -p "$PROF"
	assert_status 0
	assert_contains "$(printf '%s\n' "$out" | grep ' big1 ')" "(index, full)"
	assert_contains "$(printf '%s\n' "$out" | grep ' big3 ')" "http://host.sbxrun.internal:$RPORT/"
	assert_contains "$out" "index:"
	assert_not_contains "$out" "big2"
	run "$SBX" cache du -p "$PROF"
	assert_status 0
	assert_contains "$out" "npm        2 indexes      80."
	assert_contains "$out" "total      2 files        80."
	# what was evicted is asked for again; the cap holds
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$doc"'; doc big2'
	assert_contains "$out" "big2 200"
	assert_eq 2 "$(grep -c '^big2$' "$TESTDIR/reg.log")" "big2 asked upstream"
	run "$SBX" cache du -p "$PROF"
	assert_contains "$out" "npm        2 indexes"
	run "$SBX" cache prune --max 50K
	assert_status 0
	assert_contains "$out" "evicted 1 files (40."
	assert_contains "$out" "1 left (40."
	run "$SBX" cache prune --all
	assert_contains "$out" "evicted 1 files (40."
	[ ! -e "$XDG_CACHE_HOME/sbxrun/packages/index" ] || fail "index documents left after prune --all"
}

# Issue 34, point 7: past index_max_age an index is served from the cache
# at once and revalidated in the background (stale-while-revalidate),
# within index_max_stale; past that, in the foreground. Debian's npm
# installs a tree of 40 packages three times; the fixture registry holds
# every revalidation (a 304) until the test lets it go, so an install
# that waited for one would not end. Ages are made with touch.
test_stale_index_served_while_revalidated() {
	NPMREG_TREE=40:6 NPMREG_HOLD_304=1 cache_fixture 'index_max_stale = 1h'
	"$SBX" image inspect node >/dev/null 2>&1 || fail "the node test image is not imported (tests/images.sh)"
	sed -i '/^timeout = /d' "$HOME/.config/sbxrun/profiles/$PROF.ini"  # the default 30 s of silence
	local install='cd /tmp && npm install --no-audit --no-fund --fetch-retries=0 tree-0 2>&1 | tail -3; echo installed; sleep ${1:-0}'
	run timeout 120 "$SBX" run -p "$PROF" --image node -- sh -c "$install"
	assert_contains "$out" "added 40 packages" "cold install"
	age_index() { find "$XDG_CACHE_HOME/sbxrun/packages/index" -type f -exec touch -d "$1" {} +; }
	# 5 minutes old: past index_max_age (2m), within index_max_stale
	age_index '-5 min'
	timeout 40 "$SBX" run -p "$PROF" --image node --events "$TESTDIR/ev2" -- sh -c "$install" sh 5 \
		> "$TESTDIR/out2" 2>&1 &
	local pid=$! i
	for i in $(seq 400); do grep -q '^installed' "$TESTDIR/out2" && break; sleep 0.1; done
	touch "$TESTDIR/reg.log.release304"
	wait "$pid" || fail "the install that should not wait for upstream: $(cat "$TESTDIR/out2")"
	assert_contains "$(cat "$TESTDIR/out2")" "added 40 packages" "install past index_max_age"
	assert_eq 40 "$(reval_events "$TESTDIR/ev2" | grep -c ' 304 background')" \
		"revalidated in the background: $(reval_events "$TESTDIR/ev2")"
	assert_eq 40 "$(grep -c '^tree-' "$TESTDIR/reg.log.304")" "revalidations upstream"
	# 2 hours old: past index_max_stale, so npm waits for upstream
	rm "$TESTDIR/reg.log.release304"
	age_index '-2 hours'
	timeout 60 "$SBX" run -p "$PROF" --image node --events "$TESTDIR/ev3" -- sh -c "$install" \
		> "$TESTDIR/out3" 2>&1 &
	pid=$!
	sleep 4
	grep -q '^installed' "$TESTDIR/out3" && fail "installed without waiting for upstream: $(cat "$TESTDIR/out3")"
	touch "$TESTDIR/reg.log.release304"
	wait "$pid" || fail "install past index_max_stale: $(cat "$TESTDIR/out3")"
	assert_contains "$(cat "$TESTDIR/out3")" "added 40 packages" "install past index_max_stale"
	assert_eq 40 "$(reval_events "$TESTDIR/ev3" | grep -c ' 304 foreground')" \
		"revalidated in the foreground: $(reval_events "$TESTDIR/ev3")"
}

# "INDEX STATUS background|foreground" per index-revalidated event
reval_events() {
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "index-revalidated":
        print(e["index"], e["status"], "background" if e["background"] else "foreground")' "$1"
}

# A system cache anyone but root may write is never read: a warning, and
# the artifact comes from upstream again.
test_system_cache_writable_by_others_is_refused() {
	cache_fixture "cache = $TESTDIR/sys"
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$GET"'; get good'
	assert_status 0
	cp -a "$XDG_CACHE_HOME/sbxrun/packages" "$TESTDIR/sys"
	chmod 0777 "$TESTDIR/sys"
	export XDG_CACHE_HOME="$TESTDIR/cache2"
	run "$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev" -- sh -c "$GET"'; get good'
	assert_status 0
	assert_contains "$out" "good 200"
	assert_contains "$err" "sbxrun: warning: the system package cache '$TESTDIR/sys' is ignored:"
	if [ "$(id -u)" = 0 ]; then
		assert_contains "$err" "is writable by others than root (mode 0777)"
	else
		assert_contains "$err" "belongs to uid $(id -u), not root"
	fi
	assert_eq "good miss" "$(cache_events "$TESTDIR/ev")"
	assert_eq 2 "$(upstream_fetches good)" "upstream fetches of good"
}

# Root fills the system cache; a run with an empty cache of its own is
# served from it (digest-verified, read-only) and a user lists it.
test_system_cache_root_filled_is_read_first() {
	cache_fixture "cache = $TESTDIR/sys"
	run "$SBX" run -p "$PROF" --image minimal -- sh -c "$GET"'; get good pad1'
	assert_status 0
	mkdir -m 0755 "$TESTDIR/sys"
	cp -r "$XDG_CACHE_HOME/sbxrun/packages/sha512" "$XDG_CACHE_HOME/sbxrun/packages/index" "$TESTDIR/sys/"
	chmod -R go-w,a+rX "$TESTDIR/sys"
	chmod 0755 "$TESTDIR"
	# damage one file of the system cache: never served, fetched again
	local f
	f=$(grep -l $'\tpad1\t' "$TESTDIR"/sys/sha512/*.meta)
	printf 'x' >> "${f%.meta}"
	export XDG_CACHE_HOME="$TESTDIR/cache2"
	run "$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev" -- sh -c "$GET"'
		get good pad1; tar -xzOf /tmp/pad1.tgz package/package.json'
	assert_status 0
	assert_contains "$out" '"name": "pad1"'
	assert_eq "good hit
pad1 miss" "$(cache_events "$TESTDIR/ev")"
	assert_eq 1 "$(upstream_fetches good)" "upstream fetches of good"
	# its packument too came from the system cache (fresh: copied just now)
	assert_eq 1 "$(grep -c '^good$' "$TESTDIR/reg.log")" "packument requests upstream"
	# good was not copied into the user's cache; the damaged pad1 was fetched
	assert_eq 1 "$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha512" | grep -c '^[0-9a-f]*$')" "user's cache"
	run "$SBX" cache ls --system -p "$PROF"
	assert_contains "$out" "good"
	run setpriv --reuid 65534 --regid 65534 --clear-groups env HOME="$HOME" "$SBX" cache ls --system -p "$PROF"
	assert_status 0
	assert_contains "$out" "npm   good"
	# any ecosystem's index directory that others may write spoils it all
	mkdir -m 0777 "$TESTDIR/sys/index/pypi"
	export XDG_CACHE_HOME="$TESTDIR/cache3"
	run "$SBX" run -p "$PROF" --image minimal --events "$TESTDIR/ev3" -- sh -c "$GET"'; get good'
	assert_status 0
	assert_contains "$err" "sbxrun: warning: the system package cache '$TESTDIR/sys' is ignored: index: 'pypi' is writable by others than root (mode 0777)"
	assert_eq "good miss" "$(cache_events "$TESTDIR/ev3")"
}

# Root fills, prunes and commits to the system cache only where it is
# root's all the way down (issue 34, point 14): where the administrator's
# cache lies in a sticky world-writable directory, a user who made it
# first, or a symlink swapped in for one of its directories, steered
# root's writes (a chmod through the symlink made a root-only directory
# 0755). uid 65534 plays the user; the refusal names path and owner, and
# nothing is written.
test_system_cache_fill_refuses_what_root_does_not_own() {
	cache_fixture "cache = $TESTDIR/sys"
	printf '{"lockfileVersion": 3, "packages": {"": {"name": "x"}}}\n' > "$TESTDIR/package-lock.json"
	mkdir -m 0755 "$TESTDIR/sys"
	chown 65534:65534 "$TESTDIR/sys"
	run "$SBX" cache fill --system -p "$PROF" --image minimal "$TESTDIR/package-lock.json"
	assert_bad_input "cache fill --system: refused: '$TESTDIR/sys' belongs to uid 65534, not root"
	assert_eq "" "$(ls -A "$TESTDIR/sys")" "written in the user's directory"
	run "$SBX" cache prune --system --all -p "$PROF"
	assert_bad_input "cache prune --system: refused: '$TESTDIR/sys' belongs to uid 65534, not root"
	# root's directory, but its sha1 a symlink to a root-only directory
	rmdir "$TESTDIR/sys"
	mkdir -m 0755 "$TESTDIR/sys"
	mkdir -m 0700 "$TESTDIR/secret"
	ln -s "$TESTDIR/secret" "$TESTDIR/sys/sha1"
	chown -h 65534:65534 "$TESTDIR/sys/sha1"
	run "$SBX" cache fill --system -p "$PROF" --image minimal "$TESTDIR/package-lock.json"
	assert_bad_input "cache fill --system: refused: '$TESTDIR/sys': 'sha1' is a symlink (never followed)"
	assert_eq "700" "$(stat -c %a "$TESTDIR/secret")" "the symlink's target's mode"
	run "$SBX" cache prune --system --all -p "$PROF"
	assert_bad_input "cache prune --system: refused: '$TESTDIR/sys': 'sha1' is a symlink (never followed)"
	# a directory of its own that another user owns: refused the same
	rm "$TESTDIR/sys/sha1"
	mkdir -m 0755 "$TESTDIR/sys/sha512"
	chown 65534:65534 "$TESTDIR/sys/sha512"
	run "$SBX" cache fill --system -p "$PROF" --image minimal "$TESTDIR/package-lock.json"
	assert_bad_input "cache fill --system: refused: '$TESTDIR/sys': 'sha512' belongs to uid 65534, not root"
	assert_eq "" "$(ls -A "$TESTDIR/sys/sha512")" "written in the user's directory"
}

# `sbxrun cache fill` from a package-lock.json: npm ci in a sandbox through
# the gateway, each tarball verified against the lockfile's integrity; a
# later run finds them all in the cache.
# A package-lock.json of the fixture's app and its four dependencies.
fill_lockfile() {
	python3 - "$RPORT" > "$TESTDIR/package-lock.json" <<'PY'
import json, sys, urllib.request
port = sys.argv[1]
def doc(name):
    return json.load(urllib.request.urlopen("http://127.0.0.1:%s/%s" % (port, name)))["versions"]["1.0.0"]
pk = {"": {"name": "fillme", "version": "1.0.0", "dependencies": {"app": "1.0.0"}}}
for name in ["app", "set-a", "set-b", "set-c", "set-d"]:
    v = doc(name)
    e = {"version": "1.0.0", "integrity": v["dist"]["integrity"],
         "resolved": "http://packages.sbxrun.internal/npm/%s/-/%s-1.0.0.tgz" % (name, name)}
    if "dependencies" in v:
        e["dependencies"] = v["dependencies"]
    pk["node_modules/" + name] = e
print(json.dumps({"name": "fillme", "version": "1.0.0", "lockfileVersion": 3, "requires": True, "packages": pk}))
PY
}

test_fill_from_a_package_lock() {
	"$SBX" image inspect node >/dev/null 2>&1 || fail "the node test image is not imported (tests/images.sh)"
	cache_fixture "cache = $TESTDIR/sys"
	fill_lockfile
	run "$SBX" cache fill -p "$PROF" --image node "$TESTDIR/package-lock.json"
	assert_status 0
	assert_contains "$out" "cache fill: 5 artifacts in $XDG_CACHE_HOME/sbxrun/packages (5 new)"
	run "$SBX" cache ls
	for p in app set-a set-b set-c set-d; do assert_contains "$out" "npm   $p "; done
	if [ "$(id -u)" = 0 ]; then
		# root fills the system cache (the profile's): readable by all
		run "$SBX" cache fill --system -p "$PROF" --image node "$TESTDIR/package-lock.json"
		assert_status 0
		assert_contains "$out" "cache fill: 5 artifacts in $TESTDIR/sys (5 new)"
		assert_eq "0 755" "$(stat -c '%u %a' "$TESTDIR/sys/sha512")" "the system cache's directory"
		assert_eq "0 644" "$(stat -c '%u %a' "$TESTDIR"/sys/sha512/*.meta | sort -u)" "its files"
		run "$SBX" cache ls --system -p "$PROF"
		assert_contains "$out" "npm   set-d "
	fi
}

# Issue 40, item 7: a user's flock on what of the system cache they can
# open (every directory and file, and a lock file planted where root's
# goes) stalls no `cache fill --system` or `cache prune --system` of
# root's: root's lock files are its own (0600). A lock root's own command
# holds is waited on, said after a second, and given up at the deadline
# with the lock named (SBX_LOCK_DEADLINE_MS shortens it to wait it out
# here): exit 125, nothing pruned.
test_system_cache_a_users_flocks_stall_no_fill_and_a_wait_ends() {
	"$SBX" image inspect node >/dev/null 2>&1 || fail "the node test image is not imported (tests/images.sh)"
	cache_fixture "cache = $TESTDIR/sys"
	fill_lockfile
	chmod 0755 "$TESTDIR"
	mkdir -m 0755 "$TESTDIR/sys"
	# a lock file others may open, planted where root's cache-wide lock goes
	install -m 0666 /dev/null "$TESTDIR/sys/lock"
	run "$SBX" cache fill --system -p "$PROF" --image node "$TESTDIR/package-lock.json"
	assert_status 0
	install -m 0666 /dev/null "$TESTDIR/sys/lock"
	setpriv --reuid 65534 --regid 65534 --clear-groups python3 -c '
import fcntl, os, sys, time
held = 0
for root, dirs, files in os.walk(sys.argv[1]):
    for p in [root] + [os.path.join(root, f) for f in files]:
        try:
            fd = os.open(p, os.O_RDONLY)
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            held += 1
        except OSError:
            pass
print("held", held, flush=True)
time.sleep(120)' "$TESTDIR/sys" > "$TESTDIR/held" &
	local holder=$!
	at_exit "kill $holder $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$PROF.ini'"
	for _ in $(seq 100); do [ -s "$TESTDIR/held" ] && break; sleep 0.1; done
	[ "$(cut -d' ' -f2 "$TESTDIR/held")" -ge 10 ] || fail "the user locked too little: $(cat "$TESTDIR/held")"
	# every lock root takes is one the user could not: no wait at all
	local t0=$SECONDS
	run timeout 120 "$SBX" cache fill --system -p "$PROF" --image node "$TESTDIR/package-lock.json"
	assert_status 0 "root's fill while the user holds the cache's files"
	assert_contains "$out" "cache fill: 5 artifacts in $TESTDIR/sys"
	assert_not_contains "$err" "waiting for the lock"
	run timeout 60 "$SBX" cache prune --system -p "$PROF" --older 300d
	assert_status 0 "root's prune while the user holds the cache's files"
	assert_not_contains "$err" "waiting for the lock"
	assert_eq "" "$(find "$TESTDIR/sys" -name '*lock' ! -perm 0600 -print)" "lock files others may open"
	assert_eq "" "$(find "$TESTDIR/sys" -name '*lock' ! -user root -print)" "lock files not root's"
	kill "$holder" 2>/dev/null || true
	# root's own holder: said after a second, given up at the deadline
	flock "$TESTDIR/sys/lock" sleep 60 &
	local own=$!
	at_exit "kill $own $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/$PROF.ini'"
	sleep 0.3
	t0=$SECONDS
	run env SBX_LOCK_DEADLINE_MS=2500 timeout 60 "$SBX" cache prune --system --all -p "$PROF"
	local took=$((SECONDS - t0))
	assert_status 125 "a prune past the lock's deadline"
	assert_contains "$err" "sbxrun: waiting for the lock on '$TESTDIR/sys/lock' (held by another sbxrun process; at most 2.5 s)"
	assert_contains "$err" "lock '$TESTDIR/sys/lock': still held by another process after 2.5 s, given up (fuser -v '$TESTDIR/sys/lock' names who holds it)"
	[ "$took" -ge 2 ] && [ "$took" -le 20 ] || fail "the wait took $took s, not the deadline's 2.5"
	run "$SBX" cache ls --system -p "$PROF"
	assert_contains "$out" "npm   set-d " "what a prune that gave up left"
	run env SBX_LOCK_DEADLINE_MS=soon "$SBX" cache prune --system --all -p "$PROF"
	assert_bad_input "SBX_LOCK_DEADLINE_MS: 'soon' is not a number of milliseconds above 0"
	kill "$own" 2>/dev/null || true
	wait "$own" 2>/dev/null || true
}
