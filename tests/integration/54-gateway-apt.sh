# also-as-root
# user-only: test_apt_gateway_cuts_an_endless_index_on_disk test_apt_source_files_are_served_as_the_sources_index_lists
# user-only: test_a_debian_package_built_in_a_project_through_the_gateway
# tier net: test_a_debian_package_built_in_a_project_through_the_gateway -- minutes of Debian's archive (build-dep, source, dpkg-buildpackage of hello: 88 MB; 300 to 480 s here)
# apt through the package gateway (issue 27): apt keeps the image's sources
# and its proxy; the proxy hands its plain-HTTP GETs for the image's apt
# hosts (@apt, read at import: no registry host is written here) to the
# gateway, which reads the Packages indexes apt fetches and serves a .deb
# only when its bytes match the SHA256 its entry gives, from the cache the
# user's sandboxes share. Debian's archive counts as the distribution's
# (make check may reach it). A local flat repository (tests/helper/
# debrepo.sh, allowed as a lab mirror is) plays the bad upstream.

# The package events of an events file: "ECOSYSTEM NAME VERSION CACHE UPSTREAM_MS" lines.
apt_events() { # file
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("event") == "package":
        print(e["ecosystem"], e["name"], e["version"], e["cache"], e["upstream_ms"])' "$1" | sort
}

test_apt_install_through_the_gateway_then_from_the_cache() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	local t0=$SECONDS
	run "$SBX" run -p packages --events "$TESTDIR/ev1" -- sh -c '
		apt-get -o Acquire::Languages=none update >/tmp/log 2>&1 && apt-get install -y --no-install-recommends sl >>/tmp/log 2>&1 || cat /tmp/log
		ls /usr/games/sl'
	assert_status 0
	assert_contains "$out" "/usr/games/sl"
	local cold
	cold=$(apt_events "$TESTDIR/ev1")
	assert_contains "$cold" "deb sl " "cold install's events"
	[ "$(printf '%s\n' "$cold" | grep '^deb sl ' | grep -c ' miss ')" = 1 ] || fail "cold install: $cold"
	assert_contains "$(cat "$TESTDIR/ev1")" '"reason":"package gateway"'
	local n
	n=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -vc '\.lock$\|\.tmp\.\|\.meta$')
	[ "$n" -ge 2 ] || fail "$n files in the cache (the .deb and the Packages by hash)"
	echo "cold apt-get update and install: $((SECONDS - t0))s" >&2

	# A fresh sandbox: the .deb (and the by-hash indexes) from the cache.
	t0=$SECONDS
	run "$SBX" run -p packages --events "$TESTDIR/ev2" -- sh -c '
		apt-get -o Acquire::Languages=none update >/tmp/log 2>&1 && apt-get install -y --no-install-recommends sl >>/tmp/log 2>&1 || cat /tmp/log
		ls /usr/games/sl'
	assert_status 0
	assert_contains "$out" "/usr/games/sl"
	local warm
	warm=$(apt_events "$TESTDIR/ev2")
	assert_contains "$warm" "deb sl " "warm install's events"
	assert_not_contains "$warm" " miss " "warm install's events"
	assert_not_contains "$warm" " shared " "warm install's events"
	[ -z "$(printf '%s\n' "$warm" | grep -v ' hit 0$')" ] || fail "upstream time on a hit: $warm"
	echo "warm apt-get update and install: $((SECONDS - t0))s" >&2
}

# Serves the fixture repository on the host's loopback; sets RPORT and a
# lab profile that allows it, and LIST, the apt source naming it through
# the gateway's /deb/ endpoint.
apt_fixture() {
	sh "$TOP/tests/helper/debrepo.sh" "$TESTDIR/repo"
	python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$TESTDIR/repo" > "$TESTDIR/.srv" 2>"$TESTDIR/srv.log" &
	local srv=$!
	for _ in $(seq 100); do grep -q 'port' "$TESTDIR/.srv" 2>/dev/null && break; sleep 0.1; done
	RPORT=$(sed -n 's/.* port \([0-9]*\).*/\1/p' "$TESTDIR/.srv" | head -1)
	[ -n "$RPORT" ] || fail "the fixture repository did not start"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$RPORT" \
		> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	APT_CLEANUP="kill $srv 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/aptlab$$.ini'"
	at_exit "$APT_CLEANUP"
	LIST="deb [trusted=yes] http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/ ./"
}

