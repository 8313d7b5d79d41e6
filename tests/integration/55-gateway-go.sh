# Go through the package gateway (issue 43): the go command in a `packages`
# sandbox gets GOPROXY=http://packages.sbxrun.internal/go and GOSUMDB
# naming the profile's checksum database's key and the gateway's
# passthrough; the host side checks module paths and versions, verifies
# every .mod and .zip against the database's lookup record (its note's
# ed25519 signature checked with the profile's key) before caching or
# serving it, and applies deny, min_age (from when the gateway first saw a
# version) and offline. The upstream is tests/helper/goproxy, built here with
# Debian's golang-go from golang-golang-x-mod-dev: modules zipped by
# x/mod/zip as the go command zips them, a checksum database it signs with a
# key it makes. The go client inside is the host's (Debian's golang-go 1.19),
# bound read-only into the minimal image: an image with golang-go would
# cost CI its build (docs in the report). Go reads its proxy from
# http_proxy, which the default proxy_env = tools leaves unset: the tests
# give it as SBXRUN_PROXY.

GOBIN_DIRS="--bind /usr/lib/go-1.19:/usr/lib/go-1.19 --bind /usr/share/go-1.19:/usr/share/go-1.19"

# Builds (once per user: the go build cache) and starts the fixture; sets
# GP (its pid), GPORT and VKEY, and a lab profile naming it.
go_fixture() {
	command -v go > /dev/null && [ -d /usr/share/gocode/src/golang.org/x/mod/sumdb ] ||
		skip "needs golang-go and golang-golang-x-mod-dev (tests/deps.sh)"
	local t0=$SECONDS
	(cd "$TOP/tests/helper/goproxy" && GO111MODULE=off GOPATH=/usr/share/gocode \
		GOCACHE="${TMPDIR:-/tmp}/sbx-gocache-$(id -u)" go build -o "$TESTDIR/goproxy" .) ||
		fail "cannot build tests/helper/goproxy"
	echo "fixture build: $((SECONDS - t0))s" >&2
	"$TESTDIR/goproxy" "$TESTDIR/gp" 10 > "$TESTDIR/.gp" 2> "$TESTDIR/gp.err" &
	GP=$!
	for _ in $(seq 100); do [ "$(wc -l < "$TESTDIR/.gp")" -ge 2 ] && break; sleep 0.1; done
	GPORT=$(sed -n 1p "$TESTDIR/.gp")
	VKEY=$(sed -n 2p "$TESTDIR/.gp")
	[ -n "$VKEY" ] || fail "the fixture did not start: $(cat "$TESTDIR/gp.err")"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	PROF="$HOME/.config/sbxrun/profiles/golab$$.ini"
	printf 'inherit = packages\n[packages]\ngo = http://host.sbxrun.internal:%s/mod/\ngo_sumdb = %s http://host.sbxrun.internal:%s/sumdb/sumdb.fixture\ntimeout = 5s\n' \
		"$GPORT" "$VKEY" "$GPORT" > "$PROF"
	at_exit "kill $GP 2>/dev/null || true; rm -f '$PROF'"
	mkdir -p "$TESTDIR/app"
	{
		printf 'module lab.example/app\n\ngo 1.19\n\nrequire (\n'
		for i in 01 02 03 04 05 06 07 08 09 10; do printf '\tmods.example/dep%s v1.0.0\n' "$i"; done
		printf '\tmods.example/Caps v0.1.0\n)\n'
	} > "$TESTDIR/app/go.mod"
}

hits() { curl -sS "http://127.0.0.1:$GPORT/_hits"; }

# go mod download in a sandbox of the lab profile, the project at /app
GO_DOWNLOAD='export PATH=/usr/lib/go-1.19/bin:$PATH GOPATH=/tmp/gopath GOCACHE=/tmp/gocache http_proxy=$SBXRUN_PROXY
	cp -r /app /tmp/app && cd /tmp/app && go mod download 2>&1; echo "download=$?"'

