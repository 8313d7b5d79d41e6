#!/bin/bash
# tests/apparmor.sh - the AppArmor profile the .deb ships compiles (make
# check's checks; issue 35): contrib/apparmor-sbxrun as `make
# install-apparmor` writes it for /usr/bin/sbxrun (what debian/rules does),
# through apparmor_parser -Q (compile, load nothing) -K (no cache), against
# an AppArmor feature set given with -M where the kernel has none to offer
# (this machine's kernel has no AppArmor).
#
# An AppArmor 4 parser (Debian 13, Ubuntu 24.04) compiles the profile whole,
# against the abi/4.0 feature set its package ships. Debian 12's AppArmor 3
# knows neither that abi nor the `userns`, `mqueue` and `io_uring` rules (no
# feature set file can teach a parser a rule), so there the profile is
# compiled with those lines set aside (abi/3.0; the rest: the attachments,
# flags, the exec transitions and the stack, ptrace, the includes), and they
# are checked as text; the whole profile is
# then compiled by AppArmor 4.1 in the Debian 13 image's test
# (tests/slow/trixie-image.sh, make check-slow). Exit 77: no parser.
set -eu
cd "$(dirname "$0")/.."
command -v apparmor_parser >/dev/null || { echo "no apparmor_parser (sh tests/deps.sh installs apparmor)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
make -s install-apparmor DESTDIR="$tmp/root" BINDIR=/usr/bin >/dev/null
prof=$tmp/root/etc/apparmor.d/sbxrun
# The profile's shape (docs/security.md, "AppArmor"): three profiles; only
# sbxrun_userns grants userns; the label an exec of the binary lands in
# (sbxrun, also what aa-exec -p sbxrun gives) denies it and leaves only by
# the scrubbed exec of the binary itself (Px); everything sbxrun_userns
# starts is stacked with sbxrun_child, which denies it; no profile is
# flags=(unconfined), which would mediate nothing.
block() { awk -v p="$1" '$1 == "profile" && $2 == p { on = 1; next } on && /^}/ { exit } on' "$prof"; }
has() { printf '%s\n' "$1" | grep -qxF -- "  $2" || { echo "profile $3: no line '$2'"; exit 1; }; }
grep -qx 'profile sbxrun /usr/bin/sbxrun flags=(attach_disconnected,mediate_deleted) {' "$prof" || { echo "the profile does not name /usr/bin/sbxrun"; exit 1; }
grep -qx 'abi <abi/4.0>,' "$prof" || { echo "no 'abi <abi/4.0>,' line"; exit 1; }
if grep -n 'unconfined' "$prof" | grep -v ':#'; then echo "a profile is flags=(unconfined) or names unconfined"; exit 1; fi
[ "$(grep -c '^profile ' "$prof")" = 3 ] || { echo "not three profiles"; exit 1; }
entry=$(block sbxrun) userns=$(block sbxrun_userns) child=$(block sbxrun_child)
has "$entry" 'deny userns,' sbxrun
has "$entry" '/usr/bin/sbxrun Px -> sbxrun_userns,' sbxrun
has "$entry" '/** ix,' sbxrun
has "$entry" 'include if exists <local/sbxrun>' sbxrun
has "$userns" 'userns,' sbxrun_userns
has "$userns" '/** px -> sbxrun_userns//&sbxrun_child,' sbxrun_userns
has "$userns" '/usr/bin/sbxrun Px -> sbxrun,' sbxrun_userns
has "$child" 'deny userns,' sbxrun_child
has "$child" '/** pix -> &sbxrun_child,' sbxrun_child
[ "$(grep -cx '  userns,' "$prof")" = 1 ] || { echo "'userns,' granted outside sbxrun_userns"; exit 1; }
# every exec rule of sbxrun_userns: the two above, nothing inherits it
x=$(printf '%s\n' "$userns" | grep -E '^ +[^#]*\b[pcuiPCUI]x\b' | grep -vxF -e '  /** px -> sbxrun_userns//&sbxrun_child,' -e '  /usr/bin/sbxrun Px -> sbxrun,' || true)
[ -z "$x" ] || { echo "sbxrun_userns has another exec rule: $x"; exit 1; }
# the one way into sbxrun_userns scrubs the environment (Px, not px)
if grep -n -- '-> *sbxrun_userns,' "$prof" | grep -v 'Px -> sbxrun_userns,'; then echo "an unscrubbed way into sbxrun_userns"; exit 1; fi
ver=$(apparmor_parser --version | sed -n 's/^AppArmor parser version \([0-9]*\).*/\1/p')
abi=/etc/apparmor.d/abi
if [ "${ver:-0}" -ge 4 ]; then
	feat=$abi/4.0
	[ -e /sys/kernel/security/apparmor/features ] && feat=/sys/kernel/security/apparmor/features
	apparmor_parser -Q -K -M "$feat" "$prof"
	echo "AppArmor $ver: the profile compiles whole (features: $feat)"
else
	sed -e 's|^abi <abi/4.0>,|abi <abi/3.0>,|' -E -e '/^[[:space:]]*(deny )?(userns|mqueue|io_uring),[[:space:]]*$/d' "$prof" > "$tmp/sbxrun3"
	apparmor_parser -Q -K -M "$abi/3.0" "$tmp/sbxrun3"
	echo "AppArmor $ver: the profile compiles without its AppArmor 4 lines (abi/4.0, userns, mqueue, io_uring); whole in make check-slow"
fi
# and a broken profile is refused (the check can fail)
printf 'profile sbxrun /usr/bin/sbxrun {\n  no_such_rule,\n}\n' > "$tmp/bad"
if apparmor_parser -Q -K -M "$abi/3.0" "$tmp/bad" 2>/dev/null; then echo "a broken profile compiled"; exit 1; fi