test_apt_gateway_refuses_a_corrupt_or_unlisted_deb() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev" -- sh -c "
		echo '$LIST' > /tmp/lab.list
		apt() { apt-get -o Dir::Etc::SourceList=/tmp/lab.list -o Dir::Etc::SourceParts=/nonexistent \"\$@\"; }
		apt update >/tmp/log 2>&1 || cat /tmp/log
		apt install -y sbxgood >/tmp/log 2>&1 || cat /tmp/log
		cat /usr/share/sbxgood/hello
		apt install -y sbxbad 2>&1 | grep -m1 '^E: Failed to fetch'
		[ -e /usr/share/sbxbad/hello ] && echo 'sbxbad installed'
		curl -sS -x \"\$SBXRUN_PROXY\" -o /tmp/body -w 'orphan %{http_code}\n' \
			http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/sbxorphan_1.0_all.deb; cat /tmp/body
		curl -sS --path-as-is -x \"\$SBXRUN_PROXY\" -o /tmp/body -w 'up %{http_code}\n' \
			http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/../etc/passwd
		curl -sS -x \"\$SBXRUN_PROXY\" -o /tmp/body -w 'source %{http_code}\n' \
			http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/sbxgood_1.0.dsc"
	assert_status 0
	assert_contains "$out" "sbxgood is installed"
	assert_contains "$out" "E: Failed to fetch http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/./sbxbad_1.0_all.deb  502"
	assert_not_contains "$out" "sbxbad installed"
	assert_contains "$err" "sbxrun: gateway: deb sbxbad@1.0: integrity mismatch: the index says sha256"
	assert_contains "$err" "(nothing cached)"
	assert_contains "$out" "orphan 403"
	assert_contains "$out" "no Packages index fetched through the gateway lists this file"
	assert_contains "$err" "sbxrun: gateway: deb host.sbxrun.internal:$RPORT/sbxorphan_1.0_all.deb: no Packages index"
	assert_contains "$out" "up 404"
	assert_contains "$out" "source 403"
	local ev
	ev=$(apt_events "$TESTDIR/ev")
	assert_contains "$ev" "deb sbxgood 1.0 miss"
	assert_not_contains "$ev" "sbxbad"
	assert_contains "$(grep package-refused "$TESTDIR/ev")" '"name":"sbxbad"'
	# only the good .deb entered the cache; nothing half-written stays
	local files
	files=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -v '\.lock$\|\.meta$')
	assert_eq "$(sha256sum < "$TESTDIR/repo/sbxgood_1.0_all.deb" | cut -d' ' -f1)" "$files" "files in the cache"
	assert_contains "$("$SBX" cache ls)" "sbxgood"
	# the orphan was never asked of the upstream
	assert_not_contains "$(cat "$TESTDIR/srv.log")" "sbxorphan"
	# the Packages index was read once, into a table kept in the cache
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev")" '"table":"built"'
	local tables
	tables=$(ls "$XDG_CACHE_HOME/sbxrun/packages/debidx" | grep -v '\.meta$')
	assert_eq 1 "$(printf '%s\n' "$tables" | grep -c .)" "tables in the cache: $tables"
	assert_contains "$("$SBX" cache ls)" "(packages table)"

	# Damage the table where it would hurt: sbxbad's entry made to name
	# the digest of the bytes upstream sends. Checked whole, the table is
	# refused and built again from the Packages file, and sbxbad is still
	# refused. Release is made older than index_max_age (revalidated:
	# If-Modified-Since, a 304), Packages is not (served unasked).
	python3 - "$XDG_CACHE_HOME/sbxrun/packages/debidx/$tables" "$TESTDIR/repo" <<'PY'
