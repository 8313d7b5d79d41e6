# also-as-root
# user-only: test_pip_install_user_of_a_local_wheel test_npm_install_global_of_a_local_tarball test_go_install
# [sandbox] user (issue 43, item 7): the commands run as a user beside the
# sandbox's root, made at start in the sandbox's layer when the image has
# none, with its own HOME and pip, npm and go installing into it; a user
# namespace of its own maps it to the sandbox's root, and everything but its
# own places is read-only to it (docs/security.md). --user root runs one
# command of the same session as root. Nothing here reaches a network.

# A pure-Python wheel with a console script, made with zipfile (no wheel
# module on the host), in DIR.
make_wheel() { # dir
	python3 - "$1" <<'EOF'
import base64, hashlib, sys, zipfile
name, ver, d = "sbxhello", "1.0", sys.argv[1]
info = "%s-%s.dist-info" % (name, ver)
files = {
    name + "/__init__.py": "def main():\n    print('hello from pip')\n",
    info + "/METADATA": "Metadata-Version: 2.1\nName: %s\nVersion: %s\n" % (name, ver),
    info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: sbxrun-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    info + "/entry_points.txt": "[console_scripts]\nsbxhello = %s:main\n" % name,
}
rec = ["%s,sha256=%s,%d" % (p, base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b"=").decode(), len(t))
       for p, t in files.items()] + [info + "/RECORD,,"]
files[info + "/RECORD"] = "\n".join(rec) + "\n"
with zipfile.ZipFile("%s/%s-%s-py3-none-any.whl" % (d, name, ver), "w") as z:
    for p, t in files.items():
        z.writestr(p, t)
EOF
}

test_user_made_at_start_has_its_home_and_no_capability() {
	# tiny's passwd has root and user (1000): dev is made, with the next uid
	run "$SBX" -v run --image tiny --user dev --json "$TESTDIR/rec.json" -- sh -c '
		id -u; id -un; id -g; echo "$HOME $USER"; grep "^dev:" /etc/passwd /etc/group
		grep -E "^Cap(Prm|Eff|Bnd|Amb):" /proc/self/status; pwd; ls -d ~/.config/pip/pip.conf ~/.npmrc'
	assert_status 0
	assert_eq "1001
dev
1001
/home/dev dev
/etc/passwd:dev:x:1001:1001::/home/dev:/bin/sh
/etc/group:dev:x:1001:
CapPrm:	0000000000000000
CapEff:	0000000000000000
CapBnd:	0000000000000000
CapAmb:	0000000000000000
/workspace
/home/dev/.config/pip/pip.conf
/home/dev/.npmrc" "$out"
	# never silent: -v and the record say who and how
	assert_contains "$err" "user: commands run as 'dev' (uid 1001, gid 1001, HOME /home/dev, made at start"
	local rec
	rec=$(python3 -c 'import json,sys; u=json.load(open(sys.argv[1]))["user"]; print(u["name"], u["uid"], u["home"], u["made"], "namespace" in u["how"])' "$TESTDIR/rec.json")
	assert_eq "dev 1001 /home/dev True True" "$rec" "the record's user"
	# the image's own user: its uid and HOME, nothing added to passwd
	run "$SBX" run --image tiny --user user -- sh -c 'id -u; echo $HOME; grep -c . /etc/passwd'
	assert_eq "1000
/home/user
2" "$out"
	run "$SBX" run --image tiny -- id -u
	assert_eq 0 "$out" "no user: root"
	run "$SBX" run --image tiny --user root -- id -u
	assert_eq 0 "$out" "--user root"
}

test_bad_user_is_refused_before_the_sandbox() {
	run "$SBX" run --image tiny --user 'no:body' -- true
	assert_bad_input "no:body"
	run "$SBX" run --image tiny --user 4242 -- true
	assert_bad_input "uid 4242 is not in the image's /etc/passwd"
}

