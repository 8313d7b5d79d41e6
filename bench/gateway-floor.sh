#!/bin/bash
# bench/gateway-floor.sh - what bounds a warm install through the package
# gateway: the package managers' own time, with the gateway out of the way.
# npm: in one sandbox (image node), `npm install $NPM_SET` from the warm
# gateway against the same install from a static registry inside the
# sandbox (node's own http server on its loopback, the very packuments and
# tarballs the gateway served: no proxy, no gateway), in turns, RUNS
# rounds. apt: a warm `apt-get update` (image minimal) taken apart from
# apt's own worker log (the signature checks of its gpgv method, the
# unpacking of the indexes by its store method, the package cache built
# after), then the install's dpkg, as apt runs it and with dpkg's
# --force-unsafe-io (no fsync; measured, not used by sbxrun). Like
# gateway-real.sh it reaches the real upstreams (the cache is filled by a
# cold run first), so neither make check nor make bench runs it. Needs the
# images node and minimal in the caller's store. Prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
NPM_SET=${NPM_SET:-express} APT_SET=${APT_SET:-gcc} RUNS=${RUNS:-3}
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache"
trap 'rm -rf "$tmp"' EXIT

# npm, inside: one install through the gateway (it fills the cache when
# cold), its requests mirrored into /tmp/reg (a packument as NAME/index.json),
# then RUNS rounds of local registry against gateway; "npm_local MS" and
# "npm_gateway MS" lines
cat > "$tmp/npm.sh" <<'EOF'
set -e
cd /tmp && mkdir -p w && cd w
npm install --no-audit --no-fund --loglevel=http "$NPM_SET" > ../log 2>&1
grep -o 'http fetch GET 200 http://packages[^ ]*' ../log | awk '{print $5}' > ../urls
while read -r u; do
	p=${u#http://packages.sbxrun.internal/}
	case $p in *.tgz) ;; *) p=$p/index.json ;; esac
	mkdir -p "/tmp/reg/$(dirname "$p")"
	curl -sf -x "$npm_config_proxy" -o "/tmp/reg/$p" \
		-H 'Accept: application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8, */*' "$u"
done < ../urls
find /tmp/reg -type f -name index.json -exec sed -i 's#http://packages.sbxrun.internal/#http://127.0.0.1:8765/#g' {} +
cat > ../srv.js <<'JS'
const http = require('http'), fs = require('fs'), path = require('path');
http.createServer((q, r) => {
	let f = path.join('/tmp/reg', decodeURIComponent(q.url.split('?')[0]).replace(/%2f/gi, '/'));
	if (!f.endsWith('.tgz')) f += '/index.json';
	fs.readFile(f, (e, b) => {
		if (e) { r.writeHead(404); r.end(); return; }
		r.writeHead(200, { 'Content-Type': f.endsWith('.tgz') ? 'application/octet-stream' : 'application/json' });
		r.end(b);
	});
}).listen(8765, '127.0.0.1');
JS
node ../srv.js & srv=$!
sleep 0.5
ms() { t0=$(date +%s%N); "$@" > /dev/null; echo $(( ($(date +%s%N) - t0) / 1000000 )); }
for _ in $(seq "$RUNS"); do
	rm -rf node_modules package*.json ~/.npm
	echo "npm_local $(ms npm install --no-audit --no-fund --loglevel=error --noproxy 127.0.0.1 \
		--registry http://127.0.0.1:8765/npm/ "$NPM_SET")"
	rm -rf node_modules package*.json ~/.npm
	echo "npm_gateway $(ms npm install --no-audit --no-fund --loglevel=error "$NPM_SET")"
done
kill $srv
EOF