import hashlib, re, sys
table, repo = sys.argv[1], sys.argv[2]
listed = re.search(r"Filename: ./sbxbad.*?SHA256: ([0-9a-f]{64})", open(repo + "/Packages").read(), re.S).group(1)
sent = hashlib.sha256(open(repo + "/sbxbad_1.0_all.deb", "rb").read()).digest()
data = open(table, "rb").read()
assert data.count(bytes.fromhex(listed)) == 1
open(table, "wb").write(data.replace(bytes.fromhex(listed), sent))
PY
	touch -d '-5 min' "$XDG_CACHE_HOME/sbxrun/packages/index/deb/"*/*Release
	local before
	before=$(wc -l < "$TESTDIR/srv.log")
	# (what apt fetches, by curl: apt's own minutes are not the subject)
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev2" -- sh -c "
		for f in Release Packages sbxgood_1.0_all.deb sbxbad_1.0_all.deb; do
			curl -sS -x \"\$SBXRUN_PROXY\" -o /tmp/\$f -w \"\$f %{http_code}\\n\" \
				http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/\$f
		done
		sha256sum /tmp/sbxgood_1.0_all.deb"
	assert_status 0
	assert_contains "$out" "Release 200"
	assert_contains "$out" "Packages 200"
	assert_contains "$out" "sbxgood_1.0_all.deb 200"
	assert_contains "$out" "$(sha256sum < "$TESTDIR/repo/sbxgood_1.0_all.deb" | cut -d' ' -f1)"
	assert_contains "$out" "sbxbad_1.0_all.deb 502"
	assert_contains "$err" "sbxrun: gateway: deb sbxbad@1.0: integrity mismatch"
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev2")" '"table":"built","ms"'
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev2")" '"damaged":"the table is damaged (its checksum differs)"'
	assert_contains "$(apt_events "$TESTDIR/ev2")" "deb sbxgood 1.0 hit"
	local asked
	asked=$(tail -n +$((before + 1)) "$TESTDIR/srv.log")
	assert_contains "$asked" '"GET /Release HTTP/1.1" 304'
	assert_not_contains "$asked" "Packages"

	# offline (an exam room): the indexes as last fetched and the cached
	# .deb; nothing asked upstream, what the cache lacks refused; the
	# table rebuilt above is taken from the cache, not built again
	before=$(wc -l < "$TESTDIR/srv.log")
	printf '[packages]\noffline = yes\n' >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev3" -- sh -c "
		echo '$LIST' > /tmp/lab.list
		apt() { apt-get -o Dir::Etc::SourceList=/tmp/lab.list -o Dir::Etc::SourceParts=/nonexistent \"\$@\"; }
		apt update >/tmp/log 2>&1 || cat /tmp/log
		apt install -y sbxgood >/tmp/log 2>&1 || cat /tmp/log
		cat /usr/share/sbxgood/hello
		apt install -y sbxbad 2>&1 | grep -m1 '^E: Failed to fetch'"
	assert_status 0
	assert_contains "$out" "sbxgood is installed"
	assert_contains "$out" "sbxbad_1.0_all.deb  503"
	assert_contains "$err" "offline: deb 'sbxbad@1.0' is not in the cache ([packages] offline = yes)"
	assert_eq "$before" "$(wc -l < "$TESTDIR/srv.log")" "requests upstream while offline"
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev3")" '"table":"cache"'
	assert_not_contains "$(cat "$TESTDIR/ev3")" '"table":"built"' 
}

# [packages] deny (the rules of issue 27) by the package's name: refused
# before any byte is fetched, with the rule in the message.
test_apt_gateway_refuses_a_denied_package() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	# a tunnel to the image's apt host: open without rules, closed under
	# one (the gateway takes apt's plain HTTP; a tunnel would go around it)
	local tunnel='h=$(grep -ohE "https?://[^/ ]+" /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null | head -1 | sed "s#.*://##")
		curl -sS -m 10 -x "$SBXRUN_PROXY" -o /dev/null "https://$h/" 2>&1 | grep -o "CONNECT tunnel failed, response 403" || echo "tunnel open"'
	run "$SBX" run -p "aptlab$$" -- sh -c "$tunnel"
	assert_contains "$out" "tunnel open"
	printf '[packages]\ndeny = deb:sbxgood\n' >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	run "$SBX" run -p "aptlab$$" -- sh -c "$tunnel"
	assert_contains "$out" "CONNECT tunnel failed, response 403"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev" -- sh -c "
		echo '$LIST' > /tmp/lab.list
		apt() { apt-get -o Dir::Etc::SourceList=/tmp/lab.list -o Dir::Etc::SourceParts=/nonexistent \"\$@\"; }
		apt update >/tmp/log 2>&1 || cat /tmp/log
		apt install -y sbxgood 2>&1 | grep -m1 '^E: Failed to fetch'
		[ -e /usr/share/sbxgood/hello ] && echo 'sbxgood installed' || echo 'sbxgood not installed'"
	assert_status 0
	assert_contains "$out" "E: Failed to fetch http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/./sbxgood_1.0_all.deb  403"
	assert_contains "$out" "sbxgood not installed"
	assert_contains "$err" "sbxrun: gateway: deb sbxgood@1.0: deb 'sbxgood' is denied by [packages] deny = deb:sbxgood"
	assert_contains "$(grep package-refused "$TESTDIR/ev")" '"name":"sbxgood"'
	assert_not_contains "$(cat "$TESTDIR/srv.log")" "sbxgood_1.0_all.deb"
	[ ! -d "$XDG_CACHE_HOME/sbxrun/packages/sha256" ] || assert_eq "" "$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -v '\.lock$\|\.meta$' || true)" "the cache"
}

# apt-get source (issue 43, point 6): the files of a source package (.dsc,
# tarball) are served as a .deb is, each only as the Sources index apt
# fetched through the gateway lists it, its bytes checked against the
# index's Checksums-Sha256; a changed tarball is refused and never cached;
# a deb: rule names a source package too. Against the fixture repository
# (its Sources hand-written by tests/helper/debrepo.sh).
test_apt_source_files_are_served_as_the_sources_index_lists() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	local src="deb-src [trusted=yes] http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/ ./"
	local script="
		printf '%s\n%s\n' '$LIST' '$src' > /tmp/lab.list
		apt() { apt-get -o Dir::Etc::SourceList=/tmp/lab.list -o Dir::Etc::SourceParts=/nonexistent \"\$@\"; }
		apt update >/tmp/log 2>&1 || cat /tmp/log
		cd /tmp && apt source --download-only sbxsrc >/tmp/log 2>&1 || cat /tmp/log
		cat /tmp/sbxsrc_1.0.dsc | head -2
		apt source --download-only sbxsrcbad 2>&1 | grep -m1 '^E: Failed to fetch'
		[ -e /tmp/sbxsrcbad_1.0.tar.gz ] && echo 'sbxsrcbad fetched'
		curl -sS -x \"\$SBXRUN_PROXY\" -o /tmp/body -w 'unlisted %{http_code}\n' \
			http://packages.sbxrun.internal/deb/host.sbxrun.internal:$RPORT/sbxorphan_1.0.dsc; cat /tmp/body"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev" -- sh -c "$script"
	assert_status 0
	assert_contains "$out" "Format: 1.0"
	assert_contains "$out" "Source: sbxsrc"
	assert_contains "$out" "sbxsrcbad_1.0.tar.gz  502"
	assert_not_contains "$out" "sbxsrcbad fetched"
	assert_contains "$err" "sbxrun: gateway: deb sbxsrcbad@1.0: integrity mismatch: the index says sha256"
	assert_contains "$out" "unlisted 403"
	assert_contains "$out" "nor a file of a source package that a Sources index fetched through the gateway lists"
	local ev
	ev=$(apt_events "$TESTDIR/ev")
	assert_contains "$ev" "deb sbxsrc 1.0 miss"
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev")" 'Sources'
	assert_contains "$("$SBX" cache ls)" "sbxsrc"
	assert_not_contains "$(cat "$TESTDIR/srv.log")" "sbxorphan_1.0.dsc"
	# the two files of sbxsrc, and nothing of sbxsrcbad, in the cache
	local want got
	want=$(cd "$TESTDIR/repo" && sha256sum sbxsrc_1.0.dsc sbxsrc_1.0.tar.gz | cut -d' ' -f1 | sort)
	got=$(ls "$XDG_CACHE_HOME/sbxrun/packages/sha256" | grep -v '\.lock$\|\.meta$' | sort)
	assert_eq "$want" "$(printf '%s\n' "$got" | grep -xF "$want" || true)" "sbxsrc's files in the cache"
	assert_not_contains "$got" "$(sha256sum < "$TESTDIR/repo/sbxsrcbad_1.0.tar.gz" | cut -d' ' -f1)"

	# a deb: rule names the source package: refused before any byte is fetched
	printf '[packages]\ndeny = deb:sbxsrc\n' >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	export XDG_CACHE_HOME="$TESTDIR/cache2"
	local before
	before=$(wc -l < "$TESTDIR/srv.log")
	run "$SBX" run -p "aptlab$$" -- sh -c "$script"
	assert_status 0
	assert_contains "$out" "sbxsrc_1.0.dsc  403"
	assert_contains "$err" "deb 'sbxsrc' is denied by [packages] deny = deb:sbxsrc"
	assert_not_contains "$(tail -n +$((before + 1)) "$TESTDIR/srv.log")" "sbxsrc_1.0"
}

# The CI step of issue 43 (its "Done when"): a Debian package built as a
# CI job would, in a packages sandbox on a project: apt-get build-dep,
# apt-get source and dpkg-buildpackage of hello against Debian's archive,
# every file through the gateway (the source package's each checked
# against the Sources index); the .debs it built applied into the project
# (a git checkout), nothing else; there, a real package of hello that
# installs and greets. The deb-src lines are the image's own deb lines
# (Debian's images carry none): nothing names a host here.
test_a_debian_package_built_in_a_project_through_the_gateway() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	git init -q out && echo "a checkout" > out/README &&
		git -C out add README && git -C out -c user.name=t -c user.email=t@t commit -qm init || fail "git"
	local head before t0=$SECONDS
	head=$(git -C out rev-parse HEAD)
	before=$(cd out && find . -path ./.git -prune -o -print | sort)
	run "$SBX" run -p packages -i minimal --project out --events "$TESTDIR/ev" -- sh -c '
		set -e
		t() { echo "== $1: $(($(date +%s) - t0)) s" >&2; t0=$(date +%s); }
		t0=$(date +%s)
		sed -n "s/^deb /deb-src /p" /etc/apt/sources.list > /etc/apt/sources.list.d/src.list
		grep -q "^deb-src " /etc/apt/sources.list.d/src.list
		apt-get -o Acquire::Languages=none update >/tmp/log 2>&1 || { cat /tmp/log; exit 1; }; t update
		apt-get build-dep -y hello >/tmp/log 2>&1 || { tail -30 /tmp/log; exit 1; }; t build-dep
		apt-get source hello >/tmp/log 2>&1 || { tail -30 /tmp/log; exit 1; }; t source
		cd hello-*/
		dpkg-buildpackage -b -uc -us >/tmp/log 2>&1 || { tail -30 /tmp/log; exit 1; }; t dpkg-buildpackage
		ls ..'
	assert_status 0
	echo "$err" | grep '^== ' >&2 || true
	assert_contains "$out" ".deb" "the build's directory"
	assert_eq "$before" "$(cd out && find . -path ./.git -prune -o -print | sort)" "the checkout after the run"
	local id
	id=$(printf '%s\n' "$err" | sed -n 's/^sbxrun: changes \([0-9a-f-]*\): .*/\1/p' | head -n 1)
	[ -n "$id" ] || fail "no change set: $err"

	# through the gateway: the Sources indexes read, the source package's
	# four files and the build dependencies served as checked
	local ev ver
	ev=$(apt_events "$TESTDIR/ev")
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev")" '/main/source/' "the package-index events"
	assert_contains "$ev" "deb debhelper "
	ver=$(printf '%s\n' "$ev" | awk '$2 == "hello" { print $3; exit }')
	[ -n "$ver" ] || fail "no package event for hello's source: $ev"
	assert_eq 4 "$(printf '%s\n' "$ev" | grep -c "^deb hello $ver miss ")" "hello's source files served (.dsc, .orig.tar.gz, .asc, .debian.tar.xz)"

	# the .debs alone applied (a CI job's artifacts), not the build tree
	run "$SBX" changes show "$id"
	assert_status 0
	local debs
	debs=$(printf '%s\n' "$out" | awk '$1 == "added" && $2 == "file" && $NF ~ /^[^\/]*\.deb$/ { print $NF }')
	assert_contains "$debs" "hello_${ver}_"
	assert_contains "$out" "hello-" "the build tree in the change set"
	run "$SBX" changes apply "$id" $debs
	assert_status 0
	assert_contains "$err" "$(printf '%s\n' "$debs" | grep -c .) applied to"
	run "$SBX" changes discard "$id"
	assert_status 0
	assert_eq "$(printf '%s\n' $debs | sed 's/^/?? /' | sort)" "$(git -C out status --porcelain | sort)" "the checkout after apply"
	assert_eq "$head" "$(git -C out rev-parse HEAD)" "the checkout's HEAD"

	# a real package of hello, on the host and installed in a sandbox
	local deb
	deb=$(ls out/hello_"$ver"_*.deb)
	run dpkg-deb -f "$deb" Package Version
	assert_status 0
	assert_eq "Package: hello
