#!/bin/bash
# bench/cred.sh - what a brokered HTTPS request costs over a tunnelled one
# (issue 42: goal under 1 ms), not a timed test. One sandbox of the node
# image; inside, Python times N requests over one kept-alive connection
# through the proxy and N new connections, to a host with a credential
# binding (TLS terminated, the head rewritten, TLS again) and to the same
# fixture server on another port (a tunnel). Upstream: tests/helper/credsrv.py
# on the host's loopback. Run as a user whose store holds the node image
# (make check imports it): bash bench/cred.sh [N]
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
n=${1:-300}
t=$(mktemp -d)
trap 'kill $s1 $s2 2>/dev/null || true; rm -rf "$t"' EXIT
cd "$t"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout ca.key -out ca.crt -subj /CN=bench-CA -days 1 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout srv.key -out srv.csr -subj /CN=host.sbxrun.internal 2>/dev/null
printf 'subjectAltName=DNS:host.sbxrun.internal\n' > ext
openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 1 -extfile ext 2>/dev/null
cat /etc/ssl/certs/ca-certificates.crt ca.crt > trust.pem
(umask 077 && head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n' > token)
mkdir srv
python3 -u "$top/tests/helper/credsrv.py" "$t/srv" token srv.crt srv.key > p1 & s1=$!
python3 -u "$top/tests/helper/credsrv.py" "$t/srv" token srv.crt srv.key > p2 & s2=$!
for _ in $(seq 100); do [ -s p1 ] && [ -s p2 ] && break; sleep 0.1; done
p1=$(cat p1) p2=$(cat p2)
printf 'inherit = packages\n[network]\nallow = host.sbxrun.internal:%s\nallow = host.sbxrun.internal:%s\n[credentials]\nT = file:%s/token host.sbxrun.internal:%s\n' \
	"$p1" "$p2" "$t" "$p1" > cred.ini
SSL_CERT_FILE=$t/trust.pem "$SBX" run -p "$t/cred.ini" --image node -- python3 -c '
import http.client, ssl, sys, time
n, ports = int(sys.argv[1]), {"brokered": int(sys.argv[2]), "tunnelled": int(sys.argv[3])}
ctx = ssl.create_default_context()
def conn(port):
    c = http.client.HTTPSConnection("127.0.0.1", 3128, context=ctx)
    c.set_tunnel("host.sbxrun.internal", port)
    return c
res = {}
for kind, port in ports.items():
    c = conn(port)
    c.request("GET", "/-/whoami"); c.getresponse().read()
    t0 = time.perf_counter()
    for _ in range(n):
        c.request("GET", "/-/whoami"); c.getresponse().read()
    keep = (time.perf_counter() - t0) / n * 1000
    c.close()
    t0 = time.perf_counter()
    for _ in range(n // 10):
        c = conn(port); c.request("GET", "/-/whoami"); c.getresponse().read(); c.close()
    new = (time.perf_counter() - t0) / (n // 10) * 1000
    res[kind] = (keep, new)
    print(f"{kind:10s} request on a kept-alive connection {keep:7.3f} ms, on a new connection {new:7.3f} ms")
b, tu = res["brokered"], res["tunnelled"]
print(f"added by the broker: {b[0] - tu[0]:.3f} ms a request (kept alive), {b[1] - tu[1]:.3f} ms a new connection")
' "$n" "$p1" "$p2"
