# also-as-root
# user-only: test_git_push_and_npm_whoami_with_the_token_held_on_the_host
# Credentials brokered by the egress proxy (issue 42, items 3 and 4;
# docs/egress.md "Credentials"): a [credentials] line binds a token held on
# the host to one host and path; inside, the variable holds a placeholder.
# Upstream: tests/helper/credsrv.py, a TLS server on the host's loopback
# (host.sbxrun.internal:PORT, allowed as a lab mirror is) with git
# http-backend and npm's whoami, which wants the token; its CA is what
# sbxrun is told to trust for the upstream side (SSL_CERT_FILE).

# The upstream's CA and certificate, the token (0600), a bare repository,
# two servers (P1 bound, P2 not), and the profile binding P1.
cred_fixture() {
	command -v git >/dev/null || fail "git is not installed on the host (tests/deps.sh)"
	"$SBX" image inspect node >/dev/null 2>&1 || fail "the node test image is not imported (tests/images.sh)"
	cd "$TESTDIR"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt \
		-subj /CN=sbxrun-test-upstream-CA -days 2 2>/dev/null
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr \
		-subj /CN=host.sbxrun.internal 2>/dev/null
	printf 'subjectAltName=DNS:host.sbxrun.internal\nextendedKeyUsage=serverAuth\n' > srv.ext
	openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 \
		-extfile srv.ext 2>/dev/null
	cat /etc/ssl/certs/ca-certificates.crt ca.crt > trust.pem
	TOKEN=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
	(umask 077 && printf '%s\n' "$TOKEN" > token)
	mkdir srv && git init -q --bare srv/repo.git
	for i in 1 2; do
		python3 -u "$TOP/tests/helper/credsrv.py" "$TESTDIR/srv" token srv.crt srv.key > "port$i" &
		eval "SRV$i=\$!"
	done
	for _ in $(seq 300); do [ -s port1 ] && [ -s port2 ] && break; sleep 0.1; done
	P1=$(cat port1) P2=$(cat port2)
	[ -n "$P1" ] && [ -n "$P2" ] || fail "tests/helper/credsrv.py did not start"
	at_exit "kill $SRV1 $SRV2 2>/dev/null || true"
	cat > cred.ini <<-INI
	inherit = packages
	[network]
	allow = host.sbxrun.internal:$P1
	allow = host.sbxrun.internal:$P2
	[credentials]
	GH_TOKEN = file:$TESTDIR/token host.sbxrun.internal:$P1/git scheme=basic
	NPM_TOKEN = env:TEST_NPM_SECRET host.sbxrun.internal:$P1/-/
	INI
	export SSL_CERT_FILE="$TESTDIR/trust.pem" TEST_NPM_SECRET="$TOKEN"
}

# Inside: every process's environment and readable memory, and every file
# written, searched for the token, which the scanner is given in two
# halves (the whole never exists in its own memory); the placeholder is
# searched for too, to show the scan finds what is there.
SCAN='
import os, sys
h1, h2, ph = (a.encode() for a in sys.argv[1:4])
def has(data, what=None):
    if what: return what in data
    i = data.find(h1)
    while i >= 0:
        if data[i + len(h1):i + len(h1) + len(h2)] == h2: return True
        i = data.find(h1, i + 1)
    return False
hits, seen_ph, procs = [], False, 0
for pid in filter(str.isdigit, os.listdir("/proc")):
    try: env = open(f"/proc/{pid}/environ", "rb").read()
    except OSError: continue
    procs += 1
    seen_ph |= has(env, ph)
    if has(env): hits.append(f"environ of {pid}")
    try:
        mem = open(f"/proc/{pid}/mem", "rb")
        for line in open(f"/proc/{pid}/maps"):
            a, b = (int(x, 16) for x in line.split()[0].split("-"))
            if "r" not in line.split()[1] or b - a > 1 << 30: continue
            try:
                mem.seek(a); data = mem.read(b - a)
            except (OSError, OverflowError, ValueError): continue
            if has(data): hits.append(f"memory of {pid} {line.split()[-1]}")
    except OSError: pass
for top in ("/tmp", "/root", "/home", "/workspace", "/run", "/etc", "/var"):
    for d, _, files in os.walk(top):
        for f in files:
            p = os.path.join(d, f)
            try:
                if not os.path.islink(p) and os.path.isfile(p) and has(open(p, "rb").read()): hits.append(p)
            except OSError: pass
print(f"scanned {procs} processes; placeholder seen: {seen_ph}; token found: {hits or None}")
'