Version: $ver" "$out"
	dpkg-deb -c "$deb" | grep -q '/usr/bin/hello$' || fail "no /usr/bin/hello in $deb"
	run "$SBX" run -i minimal --project out --discard -- sh -c "dpkg -i ${deb#out/} >/dev/null && hello"
	assert_status 0
	assert_eq "Hello, world!" "$out"
	echo "build-dep, source, dpkg-buildpackage, apply and install: $((SECONDS - t0)) s" >&2
}

# A mirror whose Packages files never end (tests/helper/httpd.py's
# /endless/): eight asked at once, as many as the gateway fetches from one
# host. Each body goes to a file of the cache as it arrives and the fetch
# is cut at the index's cap (256 MiB); the host-side sbxrun's memory stays
# near its own (issue 34, point 13). Before, each body grew in memory up to
# the cap: the host-side sbxrun passed 1.9 GiB.
test_apt_gateway_cuts_an_endless_index_on_disk() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	python3 -u "$TOP/tests/helper/httpd.py" "$TESTDIR" > "$TESTDIR/.srv" 2>"$TESTDIR/srv.log" &
	local srv=$! pid kb
	for _ in $(seq 100); do [ -s "$TESTDIR/.srv" ] && break; sleep 0.1; done
	RPORT=$(head -1 "$TESTDIR/.srv")
	[ -n "$RPORT" ] || fail "the fixture server did not start"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$RPORT" \
		> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	at_exit "kill $srv 2>/dev/null || true; rm -f '$HOME/.config/sbxrun/profiles/aptlab$$.ini'"
	"$SBX" run -p "aptlab$$" -- sh -c '
		for i in 1 2 3 4 5 6 7 8; do
			curl -sS -m 120 -x "$SBXRUN_PROXY" -o /tmp/body$i -w "$i %{http_code}\n" \
				"http://packages.sbxrun.internal/deb/host.sbxrun.internal:'"$RPORT"'/endless/dists/s$i/main/binary-amd64/Packages" &
		done
		wait
		head -c 300 /tmp/body1; echo
		echo done
		sleep 3' > "$TESTDIR/out" 2>&1 &
	pid=$!
	for _ in $(seq 1200); do grep -q '^done' "$TESTDIR/out" && break; sleep 0.1; done
	grep -q '^done' "$TESTDIR/out" || fail "the sandbox did not get that far: $(cat "$TESTDIR/out")"
	kb=$(awk '/^VmHWM:/ { h = $2 } /^VmRSS:/ { r = $2 } END { print h, r }' "/proc/$pid/status")
	wait "$pid" || fail "the sandbox failed: $(cat "$TESTDIR/out")"
	out=$(cat "$TESTDIR/out")
	assert_eq 8 "$(grep -c '^[1-8] 502$' <<<"$out")" "answers: $out"
	assert_contains "$out" "larger than the gateway's cap of 268435456 bytes"
	echo "host-side sbxrun after 8 endless Packages files: VmHWM VmRSS $kb KiB" >&2
	# before, each body grew in memory up to its cap: 8 x 256 MiB
	[ "${kb% *}" -lt 100000 ] || fail "the host-side sbxrun grew to $kb KiB (VmHWM VmRSS)"
	# nothing of them is left in the cache
	assert_eq "" "$(find "$XDG_CACHE_HOME/sbxrun/packages" -type f | grep -v '\.lock$' || true)" "files in the cache"
}

