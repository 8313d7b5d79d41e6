# also-as-root
# serial: /etc/sbxrun/policy.ini binds every user (SBX_JOBS=2: after the user pass)
# root-only: test_etc_policy_binds_root_and_cannot_be_lifted test_etc_policy_must_be_roots_alone
# root-only: test_etc_policy_package_rules_hold_against_other_spellings
# The administrator's ceiling (issue 26): /etc/sbxrun/policy.ini, and
# $SBXRUN_POLICY, an extra file that can only tighten (so tests as the
# unprivileged user can use it); zero limits; what a profile file may be.

# A ceiling of the kind a lab sets, in $TESTDIR/policy.ini, for this shell.
lab_policy() {
	mkdir -p "$TESTDIR/work"
	cat > "$TESTDIR/policy.ini" <<-EOF
	; a lab's ceiling
	[sandbox]
	seccomp = default
	[limits]
	memory = 2G
	timeout = 1h
	[network]
	egress = packages
	allow = @apt
	allow = *.example.org
	[mounts]
	bind = $TESTDIR/work:rw
	bind = /usr/share
	EOF
	export SBXRUN_POLICY=$TESTDIR/policy.ini
}

# A profile made of the given lines (printf-style escapes).
profile() { # name lines
	printf "$2" > "$TESTDIR/$1.ini"
	echo "$TESTDIR/$1.ini"
}

