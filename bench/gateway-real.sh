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

# Each of RUNS rounds (default 1) starts from an empty gateway cache: a
# cold install, then a warm one. Every figure is the best of the rounds (on
# a shared machine the other loads only ever add). One assignment a line:
# a failed install then ends the script (set -e).
RUNS=${RUNS:-1}
keep() { # name seconds: the best of the rounds in $tmp/best
	awk -v n="$1" -v t="$2" 'BEGIN { b = t } $1 == n { if ($2 < b) b = $2; next } { print } END { print n, b }' \
		"$tmp/best" > "$tmp/best.new" 2>/dev/null || true
	mv "$tmp/best.new" "$tmp/best"
}
keep_phases() { # prefix file
	while read -r n t; do keep "$1$n" "$t"; done < "$2"
}
measure() { # name command: its time and its phases kept under name
	local t
	t=$(secs "$2")
	keep "$1" "$t"
	keep_phases "$1_" "$tmp/out"
}
touch "$tmp/best"
for _ in $(seq "$RUNS"); do
	rm -rf "$XDG_CACHE_HOME"
	measure n_cold npm_install
	measure n_warm npm_install
	measure a_cold apt_install
	measure a_warm apt_install
done
best() { awk -v n="$1" '$1 == n { print $2 }' "$tmp/best"; }
n_cold=$(best n_cold) n_warm=$(best n_warm) a_cold=$(best a_cold) a_warm=$(best a_warm)
row() { # phase: "W s against C s" of an apt phase
	local w c
	w=$(best "a_warm_$1") c=$(best "a_cold_$1")
	echo "$w s against $c s: $(ratio "$w" "$c")x"
}

cat <<EOT
## Package gateway: cold against warm, real upstreams ($(date -u '+%Y-%m-%d %H:%M UTC'), best of $RUNS, load $(cut -d' ' -f1 /proc/loadavg))

| what | goal | measured |
|---|---|---|
| \`npm install $NPM_SET\` (image node, a whole run), warm against cold | at most 0.5x | $n_warm s against $n_cold s: $(ratio "$n_warm" "$n_cold")x |
| of which npm install itself, warm against cold | | $(best n_warm_npm) s against $(best n_cold_npm) s |
| \`apt-get update && apt-get install $APT_SET\` (image minimal, a whole run), warm against cold | at most 0.5x | $a_warm s against $a_cold s: $(ratio "$a_warm" "$a_cold")x |
| of which \`apt-get update\` | | $(row update) |
| of which the download (\`--download-only\`: what the gateway serves) | | $(row download) |
| of which dpkg (the install from apt's own archive) | | $(row dpkg) |
EOT