# Starts the fixture npm registry (tests/helper/npmreg.py); sets NPORT.
apt_npm_fixture() {
	python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/npm.log" > "$TESTDIR/.npm-port" &
	local reg=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.npm-port" ] && break; sleep 0.1; done
	NPORT=$(head -1 "$TESTDIR/.npm-port")
	[ -n "$NPORT" ] || fail "the fixture registry did not start"
	touch "$TESTDIR/npm.log"
	APT_CLEANUP="kill $reg 2>/dev/null || true; ${APT_CLEANUP:-}"
	at_exit "$APT_CLEANUP"
}

# What a sandbox gets for gateway paths: "LABEL PATH" pairs, each printed
# as "LABEL STATUS" and the body's first line.
APT_GET='while [ $# -gt 1 ]; do
		curl -sS -x "$SBXRUN_PROXY" -o /tmp/body -w "$1 %{http_code}\n" "http://packages.sbxrun.internal/$2"
		head -c 300 /tmp/body | tr -d "\000" | head -1; echo; shift 2
	done'

# Issue 34, 1: the deb route reaches apt's upstreams alone. Under a rule
# that denies a scoped npm package named dists, its tarball's path (it has
# a "/dists/" segment) asked of the npm registry's host through /deb/ was
# fetched and relayed (200) while /npm/ said 403; and any path with a
# "/dists/" segment was relayed unchecked from an apt host.
test_apt_route_reaches_apt_upstreams_alone() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	apt_npm_fixture
	printf '[packages]\nnpm = http://host.sbxrun.internal:%s/\ndeny = npm:@anyone/dists\n' "$NPORT" \
		>> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	mkdir -p "$TESTDIR/repo/dists/t"
	echo 'not an index' > "$TESTDIR/repo/dists/t/evil.tgz"
	# an allowed mirror that redirects everything to the registry's tarball
	python3 -u -c '
