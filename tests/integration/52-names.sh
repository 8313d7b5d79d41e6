# also-as-root
# Names inside the sandbox (issue 15): under egress none and packages a stub
# on the host side answers every lookup with an address that has no route
# (198.18.0.0/15, 2001:2::/48), so user code gets "Network is unreachable"
# rather than a name failure, and no query leaves; localhost resolves in
# every mode, from an /etc/hosts sbxrun supplies when the image has none.

UNREACH='
import socket, subprocess, urllib.request
try:
    urllib.request.urlopen("https://example.com", timeout=10)
    print("urlopen: connected")
except Exception as e:
    r = getattr(e, "reason", e)
    print("urlopen:", getattr(r, "errno", None), r)
for fam, a in ((socket.AF_INET, "198.18.0.1"), (socket.AF_INET6, "2001:2::1")):
    s = socket.socket(fam, socket.SOCK_STREAM)
    try:
        s.connect((a, 443))
        print("connect", a, "connected")
    except OSError as e:
        print("connect", a, e.errno)
print("addresses:", sorted({i[4][0] for i in socket.getaddrinfo("example.com", 443)}))
c = subprocess.run(["curl", "-sv", "https://example.com"], capture_output=True, text=True)
print("curl:", c.returncode, [l for l in c.stderr.splitlines() if "nreachable" in l][:1])
'

test_user_code_gets_network_unreachable_not_a_name_failure() {
	for net in packages none; do
		rm -f ev
		run "$SBX" run --net "$net" --events "$TESTDIR/ev" -- python3 -c "$UNREACH"
		assert_status 0 "$net: $err"
		assert_contains "$out" "urlopen: 101 [Errno 101] Network is unreachable" "$net"
		assert_contains "$out" "connect 198.18.0.1 101" "$net"
		assert_contains "$out" "connect 2001:2::1 101" "$net"
		assert_contains "$out" "curl: 7 ['* Immediate connect fail for" "$net"
		assert_contains "$out" "Network is unreachable']" "$net"
		grep -Eq "^addresses: \['198\.1[89]\.[0-9.]+', '2001:2::[0-9a-f:]+'\]$" <<<"$out" || fail "$net: $out"
		# a lab sees what student code tried to reach
		grep -Eq '"name":"example.com","type":"A","answer":"198\.1[89]\.[0-9.]+".*"event":"dns"' ev \
			|| fail "$net: no dns event: $(cat ev)"
		grep -q '"type":"AAAA","answer":"2001:2::' ev || fail "$net: $(cat ev)"
	done
}

# Queries made by hand: garbage first, then good ones that must still be
# answered by the same stub (the supervisor survived them).
RAWDNS='
import socket, struct
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
ns = ("127.0.0.53", 53)
def q(i, name, t, cls=1):
    b = struct.pack(">HHHHHH", i, 0x100, 1, 0, 0, 0)
    for l in name.split("."):
        b += bytes([len(l)]) + l.encode()
    return b + b"\0" + struct.pack(">HH", t, cls)
garbage = [b"", b"\0", b"\xff" * 12, bytes(range(256)) * 16, b"\0" * 9000, q(1, "a", 1)[:-3],
           b"\0\1\1\0\0\1\0\0\0\0\0\0\xc0\x0c\0\1\0\1", q(2, "x", 1) + b"junk",
           b"\x12\x34\1\0\0\1" + b"\0" * 6 + b"\x3f" * 300, q(3, "a" * 64, 1), q(4, "x", 1, cls=3)]
for g in garbage:
    s.sendto(g, ns)
for name, t in (("localhost", 1), ("localhost", 28), ("db.localhost", 1), ("example.com", 1), ("example.com", 15)):
    s.sendto(q(0x4242, name, t), ns)
    while True:
        r = s.recv(600)
        if r[:2] == b"\x42\x42":
            break
    an = struct.unpack(">H", r[6:8])[0]
    addr = socket.inet_ntop(socket.AF_INET if t == 1 else socket.AF_INET6, r[-4:] if t == 1 else r[-16:]) if an else "-"
    print(name, t, "rcode", r[3] & 15, "answers", an, addr)
'

test_garbage_does_not_crash_the_stub_and_localhost_is_loopback() {
	run "$SBX" run --net packages -- sh -c "python3 -c '$RAWDNS' && getent hosts after.example"
	assert_status 0 "$err"
	assert_contains "$out" "localhost 1 rcode 0 answers 1 127.0.0.1"
	assert_contains "$out" "localhost 28 rcode 0 answers 1 ::1"
	assert_contains "$out" "db.localhost 1 rcode 0 answers 1 127.0.0.1"
	assert_contains "$out" "example.com 15 rcode 0 answers 0 -"
	grep -Eq "^example.com 1 rcode 0 answers 1 198\.1[89]\." <<<"$out" || fail "$out"
	grep -Eq "^2001:2::[0-9a-f:]+ +after.example$" <<<"$out" || fail "$out"
}

