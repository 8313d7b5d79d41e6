#!/bin/bash
# tests/fuzz/run.sh [smoke] - builds the libFuzzer harnesses (clang with
# address and undefined-behaviour sanitizers) into build-fuzz/, compiling on
# every core; with "smoke" runs each for FUZZ_SECONDS (10) from a copy of its
# committed seed corpus, as many at once as there are cores, and exits
# nonzero when one crashes. Without an argument it only builds.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
CC=${FUZZ_CC:-clang}
out=build-fuzz
pkgs="libseccomp libcap-ng libarchive libcurl inih libcrypto json-c libxml-2.0"
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (make deps)" >&2; exit 1; }
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-g -O1 -std=gnu11 $san -fsanitize=fuzzer-no-link $(pkg-config --cflags $pkgs) -iquote src"
cflags="$cflags -DSBX_DATADIR=\"/usr/local/share/sbxrun\" -DSBX_VERSION=\"fuzz\""
libs=$(pkg-config --libs $pkgs)
mkdir -p "$out"
# the harnesses: tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/
targets="import profile policy httpreq dns mcp oci download proxy termfilter pypidoc npmdoc debindex debidx sri osv gomod gosum cargoidx mavenmeta"

jobs=$(nproc 2>/dev/null || echo 1)
objs=() stale=()
for src in src/*/*.c; do
	[ "$src" = src/cmd/main.c ] && continue
	obj=$out/$(basename "$src" .c).o
	if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj")" ]; then
		stale+=("$src")
	fi
	objs+=("$obj")
done
# compile_one SRC: its object, as the loop above named it (cflags word-split, as below)
compile_one() { $CC $cflags -c -o "$out/$(basename "$1" .c).o" "$1"; }
export -f compile_one && export CC cflags out
[ ${#stale[@]} = 0 ] || printf '%s\n' "${stale[@]}" | xargs -P "$jobs" -n 1 bash -c 'compile_one "$1"' bash
for h in $targets; do
	$CC $cflags -fsanitize=fuzzer -o "$out/fuzz_$h" "tests/fuzz/fuzz_$h.c" "${objs[@]}" $libs &
	[ "$(jobs -r | wc -l)" -lt "$jobs" ] || wait -n
done
wait

[ "${1:-}" = smoke ] || exit 0
secs=${FUZZ_SECONDS:-10}
# fuzz_one NAME: one harness from a copy of its seeds; 0, or 1 after saying where the crash is
fuzz_one() {
	local h=$1 work st=0
	work=$(mktemp -d)
	cp -R "tests/fuzz/corpus/$h/." "$work/"
	if ! "$out/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/crash-$h-" -print_final_stats=1 "$work" >"$out/$h.log" 2>&1; then
		{ echo "fuzz: $h crashed; see $out/$h.log and $out/crash-$h-*"; tail -40 "$out/$h.log"; } >&2
		st=1
	else
		grep -E 'stat::number_of_executed_units' "$out/$h.log" | sed "s/^/fuzz: $h: /" || true
	fi
	rm -rf "$work"
	echo "$st" > "$out/$h.status"
}
echo "fuzz: $(echo $targets | wc -w) harnesses for ${secs}s each, $jobs at a time"
for h in $targets; do
	rm -f "$out/$h.status"
	fuzz_one "$h" &
	[ "$(jobs -r | wc -l)" -lt "$jobs" ] || wait -n
done
wait
# each harness left its status; a missing one (the harness's shell died) fails too
status=0
for h in $targets; do [ "$(cat "$out/$h.status" 2>/dev/null)" = 0 ] || status=1; done
exit $status