import http.server, sys
class H(http.server.BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_GET(self):
        self.send_response(302)
        self.send_header("Location", "http://host.sbxrun.internal:%s/@anyone/dists/-/dists-1.0.0.tgz" % sys.argv[1])
        self.send_header("Content-Length", "0")
        self.end_headers()
s = http.server.HTTPServer(("127.0.0.1", 0), H)
print(s.server_address[1], flush=True)
s.serve_forever()' "$NPORT" > "$TESTDIR/.redir-port" &
	APT_CLEANUP="kill $! 2>/dev/null || true; $APT_CLEANUP"
	at_exit "$APT_CLEANUP"
	for _ in $(seq 100); do [ -s "$TESTDIR/.redir-port" ] && break; sleep 0.1; done
	local xport
	xport=$(head -1 "$TESTDIR/.redir-port")
	printf '[network]\nallow = host.sbxrun.internal:%s\n' "$xport" >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	local n="deb/host.sbxrun.internal:$NPORT" a="deb/host.sbxrun.internal:$RPORT"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh npm npm/@anyone/dists/-/dists-1.0.0.tgz \
		deb "$n/@anyone/dists/-/dists-1.0.0.tgz" encoded "$n/%40anyone/dists/-/dists-1.0.0.tgz" \
		release "$n/dists/x/Release" doc "$n/@anyone%2fdists" apt "$a/Release" other "$a/dists/t/evil.tgz" \
		redirect "deb/host.sbxrun.internal:$xport/dists/x/Release"
	assert_status 0
	assert_contains "$out" "npm 403"
	assert_contains "$out" "deb 403"
	assert_contains "$out" "deb host.sbxrun.internal:$NPORT: an npm or PyPI upstream's host: the deb route reaches apt's upstreams alone"
	assert_contains "$out" "encoded 403"
	assert_contains "$out" "release 403"
	assert_contains "$out" "doc 403"
	assert_contains "$out" "apt 200"
	assert_contains "$out" "other 403"
	assert_contains "$out" "neither one of apt's signed index files"
	assert_contains "$err" "sbxrun: gateway: deb host.sbxrun.internal:$NPORT: an npm or PyPI upstream's host"
	assert_contains "$out" "redirect 502"
	assert_contains "$out" "upstream: host 'host.sbxrun.internal' port $NPORT: an npm or PyPI upstream's host"
	# the registry was never asked; the apt host not for what is no index
	assert_eq "" "$(cat "$TESTDIR/npm.log")" "requests to the npm registry"
	assert_not_contains "$(cat "$TESTDIR/srv.log")" "evil.tgz"
	# an allow list that names nothing of deb closes the route: no index either
	printf '[packages]\nallow = npm:left-pad\n' >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh apt "$a/Release" byhash "$a/dists/t/by-hash/SHA256/$(printf %064d 0)"
	assert_status 0
	assert_contains "$out" "apt 403"
	assert_contains "$out" "deb is closed: [packages] allow names nothing of this ecosystem"
	assert_contains "$out" "byhash 403"
}

# Starts the fixture PyPI index (tests/helper/pypireg.py); sets PPORT.
apt_pypi_fixture() {
	python3 -u "$TOP/tests/helper/pypireg.py" "$TESTDIR/pypi.log" > "$TESTDIR/.pypi-port" &
	local reg=$!
	for _ in $(seq 100); do [ -s "$TESTDIR/.pypi-port" ] && break; sleep 0.1; done
	PPORT=$(head -1 "$TESTDIR/.pypi-port")
	[ -n "$PPORT" ] || fail "the fixture index did not start"
	APT_CLEANUP="kill $reg 2>/dev/null || true; ${APT_CLEANUP:-}"
	at_exit "$APT_CLEANUP"
}

# Issue 34, 11: by-hash is apt's index route, never a package route. A
# .deb and a wheel in the cache (the same content-addressed store) were
# served by their digest under any apt host's by-hash path, before the
# rules and offline were asked: under deny, and offline, code got both.
# A by-hash index the cache recorded as such is still served, offline too.
test_apt_by_hash_never_serves_an_artifact() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	apt_pypi_fixture
	local prof="$HOME/.config/sbxrun/profiles/aptlab$$.ini" deb pk whl
	printf '[packages]\npypi = http://host.sbxrun.internal:%s/simple/\n' "$PPORT" >> "$prof"
	deb=$(sha256sum < "$TESTDIR/repo/sbxgood_1.0_all.deb" | cut -d' ' -f1)
	pk=$(sha256sum < "$TESTDIR/repo/Packages" | cut -d' ' -f1)
	mkdir -p "$TESTDIR/repo/dists/t/main/binary-all/by-hash/SHA256"
	cp "$TESTDIR/repo/Packages" "$TESTDIR/repo/dists/t/main/binary-all/by-hash/SHA256/$pk"
	local h="deb/host.sbxrun.internal:$RPORT" bh="deb/host.sbxrun.internal:$RPORT/dists/t/main/binary-all/by-hash/SHA256"
	# online, no rule: the .deb, the wheel and the by-hash Packages are cached
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET"'
		sha256sum /tmp/body' sh index "$bh/$pk" deb "$h/sbxgood_1.0_all.deb" page pypi/simple/demo/ \
		wheel pypi/files/demo/demo-1.0-py3-none-any.whl
	assert_status 0
	assert_contains "$out" "index 200"
	assert_contains "$out" "deb 200"
	assert_contains "$out" "wheel 200"
	whl=$(printf '%s\n' "$out" | sed -n 's#^\([0-9a-f]\{64\}\)  /tmp/body$#\1#p')
	[ -n "$whl" ] && [ -e "$XDG_CACHE_HOME/sbxrun/packages/sha256/$whl" ] || fail "the wheel is not in the cache: $out"
	[ -e "$XDG_CACHE_HOME/sbxrun/packages/sha256/$deb" ] || fail "the .deb is not in the cache"
	# denied, online: by their digests under an apt host's by-hash path,
	# neither comes out of the cache (upstream has no such file: 404)
	printf 'deny = deb:sbxgood\ndeny = pypi:demo\n' >> "$prof"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh bydeb "$bh/$deb" bywheel "$bh/$whl" \
		flat "$h/dists/t/by-hash/SHA256/$deb" index "$bh/$pk"
	assert_status 0
	assert_contains "$out" "bydeb 404"
	assert_contains "$out" "bywheel 404"
	assert_contains "$out" "flat 404"
	assert_contains "$out" "index 200"
	# offline: nothing asked upstream, the recorded index alone served
	printf 'offline = yes\n' >> "$prof"
	local before
	before=$(wc -l < "$TESTDIR/srv.log")
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh bydeb "$bh/$deb" bywheel "$bh/$whl" index "$bh/$pk" \
		deb "$h/sbxgood_1.0_all.deb"
	assert_status 0
	assert_contains "$out" "bydeb 404"
	assert_contains "$out" "bywheel 404"
	assert_contains "$out" "offline: deb 'host.sbxrun.internal:$RPORT/dists/t/main/binary-all/by-hash/SHA256/$deb' is not in the cache"
	assert_contains "$out" "index 200"
	assert_contains "$out" "deb 403"
	assert_eq "$before" "$(wc -l < "$TESTDIR/srv.log")" "requests upstream while offline"
}