test_go_mod_download_through_the_gateway() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	go_fixture
	local t0=$SECONDS
	run "$SBX" run -p "golab$$" --image minimal $GOBIN_DIRS --bind "$TESTDIR/app:/app" --events "$TESTDIR/ev1" -- sh -c '
		echo "proxy=$GOPROXY sumdb=$GOSUMDB flags=$GOFLAGS nosumdb=[${GONOSUMDB-unset}] private=[${GOPRIVATE-unset}]"
		'"$GO_DOWNLOAD"'
		ls /tmp/gopath/pkg/mod/mods.example | sort | tr "\n" " "; echo'
	assert_status 0
	assert_contains "$out" "proxy=http://packages.sbxrun.internal/go sumdb=$VKEY http://packages.sbxrun.internal/go/sumdb/sumdb.fixture flags=-mod=mod nosumdb=[] private=[]"
	assert_contains "$out" "download=0"
	assert_contains "$out" "!caps@v0.1.0 dep01@v1.0.0 dep02@v1.0.0"
	assert_contains "$out" "dep10@v1.0.0"
	echo "cold go mod download (11 modules): $((SECONDS - t0))s" >&2
	local h
	h=$(hits)
	assert_eq 11 "$(printf '%s\n' "$h" | grep -c '\.zip 1$')" "zips fetched once each: $h"
	assert_eq 11 "$(ls "$XDG_CACHE_HOME/sbxrun/packages/goh1" | grep -cx '[0-9a-f]\{64\}')" "zips in the cache"
	assert_contains "$(cat "$TESTDIR/ev1")" '"ecosystem":"go"'
	# a fresh sandbox and module cache: every zip and go.mod from the cache
	t0=$SECONDS
	run "$SBX" run -p "golab$$" --image minimal $GOBIN_DIRS --bind "$TESTDIR/app:/app" --events "$TESTDIR/ev2" -- sh -c "$GO_DOWNLOAD"
	assert_contains "$out" "download=0"
	assert_eq "$(printf '%s\n' "$h" | grep -E '\.(zip|mod) ')" "$(hits | grep -E '\.(zip|mod) ')" "zip and mod requests upstream after the warm download"
	assert_not_contains "$(cat "$TESTDIR/ev2")" '"cache":"miss"'
	echo "warm go mod download: $((SECONDS - t0))s" >&2
}

test_go_tampered_zip_and_bad_names_refused() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	go_fixture
	run "$SBX" run -p "golab$$" --image minimal $GOBIN_DIRS --events "$TESTDIR/ev" -- sh -c '
		export PATH=/usr/lib/go-1.19/bin:$PATH GOPATH=/tmp/gopath GOCACHE=/tmp/gocache http_proxy=$SBXRUN_PROXY
		mkdir /tmp/a && cd /tmp/a && printf "module x.example/a\n\ngo 1.19\n\nrequire mods.example/evil v1.0.0\n" > go.mod
		go mod download > /tmp/dl.log 2>&1; echo "download=$?"; tail -3 /tmp/dl.log
		G=http://packages.sbxrun.internal/go
		for p in mods.example/evil/@v/v1.0.0.zip "mods.example/../etc/@v/list" mods.example/Caps/@v/list \
			"mods.example/dep01/@v/v1.0.0%2e.zip" mods.example/dep01/@v/master.info "mods.example/dep01/@v/v1.0.0.zip/x" \
			"sumdb/other.db/supported" "sumdb/sumdb.fixture/tile/8/0/../x" mods.example/dep01/@v/v1.0.0.mod; do
			curl -sS -x "$SBXRUN_PROXY" -o /dev/null -w "%{http_code} $p\n" "$G/$p"
		done'
	assert_status 0
	assert_contains "$out" "502 mods.example/evil/@v/v1.0.0.zip"
	assert_contains "$out" "404 mods.example/../etc/@v/list"
	assert_contains "$out" "404 mods.example/Caps/@v/list"
	assert_contains "$out" "404 mods.example/dep01/@v/v1.0.0%2e.zip"
	assert_contains "$out" "404 mods.example/dep01/@v/master.info"
	assert_contains "$out" "404 mods.example/dep01/@v/v1.0.0.zip/x"
	assert_contains "$out" "404 sumdb/other.db/supported"
	assert_contains "$out" "404 sumdb/sumdb.fixture/tile/8/0/../x"
	assert_contains "$out" "200 mods.example/dep01/@v/v1.0.0.mod"
	assert_contains "$out" "download=1"
	assert_contains "$err" "go mods.example/evil@v1.0.0: integrity mismatch: the checksum database says"
	assert_contains "$err" "(nothing cached)"
	assert_eq 0 "$(ls "$XDG_CACHE_HOME/sbxrun/packages/goh1" 2>/dev/null | grep -cx '[0-9a-f]\{64\}')" "zips in the cache"
	assert_contains "$(cat "$TESTDIR/ev")" '"event":"package-refused"'
}

