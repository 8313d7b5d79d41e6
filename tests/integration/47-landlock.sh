# vm-modes: user-systemd
# The VM's kernel 6.1 has Landlock ABI 2, where --net packages is refused
# (test_landlock_net_packages_by_abi): the tool files' test, which needs
# ABI 4 and the host's mvn and cargo, runs on the host only.
# vm-tests user-systemd: test_landlock_tier_confines_on_this_kernel test_unusable_userns_takes_landlock test_landlock_net_packages_by_abi
# The landlock tier (issue 41) on this machine's own kernel, without a
# container: tests/helper/nouserns runs sbxrun under a seccomp filter that
# refuses user namespaces as Docker's default profile does, so sbxrun must
# take the landlock tier. 46-containers tries the same inside podman as
# root; this file runs as the user, here and in the Debian 12 VM (make
# check-vm), whose kernel 6.1 has Landlock ABI 2: no TCP rules, so there
# `--net packages` must be refused, not run with the network open. And
# the case of a user namespace made but not usable (Ubuntu's AppArmor
# restriction), with probe deny-mount as its fixture.

NOUSERNS=$TOP/tests/helper/nouserns
PROBE=$TOP/tests/helper/probe

ll_setup() {
	[ -x "$NOUSERNS" ] || fail "no $NOUSERNS (make tests/helper/nouserns)"
	run "$NOUSERNS" "$SBX" run -q -- true
	[ "$status" = 0 ] || case $err in
		*"Landlock"*"not"*) skip "this kernel has no Landlock: $err" ;;
		*) fail "no landlock tier behind nouserns: $err" ;;
		esac
	echo "the user's own secret" > "$HOME/ll-secret"
	chmod 600 "$HOME/ll-secret"
	# a listener on the host's loopback, which the command must not reach
	python3 - "$TESTDIR/port" <<'PY' &
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
while True:
    c, _ = s.accept(); c.sendall(b"reached\n"); c.close()
PY
	LISTENER=$!
	for _ in $(seq 50); do [ -s "$TESTDIR/port" ] && break; sleep 0.1; done
	PORT=$(cat "$TESTDIR/port")
	[ -n "$PORT" ] || fail "the listener did not start"
	at_exit 'kill $LISTENER 2>/dev/null'
}

# The ABI the record gives.
ll_abi() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(d["tier"], d["landlock"]["abi"])' "$1"
}

# The escapes the tier claims, tried under the fixture ("$@": the command
# that runs sbxrun under its filter).
ll_confines() {
	run "$@" "$SBX" run --json "$TESTDIR/rec.json" -- bash -c '
		echo "ws: $PWD"
		echo kept > "$PWD/out" && echo "wrote the workspace"
		echo x > /var/tmp/ll-$$ 2>/dev/null && echo "wrote /var/tmp"
		echo x > '"$HOME"'/ll-written 2>/dev/null && echo "wrote the home"
		cat '"$HOME"'/ll-secret 2>/dev/null
		for p in 1 '"$LISTENER"'; do
			c=$(tr "\0" " " < /proc/$p/environ 2>/dev/null | head -c 40)
			[ -n "$c" ] && echo "read the environment of $p: $c"
		done
		(exec 3<>/dev/tcp/127.0.0.1/'"$PORT"' && cat <&3) 2>/dev/null
		kill -0 1 2>/dev/null && echo "signalled pid 1"
		echo done'
	assert_status 0
	assert_contains "$err" "tier landlock"
	local rec
	rec=$(ll_abi "$TESTDIR/rec.json")
	echo "record: $rec" >&2
	assert_contains "$rec" "landlock "
	assert_contains "$out" "wrote the workspace"
	assert_contains "$out" "done"
	assert_not_contains "$out" "wrote /var/tmp"
	assert_not_contains "$out" "wrote the home"
	assert_not_contains "$out" "the user's own secret"
	assert_not_contains "$out" "read the environment"
	assert_not_contains "$out" "reached"
	[ ! -e "$HOME/ll-written" ] || fail "a file was written in the home"
	# the private workspace is gone after the run
	local ws
	ws=$(printf '%s\n' "$out" | sed -n 's/^ws: //p')
	[ -n "$ws" ] && [ ! -e "$ws" ] || fail "the workspace '$ws' is still there"
}

test_landlock_tier_confines_on_this_kernel() {
	ll_setup
	ll_confines "$NOUSERNS"
	assert_not_contains "$err" "a user namespace was made" "where none can be made"
}

