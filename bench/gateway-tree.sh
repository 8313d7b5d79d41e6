#!/bin/bash
# bench/gateway-tree.sh - issue 34's row: Debian's own npm (9.2, image
# node) installs a generated tree of N packages (default 600; the fixture
# registry, tests/helper/npmreg.py, on this host) through the package
# gateway cold, warm, and warm again past index_max_age (every packument
# stale: served from the cache and revalidated behind, index_max_stale),
# and past index_max_age under index_max_stale = none (each packument
# revalidated in the foreground, as before issue 34), against the same npm
# from a static registry on the sandbox's own loopback (node's http server
# with the very packuments and tarballs the gateway served: no proxy, no
# gateway), side by side in one run. The fixture answers each revalidation
# after SLOW_304 seconds (default 0.2: an upstream some way off). Ages are
# made with touch. Each install is a fresh sandbox (npm's own cache starts
# empty); npm itself is timed inside. Every figure is the best of RUNS
# rounds (default 1). Needs the image node in the caller's store; writes
# nothing outside a temporary directory. Prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
N=${N:-600} RUNS=${RUNS:-1}
"$SBX" image inspect node >/dev/null 2>&1 || { echo "bench/gateway-tree: no image 'node' in the store" >&2; exit 1; }
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache" NPMREG_TREE=$N NPMREG_SLOW_304=${SLOW_304:-0.2}
prof="gwtree$$"
mkdir -p "$HOME/.config/sbxrun/profiles"
python3 -u "$top/tests/helper/npmreg.py" "$tmp/reg.log" > "$tmp/port" &
reg=$!
trap 'kill $reg 2>/dev/null; rm -rf "$tmp" "$HOME/.config/sbxrun/profiles/$prof"*.ini' EXIT
for _ in $(seq 100); do [ -s "$tmp/port" ] && break; sleep 0.1; done
printf 'inherit = packages\n[packages]\nnpm = http://host.sbxrun.internal:%s/\n' "$(head -1 "$tmp/port")" \
	> "$HOME/.config/sbxrun/profiles/$prof.ini"
printf 'inherit = %s\n[packages]\nindex_max_stale = none\n' "$prof" > "$HOME/.config/sbxrun/profiles/$prof-fg.ini"

# Inside: "npm SECONDS" for npm install itself; the static registry first
# mirrors what the gateway serves (one curl, one connection kept alive).
PHASE='phase() { t0=$(date +%s%N); "$@" > /dev/null || exit 1; t=$(( $(date +%s%N) - t0 )); printf "npm %d.%02d\n" $((t / 1000000000)) $((t / 10000000 % 100)); }'
INSTALL='cd /tmp && phase npm install --no-audit --no-fund --loglevel=error tree-0'
STATIC='set -e; set --
i=0; while [ $i -lt '"$N"' ]; do
	mkdir -p /tmp/reg/npm/tree-$i/-
	set -- "$@" -o /tmp/reg/npm/tree-$i/index.json http://packages.sbxrun.internal/npm/tree-$i \
		-o /tmp/reg/npm/tree-$i/-/tree-$i-1.0.0.tgz http://packages.sbxrun.internal/npm/tree-$i/-/tree-$i-1.0.0.tgz
	i=$((i + 1))
done
curl -sSf -x "$npm_config_proxy" -H "Accept: application/vnd.npm.install-v1+json" "$@"
find /tmp/reg -name index.json -exec sed -i "s#http://packages.sbxrun.internal/#http://127.0.0.1:8765/#g" {} +
cat > /tmp/srv.js <<JS
const http = require("http"), fs = require("fs"), path = require("path");
http.createServer((q, r) => {
	let f = path.join("/tmp/reg", decodeURIComponent(q.url.split("?")[0]));
	if (!f.endsWith(".tgz")) f += "/index.json";
	fs.readFile(f, (e, b) => {
		if (e) { r.writeHead(404); r.end(); return; }
		r.writeHead(200, { "Content-Type": f.endsWith(".tgz") ? "application/octet-stream" : "application/json" });
		r.end(b);
	});
}).listen(8765, "127.0.0.1");
JS
node /tmp/srv.js & sleep 0.5
cd /tmp && phase npm install --no-audit --no-fund --loglevel=error --noproxy 127.0.0.1 \
	--registry http://127.0.0.1:8765/npm/ tree-0
kill $!'

secs() { # profile script: the run's wall-clock seconds, then npm's, on one line
	local t0 t1
	t0=$(date +%s.%N)
	"$SBX" run -p "$1" --image node -- sh -c "$PHASE; $2" > "$tmp/out" 2> "$tmp/err" ||
		{ echo "bench/gateway-tree: install failed:" >&2; tail -5 "$tmp/err" "$tmp/out" >&2; exit 1; }
	t1=$(date +%s.%N)
	printf '%.2f %s\n' "$(echo "$t1 - $t0" | bc)" "$(awk '$1 == "npm" { print $2 }' "$tmp/out")"
}
keep() { # name "run npm": the best of the rounds in $tmp/best
	awk -v n="$1" -v r="${2% *}" -v m="${2#* }" 'BEGIN { br = r; bm = m }
		$1 == n { if ($2 < br) br = $2; if ($3 < bm) bm = $3; next } { print } END { print n, br, bm }' \
		"$tmp/best" > "$tmp/best.new"
	mv "$tmp/best.new" "$tmp/best"
}
age_index() { find "$XDG_CACHE_HOME/sbxrun/packages/index" -type f -exec touch -d '-5 min' {} +; }
touch "$tmp/best"
for _ in $(seq "$RUNS"); do
	rm -rf "$XDG_CACHE_HOME"
	t=$(secs "$prof" "$INSTALL"); keep cold "$t"
	t=$(secs "$prof" "$INSTALL"); keep warm "$t"
	age_index
	t=$(secs "$prof" "$INSTALL"); keep stale "$t"
	age_index
	t=$(secs "$prof-fg" "$INSTALL"); keep foreground "$t"
	t=$(secs "$prof" "$STATIC"); keep static "$t"
done
run() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/best"; }
npmt() { awk -v n="$1" '$1 == n { print $3 }' "$tmp/best"; }
ratio() { printf '%.2f' "$(echo "scale=3; $1 / $2" | bc)"; }
row() { # name what
	echo "| $2 | $(run "$1") | $(npmt "$1") | $(ratio "$(npmt "$1")" "$(npmt cold)")x | $(ratio "$(npmt "$1")" "$(npmt static)")x |"
}

cat <<EOT
## npm 9.2 (Debian 12), a tree of $N packages through the gateway ($(date -u '+%Y-%m-%d %H:%M UTC'), best of $RUNS, load $(cut -d' ' -f1 /proc/loadavg); revalidations answered after ${NPMREG_SLOW_304} s)

| install | whole run, s | npm install, s | npm against cold | npm against the static registry |
|---|---|---|---|---|
$(row cold "cold (every packument and tarball from upstream)")
$(row warm "warm (all from the gateway's cache)")
$(row stale "warm, every packument past index_max_age (served stale, revalidated behind)")
$(row foreground "warm, past index_max_age, index_max_stale = none (revalidated in the foreground)")
$(row static "the static registry on the sandbox's loopback (no proxy, no gateway)")
EOT
