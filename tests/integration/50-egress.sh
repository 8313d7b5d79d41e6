# also-as-root
# vm-modes: user-outside
# Packages-only egress (issue 6): apt, pip and npm install through the
# host-side proxy; everything else is refused. No registry host is written
# here: the tests read them from the image (its apt sources, its pip).

test_apt_install_through_the_proxy_and_user_code_unreachable() {
	run "$SBX" run -p packages --events "$TESTDIR/ev" -- sh -c '
		apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends sl >/dev/null 2>&1 && ls /usr/games/sl
		python3 -c "import urllib.request; urllib.request.urlopen(\"http://192.0.2.10/\", timeout=5)" 2>&1 | tail -1
		curl -sS --noproxy "*" http://192.0.2.10/ 2>&1; echo "curl=$?"
		echo "SBXRUN_NETWORK=$SBXRUN_NETWORK SBXRUN_PROXY=$SBXRUN_PROXY"'
	assert_status 0
	assert_contains "$out" "/usr/games/sl"
	assert_contains "$out" "Network is unreachable"
	assert_contains "$out" "curl=7"
	assert_contains "$out" "SBXRUN_NETWORK=packages SBXRUN_PROXY=http://127.0.0.1:3128"
	assert_contains "$(cat ev)" '"decision":"allowed"'
}

# Raw requests straight at the proxy, from inside; prints one status a line.
RAW='
import os, socket, sys
host = sys.argv[1]
reqs = [
  "GET http://evil.example.test/ HTTP/1.1\r\n\r\n",
  "GET http://127.0.0.1/ HTTP/1.1\r\n\r\n",
  "GET http://10.0.0.1/ HTTP/1.1\r\n\r\n",
  "GET http://169.254.169.254/latest/meta-data/ HTTP/1.1\r\n\r\n",
  "GET http://2130706433/ HTTP/1.1\r\n\r\n",
  "GET http://0x7f.1/ HTTP/1.1\r\n\r\n",
  "GET http://%s:8080/ HTTP/1.1\r\n\r\n" % host,
  "CONNECT %s:22 HTTP/1.1\r\n\r\n" % host,
  "GET http://%s.evil.test/ HTTP/1.1\r\n\r\n" % host,
  "GET / HTTP/1.1\r\nHost: %s\r\n\r\n" % host,
  "\x16\x03\x01garbage\r\n\r\n",
]
for r in reqs:
    s = socket.create_connection(("127.0.0.1", 3128))
    s.sendall(r.encode("latin-1"))
    print(s.recv(4096).split(b"\r\n")[0].decode(), flush=True)
'

test_proxy_refuses_what_is_not_a_package_source() {
	run "$SBX" run -p packages --events "$TESTDIR/ev" -- sh -c "
		h=\$(sed -n 's#.*http://\\([^/ ]*\\).*#\\1#p' /etc/apt/sources.list | head -1)
		python3 -c '$RAW' \"\$h\""
	assert_status 0
	assert_eq "HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 403 Forbidden
HTTP/1.1 400 Bad Request
HTTP/1.1 400 Bad Request" "$out"
	assert_contains "$err" "egress: refused 'evil.example.test'"
	assert_eq 1 "$(grep -c "refused 'evil.example.test'" <<<"$err")" "one stderr line per refused host"
	[ "$(grep -c '"decision":"refused"' ev)" -ge 11 ] || fail "events: $(cat ev)"
	run "$SBX" run -p packages -- sh -c 'curl -s -D - -o /dev/null -x "$SBXRUN_PROXY" http://evil.example.test/'
	assert_contains "$out" "X-Sbxrun-Refused: profile=packages; host=evil.example.test"
}