# A user namespace made but not usable, as under Ubuntu's AppArmor
# restriction without sbxrun's profile (23.10+: made without capabilities,
# its first mount refused). The fixture: probe deny-mount (41-doctor's),
# whose filter lets namespaces be made and refuses mount and the rest of
# the mount API with EPERM. run takes the landlock tier and
# its escape checks hold; doctor names the case and that tier; enforce =
# strict refuses it in one line, with the cause and the fix.
test_unusable_userns_takes_landlock() {
	ll_setup
	ll_confines "$PROBE" deny-mount
	assert_contains "$err" "; a user namespace was made, but its first mount was refused (AppArmor's restriction without sbxrun's profile, or a seccomp filter); 'sbxrun doctor' names the fix"
	assert_contains "$(cat "$TESTDIR/rec.json")" "a user namespace was made, but its first mount was refused" "the record's why"
	run "$PROBE" deny-mount "$SBX" doctor
	assert_status 0
	assert_contains "$out" "user namespace       unusable: created one, but no mount in it is allowed"
	assert_contains "$out" "tier                 landlock: a user namespace is made here, but cannot be used: the seccomp filter sbxrun runs under refuses mount in it"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf '[sandbox]\ninherit = default\n[limits]\nenforce = strict\n' > "$HOME/.config/sbxrun/profiles/ll47strict.ini"
	run "$PROBE" deny-mount "$SBX" run -p ll47strict --pids unlimited --memory unlimited --cpus unlimited -- echo RAN
	rm -f "$HOME/.config/sbxrun/profiles/ll47strict.ini"
	assert_status 125
	assert_not_contains "$out" "RAN"
	assert_contains "$err" "sbxrun: error: tier full is required ([limits] enforce = strict), but only landlock is possible here: a user namespace is made here, but cannot be used: the seccomp filter sbxrun runs under refuses mount in it: a mount in the sandbox's new namespaces: Operation not permitted"
	assert_contains "$err" "hint: run sbxrun without that filter"
	[ "$(printf '%s\n' "$err" | grep -c '^sbxrun: error:')" = 1 ] || fail "not one error line: $err"
	local left
	left=$(find "${TMPDIR:-/tmp}" -maxdepth 1 -name 'sbxrun-landlock.*' -user "$(id -u)")
	[ -z "$left" ] || fail "a landlock workspace left: $left"
}

# (the listener is the user's own process outside the sandbox: its
# environment is what Landlock's scope must keep out, as the kernel's
# ptrace check alone would let the same uid read it)

# --net packages needs Landlock's TCP rules (ABI 4, Linux 6.7): below it the
# tier cannot keep the command to the proxy's port and must refuse the run
# (125, one line naming why), never run it with the network open.
test_landlock_net_packages_by_abi() {
	ll_setup
	run "$NOUSERNS" "$SBX" run --json "$TESTDIR/rec.json" -- true
	assert_status 0
	local abi
	abi=$(ll_abi "$TESTDIR/rec.json" | cut -d' ' -f2)
	echo "Landlock ABI $abi" >&2
	run "$NOUSERNS" "$SBX" run --net packages -- bash -c '
		(exec 3<>/dev/tcp/127.0.0.1/'"$PORT"' && cat <&3) 2>/dev/null
		echo ran'
	if [ "$abi" -ge 4 ]; then
		assert_status 0
		assert_contains "$out" "ran"
		assert_not_contains "$out" "reached"
	else
		assert_status 125
		assert_not_contains "$out" "ran"
		[ "$(printf '%s\n' "$err" | grep -c '^sbxrun: error')" = 1 ] || fail "not one error line: $err"
		assert_contains "$err" "ABI"
	fi
}