# What a non-root user could not do, tried: root again, the system's files,
# a new user namespace or mount, su, sudo.
test_user_cannot_undo_it() {
	run "$SBX" run --image minimal --user dev -- sh -c '
		# uid 0 is not mapped in the user namespace: EINVAL, and no CAP_SETUID
		python3 -c "import os; os.setuid(0)" 2>/dev/null || echo "setuid refused"
		python3 -c "import os; os.setresuid(0, 0, 0)" 2>/dev/null || echo "setresuid refused"
		python3 -c "import os; os.setresgid(0, 0, 0)" 2>/dev/null || echo "setresgid refused"
		echo "evil::0:0::/:/bin/sh" >> /etc/passwd || echo "passwd refused"
		touch /usr/bin/evil || echo "usr refused"
		chmod 666 /etc/shadow || echo "chmod refused"
		rm -f /bin/sh || echo "rm refused"
		unshare -U -r id || echo "unshare refused"
		unshare -m true || echo "unshare -m refused"
		mount -o remount,rw / || echo "remount refused"
		su -c id root </dev/null || echo "su refused"
		command -v sudo newuidmap || echo "no sudo, no newuidmap"
		grep -c "^evil:" /etc/passwd; ls -l /etc/shadow | cut -c1-10
		for d in ~ /tmp /var/tmp /workspace /dev/shm; do touch "$d/mine" && echo "$d writable"; done' </dev/null
	for w in setuid setresuid setresgid passwd usr chmod rm unshare "unshare -m" remount su; do
		assert_contains "$out" "$w refused"
	done
	assert_contains "$out" "no sudo, no newuidmap"
	assert_contains "$out" "0
-rw-r-----"
	assert_not_contains "$out" "uid=0"
	for d in /home/dev /tmp /var/tmp /workspace /dev/shm; do
		assert_contains "$out" "$d writable"
	done
	assert_contains "$err" "Read-only file system"
}

test_pip_install_user_of_a_local_wheel() {
	mkdir "$TESTDIR/wheels"
	make_wheel "$TESTDIR/wheels"
	local t0=$SECONDS
	run "$SBX" run --image minimal --user dev --bind "$TESTDIR/wheels:/wheels" -- sh -c '
		pip install --user --no-index --find-links /wheels sbxhello > /tmp/pip.log 2>&1 || cat /tmp/pip.log
		command -v sbxhello; sbxhello
		python3 -c "import sbxhello; print(sbxhello.__file__)"
		# without --user: the system site is not writable, so the user site
		pip install --no-index --find-links /wheels --force-reinstall sbxhello 2>&1 | grep -c "Successfully installed"'
	echo "pip install --user: $((SECONDS - t0))s" >&2
	assert_status 0
	assert_eq "/home/dev/.local/bin/sbxhello
hello from pip
/home/dev/.local/lib/python3.11/site-packages/sbxhello/__init__.py
1" "$out"
}

test_npm_install_global_of_a_local_tarball() {
	mkdir -p "$TESTDIR/pkg/package/bin"
	printf '{"name":"sbxhello-js","version":"1.0.0","bin":{"sbxhello-js":"bin/hello.js"}}\n' \
		> "$TESTDIR/pkg/package/package.json"
	printf '#!/usr/bin/env node\nconsole.log("hello from npm")\n' > "$TESTDIR/pkg/package/bin/hello.js"
	tar --owner=0 --group=0 -C "$TESTDIR/pkg" -czf "$TESTDIR/sbxhello-js-1.0.0.tgz" package
	local t0=$SECONDS
	run "$SBX" run --image node --user dev --bind "$TESTDIR/sbxhello-js-1.0.0.tgz:/pkg.tgz" -- sh -c '
		npm install -g --offline --no-audit --no-fund /pkg.tgz > /tmp/npm.log 2>&1 || cat /tmp/npm.log
		command -v sbxhello-js; sbxhello-js; npm prefix -g'
	echo "npm install -g: $((SECONDS - t0))s" >&2
	assert_status 0
	assert_eq "/home/dev/.local/bin/sbxhello-js
hello from npm
/home/dev/.local" "$out"
}

# The host's go (55-gateway-go's pattern: Debian's golang-go bound into the
# minimal image), a module of one file, go install: ~/go/bin, on PATH.
test_go_install() {
	[ -x /usr/lib/go-1.19/bin/go ] || skip "needs the host's golang-go 1.19 (tests/deps.sh)"
	run "$SBX" run --image minimal --user dev --bind /usr/lib/go-1.19:/usr/lib/go-1.19 \
		--bind /usr/share/go-1.19:/usr/share/go-1.19 -- sh -c '
		export PATH=$PATH:/usr/lib/go-1.19/bin; mkdir /tmp/h && cd /tmp/h
		printf "module x.example/sbxhello\n\ngo 1.19\n" > go.mod
		printf "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello from go\") }\n" > main.go
		go install . && command -v sbxhello && sbxhello'
	assert_status 0
	assert_eq "/home/dev/go/bin/sbxhello
hello from go" "$out"
}

