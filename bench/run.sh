#!/bin/bash
# bench/run.sh - `make bench`: sbxrun against its peers, side by side in one
# hyperfine run each, on this machine. Writes bench/results-HOST.md.
# Needs: hyperfine, bwrap (bubblewrap), unshare, tar, zstd; the images
# minimal and tiny in the store (make check builds them; or sbxrun image build).
# Run as root, it measures as the unprivileged user SBX_BENCH_USER (sbxbench,
# created when missing, its images imported), as issue 16 asks, and reads
# the idle sessions' memory as root (their init is non-dumpable).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=${1:-$top/bench/results-$(hostname).md}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bench: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$SBX" session stop bench$$ >/dev/null 2>&1 || true' EXIT

if [ "$(id -u)" = 0 ] && [ -z "${BENCH_INNER:-}" ]; then
	chmod 0777 "$tmp" # the inner run, as the bench user, writes here
	. "$top/bench/lib.sh"
	bench_user_images "$tmp/img"
	u=$BENCH_USER home=$BENCH_HOME
	as_u() { runuser -u "$u" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 "$@"; }
	# Both sides of every comparison run at this priority: on a shared
	# machine, other work (mostly at nice 10) then disturbs them less.
	export BENCH_NICE=${BENCH_NICE:--5}
	nice -n "$BENCH_NICE" runuser -u "$u" -- env -i HOME="$home" PATH=/usr/local/bin:/usr/bin:/bin LANG=C.UTF-8 \
		BENCH_INNER=1 BENCH_NICE="$BENCH_NICE" BENCH_IMAGES="$tmp/img" BENCH_ROUNDS="${BENCH_ROUNDS:-6}" \
		BENCH_RUNS="${BENCH_RUNS:-40}" bash "$top/bench/run.sh" "$tmp/inner.md"
	cat "$tmp/inner.md" > "$out"
	d=$(as_u "$SBX" image inspect tiny | sed -n 's/^digest: *sha256://p')
	bash "$top/bench/sessions.sh" "$out" "$home/.local/share/sbxrun/images/$d/rootfs" "$u"
	printf '\n## Egress proxy (loopback)\n\n```\n%s\n```\n' "$(sh "$top/bench/proxy.sh" 2>&1 | tail -2)" >> "$out"
	echo "bench: results in $out" >&2
	exit 0
fi

rootfs() { # the store directory of an image, from its digest
	local d
	d=$("$SBX" image inspect "$1" | sed -n 's/^digest: *sha256://p')
	echo "${XDG_DATA_HOME:-$HOME/.local/share}/sbxrun/images/$d/rootfs"
}
R=$(rootfs tiny)
[ -d "$R" ] || { echo "bench: no image 'tiny' (bash tests/images.sh DIR; sbxrun image import DIR/tiny.tar --name tiny)" >&2; exit 1; }

# Rootless podman on the same image, where it runs: with its default OCI
# runtime, else with runc (crun refuses hybrid cgroup v1/v2 machines:
# "cgroups in hybrid mode not supported"), in the same hyperfine run.
podman_cmd=() podman_note="Not measured: podman is not installed."
pimg=${BENCH_IMAGES:-$tmp/img}
if command -v podman >/dev/null && { [ -n "${BENCH_IMAGES:-}" ] || bash "$top/tests/images.sh" "$pimg" >/dev/null 2>&1; } &&
   podman import "$pimg/tiny.tar" sbxrun-bench-tiny >/dev/null 2>&1; then
	trap 'rm -rf "$tmp"; "$SBX" session stop bench$$ >/dev/null 2>&1 || true; podman rmi -f sbxrun-bench-tiny >/dev/null 2>&1 || true' EXIT
	rt=$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>/dev/null || echo default)
	if why=$(podman run --rm --network none sbxrun-bench-tiny /bin/true 2>&1); then
		podman_cmd=(-n "podman run ($rt)" "podman run --rm --network none sbxrun-bench-tiny /bin/true")
		podman_note="podman $(podman --version | awk '{print $3}') with its default runtime, $rt."
	elif command -v runc >/dev/null &&
	     podman --runtime runc run --rm --network none sbxrun-bench-tiny /bin/true >/dev/null 2>&1; then
		podman_cmd=(-n "podman --runtime runc run" "podman --runtime runc run --rm --network none sbxrun-bench-tiny /bin/true")
		podman_note="podman $(podman --version | awk '{print $3}') with runc ($(runc --version | head -1)): its default runtime, $rt, cannot run here: $(echo "$why" | tail -1)"
	else
		podman_note="podman is installed but cannot run here, with $rt nor with runc: $(echo "$why" | tail -1)"
	fi
