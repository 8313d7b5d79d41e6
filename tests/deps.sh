#!/bin/sh
# tests/deps.sh - installs (apt-get; sudo when not root) the Debian packages
# that the build, the images and the tests need, where they are missing
# (with an argument: what check-vm or bench needs besides, or what make deb needs).
set -eu
pkgs="build-essential pkg-config libseccomp-dev libcap-ng-dev libarchive-dev
libcurl4-openssl-dev libinih-dev libssl-dev libjson-c-dev libsystemd-dev libgit2-dev zlib1g-dev libxml2-dev mmdebstrap uidmap
fakechroot fakeroot zstd xz-utils busybox-static clang python3 iproute2
util-linux passwd procps psmisc curl ca-certificates tmux dpkg-dev
libclang-rt-dev zsh fish strace fuse-overlayfs
podman runc catatonit skopeo python3-yaml apparmor
golang-go golang-golang-x-mod-dev cargo-web rustc-web maven default-jdk-headless"
# Node.js and npm for the MCP client test (70-mcp), from Debian where the
# machine has no node of its own (one from elsewhere, as CI's, has its npm)
command -v node > /dev/null || pkgs="$pkgs nodejs npm"
# only for `make bench`; not every release has them
optional="hyperfine bubblewrap"
# `sh tests/deps.sh slow`: what `make check-slow` needs besides (Gradle, 83
# packages, for 59-gateway-maven's real Gradle build alone)
[ "${1:-}" = slow ] && pkgs="gradle" optional=""
# `sh tests/deps.sh vm`: what `make check-vm` needs besides
[ "${1:-}" = vm ] && pkgs="qemu-system-x86 e2fsprogs" optional=""
# `sh tests/deps.sh bench`: what `make bench` needs besides the build: the
# peers, and rootless podman with runc (Debian's crun refuses machines with
# hybrid cgroups; bench/run.sh falls back to `podman --runtime runc` there)
[ "${1:-}" = bench ] && pkgs="hyperfine bubblewrap podman runc uidmap" optional=""
# `sh tests/deps.sh deb`: what `make deb` needs: debian/control's
# Build-Depends (debhelper-compat is debhelper's), dpkg-dev and lintian
if [ "${1:-}" = deb ]; then
	optional=""
	pkgs="build-essential dpkg-dev lintian $(awk '/^Build-Depends:/ { f = 1; sub(/^[^:]*:/, ""); print; next }
		f && /^[ \t]/ { print; next } { f = 0 }' "$(dirname "$0")/../debian/control" |
		tr ',' '\n' | sed 's/([^)]*)//; s/[[:space:]]//g; s/^debhelper-compat$/debhelper/' | grep .)"
fi
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing:$missing"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $optional >/dev/null 2>&1 || true