test_git_push_and_npm_whoami_with_the_token_held_on_the_host() {
	cred_fixture
	local t0=$SECONDS half=$(( ${#TOKEN} / 2 ))
	run "$SBX" run -p "$TESTDIR/cred.ini" --image node --events "$TESTDIR/ev" -- sh -c "
		export https_proxy=\$SBXRUN_PROXY
		echo GH=\$GH_TOKEN
		cd /tmp && git clone -q https://host.sbxrun.internal:$P1/git/repo.git r 2>&1 && cd r &&
		git -c user.email=t@t -c user.name=t commit -q --allow-empty -m pushed-from-the-sandbox &&
		git push -q origin HEAD:main 2>&1 && echo PUSHED
		printf '//host.sbxrun.internal:$P1/:_authToken=\${NPM_TOKEN}\n' > ~/.npmrc
		npm whoami --registry https://host.sbxrun.internal:$P1/ 2>&1
		python3 -c 'import urllib.request as u, time; print(\"py:\", u.urlopen(\"https://host.sbxrun.internal:$P1/-/whoami\").read().decode(), flush=True); time.sleep(60)' &
		sleep 1.5
		python3 -c '$SCAN' '${TOKEN:0:$half}' '${TOKEN:$half}' \"\$GH_TOKEN\""
	echo "run: $((SECONDS - t0))s" >&2
	assert_status 0
	assert_contains "$out" "GH=sbxrun-cred-"
	local ph_run
	ph_run=$(printf '%s\n' "$out" | sed -n 's/^GH=//p')
	assert_contains "$out" "PUSHED"
	assert_contains "$out" "tester" "npm whoami"
	assert_contains "$out" 'py: {"username":"tester"}' "python's urllib"
	assert_contains "$out" "scanned 3 processes" "the scan (sh, the sleeping python, itself)"
	assert_eq "pushed-from-the-sandbox" "$(git -C "$TESTDIR/srv/repo.git" log -1 --format=%s main)" "the server's main"
	[ ! -e "$TESTDIR/srv/bad-auth" ] || fail "the server saw requests without the token: $(cat "$TESTDIR/srv/bad-auth")"
	assert_contains "$out" "placeholder seen: True" "the scan (it finds the placeholder)"
	assert_contains "$out" "token found: None" "the scan for the token"
	assert_not_contains "$out$err$(cat "$TESTDIR/ev")" "$TOKEN" "output and events"
	local ev
	ev=$(cat "$TESTDIR/ev")
	assert_contains "$ev" '"decision":"used","var":"GH_TOKEN"'
	assert_contains "$ev" '"decision":"used","var":"NPM_TOKEN"'

	# A session: a placeholder of its own, brokered the same way.
	start_session cred57 -p "$TESTDIR/cred.ini" --image node
	run "$SBX" run --session cred57 -- sh -c "echo GH=\$GH_TOKEN
		curl -s -x \$SBXRUN_PROXY https://host.sbxrun.internal:$P1/-/whoami"
	assert_status 0
	assert_contains "$out" '{"username":"tester"}' "whoami in a session"
	local ph_session
	ph_session=$(printf '%s\n' "$out" | sed -n 's/^GH=//p')
	assert_contains "$ph_session" "sbxrun-cred-"
	assert_ne "$ph_run" "$ph_session" "the session's placeholder against the run's"

	# A live deny cuts a brokered connection that is open (within a second).
	"$SBX" run --session cred57 -- python3 -c '
import http.client, os, ssl, sys, time
c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ssl.create_default_context())
c.set_tunnel("host.sbxrun.internal", int(sys.argv[1]))
def get():
    c.request("GET", "/-/whoami"); r = c.getresponse(); r.read(); return r.status
print("first", get(), flush=True)
while not os.path.exists("/tmp/go"): time.sleep(0.05)
time.sleep(1.5)
try:
    print("second", get(), flush=True)
except Exception as e:
    print("second failed:", type(e).__name__, flush=True)' "$P1" > "$TESTDIR/held" 2>&1 &
	local bg=$!
	for _ in $(seq 100); do grep -q first "$TESTDIR/held" && break; sleep 0.1; done
	assert_contains "$(cat "$TESTDIR/held")" "first 200" "the brokered connection before the deny"
	"$SBX" net deny cred57 "host.sbxrun.internal:$P1" >/dev/null
	"$SBX" run --session cred57 -- touch /tmp/go
	wait "$bg" || true
	assert_contains "$(cat "$TESTDIR/held")" "second failed" "the brokered connection after the deny"
}

test_the_placeholder_elsewhere_is_refused_and_other_tunnels_are_untouched() {
	cred_fixture
	http_serve "$TESTDIR"
	sed -i "s/^\[credentials\]/allow = host.sbxrun.internal:$PORT\n[credentials]/" cred.ini
	local t0=$SECONDS
	run "$SBX" run -p "$TESTDIR/cred.ini" --image node --events "$TESTDIR/ev" -- sh -c "
		p=\$SBXRUN_PROXY
		echo plain=\$(curl -s -o /dev/null -w '%{http_code}' -x \$p -H \"Authorization: Bearer \$GH_TOKEN\" http://host.sbxrun.internal:$PORT/)
		echo plain-ok=\$(curl -s -o /dev/null -w '%{http_code}' -x \$p http://host.sbxrun.internal:$PORT/)
		echo url=\$(curl -s -o /dev/null -w '%{http_code}' -x \$p \"https://host.sbxrun.internal:$P1/git/x?t=\$GH_TOKEN\")
		echo path=\$(curl -s -o /dev/null -w '%{http_code}' -x \$p -H \"Authorization: Bearer \$NPM_TOKEN\" https://host.sbxrun.internal:$P1/echo)
		curl -sv -x \$p https://host.sbxrun.internal:$P2/echo -H \"X-Token: \$GH_TOKEN\" 2>&1 | grep -i 'issuer:'
		curl -sv -x \$p https://host.sbxrun.internal:$P1/-/whoami 2>&1 | grep -i 'issuer:'
		echo connect=\$(curl -s -o /dev/null -w '%{http_connect}' -x \$p --proxy-header \"X-T: \$GH_TOKEN\" https://host.sbxrun.internal:$P2/)"
	echo "run: $((SECONDS - t0))s" >&2
	kill "$SRV" 2>/dev/null || true
	assert_status 0
	assert_contains "$out" "plain=403" "the placeholder in a plain request to another host"
	assert_contains "$out" "plain-ok=200" "the same request without it"
	assert_contains "$out" "url=403" "the placeholder in the bound host's URL"
	assert_contains "$out" "path=403" "a placeholder to the bound host outside its path"
	assert_contains "$out" "issuer: CN=sbxrun-test-upstream-CA" "the unbound host's certificate (a tunnel)"
	assert_contains "$out" "issuer: CN=sbxrun credential broker" "the bound host's certificate (brokered)"
	assert_contains "$out" "connect=403" "a CONNECT whose head carries the placeholder"
	assert_contains "$err" "bound to another host" "the refusal on stderr"
	local ev
	ev=$(cat "$TESTDIR/ev")
	assert_contains "$ev" '"decision":"refused","var":"GH_TOKEN"'
	assert_contains "$ev" '"decision":"refused","var":"NPM_TOKEN"'
	assert_not_contains "$ev$out$err" "$TOKEN" "output and events"

	# An upstream whose certificate sbxrun does not trust (the test's CA
	# not given): the secret is not sent, the sandbox gets a 502 saying why.
	run env -u SSL_CERT_FILE "$SBX" run -p "$TESTDIR/cred.ini" --image node --events "$TESTDIR/ev2" -- sh -c "
		curl -s -w ' %{http_code}' -x \$SBXRUN_PROXY https://host.sbxrun.internal:$P1/-/whoami"
	assert_status 0
	assert_contains "$out" "the upstream's TLS could not be verified" "an upstream not trusted"
	assert_contains "$out" " 502"
	assert_not_contains "$(cat "$TESTDIR/ev2")" '"decision":"used"' "events of an upstream not trusted"
}

test_bad_credentials_lines_are_refused_in_one_line() {
	cd "$TESTDIR"
	(umask 077 && echo tok > token)
	echo tok > open && chmod 644 open
	ln -s token link
	bad() { # line needle
		printf 'inherit = packages\n[credentials]\n%s\n' "$1" > bad.ini
		run "$SBX" run -p "$TESTDIR/bad.ini" --image tiny -- true
		assert_bad_input "$2"
		assert_contains "$err" "bad.ini:3: "
	}
	bad "T = file:$TESTDIR/open example.org" "mode 0644: 0600 or stricter"
	bad "T = file:$TESTDIR/link example.org" "is a symbolic link"
	bad "T = file:$TESTDIR/none example.org" "No such file"
	bad "T = env:SBX_TEST_UNSET_VAR example.org" "is not set in sbxrun's environment"
	bad "T = vault:x example.org" "the source is env:NAME or file:PATH"
	bad "T = file:$TESTDIR/token *.example.org" "bound to one host"
	bad "T = file:$TESTDIR/token example.org scheme=digest" "the scheme is Bearer, token or basic"
	bad "T = file:$TESTDIR/token example.org colour=red" "unknown"
	bad "T = file:$TESTDIR/token" "expected 'SOURCE HOST"
	bad "PATH = file:$TESTDIR/token example.org" "a variable sbxrun sets itself"
	printf 'inherit = packages\n[credentials]\nT = file:%s/token a.org\nT = file:%s/token b.org\n' "$TESTDIR" "$TESTDIR" > bad.ini
	run "$SBX" run -p "$TESTDIR/bad.ini" --image tiny -- true
	assert_bad_input "T is bound already"
	printf 'inherit = default\n[network]\negress = none\n[credentials]\nT = file:%s/token a.org\n' "$TESTDIR" > none.ini
	run "$SBX" run -p "$TESTDIR/none.ini" --image tiny -- true
	assert_bad_input "[credentials] needs egress = packages"
}
