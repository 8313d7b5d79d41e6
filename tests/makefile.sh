#!/bin/bash
# tests/makefile.sh - a regression test for the README's first command on a
# bare machine: `make demo` must build after `deps` has installed the -dev
# packages, although make evaluates pkg-config when it starts. A pkg-config
# that fails until "deps" has run stands in for the bare machine, in a
# copy of the sources. Exits 0 when the build works.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
cp -R "$top/Makefile" "$top/src" "$t/"
real=$(command -v pkg-config)
cat > "$t/pkg-config" <<EOS
#!/bin/sh
[ -e "$t/deps-done" ] || exit 1
exec "$real" "\$@"
EOS
chmod +x "$t/pkg-config"
make -s -j"$(nproc)" -C "$t" demo PKG_CONFIG="$t/pkg-config" DEPS_CMD="touch $t/deps-done" DEMO_CMD="./sbxrun --version" \
	> "$t/log" 2>&1 || { tail -5 "$t/log"; exit 1; }
grep -q '^sbxrun ' "$t/log" || { echo "makefile: the built binary did not answer --version"; cat "$t/log"; exit 1; }
