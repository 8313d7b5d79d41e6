#!/bin/bash
# bench/run.sh - `make bench`: sbxrun against its peers, side by side in one
# hyperfine run each, on this machine. Writes bench/results-HOST.md.
# Needs: hyperfine, bwrap (bubblewrap), unshare, tar, zstd; the images
# minimal and tiny in the store (make check builds them; or sbxrun image build).
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
SBX=${SBX:-$top/sbxrun}
out=${1:-$top/bench/results-$(hostname).md}
command -v hyperfine >/dev/null || { echo "bench: hyperfine is not installed (apt-get install hyperfine)" >&2; exit 1; }
command -v bwrap >/dev/null || { echo "bench: bwrap is not installed (apt-get install bubblewrap)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; "$SBX" session stop bench$$ >/dev/null 2>&1 || true' EXIT

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
if command -v podman >/dev/null && bash "$top/tests/images.sh" "$tmp/img" >/dev/null 2>&1 &&
   podman import "$tmp/img/tiny.tar" sbxrun-bench-tiny >/dev/null 2>&1; then
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
echo "## Start-up: /bin/true in a fresh sandbox (same namespaces, same rootfs)"
echo
echo "Rootless podman, same image: $podman_note"
echo
} > "$out"
hyperfine -N --warmup 10 --runs "${BENCH_START_RUNS:-100}" --export-markdown "$tmp/start.md" --export-json "$tmp/start.json" \
	-n "sbxrun run" "$SBX run --image tiny -- /bin/true" \
	-n "bwrap --unshare-all" "bwrap --unshare-all --die-with-parent --ro-bind $R / --proc /proc --dev /dev --tmpfs /tmp /bin/true" \
	-n "unshare -Urmpf chroot (floor)" "unshare -Urmpf --mount-proc $(command -v chroot || echo /usr/sbin/chroot) $R /bin/true" \
	"${podman_cmd[@]}" >&2
cat "$tmp/start.md" >> "$out"
# medians too: on a shared machine the means carry every stall of a neighbour
python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["results"]
print("\nMedians: " + ", ".join("%s %.1f ms" % (x["command"], x["median"] * 1000) for x in r) + ".")' "$tmp/start.json" >> "$out"
[ "${BENCH_ONLY:-}" = start ] && { echo "bench: results in $out" >&2; exit 0; }

# Import against GNU tar extracting the same tarball.
bash "$top/tests/images.sh" "$tmp/img" >/dev/null 2>&1 || true
T=$tmp/img/minimal.tar.zst
if [ -f "$T" ]; then
	zstd -dqf "$T" -o "$tmp/m.tar"
	printf '\n## Import of the minimal image (%s unpacked) against GNU tar\n\n' "$(du -sh "$tmp/m.tar" | cut -f1)" >> "$out"
	hyperfine --warmup 1 --runs 5 --export-markdown "$tmp/imp.md" \
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

# An idle session's host-side memory: the supervisor's resident set.
"$SBX" session start --image tiny "bench$$" >/dev/null
sleep 1
state=${XDG_RUNTIME_DIR:+$XDG_RUNTIME_DIR/sbxrun}
state=${state:-/tmp/sbxrun-$(id -u)}
pid=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["pid"])' "$state/sessions/bench$$/info.json")
rss=$(awk '/^VmRSS/ {print $2}' "/proc/$pid/status")
printf '\n## Idle session\n\nHost-side supervisor resident memory: %s KiB.\n' "$rss" >> "$out"
echo "bench: results in $out" >&2

# The egress proxy on loopback: throughput against direct, cost per connection.
printf '\n## Egress proxy (loopback)\n\n```\n%s\n```\n' "$(sh "$top/bench/proxy.sh" 2>&1 | tail -2)" >> "$out"

# MCP: exec of `true` over `sbxrun mcp` (stdio, JSON-RPC) in its session.
printf '\n## MCP round trip (bench/mcp.sh)\n\n```\n%s\n```\n' "$(SBX="$SBX" sh "$top/bench/mcp.sh" 2>&1 | tail -2)" >> "$out"
