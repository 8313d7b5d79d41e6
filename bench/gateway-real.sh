#!/bin/bash
# bench/gateway-real.sh - a cold install against a warm one through the
# package gateway, from the images' own upstreams (npm's registry as the
# image `node` names it, Debian's archive as `minimal`'s sources name it):
# it reaches beyond the archive, so neither make check nor make bench runs
# it. Each install is a fresh sandbox (npm's and apt's own caches start
# empty); only the gateway's cache (a temporary XDG_CACHE_HOME) is kept
# between cold and warm. Each run also times its phases inside (apt-get
# update, the download, dpkg; npm itself) to show whose time a warm run
# is. Needs the images node and minimal in
# the caller's store. Prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
NPM_SET=${NPM_SET:-express} APT_SET=${APT_SET:-gcc}
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache"
trap 'rm -rf "$tmp"' EXIT

secs() { # command...: its wall-clock seconds; what it prints goes to $tmp/out
	local t0
	t0=$(date +%s.%N)
	"$@" > "$tmp/out" 2> "$tmp/err" || { echo "bench/gateway-real: $* failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
	printf '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)"
}
# Inside: the phase's seconds, printed as "NAME SECONDS" lines.
PHASE='phase() { n=$1; shift; t0=$(date +%s%N); "$@" > /dev/null || exit 1; t=$(( $(date +%s%N) - t0 )); printf "%s %d.%02d\n" "$n" $((t / 1000000000)) $((t / 10000000 % 100)); }'
npm_install() {
	"$SBX" run -p packages --image node -- sh -c "$PHASE; cd /tmp
		phase npm npm install --no-audit --no-fund --loglevel=error $NPM_SET"
}
# apt-get update, the download (--download-only), then dpkg (the install
# from apt's own archive): each phase timed
apt_install() {
	"$SBX" run -p packages --image minimal --disk 2G -- sh -c "$PHASE
		phase update apt-get update -qq
		phase download apt-get install -y -qq --no-install-recommends --download-only $APT_SET
		phase dpkg apt-get install -y -qq --no-install-recommends $APT_SET"
}
ratio() { printf '%.2f' "$(echo "scale=3; $1 / $2" | bc)"; }
phase() { awk -v n="$1" '$1 == n { print $2 }' "$2"; } # name file: the phase's seconds

# one assignment a line: a failed install then ends the script (set -e)
n_cold=$(secs npm_install)
cp "$tmp/out" "$tmp/n_cold"
n_warm=$(secs npm_install)
cp "$tmp/out" "$tmp/n_warm"
a_cold=$(secs apt_install)
cp "$tmp/out" "$tmp/a_cold"
a_warm=$(secs apt_install)
cp "$tmp/out" "$tmp/a_warm"
row() { # name: "W s against C s" of an apt phase
	local w c
	w=$(phase "$1" "$tmp/a_warm") c=$(phase "$1" "$tmp/a_cold")
	echo "$w s against $c s: $(ratio "$w" "$c")x"
}

cat <<EOT
## Package gateway: cold against warm, real upstreams ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg))

| what | goal | measured |
|---|---|---|
| \`npm install $NPM_SET\` (image node, a whole run), warm against cold | at most 0.5x | $n_warm s against $n_cold s: $(ratio "$n_warm" "$n_cold")x |
| of which npm install itself, warm against cold | | $(phase npm "$tmp/n_warm") s against $(phase npm "$tmp/n_cold") s |
| \`apt-get update && apt-get install $APT_SET\` (image minimal, a whole run), warm against cold | at most 0.5x | $a_warm s against $a_cold s: $(ratio "$a_warm" "$a_cold")x |
| of which \`apt-get update\` | | $(row update) |
| of which the download (\`--download-only\`: what the gateway serves) | | $(row download) |
| of which dpkg (the install from apt's own archive) | | $(row dpkg) |
EOT