# --net packages in the landlock tier has no layer to write into: Cargo's,
# Maven's and Gradle's files go in the private HOME, naming the proxy's
# loopback port there, and JAVA_TOOL_OPTIONS makes the JVM's user.home
# that HOME (a JVM reads the passwd entry's, the caller's home, which the
# tier keeps out). The host's mvn resolves a parent pom from a one-file
# upstream through the gateway; the host's cargo asks the gateway's
# registry (its upstream a closed port: the error names the gateway).
test_landlock_points_cargo_maven_gradle_at_the_gateway() {
	ll_setup
	command -v mvn > /dev/null && command -v cargo > /dev/null || skip "needs maven and cargo-web (tests/deps.sh)"
	run "$NOUSERNS" "$SBX" run --json "$TESTDIR/rec.json" -- true
	[ "$(ll_abi "$TESTDIR/rec.json" | cut -d' ' -f2)" -ge 4 ] ||
		skip "--net packages needs Landlock ABI 4 (test_landlock_net_packages_by_abi)"
	local d="$TESTDIR/repo/lab/example/parent/1.0" t0=$SECONDS mport port
	mkdir -p "$d"
	printf '<project xmlns="http://maven.apache.org/POM/4.0.0"><modelVersion>4.0.0</modelVersion><groupId>lab.example</groupId><artifactId>parent</artifactId><version>1.0</version><packaging>pom</packaging></project>\n' \
		> "$d/parent-1.0.pom"
	sha1sum < "$d/parent-1.0.pom" | cut -d' ' -f1 > "$d/parent-1.0.pom.sha1"
	python3 -u "$TOP/tests/helper/mavenrepo/serve.py" "$TESTDIR/repo" > "$TESTDIR/.mp" 2> "$TESTDIR/mp.err" &
	at_exit "kill $! 2>/dev/null"
	for _ in $(seq 100); do [ -s "$TESTDIR/.mp" ] && break; sleep 0.1; done
	mport=$(head -1 "$TESTDIR/.mp")
	[ -n "$mport" ] || fail "the upstream did not start: $(cat "$TESTDIR/mp.err")"
	mkdir -p "$HOME/.config/sbxrun/profiles"
	printf 'inherit = packages\n[packages]\nmaven = http://host.sbxrun.internal:%s/\ncargo = http://host.sbxrun.internal:1/\ntimeout = 5s\n' \
		"$mport" > "$HOME/.config/sbxrun/profiles/ll47pkg.ini"
	at_exit "rm -f '$HOME/.config/sbxrun/profiles/ll47pkg.ini'"
	run "$NOUSERNS" "$SBX" run -p ll47pkg -- sh -c '
		echo "home=$HOME proxy=$CARGO_HTTP_PROXY"
		grep -H -e "sparse+" -e "<url>" -e "<port>" -e "proxyPort" -e "new URI" \
			.cargo/config.toml .m2/settings.xml .gradle/init.d/sbxrun.gradle
		mkdir p && cd p && : > lib.rs
		printf "[package]\nname = \"p\"\nversion = \"0.1.0\"\n[lib]\npath = \"lib.rs\"\n[dependencies]\nfoo = \"1\"\n" > Cargo.toml
		echo "<project xmlns=\"http://maven.apache.org/POM/4.0.0\"><modelVersion>4.0.0</modelVersion>
		  <parent><groupId>lab.example</groupId><artifactId>parent</artifactId><version>1.0</version>
		  <relativePath/></parent><artifactId>proj</artifactId></project>" > pom.xml
		MAVEN_OPTS="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC" mvn -B -ntp validate > ../mvn.log 2>&1
		echo "mvn=$?"; grep -E "ERROR|BUILD" ../mvn.log | head -3
		ls $HOME/.m2/repository/lab/example/parent/1.0/
		cargo fetch 2>&1 | head -3'
	echo "landlock: mvn and cargo through the gateway: $((SECONDS - t0))s" >&2
	assert_status 0
	port=$(printf '%s\n' "$out" | sed -n 's|^home=.* proxy=http://127.0.0.1:\([0-9]*\)$|\1|p')
	[ -n "$port" ] || fail "no proxy port: $out"
	assert_contains "$out" ".cargo/config.toml:registry = \"sparse+http://packages.sbxrun.internal/cargo/\""
	assert_contains "$out" ".m2/settings.xml:      <url>http://packages.sbxrun.internal/maven/</url>"
	assert_contains "$out" ".m2/settings.xml:      <port>$port</port>"
	assert_contains "$out" ".gradle/init.d/sbxrun.gradle:def sbxrunGateway = new URI('http://packages.sbxrun.internal/maven/')"
	assert_contains "$out" ".gradle/init.d/sbxrun.gradle:    System.setProperty(p + '.proxyPort', '$port')"
	assert_contains "$out" "mvn=0"
	assert_contains "$out" "parent-1.0.pom"
	assert_contains "$(curl -sS "http://127.0.0.1:$mport/_hits")" "/lab/example/parent/1.0/parent-1.0.pom 1"
	assert_contains "$out" "http://packages.sbxrun.internal/cargo/3/f/foo"
	assert_contains "$err" "cargo foo: upstream"
}