test_pip_install_from_a_local_index_as_host_internal() {
	mkdir -p idx/simple/sbxdemo
	python3 - <<'PY'
import base64, hashlib, zipfile
files = {"sbxdemo/__init__.py": b"VALUE = 42\n",
         "sbxdemo-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: sbxdemo\nVersion: 1.0\n",
         "sbxdemo-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
rec = []
for n, d in files.items():
    h = base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b"=").decode()
    rec.append("%s,sha256=%s,%d" % (n, h, len(d)))
rec.append("sbxdemo-1.0.dist-info/RECORD,,")
with zipfile.ZipFile("idx/sbxdemo-1.0-py3-none-any.whl", "w") as z:
    for n, d in files.items():
        z.writestr(n, d)
    z.writestr("sbxdemo-1.0.dist-info/RECORD", "\n".join(rec) + "\n")
open("idx/simple/sbxdemo/index.html", "w").write(
    '<a href="../../sbxdemo-1.0-py3-none-any.whl">sbxdemo-1.0-py3-none-any.whl</a>\n')
PY
	http_serve idx
	local srv=$SRV port=$PORT
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$port" > lab.ini
	run "$SBX" run -p "$TESTDIR/lab.ini" -- sh -c "pip install -q --index-url http://host.sbxrun.internal:$port/simple/ --trusted-host host.sbxrun.internal sbxdemo 2>&1 | tail -2; python3 -c 'import sbxdemo; print(sbxdemo.VALUE)'"
	kill "$srv"
	assert_eq 42 "$(tail -1 <<<"$out")" "$err"
	run "$SBX" run -p packages -- sh -c "curl -s -o /dev/null -w '%{http_code}' -x \"\$SBXRUN_PROXY\" http://host.sbxrun.internal:$port/"
	assert_eq 403 "$out" "host.sbxrun.internal when the profile does not name it"
}

test_image_sources_are_read_from_the_image() {
	run "$SBX" image inspect minimal
	assert_status 0
	local apt_host
	apt_host=$("$SBX" run -- sh -c "sed -n 's#.*http://\\([^/ ]*\\).*#\\1#p' /etc/apt/sources.list | head -1")
	assert_contains "$out" "$apt_host"
	local pypi
	pypi=$("$SBX" run -- python3 -c 'from pip._internal.models.index import PyPI; print(PyPI.simple_url)')
	assert_contains "$out" "$pypi"
}

# Who builds an image grants nothing (issue 26): an image whose npm names the
# host's loopback (host.sbxrun.internal:PORT) and whose apt sources name
# loopback and private addresses gets none of them in @npm/@apt. The import
# and `image inspect` warn; under the stock packages profile the sandbox's
# request to that port is refused, while a profile that names it still opens
# it (only a profile or a flag may).
test_image_cannot_grant_host_loopback() {
	echo secret-service > index.html
	http_serve .
	local srv=$SRV port=$PORT
	mkdir -p r/bin r/etc/apt r/tmp r/proc r/dev r/workspace r/root
	cp /bin/busybox r/bin/busybox
	for a in sh cat echo wget; do ln -s busybox "r/bin/$a"; done
	printf '#!/bin/sh\necho http://host.sbxrun.internal:%s/\n' "$port" > r/bin/npm
	chmod 755 r/bin/npm
	printf 'deb http://127.0.0.1:%s/debian bookworm main\ndeb http://10.9.8.7/debian bookworm main\ndeb http://deb.example.org/debian bookworm main\n' "$port" \
		> r/etc/apt/sources.list
	printf 'root:x:0:0:root:/root:/bin/sh\n' > r/etc/passwd
	tar --numeric-owner --owner=0 --group=0 -C r -cf evil.tar .
	run "$SBX" image import evil.tar --name "evil$$"
	assert_status 0 "$err"
	assert_contains "$err" "host.sbxrun.internal:$port/: a name reserved by sbxrun"
	assert_contains "$err" "127.0.0.1"
	run "$SBX" image inspect "evil$$"
	assert_contains "$out" "deb.example.org"
	assert_not_contains "$(grep -v '^warning' <<<"$out")" "10.9.8.7"
	assert_contains "$out" "left out (an image may not grant it): npm http://host.sbxrun.internal:$port/"
	assert_contains "$out" "left out (an image may not grant it): 10.9.8.7: private address"
	run "$SBX" run -p packages --image "evil$$" -- sh -c \
		"http_proxy=\$SBXRUN_PROXY wget -q -O- http://host.sbxrun.internal:$port/ 2>&1; echo rc=\$?"
	assert_not_contains "$out" "secret-service" "the image's own grant: $err"
	assert_contains "$out" "403" "the image's own grant (stderr: $err)"
	printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\n' "$port" > own.ini
	run "$SBX" run -p "$TESTDIR/own.ini" --image "evil$$" -- sh -c \
		"http_proxy=\$SBXRUN_PROXY wget -q -O- http://host.sbxrun.internal:$port/"
	kill "$srv"
	"$SBX" -q image rm "evil$$"
	assert_contains "$out" "secret-service" "a profile that names the port: $err"
}