# Issue 34, 12: a table is the index of the archive it came from alone. A
# hostile archive's by-hash Packages, which lists sbxgood's bytes as
# sbxok, asked again under the good archive's by-hash path, came from the
# cache as that archive's index, and sbxgood (denied) was served as sbxok.
test_apt_table_is_bound_to_its_archive() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	printf '[packages]\ndeny = deb:sbxgood\n' >> "$HOME/.config/sbxrun/profiles/aptlab$$.ini"
	local f="$TESTDIR/repo/sbxgood_1.0_all.deb" evil d
	mkdir -p "$TESTDIR/repo/good/pool"
	cp "$f" "$TESTDIR/repo/good/pool/"
	evil=$(printf 'Package: sbxok\nVersion: 1.0\nArchitecture: all\nFilename: pool/sbxgood_1.0_all.deb\nSize: %s\nSHA256: %s\n\n' \
		"$(stat -c %s "$f")" "$(sha256sum < "$f" | cut -d' ' -f1)")
	d=$(printf '%s\n' "$evil" | sha256sum | cut -d' ' -f1)
	mkdir -p "$TESTDIR/repo/evil/dists/t/main/binary-all/by-hash/SHA256"
	printf '%s\n' "$evil" > "$TESTDIR/repo/evil/dists/t/main/binary-all/by-hash/SHA256/$d"
	local h="deb/host.sbxrun.internal:$RPORT"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev" -- sh -c "$APT_GET" sh \
		evil "$h/evil/dists/t/main/binary-all/by-hash/SHA256/$d" \
		relabel "$h/good/dists/t/main/binary-all/by-hash/SHA256/$d" \
		deb "$h/good/pool/sbxgood_1.0_all.deb"
	assert_status 0
	assert_contains "$out" "evil 200"
	assert_contains "$out" "relabel 404"
	assert_contains "$out" "deb 403"
	assert_contains "$out" "no Packages index fetched through the gateway lists this file"
	assert_not_contains "$(cat "$TESTDIR/ev")" '"name":"sbxok"'
	assert_not_contains "$(cat "$TESTDIR/srv.log")" "good/pool"
}

# Lists NAME VERSION in the fixture repository beside what its Packages
# lists (a .deb built as tests/helper/debrepo.sh builds them), Release
# made again over the new Packages.
apt_publish() { # NAME VERSION
	local d="$TESTDIR/repo" b="$TESTDIR/build-$1-$2" f="${1}_${2}_all.deb"
	mkdir -p "$b/DEBIAN" "$b/usr/share/$1"
	printf 'Package: %s\nVersion: %s\nArchitecture: all\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nDescription: a fixture of the gateway tests\n' \
		"$1" "$2" > "$b/DEBIAN/control"
	echo "$1 $2 is installed" > "$b/usr/share/$1/hello"
	dpkg-deb -Zgzip --root-owner-group --build "$b" "$d/$f" >/dev/null
	printf 'Package: %s\nVersion: %s\nArchitecture: all\nFilename: ./%s\nSize: %s\nSHA256: %s\nDescription: a fixture\n\n' \
		"$1" "$2" "$f" "$(stat -c %s "$d/$f")" "$(sha256sum < "$d/$f" | cut -d' ' -f1)" >> "$d/Packages"
	{ sed '/^SHA256:/,$d' "$d/Release"; echo 'SHA256:'
	  for x in Packages Sources; do printf ' %s %s %s\n' "$(sha256sum < "$d/$x" | cut -d' ' -f1)" "$(stat -c %s "$d/$x")" "$x"; done
	} > "$d/Release.new" && mv "$d/Release.new" "$d/Release"
}