fi

{
echo "# sbxrun benchmarks"
echo
echo "Machine: $(nproc) CPUs, $(sed -n 's/^model name.*: //p' /proc/cpuinfo | head -1), kernel $(uname -r), $(. /etc/os-release; echo "$PRETTY_NAME"); run as uid $(id -u); $(date -u +%Y-%m-%d)."
echo
} > "$out"
bash "$top/bench/startup.sh" "$out" "$R"
# --net packages where the image has a package upstream (minimal's apt
# sources), so the gateway is made: tiny's row above makes none
echo >> "$out"
bash "$top/bench/netstart.sh" "" "$out"

# Rootless podman on the same image, beside sbxrun in one hyperfine run
# (its own: podman is two orders slower, it would drown the rounds above).
printf '\n## Against rootless podman (same image)\n\n%s\n\n' "$podman_note" >> "$out"
if [ ${#podman_cmd[@]} -gt 0 ]; then
	hyperfine -N --warmup 3 --runs 20 --export-markdown "$tmp/podman.md" --export-json "$tmp/podman.json" \
		-n "sbxrun run" "$SBX run --image tiny -- /bin/true" "${podman_cmd[@]}" >&2
	cat "$tmp/podman.md" >> "$out"
	# medians too: on a shared machine the means carry every stall of a neighbour
	python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]
print("\nMedians: " + ", ".join("%s %.1f ms" % (x["command"], x["median"] * 1000) for x in r) + ".")' "$tmp/podman.json" >> "$out"
fi
[ "${BENCH_ONLY:-}" = start ] && { echo "bench: results in $out" >&2; exit 0; }

# Import against GNU tar extracting the same tarball.
img=${BENCH_IMAGES:-$tmp/img}
[ -n "${BENCH_IMAGES:-}" ] || bash "$top/tests/images.sh" "$img" >/dev/null 2>&1 || true
T=$img/minimal.tar.zst
if [ -f "$T" ]; then
	zstd -dqf "$T" -o "$tmp/m.tar"
	printf '\n## Import of the minimal image (%s unpacked) against GNU tar\n\n' "$(du -sh "$tmp/m.tar" | cut -f1)" >> "$out"
	hyperfine --warmup 1 --runs 3 --export-markdown "$tmp/imp.md" \
		--prepare "rm -rf $tmp/x; mkdir $tmp/x; $SBX image rm bench-import >/dev/null 2>&1; rm -rf \${XDG_DATA_HOME:-\$HOME/.local/share}/sbxrun/images/digests" \
		-n "sbxrun image import (first)" "$SBX image import $tmp/m.tar --name bench-import" \
		-n "tar -x" "tar -C $tmp/x --exclude=./dev/* -xf $tmp/m.tar" >&2
	cat "$tmp/imp.md" >> "$out"
	"$SBX" image import "$tmp/m.tar" --name bench-import >/dev/null
	printf '\n## Unchanged re-import\n\n' >> "$out"
	hyperfine -N --warmup 3 --runs 30 --export-markdown "$tmp/re.md" \
		-n "sbxrun image import (unchanged)" "$SBX image import $tmp/m.tar --name bench-import" >&2
	cat "$tmp/re.md" >> "$out"
	"$SBX" image rm bench-import >/dev/null 2>&1 || true
fi

# MCP: exec of `true` over `sbxrun mcp` (stdio, JSON-RPC) in its session.
printf '\n## MCP round trip (bench/mcp.sh)\n\n```\n%s\n```\n' "$(SBX="$SBX" sh "$top/bench/mcp.sh" 2>&1 | tail -2)" >> "$out"

# The package gateway's shared cache (bench/gateway.sh), where the node image is.
if "$SBX" image inspect node >/dev/null 2>&1; then
	printf '\n' >> "$out"
	SBX="$SBX" bash "$top/bench/gateway.sh" >> "$out" 2>&1 || echo "(bench/gateway.sh failed)" >> "$out"
else
	printf '\n## Package gateway\n\nNot measured: no image node (bench/gateway.sh needs npm).\n' >> "$out"
fi

# Idle sessions: memory and exec latency (as root, the outer run does this).
[ -n "${BENCH_INNER:-}" ] || bash "$top/bench/sessions.sh" "$out" "$R"
echo "bench: results in $out" >&2

# The egress proxy on loopback: throughput against direct, cost per connection
# (it builds in the tree: as root, the outer run does it).
[ -n "${BENCH_INNER:-}" ] || printf '\n## Egress proxy (loopback)\n\n```\n%s\n```\n' "$(sh "$top/bench/proxy.sh" 2>&1 | tail -2)" >> "$out"
