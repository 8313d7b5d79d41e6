#!/bin/bash
# bench/gateway-real.sh - a cold install against a warm one through the
# package gateway, from the images' own upstreams (npm's registry as the
# image `node` names it, Debian's archive as `minimal`'s sources name it):
# it reaches beyond the archive, so neither make check nor make bench runs
# it. Each install is a fresh sandbox (npm's and apt's own caches start
# empty); only the gateway's cache (a temporary XDG_CACHE_HOME) is kept
# between cold and warm. Needs the images node and minimal in the caller's
# store. Prints a markdown block.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
NPM_SET=${NPM_SET:-express} APT_SET=${APT_SET:-gcc}
tmp=$(mktemp -d)
export XDG_CACHE_HOME="$tmp/cache"
trap 'rm -rf "$tmp"' EXIT

secs() { # command...: its wall-clock seconds
	local t0
	t0=$(date +%s.%N)
	"$@" > /dev/null 2> "$tmp/err" || { echo "bench/gateway-real: $* failed:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
	printf '%.2f' "$(echo "$(date +%s.%N) - $t0" | bc)"
}
npm_install() { "$SBX" run -p packages --image node -- sh -c "cd /tmp && npm install --no-audit --no-fund --loglevel=error $NPM_SET"; }
apt_install() { # [--download-only]
	"$SBX" run -p packages --image minimal --disk 2G -- sh -c \
		"apt-get update -qq && apt-get install -y -qq --no-install-recommends $* $APT_SET"
}
ratio() { printf '%.2f' "$(echo "scale=3; $1 / $2" | bc)"; }

# one assignment a line: a failed install then ends the script (set -e)
n_cold=$(secs npm_install)
n_warm=$(secs npm_install)
a_cold=$(secs apt_install)
a_warm=$(secs apt_install)
rm -rf "$XDG_CACHE_HOME"
d_cold=$(secs apt_install --download-only)
d_warm=$(secs apt_install --download-only)

cat <<EOT
## Package gateway: cold against warm, real upstreams ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1 /proc/loadavg))

| what | goal | measured |
|---|---|---|
| \`npm install $NPM_SET\` (image node), warm against cold | at most 0.5x | $n_warm s against $n_cold s: $(ratio "$n_warm" "$n_cold")x |
| \`apt-get update && apt-get install $APT_SET\` (image minimal), warm against cold | at most 0.5x | $a_warm s against $a_cold s: $(ratio "$a_warm" "$a_cold")x |
| the same with \`--download-only\` (what the gateway serves, without dpkg) | | $d_warm s against $d_cold s: $(ratio "$d_warm" "$d_cold")x |
EOT