test_policy_refuses_what_the_ceiling_forbids() {
	lab_policy
	local p
	p=$(profile full '[limits]\nmemory = 1G\n[network]\negress = full\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "profile '$p' asks for egress = full ($p:4); $TESTDIR/policy.ini caps [network] egress at packages"
	p=$(profile noseccomp '[limits]\nmemory = 1G\n[sandbox]\nseccomp = off\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "asks for seccomp = off ($p:4); $TESTDIR/policy.ini caps [sandbox] seccomp at default"
	mkdir -p "$HOME/.ssh"
	p=$(profile ssh "[limits]\nmemory = 1G\n[mounts]\nbind = $HOME/.ssh:/keys:rw\n")
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "asks for bind = $HOME/.ssh:/keys:rw ($p:4); $TESTDIR/policy.ini caps [mounts] bind at $TESTDIR/work:rw, /usr/share"
	# read-only where only read-only is allowed; a symlink does not launder
	run "$SBX" run --image tiny -p "$(profile ok '[limits]\nmemory = 1G\n')" --bind /usr/share/doc:/d:rw -- true
	assert_bad_input "--bind asks for bind = /usr/share/doc:/d:rw"
	ln -s "$HOME/.ssh" "$TESTDIR/work/keys"
	run "$SBX" run --image tiny -p "$TESTDIR/ok.ini" --bind "$TESTDIR/work/keys:/k" -- true
	assert_bad_input "caps [mounts] bind at"
	p=$(profile big '[limits]\nmemory = 8G\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "profile '$p' asks for memory = 8G ($p:2); $TESTDIR/policy.ini caps [limits] memory at 2G"
	run "$SBX" run --image tiny -p "$TESTDIR/ok.ini" --memory unlimited -- true
	assert_bad_input "--memory asks for memory = unlimited; $TESTDIR/policy.ini caps [limits] memory at 2G"
	run "$SBX" run --image tiny -p "$TESTDIR/ok.ini" --net packages --allow evil.test -- true
	assert_bad_input "--allow asks for allow = evil.test; $TESTDIR/policy.ini caps [network] allow at @apt, *.example.org"
	# the stock default asks for 4G: a ceiling below it refuses it too
	run "$SBX" run --image tiny -- true
	assert_bad_input "profile 'default' asks for memory = 4G"
}

test_policy_under_the_cap_runs_with_the_ceiling_as_its_limits() {
	lab_policy
	echo hello > "$TESTDIR/work/f"
	local p
	p=$(profile ok '[limits]\nmemory = 1G\n[network]\negress = packages\nallow = deb.example.org\n')
	run "$SBX" run --image tiny -p "$p" --bind "$TESTDIR/work:/w:rw" -- cat /w/f
	assert_status 0
	assert_eq hello "$out"
	# an unset timeout takes the ceiling's: the command ends at it
	printf '[limits]\ntimeout = 1s\n' > "$TESTDIR/short.ini"
	p=$(profile plain '[limits]\nmemory = 1G\n')
	run env SBXRUN_POLICY="$TESTDIR/short.ini" "$SBX" run --image tiny -p "$p" -- sleep 30
	assert_status 124
}

test_policy_profile_show_gives_the_effective_values() {
	lab_policy
	local p
	p=$(profile ok '[limits]\nmemory = 1G\n')
	run "$SBX" profile show "$p"
	assert_status 0
	assert_contains "$out" "; with the ceiling of $TESTDIR/policy.ini applied"
	assert_contains "$out" "timeout = 1h	; policy $TESTDIR/policy.ini:6"
	assert_contains "$out" "memory = 1G	; $p:2"
	run "$SBX" profile show "$(profile big '[limits]\nmemory = 8G\n')"
	assert_bad_input "caps [limits] memory at 2G"
	# and the Kubernetes export never says more than the ceiling
	run "$SBX" profile export "$p" --format kube
	assert_status 0
	assert_contains "$out" "activeDeadlineSeconds: 3600"
	run "$SBX" profile export "$TESTDIR/big.ini" --format kube
	assert_bad_input "caps [limits] memory at 2G"
}

test_policy_holds_every_command() {
	lab_policy
	local p
	p=$(profile big '[limits]\nmemory = 8G\n')
	run "$SBX" session start -p "$p" --image tiny pol$$
	assert_bad_input "caps [limits] memory at 2G"
	run "$SBX" session ls
	assert_not_contains "$out" "pol$$"
	run "$SBX" shell -p "$p" --image tiny
	assert_bad_input "caps [limits] memory at 2G"
	run "$SBX" mcp -p "$p" < /dev/null
	assert_bad_input "caps [limits] memory at 2G"
	run "$SBX" proxy --listen 127.0.0.1:0 -p "$(profile px '[limits]\nmemory = 1G\n[network]\negress = packages\n')" --allow evil.test
	assert_bad_input "--allow asks for allow = evil.test"
	printf '[download]\nallow = none\n' > "$TESTDIR/nodl.ini"
	run env SBXRUN_POLICY="$TESTDIR/nodl.ini" "$SBX" download -p "$(profile dl '[download]\nallow = files.example.org\n')" http://files.example.org/x "$TESTDIR/x"
	assert_bad_input "caps [download] allow at none"
	[ ! -e "$TESTDIR/x" ] || fail "download wrote $TESTDIR/x"
}

test_policy_file_errors_name_file_and_line() {
	printf '[limits]\nmemroy = 2G\n' > "$TESTDIR/bad.ini"
	run env SBXRUN_POLICY="$TESTDIR/bad.ini" "$SBX" run --image tiny -- true
	assert_bad_input "$TESTDIR/bad.ini:2: memroy: unknown key in [limits]"
	printf '[sandbox]\nimage = tiny\n' > "$TESTDIR/bad.ini"
	run env SBXRUN_POLICY="$TESTDIR/bad.ini" "$SBX" run --image tiny -- true
	assert_bad_input "$TESTDIR/bad.ini:2: image: not a ceiling"
	run env SBXRUN_POLICY=/dev/zero "$SBX" run --image tiny -- true
	assert_bad_input "'/dev/zero' is not a regular file"
	run env SBXRUN_POLICY="$TESTDIR/missing.ini" "$SBX" run --image tiny -- true
	assert_bad_input "policy '$TESTDIR/missing.ini' (from \$SBXRUN_POLICY): No such file"
}

test_doctor_shows_the_policy() {
	lab_policy
	run "$SBX" doctor
	assert_contains "$out" "$TESTDIR/policy.ini: in force (an extra ceiling"
	assert_contains "$out" "$TESTDIR/policy.ini: [limits] memory = 2G"
	assert_contains "$out" "$TESTDIR/policy.ini: [network] egress = packages"
	assert_contains "$out" "$TESTDIR/policy.ini: [mounts] bind = $TESTDIR/work:rw, /usr/share"
	if [ ! -e /etc/sbxrun/policy.ini ]; then
		unset SBXRUN_POLICY
		run "$SBX" doctor
		assert_contains "$out" "none: no /etc/sbxrun/policy.ini"
	fi
}

test_zero_limits_are_refused() {
	local o
	for o in "--memory 0" "--pids 0" "--disk 0" "--timeout 0" "--timeout 0s" "--cpus 0" "--cpus 0.0"; do
		# shellcheck disable=SC2086
		run "$SBX" run --image tiny $o -- true
		assert_bad_input "${o%% *}: '${o#* }': zero is not a limit (use '"
	done
	run "$SBX" run --image tiny --timeout 0 -- true
	assert_contains "$err" "(use 'none' for no limit)"
	run "$SBX" run --image tiny --disk 0 -- true
	assert_contains "$err" "(use 'unlimited' for no limit)"
	for k in file_size open_files idle lifetime memory disk pids cpus timeout; do
		printf '[limits]\n%s = 0\n' "$k" > "$TESTDIR/z.ini"
		run "$SBX" run --image tiny -p "$TESTDIR/z.ini" -- true
		assert_bad_input "$TESTDIR/z.ini:2: $k: '0': zero is not a limit"
	done
	printf '[download]\nmax_size = 0\n' > "$TESTDIR/z.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/z.ini" -- true
	assert_bad_input "$TESTDIR/z.ini:2: max_size: '0': zero is not a limit"
	# the words say it on purpose
	run "$SBX" run --image tiny --memory unlimited --pids unlimited --cpus unlimited --timeout none -- true
	assert_status 0
}

test_profile_files_must_be_small_regular_files() {
	printf 'inherit = /dev/zero\n' > "$TESTDIR/zero.ini"
	local start=$SECONDS
	run "$SBX" run --image tiny -p "$TESTDIR/zero.ini" -- true
	assert_bad_input "$TESTDIR/zero.ini:1: inherit: profile: '/dev/zero' is not a regular file"
	[ $((SECONDS - start)) -le 2 ] || fail "took $((SECONDS - start)) s"
	printf 'inherit = /tmp\n' > "$TESTDIR/dir.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/dir.ini" -- true
	assert_bad_input "$TESTDIR/dir.ini:1: inherit: profile: '/tmp': Is a directory"
	mkfifo "$TESTDIR/fifo.ini"
	run timeout 10 "$SBX" run --image tiny -p "$TESTDIR/fifo.ini" -- true
	assert_bad_input "profile: '$TESTDIR/fifo.ini' is not a regular file"
	{ echo '[sandbox]'; head -c 70000 /dev/zero | tr '\0' '\n'; } > "$TESTDIR/big.ini"
	run "$SBX" run --image tiny -p "$TESTDIR/big.ini" -- true
	assert_bad_input "profile: '$TESTDIR/big.ini': larger than 64 KiB"
}

# ---- root only: the system file, installed for a moment ------------------
# Other checkouts' root runs share this machine: each window in /etc is one
# quick command, and the trap removes what was put there.

etc_policy() { # text: installs /etc/sbxrun/policy.ini (root's, 0644)
	if [ ! -d /etc/sbxrun ]; then
		mkdir -m 0755 /etc/sbxrun
		touch "$TESTDIR/.made-etc-dir"
	fi
	at_exit etc_policy_remove
	printf "$1" > /etc/sbxrun/.policy.ini.$$
	chmod 0644 /etc/sbxrun/.policy.ini.$$
	mv -f /etc/sbxrun/.policy.ini.$$ /etc/sbxrun/policy.ini
}

etc_policy_remove() {
	rm -f /etc/sbxrun/policy.ini /etc/sbxrun/.policy.ini.$$
	chmod 0755 /etc/sbxrun 2>/dev/null || true
	if [ -e "$TESTDIR/.made-etc-dir" ]; then rmdir /etc/sbxrun 2>/dev/null || true; fi
}

test_etc_policy_binds_root_and_cannot_be_lifted() {
	[ -e /etc/sbxrun/policy.ini ] && skip "/etc/sbxrun/policy.ini exists: not ours to replace"
	printf '[limits]\nfile_size = 1T\n' > "$TESTDIR/wider.ini"
	p=$(profile fs '[limits]\nfile_size = 2T\n')
	etc_policy '[limits]\nfile_size = 1T\n'
	run "$SBX" profile show "$p"
	etc_policy_remove
	assert_bad_input "profile '$p' asks for file_size = 2T ($p:2); /etc/sbxrun/policy.ini caps [limits] file_size at 1T"
	# an extra file cannot widen it
	printf '[limits]\nfile_size = unlimited\n' > "$TESTDIR/wider.ini"
	etc_policy '[limits]\nfile_size = 1T\n'
	run env SBXRUN_POLICY="$TESTDIR/wider.ini" "$SBX" profile show "$p"
	etc_policy_remove
	assert_bad_input "/etc/sbxrun/policy.ini caps [limits] file_size at 1T"
	# an unset value takes the ceiling's, for root as for anyone
	etc_policy '[limits]\nfile_size = 1T\n'
	run "$SBX" profile show "$(profile none '[sandbox]\nhostname = x\n')"
	etc_policy_remove
	assert_status 0
	assert_contains "$out" "file_size = 1T	; policy /etc/sbxrun/policy.ini:2"
}

test_etc_policy_must_be_roots_alone() {
	[ -e /etc/sbxrun/policy.ini ] && skip "/etc/sbxrun/policy.ini exists: not ours to replace"
	etc_policy '[limits]\nfile_size = 1T\n'
	chmod 0666 /etc/sbxrun/policy.ini
	run "$SBX" profile show default
	etc_policy_remove
	assert_bad_input "policy '/etc/sbxrun/policy.ini': the file is writable by group or others (mode 0666)"
	etc_policy '[limits]\nfile_size = 1T\n'
	chown 65534 /etc/sbxrun/policy.ini
	run "$SBX" profile show default
	etc_policy_remove
	assert_bad_input "policy '/etc/sbxrun/policy.ini': the file is not owned by root (uid 65534)"
	etc_policy '[limits]\nfile_size = 1T\n'
	chmod 0777 /etc/sbxrun
	run "$SBX" profile show default
	etc_policy_remove
	assert_bad_input "policy '/etc/sbxrun/policy.ini': directory '/etc/sbxrun' is writable by group or others (mode 0777)"
	etc_policy '[limits]\nfile_size = 1T\n'
	mv /etc/sbxrun/policy.ini /etc/sbxrun/.real.$$
	ln -s /etc/sbxrun/.real.$$ /etc/sbxrun/policy.ini
	run "$SBX" profile show default
	rm -f /etc/sbxrun/.real.$$
	etc_policy_remove
	assert_bad_input "policy '/etc/sbxrun/policy.ini' is a symbolic link"
	run "$SBX" doctor
	assert_contains "$out" "none: no /etc/sbxrun/policy.ini"
}

# Issue 34, point 2: the administrator's package rules hold whatever
# spelling of the upstream a user's profile allows. The policy allows the
# lab registry (the suite's fixture, host.sbxrun.internal:PORT) and denies
# left-pad; a profile that names that registry as its npm upstream allows
# it again spelt another way (upper case, a trailing dot), which the policy
# accepts as the same host, and asks the registry for left-pad around the
# gateway: refused at the proxy, while the gateway still serves good and
# refuses left-pad. Before, the second spelling stayed on the proxy's list
# (the upstream's entry was taken off it by exact string) and left-pad came
# back 200. Then a public upstream with no port named, allowed again as
# NAME.:443: refused before any lookup (before, allowed and looked up).
test_etc_policy_package_rules_hold_against_other_spellings() {
	[ -e /etc/sbxrun/policy.ini ] && skip "/etc/sbxrun/policy.ini exists: not ours to replace"
	export XDG_CACHE_HOME="$TESTDIR/cache"
	python3 -u "$TOP/tests/helper/npmreg.py" "$TESTDIR/reg.log" > "$TESTDIR/.reg-port" &
	local reg=$! rport="" p spelling
	for _ in $(seq 100); do [ -s "$TESTDIR/.reg-port" ] && break; sleep 0.1; done
	rport=$(head -1 "$TESTDIR/.reg-port")
	[ -n "$rport" ] || fail "the fixture registry did not start"
	etc_policy "[network]\negress = packages\nallow = host.sbxrun.internal:$rport\nallow = registry.example.test\n[packages]\ndeny = npm:left-pad\n"
	at_exit "kill $reg 2>/dev/null || true; etc_policy_remove"
	for spelling in "HOST.SBXRUN.INTERNAL:$rport" "host.sbxrun.internal.:$rport" "Host.Sbxrun.Internal.:$rport"; do
		p=$(profile spelt "[network]\negress = packages\nallow = $spelling\n[packages]\nnpm = http://host.sbxrun.internal:$rport/\n")
		run "$SBX" run -p "$p" --image minimal -- sh -c '
			get() { curl -sS -x "$npm_config_proxy" -o /dev/null -w "$1 %{http_code}\n" "$2"; }
			get direct "http://host.sbxrun.internal:$1/left-pad"
			get upper "http://HOST.SBXRUN.INTERNAL.:$1/left-pad"
			get good http://packages.sbxrun.internal/npm/good
			get denied http://packages.sbxrun.internal/npm/left-pad' sh "$rport"
		echo "$spelling: $out" >&2
		assert_contains "$out" "direct 403" "$spelling: plain HTTP to the registry"
		assert_contains "$out" "upper 403" "$spelling: the same, spelt another way"
		assert_contains "$out" "good 200" "$spelling: the gateway"
		assert_contains "$out" "denied 403" "$spelling: the policy's deny at the gateway"
		assert_contains "$err" "sbxrun: egress: refused 'host.sbxrun.internal' (kept to the package gateway by profile '$p' package rules)"
	done
	assert_eq "" "$(grep '^left-pad' "$TESTDIR/reg.log" || true)" "requests for left-pad at the registry"
	# https://registry.example.test/ (no port: 443), allowed again as
	# REGISTRY.EXAMPLE.TEST.:443, which the policy's entry covers
	p=$(profile public "[network]\negress = packages\nallow = REGISTRY.EXAMPLE.TEST.:443\n[packages]\nnpm = https://registry.example.test/\n")
	run "$SBX" run -p "$p" --image minimal -- \
		curl -s -o /dev/null -w "%{http_connect}" -x http://127.0.0.1:3128 https://registry.example.test/left-pad
	assert_eq 403 "$out" "CONNECT to the upstream spelt with its port"
	assert_contains "$err" "sbxrun: egress: refused 'registry.example.test' (kept to the package gateway by profile '$p' package rules)"
	kill "$reg" 2>/dev/null || true
	etc_policy_remove
}

# A request on a session's control socket is no way around the ceiling: a
# hand-made exec without a timeout (or with a longer one) ends at the cap.
test_session_control_request_is_held_to_the_timeout_cap() {
	printf '[limits]\ntimeout = 2s\n' > "$TESTDIR/short.ini"
	local p n=pol$$
	p=$(profile plain '[limits]\nmemory = 1G\n')
	SBXRUN_POLICY="$TESTDIR/short.ini" "$SBX" session start --image tiny -p "$p" "$n" >/dev/null \
		|| fail "session start failed"
	at_exit "'$SBX' session stop '$n' >/dev/null 2>&1 || true"
	local sock="${XDG_RUNTIME_DIR:-/tmp/sbxrun-$(id -u)}${XDG_RUNTIME_DIR:+/sbxrun}/sessions/$n/control.sock"
	run python3 - "$sock" <<'PY'
import json, socket, sys
for t in (0, 3600000):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    s.connect(sys.argv[1])
    s.send(json.dumps({"op": "exec", "cmd": ["sleep", "30"], "timeout_ms": t}).encode())
    r = json.loads(s.recv(1 << 20))
    print(r["exit_code"], r["reason"])
PY
	assert_status 0 "$err"
	assert_eq "$(printf '124 timeout\n124 timeout')" "$out"
}

# Packages egress with no allow list serves the image's sets by default; a
# policy that does not cover one of them drops it for the sandbox too, not
# only for `sbxrun proxy` (the sandbox's proxy took all three past the cap).
test_policy_drops_default_sets_it_does_not_cover() {
	mkdir -p r/bin r/etc r/tmp r/proc r/dev r/workspace r/root
	cp /bin/busybox r/bin/busybox
	for a in sh cat echo wget; do ln -s busybox "r/bin/$a"; done
	printf '#!/bin/sh\necho http://registry.example.net/\n' > r/bin/npm
	chmod 755 r/bin/npm
	printf 'root:x:0:0:root:/root:/bin/sh\n' > r/etc/passwd
	tar --numeric-owner --owner=0 --group=0 -C r -cf npmimg.tar .
	"$SBX" -q image import npmimg.tar --name "npmimg$$" # before the ceiling: its own sandbox asks npm
	lab_policy
	run "$SBX" run --image "npmimg$$" --memory 1G --net packages -- sh -c \
		'http_proxy=$SBXRUN_PROXY wget -q -O- http://registry.example.net/ 2>&1; echo rc=$?
		http_proxy=$SBXRUN_PROXY wget -q -O- http://packages.sbxrun.internal/npm/left-pad 2>&1; echo gw=$?'
	"$SBX" -q image rm "npmimg$$"
	assert_contains "$out" "403" "the image's @npm under a policy without it (stderr: $err)"
	assert_contains "$err" "registry.example.net"
	# nor does the package gateway fetch from it
	assert_contains "$out" "gw=1"
	assert_contains "$err" "host 'registry.example.net' port 80 is not in profile"
}

# A profile's package upstream is an allow entry of its own line: the
# ceiling's [network] allow caps it, as it caps --allow.
test_policy_caps_a_profiles_package_upstream() {
	lab_policy
	local p
	p=$(profile up '[limits]\nmemory = 1G\n[network]\negress = packages\n[packages]\nnpm = https://npm.evil.test/\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "profile '$p' asks for allow = npm.evil.test ($p:6); $TESTDIR/policy.ini caps [network] allow at @apt, *.example.org"
	p=$(profile mirror '[limits]\nmemory = 1G\n[network]\negress = packages\n[packages]\nnpm = https://npm.example.org/reg/\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_status 0
	# a port the ceiling does not name is not covered
	p=$(profile port '[limits]\nmemory = 1G\n[network]\negress = packages\n[packages]\nnpm = https://npm.example.org:8443/\n')
	run "$SBX" run --image tiny -p "$p" -- true
	assert_bad_input "asks for allow = npm.example.org:8443 ($p:6)"
}