# apt, inside: apt-get update with apt's worker log, each line stamped
# (seconds since the start), then the install: "update S", "gpgv S",
# "store S", "cache S" (from "Fetched" to the end) and "dpkg S" lines
cat > "$tmp/apt.sh" <<'EOF'
set -e
stamp='use Time::HiRes qw(time); $t0 = time; $| = 1; while (<STDIN>) { printf("%.3f %s", time - $t0, $_) }'
apt-get update -o Debug::pkgAcquire::Worker=1 2>&1 | perl -e "$stamp" > /tmp/upd.log
perl -ne '
	($t, $m) = /^([0-9.]+) +(?:<-|->) (gpgv|store):(\d+)/ or do { $f = $1 if /^([0-9.]+) Fetched/; $e = $1 if /^([0-9.]+)/; next };
	# the time the method was busy: from a request while it had none to
	# the answer that leaves it none
	if ($3 == 600) { $s{$m} = $t if !$n{$m}++ }
	elsif ($3 == 201 || $3 == 400) { $sum{$m} += $t - $s{$m} if $n{$m} && !--$n{$m} }
	END { printf("update %.2f\ngpgv %.2f\nstore %.2f\ncache %.2f\n", $e, $sum{gpgv}, $sum{store}, $e - $f) }
' /tmp/upd.log
apt-get install -y -qq --no-install-recommends --download-only $APT_SET > /dev/null
t0=$(date +%s%N)
apt-get install -y -qq --no-install-recommends $APT_SET > /dev/null
t=$(( $(date +%s%N) - t0 ))
printf "dpkg %d.%02d\n" $((t / 1000000000)) $((t / 10000000 % 100))
EOF
cat > "$tmp/apt-unsafe.sh" <<'EOF'
set -e
apt-get update -qq
apt-get install -y -qq --no-install-recommends --download-only $APT_SET > /dev/null
t0=$(date +%s%N)
apt-get install -y -qq --no-install-recommends -o DPkg::Options::=--force-unsafe-io $APT_SET > /dev/null
t=$(( $(date +%s%N) - t0 ))
printf "dpkg_unsafe %d.%02d\n" $((t / 1000000000)) $((t / 10000000 % 100))
EOF

run_npm() { "$SBX" run -p packages --image node -- env NPM_SET="$NPM_SET" RUNS="$RUNS" sh -c "$(cat "$tmp/npm.sh")"; }
run_apt() { "$SBX" run -p packages --image minimal --disk 2G -- env APT_SET="$APT_SET" bash -c "$(cat "$tmp/$1")"; }

run_npm > "$tmp/npm.out"
run_apt apt.sh > /dev/null  # cold: fills the gateway's cache
: > "$tmp/apt.out"
for _ in $(seq "$RUNS"); do
	run_apt apt.sh >> "$tmp/apt.out"
	run_apt apt-unsafe.sh >> "$tmp/apt.out"
done
# the best (smallest) of each name, in seconds
best() { awk -v n="$1" -v d="$2" '$1 == n { v = $2 / d; if (b == "" || v < b) b = v } END { printf "%.2f", b }' "$3"; }
nl=$(best npm_local 1000 "$tmp/npm.out") ng=$(best npm_gateway 1000 "$tmp/npm.out")
a() { best "$1" 1 "$tmp/apt.out"; }

cat <<EOT
## Package gateway: the package managers' own time ($(date -u '+%Y-%m-%d %H:%M UTC'), best of $RUNS, load $(cut -d' ' -f1 /proc/loadavg))

| what | seconds |
|---|---|
| \`npm install $NPM_SET\` from a static registry in the sandbox (no gateway, no proxy) | $nl |
| the same from the warm gateway, in the same sandbox, in turns | $ng |
| a warm \`apt-get update\` (every file from the gateway's cache) | $(a update) |
| of which apt's gpgv method (apt-key verify of each InRelease, one at a time) | $(a gpgv) |
| of which apt's store method (unpacking the .xz indexes, one at a time) | $(a store) |
| of which building the package cache (after "Fetched") | $(a cache) |
| \`apt-get install $APT_SET\` from apt's own archive (dpkg) | $(a dpkg) |
| the same with dpkg's --force-unsafe-io (not what sbxrun does) | $(a dpkg_unsafe) |
EOT