# One session: the user's commands, and --user root's, which installs a
# package with apt (a local .deb: no network) that the user could not.
test_session_user_and_root() {
	mkdir -p "$TESTDIR/deb/DEBIAN" "$TESTDIR/deb/usr/bin"
	printf 'Package: sbxhello\nVersion: 1.0\nArchitecture: all\nMaintainer: sbxrun tests <tests@sbxrun.invalid>\nDescription: a fixture\n' \
		> "$TESTDIR/deb/DEBIAN/control"
	printf '#!/bin/sh\necho hello from apt\n' > "$TESTDIR/deb/usr/bin/sbxhello-deb"
	chmod 755 "$TESTDIR/deb/usr/bin/sbxhello-deb"
	mkdir "$TESTDIR/debs"
	dpkg-deb -Zgzip --root-owner-group --build "$TESTDIR/deb" "$TESTDIR/debs/sbxhello_1.0_all.deb" >/dev/null
	local n=u67-$$
	start_session "$n" --image minimal --user dev --bind "$TESTDIR/debs:/debs"
	run "$SBX" run --session "$n" --json "$TESTDIR/u.json" -- sh -c 'id -un; apt-get install -y /debs/sbxhello_1.0_all.deb >/dev/null 2>&1 || echo "apt refused"'
	assert_eq "dev
apt refused" "$out"
	run "$SBX" run --session "$n" --user root --json "$TESTDIR/r.json" -- sh -c 'id -u; echo $HOME; apt-get install -y /debs/sbxhello_1.0_all.deb >/dev/null 2>&1 && echo installed'
	assert_status 0
	assert_eq "0
/root
installed" "$out"
	# each command's record says who it ran as, as a one-shot run's does
	local who
	who=$(python3 -c 'import json,sys
for f in sys.argv[1:]:
    u = json.load(open(f))["user"]; print(u["name"], u["uid"], u["home"])' "$TESTDIR/u.json" "$TESTDIR/r.json")
	assert_eq "dev 1000 /home/dev
root 0 /root" "$who" "the records' user objects"
	run "$SBX" run --session "$n" -- sh -c 'id -u; sbxhello-deb'
	assert_eq "1000
hello from apt" "$out"
	run "$SBX" run --session "$n" --user dev -- id -un
	assert_eq dev "$out"
	run "$SBX" run --session "$n" --user bob -- id -un
	assert_bad_input "this session's commands run as 'dev', or as root"
}

# The MCP server's exec tool: the profile's user by default, root on request,
# nobody else.
test_mcp_exec_as_the_user_or_root() {
	printf 'inherit = default\n[sandbox]\nuser = dev\n' > "$TESTDIR/u.ini"
	local c='{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"exec","arguments":{"cmd":["id","-un"]%s}}}\n'
	{ printf "$c" 1 ''; printf "$c" 2 ',"user":"root"'; printf "$c" 3 ',"user":"bob"'; } > "$TESTDIR/in.txt"
	run timeout 120 python3 - "$SBX" "$TESTDIR/in.txt" -p "$TESTDIR/u.ini" --image tiny <<'PY'
import json, subprocess, sys
sbx, path, args = sys.argv[1], sys.argv[2], sys.argv[3:]
p = subprocess.Popen([sbx, "mcp", *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
for line in open(path):
    p.stdin.write(line.encode()); p.stdin.flush()
    r = json.loads(p.stdout.readline())["result"]
    print(r.get("isError", False), r["content"][0]["text"].replace("\n", " ")[:300])
p.stdin.close(); p.wait(60)
PY
	assert_status 0
	assert_eq 3 "$(grep -c . <<<"$out")" "replies: $out"
	assert_contains "$(sed -n 1p <<<"$out")" "False dev [exit code 0]"
	assert_contains "$(sed -n 2p <<<"$out")" "False root [exit code 0]"
	assert_contains "$(sed -n 3p <<<"$out")" "True argument 'user'"
	assert_contains "$(sed -n 3p <<<"$out")" "running as 'bob' is not available"
}