# Issue 43, 5: a deb: package's date is when the gateway first saw its
# version in an index (apt's indexes carry none), recorded in the table of
# that index and carried over when the index changes; min_age and
# not_after refuse a .deb by it (403: apt cannot fall back, the signed
# Packages lists the young one), a pin included; min_age = deb:0 lets apt
# through under a global min_age; a fresh cache makes versions young again.
test_apt_min_age_and_not_after_by_first_seen() {
	export XDG_CACHE_HOME="$TESTDIR/cache"
	apt_fixture
	local prof="$HOME/.config/sbxrun/profiles/aptlab$$.ini" t0=$SECONDS
	cp "$prof" "$TESTDIR/base.ini"
	local apt="echo '$LIST' > /tmp/lab.list
		apt() { apt-get -o Dir::Etc::SourceList=/tmp/lab.list -o Dir::Etc::SourceParts=/nonexistent \"\$@\"; }
		apt update >/tmp/log 2>&1 || cat /tmp/log"
	# everything is first seen now: under min_age a pin is refused too
	{ cat "$TESTDIR/base.ini"; printf '[packages]\nmin_age = 6s\nindex_max_age = none\n'; } > "$prof"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev1" -- sh -c "$apt
		apt install -y sbxgood=1.0 2>&1 | grep -m1 '^E: Failed to fetch'"
	assert_status 0
	local seen1
	seen1=$(date -u +%s)  # sbxgood 1.0 was first seen before it
	assert_contains "$out" "sbxgood_1.0_all.deb  403"
	assert_contains "$err" "sbxrun: gateway: deb sbxgood 1.0: first seen by the gateway"
	assert_contains "$err" "seconds ago, [packages] min_age is 6 seconds; apt cannot pick an older version"
	assert_contains "$(grep package-refused "$TESTDIR/ev1")" '"rule":"min_age = 6 seconds"'

	# the ecosystem's own min_age wins: apt goes through; a feed's Debian
	# record still refuses what it names
	printf '{"id":"MAL-2026-90","affected":[{"package":{"ecosystem":"Debian","name":"sbxbad"},"versions":["1.0"]}]}\n' \
		> "$TESTDIR/feed.json"
	{ cat "$TESTDIR/base.ini"; printf '[packages]\nmin_age = 6s\nmin_age = deb:0\nindex_max_age = none\nmalicious = %s\n' \
		"$TESTDIR/feed.json"; } > "$prof"
	run "$SBX" run -p "aptlab$$" -- sh -c "$apt
		apt install -y sbxgood >/tmp/log 2>&1 || cat /tmp/log
		cat /usr/share/sbxgood/hello
		apt install -y sbxbad 2>&1 | grep -m1 '^E: Failed to fetch'"
	assert_status 0
	assert_contains "$out" "sbxgood is installed"
	assert_contains "$out" "sbxbad_1.0_all.deb  403"
	assert_contains "$err" "deb 'sbxbad@1.0' is known malicious (MAL-2026-90"

	# sbxgood 2.0 published once 1.0 is old enough: the index changed, its
	# table is built again with 1.0's time carried over; 2.0 is young
	while [ "$(date -u +%s)" -le $((seen1 + 6)) ]; do sleep 0.5; done
	apt_publish sbxgood 2.0
	{ cat "$TESTDIR/base.ini"; printf '[packages]\nmin_age = 6s\nindex_max_age = none\n'; } > "$prof"
	run "$SBX" run -p "aptlab$$" --events "$TESTDIR/ev3" -- sh -c "$apt
		apt install -y sbxgood 2>&1 | grep -m1 '^E: Failed to fetch'
		apt install -y sbxgood=2.0 2>&1 | grep -m1 '^E: Failed to fetch'
		apt install -y sbxgood=1.0 >/tmp/log 2>&1 || cat /tmp/log
		cat /usr/share/sbxgood/hello"
	assert_status 0
	assert_contains "$(grep '"package-index"' "$TESTDIR/ev3")" '"table":"built"'
	assert_eq 2 "$(grep -c 'sbxgood_2.0_all.deb  403' <<<"$out")" "$out"
	assert_contains "$err" "sbxrun: gateway: deb sbxgood 2.0: first seen by the gateway"
	assert_contains "$out" "sbxgood is installed"
	assert_contains "$(apt_events "$TESTDIR/ev3")" "deb sbxgood 1.0"

	# not_after between the two: 1.0 served (its time kept in the table in
	# the cache), 2.0 refused; a cache of its own has seen neither before
	local when
	when=$(date -u -d "@$seen1" +%Y-%m-%dT%H:%M:%SZ)
	{ cat "$TESTDIR/base.ini"; printf '[packages]\nnot_after = %s\nindex_max_age = none\n' "$when"; } > "$prof"
	local h="deb/host.sbxrun.internal:$RPORT"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh index "$h/Packages" one "$h/sbxgood_1.0_all.deb" \
		two "$h/sbxgood_2.0_all.deb"
	assert_status 0
	assert_contains "$out" "one 200"
	assert_contains "$out" "two 403"
	assert_contains "$out" "deb sbxgood 2.0: first seen by the gateway 20"
	assert_contains "$out" ", after [packages] not_after = $when"
	export XDG_CACHE_HOME="$TESTDIR/cache2"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh index "$h/Packages" one "$h/sbxgood_1.0_all.deb"
	assert_status 0
	assert_contains "$out" "one 403"
	assert_contains "$out" "after [packages] not_after = $when"
	# mode = report: told, and served
	printf 'mode = report\n' >> "$prof"
	run "$SBX" run -p "aptlab$$" -- sh -c "$APT_GET" sh index "$h/Packages" one "$h/sbxgood_1.0_all.deb"
	assert_status 0
	assert_contains "$out" "one 200"
	assert_contains "$err" "sbxrun: gateway: report: deb 'sbxgood' would be refused: deb sbxgood 1.0: first seen by the gateway 20"
	echo "min_age and not_after of apt: $((SECONDS - t0)) s" >&2
}
