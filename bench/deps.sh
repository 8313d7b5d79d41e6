#!/bin/sh
# bench/deps.sh - installs (apt-get; sudo when not root) what `make bench`
# needs besides the build: hyperfine, bubblewrap, and rootless podman with
# runc (Debian's crun refuses machines with hybrid cgroups; run.sh falls
# back to `podman --runtime runc` there). Not part of `make check`'s deps.
set -eu
pkgs="hyperfine bubblewrap podman runc uidmap"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "bench deps: installing:$missing"
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
