# also-as-root
# root-only: test_image_recipe_runs_the_systems_mmdebstrap_in_a_fixed_environment
# tests/integration/14-hostchild.sh - what sbxrun starts on the host (issue
# 41, item 4; docs/security.md, "AppArmor"): under the package's AppArmor
# profile whatever sbxrun starts runs as its child, so it must be the
# system's program, never one the caller's PATH or environment chose. Here
# (no AppArmor restriction) that is measured on `image build`: a PATH whose
# first directory holds a stand-in for every program the recipe runs, and
# the variables that make perl, apt and the dynamic loader run code
# (PERL5LIB/PERL5OPT, APT_CONFIG, LD_PRELOAD). The labels themselves are
# measured in Debian 13's AppArmor (tests/vm/guest-deb.sh).
#
# As root, in a network namespace of its own (unshare -n): the real
# mmdebstrap then stops at its first download, about 20 s, and what it
# printed shows that it ran.

test_image_recipe_runs_the_systems_mmdebstrap_in_a_fixed_environment() {
	command -v unshare > /dev/null || skip "no unshare (util-linux)"
	[ -x /usr/bin/mmdebstrap ] || skip "no /usr/bin/mmdebstrap (sh tests/deps.sh installs it)"
	[ -f "$TOP/tests/helper/preload.so" ] || skip "no tests/helper/preload.so (make tests/helper/preload.so)"
	export XDG_DATA_HOME="$TESTDIR/data" XDG_CACHE_HOME="$TESTDIR/cache"
	local evil=$TESTDIR/evil marks=$TESTDIR/marks c
	mkdir -p "$evil" "$marks"
	for c in mmdebstrap sh grep sed tr id dirname zstd gzip xz chroot perl apt-get newuidmap; do
		printf '#!/bin/sh\necho "%s $*" >> %s/ran\nexit 1\n' "$c" "$marks" > "$evil/$c"
		chmod 0755 "$evil/$c"
	done
	printf 'package evil; open(my $f, ">>", "%s/ran"); print $f "perl module evil\\n"; 1;\n' "$marks" > "$evil/evil.pm"
	printf 'APT::Update::Pre-Invoke { "echo apt-config >> %s/ran"; };\n' "$marks" > "$evil/apt.conf"
	local t0=$SECONDS
	run unshare -n -- env PATH="$evil:$PATH" PERL5LIB="$evil" PERL5OPT=-Mevil APT_CONFIG="$evil/apt.conf" \
		LD_PRELOAD="$TOP/tests/helper/preload.so" SBX_PRELOAD_OUT="$marks/preload" \
		"$SBX" image build minimal
	echo "image build without a network: $((SECONDS - t0)) s" >&2
	assert_status 125 "image build without a network"
	assert_contains "$err" "recipe 'minimal' failed" "$err"
	# mmdebstrap's own words: the system's ran, and got as far as apt
	assert_contains "$err" "I: chroot architecture" "$err"
	assert_contains "$err" "apt-get update" "$err"
	[ ! -e "$marks/ran" ] || fail "the caller's PATH or environment chose what ran: $(cat "$marks/ran")"
	# the library the caller preloaded ran in sbxrun itself (no AppArmor
	# here to keep it out), and in nothing sbxrun started
	[ -s "$marks/preload" ] || fail "the preloaded library did not run at all (the check proves nothing)"
	if grep -v '^comm=sbxrun ' "$marks/preload"; then
		fail "the preloaded library ran in what sbxrun started: $(cat "$marks/preload")"
	fi
	rm -rf "$XDG_DATA_HOME" "$XDG_CACHE_HOME"
}
