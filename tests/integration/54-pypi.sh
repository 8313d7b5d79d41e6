# also-as-root
# PyPI through the package gateway (issue 27): pip in a `packages` sandbox
# gets PIP_INDEX_URL=http://packages.sbxrun.internal/pypi/simple/ and talks
# plain HTTP to the gateway through the proxy's door; the host side reads
# the project pages of an index (here tests/helper/pypireg.py, a PEP 503/691
# index with wheels it builds, named as a lab mirror is: PyPI itself is out
# of reach), rewrites their file links to point back at itself, checks every
# file against its page's sha256 and keeps it in the user's cache. Each
# test has its own cache (XDG_CACHE_HOME).

# The package events of an events file: "NAME VERSION CACHE BYTES" lines.
pypi_events() { # file
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "package" and e.get("ecosystem") == "pypi":
        print(e["name"], e["version"], e["cache"], e["bytes"])' "$1" | sort
}

# Starts the fixture index; sets REG (its pid) and RPORT, and a lab profile
# naming it as the PyPI upstream with a short timeout.
pypi_fixture() {
	python3 -u "$TOP/tests/helper/pypireg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	REG=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	RPORT=$(head -1 "$TESTDIR/.reg-port")
	[ -n "$RPORT" ] || fail "the fixture index did not start"
	touch "$TESTDIR/reg.log"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\npypi = http://host.sbxrun.internal:%s/simple/\ntimeout = 2s\n' "$RPORT" \
		> "$HOME/.config/sbxrun/profiles/pypilab$$.ini"
	at_exit "kill $REG 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/pypilab$$.ini'"
}

PIP_INSTALL='pip install --no-cache-dir --disable-pip-version-check --target /tmp/t demo >/tmp/pip.log 2>&1 || cat /tmp/pip.log
	PYTHONPATH=/tmp/t python3 -c "import demo; print(\"value\", demo.VALUE)"'

test_pip_install_through_the_gateway_cold_then_warm() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	pypi_fixture
	local t0=$SECONDS
	run "$SBX" run -p "pypilab$$" --image minimal --events "$TESTDIR/ev1" -- sh -c '
		echo "index=$PIP_INDEX_URL trusted=$PIP_TRUSTED_HOST uv=$UV_INDEX_URL $UV_DEFAULT_INDEX"
		'"$PIP_INSTALL"
	assert_status 0
	assert_contains "$out" "index=http://packages.sbxrun.internal/pypi/simple/ trusted=packages.sbxrun.internal"
	assert_contains "$out" "uv=http://packages.sbxrun.internal/pypi/simple/ http://packages.sbxrun.internal/pypi/simple/"
	assert_contains "$out" "value 42"
	local cold
	cold=$(pypi_events "$TESTDIR/ev1")
	assert_contains "$cold" "demo 1.0 miss"
	assert_contains "$cold" "demodep 1.0 miss"
	assert_eq 2 "$(grep -c '^files/' "$TESTDIR/reg.log")" "file requests upstream: $(cat "$TESTDIR/reg.log")"
	# the gateway asked for the JSON form (demodep's page came as HTML)
	assert_contains "$(grep '^simple/demo ' "$TESTDIR/reg.log")" "application/vnd.pypi.simple.v1+json"
	assert_eq 2 "$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -cx '[0-9a-f]\{64\}')" "files in the cache"
	run "$SBX" cache ls -p "pypilab$$"
	assert_contains "$out" "demodep"
	assert_contains "$out" "pypi"
	echo "cold pip install: $((SECONDS - t0))s" >&2

	# a fresh sandbox: both wheels from the cache, no file asked upstream
	t0=$SECONDS
	run "$SBX" run -p "pypilab$$" --image minimal --events "$TESTDIR/ev2" -- sh -c "$PIP_INSTALL"
	assert_status 0
	assert_contains "$out" "value 42"
	local warm
	warm=$(pypi_events "$TESTDIR/ev2")
	assert_contains "$warm" "demo 1.0 hit"
	assert_contains "$warm" "demodep 1.0 hit"
	assert_not_contains "$warm" " miss "
	assert_eq 2 "$(grep -c '^files/' "$TESTDIR/reg.log")" "file requests upstream after the warm install"
	echo "warm pip install: $((SECONDS - t0))s" >&2
}