test_localhost_resolves_in_every_mode() {
	for net in none packages full; do
		run "$SBX" run --net "$net" --hostname labbox -- sh -c \
			'getent ahostsv4 localhost | head -1; getent ahostsv6 localhost | head -1; getent ahostsv4 labbox | head -1'
		assert_status 0 "$net: $err"
		grep -Eq '^127\.0\.0\.1 +STREAM localhost$' <<<"$out" || fail "$net: $out"
		grep -Eq '^::1 +STREAM localhost$' <<<"$out" || fail "$net: $out"
		grep -Eq '^127\.0\.1\.1 +STREAM labbox$' <<<"$out" || fail "$net: $out"
	done
	# in a session too, with the default hostname
	local n="names$$"
	"$SBX" session start --net none "$n" >/dev/null || fail "session start"
	run "$SBX" run --session "$n" -- sh -c 'getent hosts localhost; getent ahostsv4 "$(hostname)" | head -1'
	"$SBX" session stop "$n" >/dev/null
	assert_contains "$out" "localhost"
	grep -Eq '^127\.0\.1\.1 ' <<<"$out" || fail "$out"
	# the image itself was not touched
	local store="${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/images"
	[ -n "$(find "$store" -maxdepth 4 -path '*/rootfs/etc/resolv.conf' 2>/dev/null)" ] || fail "no image under $store"
	assert_eq "" "$(find "$store" -maxdepth 4 -path '*/rootfs/etc/hosts' 2>/dev/null)" "an /etc/hosts in the store"
	! grep -qs sbxrun "$store"/*/rootfs/etc/resolv.conf || fail "the image's resolv.conf was written"
}

test_an_image_with_its_own_hosts_file_keeps_it() {
	mkdir -p r/etc
	printf '10.1.2.3 own-host\n' > r/etc/hosts
	cp "$IMAGES/tiny.tar" t.tar
	tar -rf t.tar --owner=0 --group=0 -C r ./etc/hosts
	"$SBX" image import t.tar --name "tinyhosts$$" >/dev/null || fail "import"
	run "$SBX" run -i "tinyhosts$$" --net none -- cat /etc/hosts /etc/resolv.conf
	"$SBX" image rm "tinyhosts$$" >/dev/null 2>&1 || true
	assert_status 0 "$err"
	assert_contains "$out" "10.1.2.3 own-host"
	assert_not_contains "$out" "127.0.1.1"
	assert_contains "$out" "nameserver 127.0.0.53"
}

# What a lookup that left would look like on the host side: a socket to
# port 53, or to the local resolver daemons' sockets.
LEAK='sin6?_port=htons\(53\)|io\.systemd\.Resolve|nscd'

# The host side is traced (strace -f, detaching from every process that
# execs, so the sandbox's own programs, which talk to the stub on the
# sandbox's 127.0.0.53:53, are left out): user lookups must show no
# socket to a resolver, while a lookup the proxy makes for a package host
# must show one, which proves the trace would see a leak.
test_no_lookup_leaves_the_sandbox() {
	command -v strace >/dev/null || fail "strace is missing (tests/deps.sh installs it)"
	local lookups='getent hosts pypi.example.test; getent ahosts files.example.test; python3 -c "import socket; socket.getaddrinfo(\"example.com\", 443)"; curl -s https://example.net; true'
	for net in none packages; do
		strace -f -b execve -qq -o "tr-$net" -e trace=connect,sendto,sendmsg,sendmmsg \
			"$SBX" run --net "$net" -- sh -c "$lookups" >out 2>&1 || fail "$net: $(cat out)"
		grep -Eq 'sendto\(.*\\205\\200.*127\.0\.0\.1' "tr-$net" || fail "$net: the stub's answers were not traced: $(head -5 "tr-$net")"
		! grep -E "$LEAK" "tr-$net" || fail "$net: a lookup left the sandbox"
	done
	# the control: apt's Release through the proxy (the package gateway
	# fetches it), so the host side's own lookup is seen
	strace -f -b execve -qq -o tr-control -e trace=connect,sendto,sendmsg,sendmmsg \
		"$SBX" run --net packages -- sh -c '
			set -- $(grep -m1 "^deb http://" /etc/apt/sources.list)
			curl -s -o /dev/null -w "%{http_code}\n" -x "$SBXRUN_PROXY" "$2/dists/$3/Release"' >out 2>&1
	grep -Eq "$LEAK" tr-control || fail "the trace did not see the proxy's own lookup: $(cat out; head -20 tr-control)"
}

tiny_with() { # NAME SETUP-COMMAND: the tiny image plus what SETUP made under r/
	rm -rf r && mkdir -p r/etc && (cd r && eval "$2")
	cp "$IMAGES/tiny.tar" "$1.tar"
	tar -rf "$1.tar" --owner=0 --group=0 -C r ./etc
	"$SBX" image import "$1.tar" --name "$1$$" >/dev/null || fail "import $1"
}

test_resolv_conf_inside_and_under_full() {
	# an image whose resolv.conf is a symlink still gets the stub's
	tiny_with rlink 'ln -s ../run/systemd/resolve/stub-resolv.conf etc/resolv.conf'
	run "$SBX" run -i "rlink$$" --net none -- cat /etc/resolv.conf
	assert_status 0 "$err"
	assert_contains "$out" "nameserver 127.0.0.53"
	run "$SBX" run -i "rlink$$" --net none -- sh -c 'echo nameserver 192.0.2.1 > /etc/resolv.conf'
	assert_ne 0 "$status" "resolv.conf is read-only"
	run "$SBX" run -i "rlink$$" --net full -- readlink /etc/resolv.conf
	assert_eq "../run/systemd/resolve/stub-resolv.conf" "$out" "full keeps the image's"
	"$SBX" image rm "rlink$$" >/dev/null 2>&1 || true
	# a session exported under none carries the stub's resolv.conf; under
	# full, the image gets the host's instead, as it would with none at all
	local n="exp$$"
	"$SBX" session start -i tiny --net none "$n" >/dev/null || fail "session start"
	"$SBX" image export "$n" -o s.tar >/dev/null 2>&1 || fail "export"
	"$SBX" session stop "$n" >/dev/null
	tar -xOf s.tar ./etc/resolv.conf | grep -q 'nameserver 127.0.0.53' || fail "the export lacks the stub's resolv.conf"
	"$SBX" image import s.tar --name "exp$$" >/dev/null || fail "import"
	run "$SBX" run -i "exp$$" --net full -- cat /etc/resolv.conf
	"$SBX" image rm "exp$$" >/dev/null 2>&1 || true
	assert_status 0 "$err"
	assert_eq "$(cat /etc/resolv.conf)" "$out" "the host's resolv.conf under full"
}

FLOOD='
import socket, struct, time
def q(i, name):
    b = struct.pack(">HHHHHH", i, 0x100, 1, 0, 0, 0)
    for l in name.split("."):
        b += bytes([len(l)]) + l.encode()
    return b + b"\0" + struct.pack(">HH", 1, 1)
ns = ("127.0.0.53", 53)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(5)
# a resolver that waits for its answers is paced, never dropped
t = time.monotonic()
for i in range(400):
    s.sendto(q(i, "paced%d.test" % i), ns)
    while s.recv(600)[:2] != struct.pack(">H", i):
        pass
print("paced", 400, "%.1f" % (time.monotonic() - t))
time.sleep(0.6)
# a flood for two seconds
f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
f.setblocking(False)
sent = answered = 0
t = time.monotonic()
while time.monotonic() - t < 2:
    try:
        f.sendto(q(sent & 0xffff, "flood%d.test" % sent), ns)
        sent += 1
    except BlockingIOError:
        pass
    try:
        while f.recv(600):
            answered += 1
    except BlockingIOError:
        pass
el = time.monotonic() - t
time.sleep(0.3)
try:
    while f.recv(600):
        answered += 1
except BlockingIOError:
    pass
print("flood", sent, answered, "%.2f" % (el + 0.3))
# and names still resolve afterwards
time.sleep(1)
print("after", sorted({i[4][0] for i in socket.getaddrinfo("after.example", 443, socket.AF_INET)})[0][:7])
'

# The stub runs on a host thread outside --cpus: a sandbox gets 200 lookups
# a second (and a burst of 100); a resolver that waits is paced, a flood is
# dropped, and what was dropped is told as a count in dns_limit events, not
# line by line.
test_a_lookup_flood_is_rate_limited_and_counted() {
	run "$SBX" run --net none --events "$TESTDIR/ev" -- python3 -c "$FLOOD"
	assert_status 0 "$err"
	assert_contains "$out" "after 198.1" "a lookup after the flood"
	python3 - ev "$out" <<'PY' || fail "$out / $(grep -v '"event":"dns"' ev | tail -3)"
import json, sys
paced = flood = None
for l in sys.argv[2].splitlines():
    w = l.split()
    if w[0] == "paced":
        paced = float(w[2])
    if w[0] == "flood":
        sent, answered, secs = int(w[1]), int(w[2]), float(w[3])
dropped, lines = 0, 0
for line in open(sys.argv[1]):
    lines += 1
    e = json.loads(line)
    if e["event"] == "dns_limit":
        dropped += e["dropped"]
        assert e["rate"] == 200 and e["dropped_total"] >= e["dropped"]
print("paced in", paced, "s; flood", sent, "sent", answered, "answered in", secs, "s;", dropped, "dropped;", lines, "events")
assert paced >= 1.2, paced                       # (400 - 100) / 200 a second
assert sent > 5000, sent
assert answered <= 100 + 200 * secs + 50, (answered, secs)
assert dropped >= sent - answered - 100, (dropped, sent, answered)
assert lines < 2000, lines
PY
}
