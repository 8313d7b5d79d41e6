#!/bin/bash
# tests/demo.sh - `make demo`: the main job, shown step by step.
set -eu
cd "$(dirname "$0")/.."
SBX=./sbxrun
say() {
	if [ -t 1 ] && [ -z "${NO_COLOR:-}" ]; then printf '\n\033[1m== %s\033[0m\n' "$*"; else printf '\n== %s\n' "$*"; fi
}

if ! $SBX image inspect minimal >/dev/null 2>&1; then
	say "building the minimal Debian image from Debian's archive (mmdebstrap, about a minute)"
	$SBX image build minimal
fi
$SBX image inspect minimal

say "a fresh Debian system: sbxrun run -- cat /etc/os-release"
$SBX run -- sh -c '. /etc/os-release; echo "$PRETTY_NAME"; uname -sr; id'

say "python3 inside"
$SBX run -- python3 -c 'import sys, platform; print("Python", platform.python_version(), "at", sys.executable)'

say "nothing of the host is there: your home ($HOME) as the sandbox sees it"
echo "outside: $(ls -A "$HOME" | wc -l) entries in $HOME"
$SBX run -- sh -c "echo \"inside:  \$(ls -A '$HOME' 2>/dev/null | wc -l) entries in $HOME\""

say "the network is unreachable (--net none is the default)"
$SBX run -- python3 -c 'import socket
try:
    socket.create_connection(("192.0.2.1", 80), timeout=5)
except OSError as e:
    print("connect:", e)'

say "a file written inside is gone on the next run"
$SBX run -- sh -c 'echo hello > /root/note && cat /root/note'
$SBX run -- sh -c 'cat /root/note 2>&1 || true'

say "a hang ends at the timeout with exit 124"
set +e
$SBX run --timeout 2s -- sleep 60
echo "exit status: $?"

say "packages egress: apt installs through sbxrun's proxy (profile 'packages')"
$SBX run -p packages -- sh -c 'apt-get update -qq 2>&1 | tail -1; apt-get install -y -qq --no-install-recommends cowsay >/dev/null 2>&1; /usr/games/cowsay "installed through the proxy"'

say "... while user code still gets 'Network is unreachable', and the proxy refuses other hosts"
$SBX run -p packages -- sh -c 'curl -sSv --noproxy "*" http://192.0.2.10/ 2>&1 | grep -m1 -i unreachable
curl -s -o /dev/null -w "through the proxy: HTTP %{http_code}\n" -x "$SBXRUN_PROXY" http://not-a-package-source.example.test/'