test_pypi_pages_and_bad_upstreams() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	pypi_fixture
	run "$SBX" run -p "pypilab$$" --image minimal --events "$TESTDIR/ev" -- sh -c '
		G=http://packages.sbxrun.internal/pypi
		J="Accept: application/vnd.pypi.simple.v1+json"
		get() { curl -sS -x "$PIP_PROXY" -o /tmp/body -w "$1 %{http_code} %{content_type}\n" "$G/$2"; grep -a "gateway" /tmp/body; }
		curl -sS -x "$PIP_PROXY" -H "$J" "$G/simple/demo/"; echo
		curl -sS -x "$PIP_PROXY" "$G/simple/demo/"; echo
		curl -sS -x "$PIP_PROXY" -H "$J" "$G/simple/DemoDep/"; echo
		curl -sS -x "$PIP_PROXY" "$G/simple/nohash/"; echo
		get root simple/
		get good files/demo/demo-1.0-py3-none-any.whl
		get nohash files/nohash/nohash-1.0-py3-none-any.whl
		get trunc files/trunc/trunc-1.0-py3-none-any.whl
		get other files/other/other-1.0-py3-none-any.whl
		get unlisted files/demo/demo-9.0-py3-none-any.whl
		get missing simple/no-such-project/
		get unknown whatever
		get deep simple/demo/x/
		get dots "files/demo/..%2f..%2fetc%2fpasswd"
		pip install --no-cache-dir --disable-pip-version-check --target /tmp/t bad 2>&1 | tail -3'
	assert_status 0
	# the JSON form, from the JSON upstream: links back here, digests and
	# upload times kept, metadata links dropped, nothing of the upstream
	assert_contains "$out" '"url":"http://packages.sbxrun.internal/pypi/files/demo/demo-1.0-py3-none-any.whl","hashes":{"sha256":"'
	assert_contains "$out" '"upload-time":"2020-01-01T00:00:00Z"'
	assert_contains "$out" '"meta":{"api-version":"1.1"}'
	# the HTML form of the same page
	assert_contains "$out" '<a href="http://packages.sbxrun.internal/pypi/files/demo/demo-1.0-py3-none-any.whl#sha256='
	# an HTML upstream page with relative links, served as JSON
	assert_contains "$out" '"url":"http://packages.sbxrun.internal/pypi/files/demodep/demodep-1.0-py3-none-any.whl"'
	assert_not_contains "$out" "host.sbxrun.internal"
	assert_not_contains "$out" "metadata"
	assert_not_contains "$out" "nohash-1.0-py3-none-any.whl</a>"
	assert_contains "$out" "root 200 text/html"
	assert_contains "$out" "good 200 application/octet-stream"
	assert_contains "$out" "nohash 502"
	assert_contains "$out" "its index gives no sha256"
	assert_contains "$out" "trunc 502"
	assert_contains "$out" "other 403"
	assert_contains "$out" "host 'not-allowed.example.test' port 80 is not in profile"
	assert_contains "$out" "unlisted 404"
	assert_contains "$out" "missing 404"
	assert_contains "$out" "unknown 404"
	assert_contains "$out" "deep 404"
	assert_contains "$out" "dots 404"
	# pip fails on the digest mismatch, sbxrun says why; nothing is cached
	assert_contains "$out" "502"
	assert_contains "$out" "bad-1.0-py3-none-any.whl"
	assert_contains "$err" "sbxrun: gateway: pypi bad@1.0: integrity mismatch: the index says sha256"
	assert_contains "$err" "(nothing cached)"
	assert_contains "$(cat "$TESTDIR/ev")" '"event":"package-refused"'
	local files
	files=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -x '[0-9a-f]\{64\}')
	assert_eq 1 "$(printf '%s\n' "$files" | grep -c .)" "files in the cache: $files"
	assert_eq 0 "$(grep -c '^files/other' "$TESTDIR/reg.log")" "requests for the other host's file"
}

# With the rules slice's [packages] min_age (issue 27): a file uploaded an
# hour ago is hidden from the page, so pip picks the older version, and a
# request for it is refused naming version, age and rule.
test_pypi_min_age_hides_young_files() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	pypi_fixture
	printf 'min_age = 1d\n' >> "$HOME/.config/sbxrun/profiles/pypilab$$.ini"
	"$SBX" profile show "pypilab$$" >/dev/null 2>&1 ||
		skip "this build does not know [packages] min_age yet (the rules slice of issue 27)"
	run "$SBX" run -p "pypilab$$" --image minimal --events "$TESTDIR/ev" -- sh -c '
		pip install --no-cache-dir --disable-pip-version-check --target /tmp/t young >/tmp/pip.log 2>&1 || cat /tmp/pip.log
		PYTHONPATH=/tmp/t python3 -c "import young; print(\"young\", young.VERSION)"
		curl -sS -x "$PIP_PROXY" -o /dev/null -w "pinned %{http_code}\n" \
			http://packages.sbxrun.internal/pypi/files/young/young-2.0-py3-none-any.whl
		# under a rule, the upstream itself is the gateway'"'"'s alone (pip --index-url)
		curl -sS -x "$PIP_PROXY" -o /dev/null -w "direct %{http_code}\n" "http://host.sbxrun.internal:$1/simple/young/"' sh "$RPORT"
	assert_status 0
	assert_contains "$out" "direct 403"
	assert_contains "$out" "young 1.0"
	assert_contains "$out" "pinned 403"
	assert_contains "$err" "sbxrun: gateway: pypi young 2.0: published"
	assert_contains "$err" "min_age is"
	assert_contains "$err" "sbxrun: gateway: pypi 'young': 1 file younger than [packages] min_age (24 hours) hidden (version 2.0)"
	assert_contains "$(cat "$TESTDIR/ev")" '"event":"package-refused"'
}

# With the rules slice's [packages] offline: what was installed once
# installs again with the index gone; anything else is refused by name.
test_pypi_offline_serves_only_the_cache() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	pypi_fixture
	local prof="$HOME/.config/sbxrun/profiles/pypilab$$.ini"
	printf 'offline = yes\n' >> "$prof"
	"$SBX" profile show "pypilab$$" >/dev/null 2>&1 ||
		skip "this build does not know [packages] offline yet (the rules slice of issue 27)"
	sed -i '/^offline = yes$/d' "$prof"
	run "$SBX" run -p "pypilab$$" --image minimal -- sh -c "$PIP_INSTALL"
	assert_contains "$out" "value 42"
	kill "$REG"
	printf 'offline = yes\n' >> "$prof"
	run "$SBX" run -p "pypilab$$" --image minimal --events "$TESTDIR/ev" -- sh -c "$PIP_INSTALL"'
		pip install --no-cache-dir --disable-pip-version-check --retries 0 --target /tmp/u young 2>&1 | tail -1'
	assert_status 0
	assert_contains "$out" "value 42"
	assert_contains "$(pypi_events "$TESTDIR/ev")" "demodep 1.0 hit"
	assert_contains "$err" "sbxrun: gateway: offline: pypi 'young' is not in the cache ([packages] offline = yes)"
}
