#!/bin/bash
# tests/fuzz/run.sh [smoke] - builds the libFuzzer harnesses (clang with
# address and undefined-behaviour sanitizers) into build-fuzz/; with "smoke"
# runs each for FUZZ_SECONDS (20) from a copy of its committed seed corpus and
# exits nonzero when one crashes. Without an argument it only builds.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
cd "$top"
CC=${FUZZ_CC:-clang}
out=build-fuzz
pkgs="libseccomp libcap-ng libarchive libcurl inih libcrypto json-c"
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (make deps)" >&2; exit 1; }
san="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
cflags="-g -O1 -std=gnu11 $san -fsanitize=fuzzer-no-link $(pkg-config --cflags $pkgs) -iquote src"
cflags="$cflags -DSBX_DATADIR=\"/usr/local/share/sbxrun\" -DSBX_VERSION=\"fuzz\""
libs=$(pkg-config --libs $pkgs)
mkdir -p "$out"
# the harnesses: tests/fuzz/fuzz_NAME.c, seeds in tests/fuzz/corpus/NAME/
targets="import profile policy httpreq dns mcp oci download proxy termfilter pypidoc npmdoc debindex debidx sri"

objs=()
for src in src/*/*.c; do
	[ "$src" = src/cmd/main.c ] && continue
	obj=$out/$(basename "$src" .c).o
	if [ ! -e "$obj" ] || [ "$src" -nt "$obj" ] || [ -n "$(find src -name '*.h' -newer "$obj")" ]; then
		$CC $cflags -c -o "$obj" "$src"
	fi
	objs+=("$obj")
done
for h in $targets; do
	$CC $cflags -fsanitize=fuzzer -o "$out/fuzz_$h" "tests/fuzz/fuzz_$h.c" "${objs[@]}" $libs
done

[ "${1:-}" = smoke ] || exit 0
status=0
for h in $targets; do
	work=$(mktemp -d)
	cp -R "tests/fuzz/corpus/$h/." "$work/"
	echo "fuzz: $h for ${FUZZ_SECONDS:-20}s"
	if ! "$out/fuzz_$h" -max_total_time="${FUZZ_SECONDS:-20}" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="$out/crash-$h-" -print_final_stats=1 "$work" >"$out/$h.log" 2>&1; then
		echo "fuzz: $h crashed; see $out/$h.log and $out/crash-$h-*" >&2
		tail -40 "$out/$h.log" >&2
		status=1
	else
		grep -E 'stat::number_of_executed_units' "$out/$h.log" | sed "s/^/fuzz: $h: /" || true
	fi
	rm -rf "$work"
done
exit $status