# deny, min_age, not_after, a malicious feed and offline, through curl
# (what the go command asks).
test_go_rules_deny_min_age_offline() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	go_fixture
	local probe='G=http://packages.sbxrun.internal/go
		for p in mods.example/dep01/@v/list mods.example/dep01/@latest mods.example/dep01/@v/v1.0.0.info \
			mods.example/dep01/@v/v1.0.0.mod mods.example/dep01/@v/v1.0.0.zip mods.example/dep02/@v/v1.0.0.zip; do
			printf "%s " "$p"; curl -sS -x "$SBXRUN_PROXY" -o /tmp/body -w "%{http_code}" "$G/$p"; printf " %s\n" "$(head -c 60 /tmp/body | tr "\n" ,)"
		done'
	cp "$PROF" "$PROF.base"
	printf 'deny = go:mods.example/dep01\n' >> "$PROF"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c "$probe"
	assert_contains "$out" "mods.example/dep01/@v/list 403"
	assert_contains "$out" "mods.example/dep01/@v/v1.0.0.zip 403"
	assert_contains "$out" "mods.example/dep02/@v/v1.0.0.zip 200"
	assert_contains "$err" "go 'mods.example/dep01' is denied by [packages] deny = go:mods.example/dep01"
	assert_not_contains "$(hits)" "dep01"
	# min_age: every version is first seen now, so none is served
	cp "$PROF.base" "$PROF"
	printf 'min_age = 1d\n' >> "$PROF"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c "$probe"
	assert_contains "$out" "mods.example/dep01/@v/list 200 "$'\n'
	assert_contains "$out" "mods.example/dep01/@latest 404"
	assert_contains "$out" "mods.example/dep01/@v/v1.0.0.zip 403"
	assert_contains "$err" "go mods.example/dep01 v1.0.0: first seen by the gateway"
	assert_contains "$err" "[packages] min_age is 24 hours"
	assert_contains "$err" "go 'mods.example/dep01': 2 versions younger than [packages] min_age (24 hours) hidden"
	# not_after: a version's date is when the gateway first saw it (dep02's
	# zip above: now), after 2020-01-01, so refused; go:none leaves Go out
	# of a freeze of the other ecosystems
	local zip02='curl -sS -x "$SBXRUN_PROXY" -o /dev/null -w "zip02 %{http_code}\n" http://packages.sbxrun.internal/go/mods.example/dep02/@v/v1.0.0.zip'
	cp "$PROF.base" "$PROF"
	printf 'not_after = 2020-01-01\n' >> "$PROF"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c "$zip02"
	assert_contains "$out" "zip02 403"
	assert_contains "$err" "go mods.example/dep02 v1.0.0: first seen by the gateway "
	assert_contains "$err" ", after [packages] not_after = 2020-01-01"
	printf 'not_after = go:none\n' >> "$PROF"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c "$zip02"
	assert_contains "$out" "zip02 200"
	# a malicious-package feed (OSV) naming one version: hidden from the
	# list, refused when pinned; the other version served
	cp "$PROF.base" "$PROF"
	printf '{"id":"MAL-2026-9","affected":[{"package":{"ecosystem":"Go","name":"mods.example/dep03"},"versions":["v1.0.0"]}]}' \
		> "$TESTDIR/mal.json"
	printf 'malicious = %s\n' "$TESTDIR/mal.json" >> "$PROF"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c 'G=http://packages.sbxrun.internal/go
		for p in mods.example/dep03/@v/list mods.example/dep03/@v/v1.0.0.zip mods.example/dep03/@v/v1.1.0.zip; do
			printf "%s " "$p"; curl -sS -x "$SBXRUN_PROXY" -o /tmp/body -w "%{http_code}" "$G/$p"; printf " %s\n" "$(head -c 60 /tmp/body | tr "\n" ,)"
		done'
	assert_contains "$out" "mods.example/dep03/@v/list 200 v1.1.0,"
	assert_contains "$out" "mods.example/dep03/@v/v1.0.0.zip 403"
	assert_contains "$out" "mods.example/dep03/@v/v1.1.0.zip 200"
	assert_contains "$err" "MAL-2026-9"
	# offline: what the cache holds (dep02 fetched above), nothing else
	cp "$PROF.base" "$PROF"
	printf 'offline = yes\n' >> "$PROF"
	kill "$GP"
	run "$SBX" run -p "golab$$" --image minimal -- sh -c "$probe"
	assert_contains "$out" "mods.example/dep02/@v/v1.0.0.zip 200"
	assert_contains "$out" "mods.example/dep01/@v/v1.0.0.zip 503"
	assert_contains "$err" "offline: go 'mods.example/dep01'"
}

# Ten sandboxes at once download the same modules: each zip is fetched
# from upstream once (the artifact lock shared by their gateways).
test_go_ten_sandboxes_fetch_each_zip_once() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	go_fixture
	local t0=$SECONDS pids=""
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$SBX" run -p "golab$$" --image minimal $GOBIN_DIRS --bind "$TESTDIR/app:/app" -- sh -c "$GO_DOWNLOAD" \
			> "$TESTDIR/out$i" 2>&1 &
		pids="$pids $!"
	done
	for p in $pids; do wait "$p" || true; done
	for i in 1 2 3 4 5 6 7 8 9 10; do
		assert_contains "$(cat "$TESTDIR/out$i")" "download=0" "sandbox $i: $(tail -5 "$TESTDIR/out$i")"
	done
	local h
	h=$(hits)
	assert_eq 11 "$(printf '%s\n' "$h" | grep -c '\.zip 1$')" "each zip once: $h"
	assert_eq 0 "$(printf '%s\n' "$h" | grep -c '\.zip [02-9]')" "no zip twice: $h"
	echo "ten sandboxes at once: $((SECONDS - t0))s" >&2
}
